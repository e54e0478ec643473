// Reads environment variables on any runtime: Node/Bun expose process.env, Deno may throw
// without --allow-env, edge runtimes may have neither.
export function readEnv(name: string): string | undefined {
  try {
    const value = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name];
    if (value !== undefined) return value.trim() === '' ? undefined : value.trim();
  } catch {
    // no env access here
  }
  try {
    const deno = (globalThis as { Deno?: { env?: { get(name: string): string | undefined } } }).Deno;
    const value = deno?.env?.get(name);
    if (value !== undefined) return value.trim() === '' ? undefined : value.trim();
  } catch {
    // Deno without --allow-env
  }
  return undefined;
}

/** True in a browser page (not a worker, not a server runtime with a `window` shim missing `document`). */
export function isBrowser(): boolean {
  const g = globalThis as { window?: unknown; document?: unknown };
  return typeof g.window !== 'undefined' && typeof g.document !== 'undefined';
}
