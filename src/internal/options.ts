import { ConfigurationError } from '../core/error.js';
import type { RequestBudget } from '../fulfillment/shared-budget.js';
import { PHONE_COUNTRIES, type PhoneCountry } from '../core/phone.js';
import { isCount } from '../core/values.js';
import { credential } from './credential.js';
import { isBrowser, readEnv } from './env.js';

/** `sandbox` (test credentials, no real money) or `production` (live). */
export type Environment = 'sandbox' | 'production';

/** How verbose the client's `logger` is. `off` by default. */
export type LogLevel = 'off' | 'error' | 'warn' | 'info' | 'debug';

/** Anything with console-like methods: `console`, pino, winston… */
export interface Logger {
  /** Final failures. */
  error(message: string, ...rest: unknown[]): void;
  /** Failed attempts that will be retried. */
  warn(message: string, ...rest: unknown[]): void;
  /** One line per attempt: method, path, status, duration. */
  info(message: string, ...rest: unknown[]): void;
  /** Redacted headers and body of each attempt. */
  debug(message: string, ...rest: unknown[]): void;
}

/**
 * Options of `new PaymentsClient(options)`. Every credential defaults to its environment
 * variable, so `new PaymentsClient()` works in a configured deployment.
 *
 * Credentials (`merchantKey`, `apiKey`, `apiSecret`), from the option or the variable, are
 * used exactly as given: a value with leading or trailing whitespace (a trailing newline
 * from a copied `.env` line or a secrets file) is refused at construction with a
 * `ConfigurationError` naming where it came from (`apiSecret option` or
 * `BUSINESS_PAYMENTS_API_SECRET`), never trimmed; a missing or empty one "is not set".
 * The value itself is never in the message. Other variables (`BUSINESS_PAYMENTS_ENVIRONMENT`,
 * `_BASE_URL`, `_LOG`) are trimmed, and a blank one counts as unset.
 *
 * @example
 * ```ts
 * const client = new PaymentsClient({
 *   environment: 'production',
 *   merchantKey: process.env.BUSINESS_PAYMENTS_MERCHANT_KEY,
 *   apiKey: process.env.BUSINESS_PAYMENTS_API_KEY,
 *   apiSecret: process.env.BUSINESS_PAYMENTS_API_SECRET,
 *   baseUrl: 'https://payments.example.com',
 * });
 * ```
 */
