/**
 * An environment variable on any runtime (Node/Bun expose process.env, Deno may throw
 * without --allow-env, edge runtimes may have neither); an empty one reads as unset.
 * Settings (BUSINESS_PAYMENTS_ENVIRONMENT, _BASE_URL, _LOG) are trimmed, so a blank one
 * reads as unset. Credentials are read `exact`: surrounding whitespace, a whitespace-only
 * value included, is refused by `credential()` naming the variable, never trimmed away
 * (a padded secret would sign with another key than the service's).
 */
export function readEnv(name: string, exact?: boolean): string | undefined {
  const g = globalThis as {
    process?: { env?: Record<string, string | undefined> };
    Deno?: { env?: { get(name: string): string | undefined } };
  };
  let value: string | undefined;
  try {
    value = g.process?.env?.[name];
  } catch {
    // no env access here
  }
  try {
    value ??= g.Deno?.env?.get(name);
  } catch {
    // Deno without --allow-env
  }
  return (exact ? value : value?.trim()) || undefined;
}

/** True in a browser page (not a worker, not a server runtime with a `window` shim missing `document`). */
export function isBrowser(): boolean {
  const g = globalThis as { window?: unknown; document?: unknown };
  return typeof g.window !== 'undefined' && typeof g.document !== 'undefined';
}
