import { createReadStream, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

/** Where a command writes, and what it may read: `process` in the bin, captured in tests. */
export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** Ends long-running commands (`sandbox`); the bin aborts it on SIGINT/SIGTERM. */
  signal?: AbortSignal;
  /** Environment variables. Default `process.env`. */
  env?: Env;
  /** Base of relative file paths. Default `process.cwd()`. */
  cwd?: string;
}

/** One CLI command: its usage text and what it does with its arguments. */
export interface Command {
  name: string;
  /** One line for the top-level command list. */
  summary: string;
  /** The full `--help` text. */
  usage: string;
  run(args: string[], io: CliIo): Promise<number>;
}

/** Bad command-line arguments: the CLI prints the reason and the usage, and exits 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;

/** `util.parseArgs` in strict mode, plus `--help`; its errors become one-line `UsageError`s. */
export function parseCommandArgs<T extends ParseArgsOptionsConfig>(args: string[], options: T, positionals = false) {
  try {
    return parseArgs({
      args: joinNegativeValues(args, options),
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: positionals,
    });
  } catch (error) {
    // Node's messages run on with advice about `--`; the first sentence is the reason.
    const message = error instanceof Error ? error.message.split(/\.\s/)[0]! : String(error);
    throw new UsageError(message.replace(/\.$/, ''));
  }
}

// `--time-scale -1`: parseArgs calls a value starting with a dash ambiguous; a number is a
// value, so it is joined (`--time-scale=-1`) and the option's own check says what is wrong.
function joinNegativeValues(args: string[], options: ParseArgsOptionsConfig): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const name = /^--([\w-]+)$/.exec(args[i]!)?.[1];
    const next = args[i + 1];
    if (name && options[name]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      out.push(`--${name}=${next}`);
      i++;
    } else {
      out.push(args[i]!);
    }
  }
  return out;
}

/** Environment variables as a command reads them ({@link CliIo.env}). */
export type Env = Record<string, string | undefined>;

/**
 * A credential (a secret or a key) as every command takes it: the flag's value, else the
 * first of the environment variables `vars` that is set (an empty one counts as unset).
 * The library's rule for every secret: leading or trailing whitespace (a whitespace-only
 * value included) is refused, never trimmed, naming where the value came from: the flag,
 * or the variable. The value itself is never printed. `undefined` when neither is set.
 */
export function credential(flag: string | undefined, name: string, env: Env, vars: readonly string[] = []): string | undefined {
  const from = flag === undefined ? vars.find((variable) => env[variable]) : undefined;
  const value = from === undefined ? flag : env[from];
  if (value !== undefined && value !== value.trim()) {
    throw new UsageError(`${from ?? `--${name}`} has leading or trailing whitespace (a copy-paste slip?): remove it`);
  }
  return value || undefined;
}

/** A required {@link credential}: when neither the flag nor a variable is set, "is not set" names them all. */
export function secret(flag: string | undefined, name: string, env: Env, vars: readonly string[] = []): string {
  const value = credential(flag, name, env, vars);
  if (value === undefined) throw new UsageError(`--${name} is not set: pass it${vars.length ? ` or set ${vars.join(' or ')}` : ''}`);
  return value;
}

/** A setting (not a credential) from the environment, trimmed as the library trims it; blank reads as unset. */
function setting(env: Env, name: string): string | undefined {
  return env[name]?.trim() || undefined;
}

/** The value of a required string option, or a `UsageError` naming it. */
export function required(value: string | undefined, name: string): string {
  if (value === undefined || value === '') throw new UsageError(`missing --${name}`);
  return value;
}

/**
 * The bytes of a file an option names (`--<option> FILE`, relative to `cwd`), read with a
 * bound: streamed, and given up one chunk past `maxBytes`, so a huge file or a device that
 * never ends (/dev/zero) costs a chunk, never its size. Longer, or unreadable: a `UsageError`
 * naming the option (`tooLarge` says why the bound is what it is). Pipes work too
 * (`--body /dev/stdin`, `<(…)`): nothing is read by position.
 */
export async function readOptionFile(cwd: string, path: string, option: string, maxBytes: number, tooLarge = ''): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    const stream = createReadStream(resolve(cwd, path), { highWaterMark: Math.min(64 * 1024, maxBytes + 1) });
    // Leaving the loop (the throw) destroys the stream: the file is closed, nothing more is read.
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if ((size += chunk.length) > maxBytes) {
        throw new UsageError(`--${option} file '${path}' is over ${bytes(maxBytes)}${tooLarge ? `: ${tooLarge}` : ''}`);
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read --${option} file '${path}'${code ? ` (${code})` : ''}`);
  }
  return Buffer.concat(chunks, size);
}

/** A byte count as the CLI says it: `1 MiB`, `64 KiB`, else `N bytes`. */
function bytes(n: number): string {
  return n % (1 << 20) === 0 ? `${n / (1 << 20)} MiB` : n % 1024 === 0 ? `${n / 1024} KiB` : `${n} bytes`;
}

/** Parses an integer option within bounds. */
export function integer(value: string, name: string, min: number, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, got '${value}'`);
  }
  return Number(value);
}

const DURATION_UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses a duration such as `90s`, `30m`, `24h` or `7d` (or `0`) into ms. */
export function duration(value: string, name: string): number {
  if (value === '0') return 0;
  const match = /^(\d{1,6})(s|m|h|d)$/.exec(value);
  if (!match) throw new UsageError(`--${name} must be a duration such as 30m, 24h or 7d, got '${value}'`);
  return Number(match[1]) * DURATION_UNITS[match[2]!]!;
}