export interface ClientOptions {
  /** Default: env `BUSINESS_PAYMENTS_ENVIRONMENT`, else `sandbox`. */
  environment?: Environment | undefined;
  /** Business id, sent as `X-Merchant-Key`. Default: env `BUSINESS_PAYMENTS_MERCHANT_KEY`. Refused with surrounding whitespace (not trimmed). */
  merchantKey?: string | undefined;
  /** API key of the environment, sent as `X-API-Key`. Default: env `BUSINESS_PAYMENTS_API_KEY`. Refused with surrounding whitespace (not trimmed). */
  apiKey?: string | undefined;
  /** API secret of the environment: signs requests, never sent. Default: env `BUSINESS_PAYMENTS_API_SECRET`. Refused with surrounding whitespace (not trimmed). */
  apiSecret?: string | undefined;
  /** Service address; routes (`/api/v1/...`) are appended. Default: env `BUSINESS_PAYMENTS_BASE_URL`. */
  baseUrl?: string | undefined;
  /** Milliseconds per attempt. Default 30 000. */
  timeout?: number | undefined;
  /** Retries after the first attempt. Default 2. */
  maxRetries?: number | undefined;
  /**
   * A custom `fetch` (instrumentation, proxies, tests). Default: the global `fetch`, looked
   * up at each call, so a polyfill or instrumentation installed later is used. Either is
   * called as a plain function (workerd and browsers refuse any other `this`).
   */
  fetch?: typeof fetch | undefined;
  /**
   * Extra `fetch` init merged into every request this client sends: Node's `dispatcher`
   * (an undici `ProxyAgent` for a proxy, or an `Agent` with TLS settings), Bun's `proxy`,
   * Deno's `client` (`Deno.createHttpClient`), `keepalive`, `priority`… The SDK's own
   * `method`, `headers`, `body`, `signal` and `redirect` cannot be set here.
   */
  fetchOptions?: FetchOptions | undefined;
  /** Allow use in a browser page. The API secret would be visible to every visitor: don't, unless it is an internal tool. */
  dangerouslyAllowBrowser?: boolean | undefined;
  /** Where attempt logs go. Default `console` once `logLevel` is not `off`. */
  logger?: Logger | undefined;
  /** Default: env `BUSINESS_PAYMENTS_LOG`, else `off`. */
  logLevel?: LogLevel | undefined;
  /** Headers added to every request (after the SDK's own, which cannot be overridden). */
  defaultHeaders?: Record<string, string> | undefined;
  /**
   * Largest 2xx response body read, in bytes, counted after decompression (a gzip body is
   * measured as it inflates). A larger one stops the read there and ends in
   * `ResponseValidationError` (with `serverMayHaveActed` and the call's `idempotencyKey`)
   * instead of filling memory. Default 8 MiB (8 388 608): over a hundred times the largest
   * answers of this API (list pages, openapi.json); raise it for very large pages. Error
   * bodies (status ≥ 400) are cut at 10 MiB by the transport, whatever this says.
   */
  maxResponseBytes?: number | undefined;
  /**
   * Requests a minute for what the SDK sends on its own: the polls of
   * `payments.waitForOutcome` (concurrent waits on one payment share one poll) and the
   * fulfilment kit's verifies (`reconcile`, processing deliveries). Every request the client
   * sends counts in a sliding minute; the SDK's own wait while it holds 9/10 of the budget (the
   * last tenth is headroom for your own calls) and, after any 429, until its wait hint
   * passes (a minute without one). Your own calls are counted and never delayed. Clients made
   * by `withOptions` share the count, unless given their own `pollingBudget`. A whole number
   * from 1; default 120 (the service's rate limit). See docs/retries.md.
   */
  pollingBudget?: number | undefined;
  /**
   * One budget for every process: `store.budget` of `postgresStore` or `redisStore` (or
   * `sharedBudget(store)` over a store of your own). The sliding minute of `pollingBudget` is
   * then kept in the store, on its server's clock, for every client given the same budget,
   * whichever process it runs in: your calls are recorded and never delayed, the SDK's own
   * wait for room. A store that fails: each client paces alone, and says so once at warn.
   * Default: none (each client counts its own). See docs/retries.md.
   */
  requestBudget?: RequestBudget | undefined;
  /**
   * Longest wait, in ms, a 429 or 503 may ask for (`Retry-After`, else `RateLimit-Reset`,
   * `X-RateLimit-Reset`, `X-Rate-Limit-Reset`, `X-RateLimit-Retry-After`) and still be waited
   * out before a retry. A longer one is not waited: the `RateLimitError` (its `retryAfter`
   * says what was read) goes back to the caller at once. Default 60 000 (a serverless
   * function should not sleep for minutes); 0 retries only on a hint of 0 or none.
   */
  maxRetryAfter?: number | undefined;
  /**
   * The country of phone numbers written in local form (`0712 345 678`): every
   * `customer_phone` and payout `destination` is read in it and sent as international digits
   * (`255712345678`). `TZ` (default, the spec's Tanzanian numbers), `KE`, `UG`, `RW` or `BD`.
   * A number of another country is refused before sending, with what to pass instead. See
   * `normalizePhone`.
   */
  phoneCountry?: PhoneCountry | undefined;
  /**
   * The clock requests are signed with (`X-Timestamp`), ms since the epoch. Default
   * `Date.now`, read at each signature. In tests, a test clock's `now` (`createTestClock()`
   * from `business-payments/testing`), the one the sandbox runs on: its requests stay inside
   * the service's 300 s window however far the clock is moved.
   */
  now?: (() => number) | undefined;
}

/** Per-call options, the last argument of every method. */
export interface RequestOptions {
  /** Idempotency-Key for a create call (≤ 64 characters). Default: one generated per call and reused on every retry. */
  idempotencyKey?: string | undefined;
  /** Milliseconds per attempt for this call. */
  timeout?: number | undefined;
  /** Retries for this call. */
  maxRetries?: number | undefined;
  /** Aborts the call (and any pending retry). */
  signal?: AbortSignal | undefined;
  /** Extra headers for this call. The SDK's auth and signing headers cannot be overridden. */
  headers?: Record<string, string> | undefined;
  /** Largest response body this call reads, in bytes after decompression (see the client option). */
  maxResponseBytes?: number | undefined;
  /** `fetch` init for this call, merged over the client's `fetchOptions`. */
  fetchOptions?: FetchOptions | undefined;
}

/**
 * `fetch` init the SDK passes through: anything the runtime's `fetch` takes besides what the
 * SDK sets itself (`dispatcher` on Node, `proxy` on Bun, `client` on Deno, `keepalive`…).
 */
// `dispatcher` is left out of RequestInit: @types/node types it as its own undici-types
// Dispatcher, which an `undici` package of another version does not always match.
export type FetchOptions = Omit<RequestInit, 'method' | 'headers' | 'body' | 'signal' | 'redirect' | 'dispatcher'> & {
  /** Node (undici): the dispatcher, e.g. `new ProxyAgent('http://proxy:8080')` from the `undici` package. */
  dispatcher?: unknown;
  /** Bun: a proxy URL (`http://proxy:8080`), or `{ url, headers }` for a proxy that wants its own headers. */
  proxy?: string | URL | { url: string | URL; headers?: Record<string, string> } | undefined;
  /** Deno: an HTTP client from `Deno.createHttpClient({ proxy })`. */
  client?: unknown;
  /** Any other option your runtime's `fetch` takes. */
  [option: string]: unknown;
};

/** The fully defaulted shape the client works with. */
export interface ResolvedOptions {
  environment: Environment;
  merchantKey: string;
  apiKey: string;
  apiSecret: string;
  baseUrl: string;
  timeout: number;
  maxRetries: number;
  /** The caller's fetch; undefined means the global one, looked up at call time. */
  fetch: typeof fetch | undefined;
  fetchOptions: FetchOptions | undefined;
  logger: Logger;
  logLevel: LogLevel;
  defaultHeaders: Record<string, string>;
  maxResponseBytes: number;
  maxRetryAfter: number;
  pollingBudget: number;
  requestBudget: RequestBudget | undefined;
  phoneCountry: PhoneCountry;
  /** The caller's clock; undefined means `Date.now`, read at each signature. */
  now: (() => number) | undefined;
}

/** Largest per-attempt timeout a timer can hold (2^31 - 1 ms). */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** Headers the SDK owns: a caller's value would break signing or authentication. */
export const RESERVED_HEADERS = new Set([
  'x-timestamp',
  'x-signature',
  'x-environment',
  'x-merchant-key',
  'x-business-key',
  'x-api-key',
  'content-type',
  'accept',
  'idempotency-key',
]);

/** What a caller's header of {@link RESERVED_HEADERS} is told. */
export const SDK_HEADER = 'is set by the SDK (auth, signing, content type) and cannot be overridden';

// Defaults: environment `sandbox`, timeout 30 000 ms, maxRetries 2, logLevel `off`, and
// maxResponseBytes 8 MiB: over a hundred times the largest answers (openapi.json ~57 KB), a
// bounded cost per call. Written where they are used (an object of them costs its keys).
const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/** Every log level, least to most verbose: a level logs what the ones before it log. */
export const LOG_LEVELS: readonly LogLevel[] = ['off', 'error', 'warn', 'info', 'debug'];

/** Normalises options once: env defaults, validation, `ConfigurationError` naming what to fix. */
export function resolveOptions(options: ClientOptions = {}): ResolvedOptions {
  if (isBrowser() && !options.dangerouslyAllowBrowser) {
    throw new ConfigurationError(
      'PaymentsClient in a browser shows your API secret to every visitor: call the API from your server, ' +
        'or pass dangerouslyAllowBrowser: true to accept the risk.',
    );
  }

  const environment = options.environment ?? readEnv(envName('environment')) ?? 'sandbox';
  if (environment !== 'sandbox' && environment !== 'production') {
    throw new ConfigurationError(
      `environment must be 'sandbox' or 'production' (got ${JSON.stringify(String(environment))}); set the option or BUSINESS_PAYMENTS_ENVIRONMENT.`,
    );
  }

  const merchantKey = clientCredential('merchantKey', options.merchantKey, environment);
  const apiKey = clientCredential('apiKey', options.apiKey, environment);
  const apiSecret = clientCredential('apiSecret', options.apiSecret, environment);
  const baseUrl = resolveBaseUrl(options.baseUrl ?? readEnv(envName('baseUrl')), environment);

  const logLevel = options.logLevel ?? (readEnv('BUSINESS_PAYMENTS_LOG')?.toLowerCase() as LogLevel | undefined) ?? 'off';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigurationError(`logLevel must be one of ${LOG_LEVELS.join(', ')} (got ${JSON.stringify(logLevel)}).`);
  }

  if (options.fetch !== undefined && typeof options.fetch !== 'function') {
    throw new ConfigurationError('fetch must be a function, like the global fetch.');
  }
  if (options.now !== undefined && typeof options.now !== 'function') {
    throw new ConfigurationError('now must be a function, like Date.now.');
  }

  return {
    environment,
    merchantKey,
    apiKey,
    apiSecret,
    baseUrl,
    timeout: checkCount('timeout', options.timeout ?? 30_000, 1, MAX_TIMEOUT_MS),
    maxRetries: checkCount('maxRetries', options.maxRetries ?? 2, 0),
    fetch: options.fetch,
    fetchOptions: checkFetchOptions(options.fetchOptions),
    logger: options.logger ?? console,
    logLevel,
    defaultHeaders: checkDefaultHeaders(options.defaultHeaders),
    maxResponseBytes: checkCount('maxResponseBytes', options.maxResponseBytes ?? MAX_RESPONSE_BYTES, 1),
    maxRetryAfter: checkCount('maxRetryAfter', options.maxRetryAfter ?? 60_000, 0, MAX_TIMEOUT_MS),
    pollingBudget: checkCount('pollingBudget', options.pollingBudget ?? 120, 1),
    requestBudget: checkBudget(options.requestBudget),
    phoneCountry: checkPhoneCountry(options.phoneCountry ?? 'TZ'),
    now: options.now,
  };
}