/** The client's configuration as the commands that call the service take it (`doctor`, `reconcile`). */
export const CLIENT_OPTIONS = {
  environment: { type: 'string' },
  'base-url': { type: 'string' },
  'merchant-key': { type: 'string' },
  'api-key': { type: 'string' },
  'api-secret': { type: 'string' },
} as const satisfies ParseArgsOptionsConfig;

/** The `--help` lines of {@link CLIENT_OPTIONS}. */
export const CLIENT_OPTIONS_USAGE = `  --environment E     sandbox or production (default: env BUSINESS_PAYMENTS_ENVIRONMENT)
  --base-url U        the service address (default: env BUSINESS_PAYMENTS_BASE_URL)
  --merchant-key K    (default: env BUSINESS_PAYMENTS_MERCHANT_KEY)
  --api-key K         (default: env BUSINESS_PAYMENTS_API_KEY)
  --api-secret S      (default: env BUSINESS_PAYMENTS_API_SECRET)`;

/**
 * The options of {@link CLIENT_OPTIONS}, each defaulting to its `BUSINESS_PAYMENTS_*` variable.
 * The credentials follow the rule of {@link credential}, so an error names the flag or the
 * variable the value came from; with `required`, a missing one is a `UsageError` too
 * (`reconcile`), else it is left to the client's configuration check (`doctor` lists it).
 */
export function clientOptions(
  values: { environment?: string; 'base-url'?: string; 'merchant-key'?: string; 'api-key'?: string; 'api-secret'?: string },
  env: Env,
  required = false,
) {
  const take = required ? secret : credential;
  return {
    environment: environmentOption(values.environment, env) ?? 'sandbox',
    baseUrl: values['base-url'] ?? setting(env, 'BUSINESS_PAYMENTS_BASE_URL'),
    merchantKey: take(values['merchant-key'], 'merchant-key', env, ['BUSINESS_PAYMENTS_MERCHANT_KEY']),
    apiKey: take(values['api-key'], 'api-key', env, ['BUSINESS_PAYMENTS_API_KEY']),
    apiSecret: take(values['api-secret'], 'api-secret', env, ['BUSINESS_PAYMENTS_API_SECRET']),
  };
}

/**
 * Where each value {@link clientOptions} takes came from, by client option name, for reports to
 * name it (`doctor`): its flag (`--base-url`), else its variable (`BUSINESS_PAYMENTS_BASE_URL`),
 * else `default` for the environment; a value neither sets is left out.
 */
export function clientSources(values: Parameters<typeof clientOptions>[0], env: Env): Record<string, string> {
  const sources: Record<string, string> = {};
  for (const flag of Object.keys(CLIENT_OPTIONS) as Array<keyof typeof CLIENT_OPTIONS>) {
    const name = flag.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
    const variable = `BUSINESS_PAYMENTS_${flag.replace(/-/g, '_').toUpperCase()}`;
    // As clientOptions reads them: a blank variable is unset (a padded credential is refused there).
    const source =
      values[flag] !== undefined ? `--${flag}` : env[variable]?.trim() ? variable : flag === 'environment' ? 'default' : undefined;
    if (source) sources[name] = source;
  }
  return sources;
}

/** Parses `sandbox` / `production`; an error names `source`, the flag or the variable it came from. */
export function environment(value: string | undefined, source = '--environment'): 'sandbox' | 'production' | undefined {
  if (value === undefined || value === 'sandbox' || value === 'production') return value;
  throw new UsageError(`${source} must be sandbox or production, got '${value}'`);
}

/** `--environment`, else env `BUSINESS_PAYMENTS_ENVIRONMENT`, parsed. */
export function environmentOption(flag: string | undefined, env: Env): 'sandbox' | 'production' | undefined {
  return flag === undefined
    ? environment(setting(env, 'BUSINESS_PAYMENTS_ENVIRONMENT'), 'BUSINESS_PAYMENTS_ENVIRONMENT')
    : environment(flag);
}

/** Prints a command's `--help` text on stdout. */
export function printHelp(io: CliIo, usage: string): number {
  io.stdout.write(usage);
  return EXIT_OK;
}

/** Prints a `UsageError` as the CLI does: one line with the reason, a blank line, the usage. */
export function printUsageError(io: CliIo, command: string, error: UsageError, usage: string): number {
  io.stderr.write(`${command}: ${error.message}\n\n${usage}`);
  return EXIT_USAGE;
}

/** Prints a failure that is not the user's arguments (network, port in use …). */
export function printFailure(io: CliIo, command: string, error: unknown): number {
  io.stderr.write(`${command}: ${error instanceof Error ? error.message : String(error)}\n`);
  return EXIT_FAILURE;
}

/**
 * Imports the merchant's own module given as `--<flag> FILE` (relative to `cwd`): the one
 * dynamic import of the CLI (`reconcile --fulfillment`, `payouts --payouts`, `billing --billing`). No file there is
 * a `UsageError`; a module Node cannot load, an error saying why.
 */
export async function importModule(flag: string, file: string, cwd: string): Promise<Record<string, unknown>> {
  const path = resolve(cwd, file);
  if (!existsSync(path)) throw new UsageError(`--${flag}: no file at ${path}`);
  try {
    return (await import(/* @vite-ignore */ pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (error) {
    const hint =
      (error as { code?: unknown } | null)?.code === 'ERR_UNKNOWN_FILE_EXTENSION'
        ? ' (this Node does not run TypeScript: point at the compiled .js, or run the CLI through a loader such as tsx)'
        : '';
    throw new Error(`--${flag} ${file} could not be loaded: ${error instanceof Error ? error.message : String(error)}${hint}`, {
      cause: error,
    });
  }
}