// The variable an option defaults to: `apiSecret` → BUSINESS_PAYMENTS_API_SECRET.
const envName = (option: string): string => `BUSINESS_PAYMENTS_${option.replace(/[A-Z]/g, '_$&').toUpperCase()}`;

// What an option set neither in the code nor in its variable says.
const notSet = (option: string): string => `${option} is not set: pass new PaymentsClient({ ${option} }) or set ${envName(option)}`;

// A credential of the client: the option, else its variable (see `credential()` for the rule).
function clientCredential(name: string, given: string | undefined, environment: Environment): string {
  const variable = envName(name);
  const source = given == null ? variable : `${name} option`;
  const value = credential(given ?? readEnv(variable, true), source, notSet(name));
  // Sandbox credentials carry test_, live ones live_ (or no prefix): a mix is always a mistake.
  const [prefix, other] = environment === 'sandbox' ? ['live_', 'production'] : ['test_', 'sandbox'];
  if (value.startsWith(prefix)) {
    throw new ConfigurationError(
      `${source} is a ${prefix} (${other}) credential but environment is '${environment}': use your ${environment} credentials, or set environment: '${other}'.`,
    );
  }
  return value;
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

function resolveBaseUrl(value: string | undefined, environment: Environment): string {
  if (value === undefined || value === '') {
    throw new ConfigurationError(`${notSet('baseUrl')} (e.g. https://payments.example.com).`);
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // Not quoted: a value that does not parse may be a credential pasted into the wrong variable.
    throw new ConfigurationError('baseUrl is not an absolute URL: give the service root, e.g. https://payments.example.com.');
  }
  const fault =
    url.protocol !== 'https:' && url.protocol !== 'http:'
      ? `must use https: (got ${url.protocol})`
      : url.username || url.password
        ? 'must not contain a user name or password'
        : url.search || url.hash
          ? 'must not have a query string or fragment: routes are appended to it'
          : environment === 'production' && url.protocol !== 'https:' && !LOOPBACK.test(url.hostname)
            ? `must use https: in production (got ${url.origin}); plain http is allowed only for localhost`
            : '';
  if (fault) throw new ConfigurationError(`baseUrl ${fault}.`);
  return url.href.replace(/\/+$/, '');
}

function checkPhoneCountry(country: PhoneCountry): PhoneCountry {
  if (!PHONE_COUNTRIES.includes(country)) {
    throw new ConfigurationError(`phoneCountry must be one of ${PHONE_COUNTRIES.join(', ')} (got ${JSON.stringify(String(country))}).`);
  }
  return country;
}

function checkCount(name: string, value: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!isCount(value, min, max)) {
    throw new ConfigurationError(`${name} must be a whole number from ${min} to ${max} (got ${String(value)}).`);
  }
  return value;
}

const SDK_INIT = ['method', 'headers', 'body', 'signal', 'redirect'];

// A budget is what the client can pace over (its hook): a store's own methods are not enough.
function checkBudget(budget: RequestBudget | undefined): RequestBudget | undefined {
  if (budget === undefined || typeof budget?.pace === 'function') return budget;
  throw new ConfigurationError('requestBudget must be store.budget or sharedBudget(store).');
}

/** `fetchOptions` without the keys the SDK owns: a `ConfigurationError` names the one set. */
export function checkFetchOptions(init: FetchOptions | undefined, where = 'fetchOptions'): FetchOptions | undefined {
  if (init === undefined) return undefined;
  if (typeof init !== 'object' || init === null) throw new ConfigurationError(`${where} must be an object of fetch options.`);
  const owned = SDK_INIT.find((key) => init[key] !== undefined);
  if (owned) {
    throw new ConfigurationError(
      `${where}.${owned} cannot be set: the SDK sets it on every request (use headers/defaultHeaders for headers, signal for aborting).`,
    );
  }
  return init;
}

function checkDefaultHeaders(headers: Record<string, string> | undefined): Record<string, string> {
  for (const name of Object.keys(headers ?? {})) {
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      throw new ConfigurationError(`defaultHeaders.${name} ${SDK_HEADER}.`);
    }
  }
  return { ...headers };
}
