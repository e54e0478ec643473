import ky, { isKyError, isTimeoutError } from 'ky';
import type * as z from 'zod';
import { APIPromise, type WithResponse } from './core/api-promise.js';
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  PaymentsError,
  retryAfterSeconds,
} from './core/error.js';
import { listBody, PagePromise, toPage, type ListBody, type ListPage } from './core/pagination.js';
import {
  resolveOptions,
  type ClientOptions,
  type Environment,
  type LogLevel,
  type RequestOptions,
  type ResolvedOptions,
} from './internal/options.js';
import { parseBody, validateResponse, type ParsedBody } from './internal/parse.js';
import { redactBody, redactHeaders } from './internal/redact.js';
import { retryableFailure, retryableStatus, retryDelay, type RetryMode } from './internal/retry.js';
import { signRequest } from './internal/signing.js';
import { validateInputs, type Checked } from './internal/validate.js';
import { Balance } from './resources/balance.js';
import { Billing } from './resources/billing/index.js';
import { OpenAPIDocument } from './resources/openapi.js';
import { Payments } from './resources/payments.js';
import { Payouts } from './resources/payouts.js';
import { SiteInfoResource } from './resources/site-info.js';

/** @internal One route call, as a resource describes it. */
export interface RequestSpec<S extends z.ZodType> {
  /** `resource.method`, used in error messages and logs. */
  operation: string;
  method: 'GET' | 'POST';
  /** Route with `{name}` placeholders filled from `pathParams`, percent-encoded. */
  path: string;
  pathParams?: Record<string, Checked>;
  /** Body (POST) or query (GET) params and their schema. */
  params?: Checked;
  /** URL fields of `params` that must be https:// in production. */
  httpsInProduction?: readonly string[];
  response: S;
  /** Default: `safe` for GET, `create` for POST. */
  retry?: RetryMode;
  /** A body for which no retry may happen, whatever the status (payout INPROGRESS/AMBIGUOUS). */
  finalOutcome?: (body: unknown) => boolean;
}

const LEVELS: Record<LogLevel, number> = { off: 0, error: 1, warn: 2, info: 3, debug: 4 };
const CLOCK_SKEW_LIMIT_S = 300;

/**
 * The Business Payments API client. One client holds one environment's credential set.
 *
 * @example
 * ```ts
 * import { PaymentsClient } from 'business-payments';
 *
 * const client = new PaymentsClient(); // reads BUSINESS_PAYMENTS_* env vars
 * const payment = await client.payments.create({
 *   payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1001',
 * });
 * console.log(payment.checkout_url);
 * ```
 */
export class PaymentsClient {
  /** Payments: hosted checkout and USSD push, list, retrieve, verify. */
  readonly payments: Payments;
  /** Wallet balances. */
  readonly balance: Balance;
  /** Gateway branding and environment labels. */
  readonly siteInfo: SiteInfoResource;
  /** Payouts of settled balance to the approved settlement number. */
  readonly payouts: Payouts;
  /** Recurring billing: plans, subscriptions, invoices. */
  readonly billing: Billing;

  // Private: the secret must never show in JSON.stringify, util.inspect or an error.
  readonly #options: ResolvedOptions;

  /** @throws {ConfigurationError} when configuration is missing or contradictory. */
  constructor(options: ClientOptions = {}) {
    this.#options = resolveOptions(options);
    this.payments = new Payments(this);
    this.balance = new Balance(this);
    this.siteInfo = new SiteInfoResource(this);
    this.payouts = new Payouts(this);
    this.billing = new Billing(this);
  }

  /** The environment every request is sent to (`X-Environment`). */
  get environment(): Environment {
    return this.#options.environment;
  }

  /** The service address routes are appended to. */
  get baseUrl(): string {
    return this.#options.baseUrl;
  }

  /** @internal Milliseconds now, from the configured clock. */
  now(): number {
    return this.#options.clock.now();
  }

  /** @internal Sleeps on the configured clock. */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.#options.clock.sleep(ms, signal);
  }

  /** The service's machine-readable description (GET /api/v1/openapi.json). */
  openapi(options?: RequestOptions): APIPromise<OpenAPIDocument> {
    return this.request(
      { operation: 'openapi', method: 'GET', path: '/api/v1/openapi.json', response: OpenAPIDocument },
      options,
    );
  }

  /** @internal Sends one call through the pipeline: validate, sign, send, retry, parse. */
  request<S extends z.ZodType>(spec: RequestSpec<S>, options?: RequestOptions): APIPromise<z.output<S>> {
    return new APIPromise(this.#send(spec, options));
  }

  /** @internal A list call: the first page now, every page on `for await`. */
  requestPage<T>(
    spec: Omit<RequestSpec<z.ZodType>, 'response' | 'params'> & { item: z.ZodType<T>; params: z.ZodType; value: object | undefined },
    options?: RequestOptions,
  ): PagePromise<T> {
    const response = listBody(spec.item) as unknown as z.ZodType<ListBody<T>>;
    const fetchPage = async (offset: number | undefined): Promise<WithResponse<ListPage<T>>> => {
      const value = offset === undefined ? spec.value : { ...spec.value, offset };
      const result = await this.#send({ ...spec, params: [spec.params, value], response }, options);
      const query = (value ?? {}) as { offset?: number; limit?: number };
      return { data: toPage(result.data, query.offset ?? 0, query.limit), response: result.response };
    };
    return new PagePromise(fetchPage(undefined), fetchPage);
  }

  async #send<S extends z.ZodType>(spec: RequestSpec<S>, options: RequestOptions = {}): Promise<WithResponse<z.output<S>>> {
    const o = this.#options;
    const { path: pathValues, params } = validateInputs(spec.operation, spec, o.environment, options);

    const url = new URL(o.baseUrl + spec.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(pathValues[name]!)));
    if (spec.method === 'GET' && params) url.search = toQuery(params as Record<string, unknown>);
    // Sign what the URL parser will put on the wire, not what we typed: they can differ.
    const pathWithQuery = url.pathname + url.search;
    const body = spec.method === 'POST' ? JSON.stringify(params ?? {}) : '';

    const mode = spec.retry ?? (spec.method === 'GET' ? 'safe' : 'create');
    // One key per call, reused by every retry: the server replays instead of charging twice.
    const idempotencyKey = options.idempotencyKey ?? (mode === 'create' ? crypto.randomUUID() : undefined);
    const maxRetries = options.maxRetries ?? o.maxRetries;
    const timeout = options.timeout ?? o.timeout;
    const { signal } = options;

    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) throw new APIUserAbortError(`${spec.operation} was aborted.`, { cause: signal.reason });
      const timestamp = Math.floor(o.clock.now() / 1000);
      const headers: Record<string, string> = {
        ...o.defaultHeaders,
        ...options.headers,
        'Content-Type': 'application/json',
        Accept: 'application/json',
        'X-Environment': o.environment,
        'X-Merchant-Key': o.merchantKey,
        'X-API-Key': o.apiKey,
        'X-Timestamp': String(timestamp),
        'X-Signature': await signRequest({ secret: o.apiSecret, timestamp, method: spec.method, pathWithQuery, body }),
      };
      if (idempotencyKey !== undefined) headers['Idempotency-Key'] = idempotencyKey;
      const started = o.clock.now();
      this.#log('debug', `${spec.method} ${pathWithQuery} attempt ${attempt + 1}`, {
        headers: redactHeaders(headers),
        body: params === undefined ? undefined : redactBody(params),
      });

      let response: Response;
      let parsed: ParsedBody;
      // ky's timeout ends when the headers arrive: this controller and deadline also bound
      // the body read, so a server that stalls mid-body cannot hang the call forever.
      const attemptAbort = new AbortController();
      const deadline = Date.now() + timeout;
      try {
        response = await ky(url, {
          method: spec.method,
          headers,
          body: spec.method === 'POST' ? body : undefined,
          timeout,
          retry: 0,
          throwHttpErrors: false,
          fetch: o.fetch,
          signal: signal ? AbortSignal.any([signal, attemptAbort.signal]) : attemptAbort.signal,
        });
      } catch (cause) {
        // ky's errors hold the Request, whose headers carry X-API-Key and X-Signature (which the
        // logger redacts): expose only the underlying failure, as error trackers print causes.
        const reason: unknown = isKyError(cause) ? (cause as { cause?: unknown }).cause : cause;
        if (signal?.aborted) throw new APIUserAbortError(`${spec.operation} was aborted.`, { cause: reason });
        const timedOut = isTimeoutError(cause);
        const error = timedOut
          ? new APITimeoutError(`${spec.operation} timed out after ${timeout} ms.`, { cause: reason })
          : new APIConnectionError(`${spec.operation} could not reach ${url.origin}: ${describeCause(cause)}.`, { cause: reason });
        if (attempt < maxRetries && retryableFailure(mode, cause, timedOut)) {
          await this.#wait(spec, attempt, undefined, error, signal);
          continue;
        }
        this.#log('error', `${spec.method} ${pathWithQuery} failed: ${error.message}`);
        throw error;
      }

      try {
        parsed = parseBody(await readText(response, deadline - Date.now(), attemptAbort));
      } catch (cause) {
        if (signal?.aborted) throw new APIUserAbortError(`${spec.operation} was aborted.`, { cause });
        const error =
          cause instanceof BodyTimeout
            ? new APITimeoutError(`${spec.operation} timed out after ${timeout} ms while reading the response body.`, { cause })
            : new APIConnectionError(`${spec.operation}: the connection broke while reading the response (${describeCause(cause)}).`, { cause });
        // The server saw this request: only idempotent modes may send it again.
        if (attempt < maxRetries && retryableFailure(mode, cause, true)) {
          await this.#wait(spec, attempt, undefined, error, signal);
          continue;
        }
        // Logged like the other final failures (this branch used to throw silently).
        this.#log('error', `${spec.method} ${pathWithQuery} failed: ${error.message}`);
        throw error;
      }
      this.#log('info', `${spec.method} ${pathWithQuery} → ${response.status} in ${o.clock.now() - started} ms`);

      if (response.ok) {
        const data = validateResponse(spec.operation, spec.response, parsed, response.status, response.headers.get('content-type'));
        return { data, response };
      }

      // Retry-After read once, on the client's clock: the error reports it, the wait honours it.
      const retryAfter = retryAfterSeconds(response.headers, o.clock.now());
      const error = this.#apiError(response, parsed, retryAfter);
      const final = parsed.json && spec.finalOutcome?.(parsed.value) === true;
      if (!final && attempt < maxRetries && retryableStatus(mode, response.status)) {
        if (await this.#wait(spec, attempt, retryAfter === undefined ? undefined : retryAfter * 1000, error, signal)) continue;
      }
      this.#log('warn', `${spec.method} ${pathWithQuery} failed: ${error.message}`);
      throw error;
    }
  }

  /** Sleeps before a retry; false when the server asked for a longer wait than we allow. */
  async #wait(
    spec: RequestSpec<z.ZodType>,
    attempt: number,
    retryAfterMs: number | undefined,
    error: PaymentsError,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    const delay = retryDelay(attempt + 1, retryAfterMs, this.#options.clock.random());
    if (delay === undefined) return false;
    this.#log('warn', `${spec.operation} attempt ${attempt + 1} failed (${error.message}); retrying in ${Math.round(delay)} ms`);
    try {
      await this.#options.clock.sleep(delay, signal);
    } catch (cause) {
      throw new APIUserAbortError(`${spec.operation} was aborted.`, { cause });
    }
    return true;
  }

  #apiError(response: Response, parsed: ParsedBody, retryAfter: number | undefined): APIError {
    const body = parsed.json ? parsed.value : parsed.text;
    const init = { status: response.status, body, headers: response.headers, retryAfter };
    if (response.status === 401) {
      // A 401 from a clock that is off looks like bad credentials: say which it is.
      const serverDate = Date.parse(response.headers.get('date') ?? '');
      const skew = Number.isNaN(serverDate) ? 0 : Math.round((this.#options.clock.now() - serverDate) / 1000);
      if (Math.abs(skew) > CLOCK_SKEW_LIMIT_S) {
        const base = APIError.generate(init).message;
        return APIError.generate({
          ...init,
          message:
            `${base}. Your clock is ${Math.abs(skew)} s ${skew > 0 ? 'ahead of' : 'behind'} the server's; ` +
            `signed requests are refused outside ${CLOCK_SKEW_LIMIT_S} s. Synchronise the system clock (NTP).`,
        });
      }
    }
    return APIError.generate(init);
  }

  #log(level: Exclude<LogLevel, 'off'>, message: string, details?: unknown): void {
    const { logger, logLevel } = this.#options;
    if (LEVELS[level] > LEVELS[logLevel]) return;
    if (details === undefined) logger[level](`[business-payments] ${message}`);
    else logger[level](`[business-payments] ${message}`, details);
  }

  /** What `JSON.stringify(client)` shows: configuration without credentials. */
  toJSON(): Record<string, unknown> {
    return { environment: this.environment, baseUrl: this.baseUrl, maxRetries: this.#options.maxRetries, timeout: this.#options.timeout };
  }

  /** What `util.inspect(client)` (and console.log) shows: no credentials. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `PaymentsClient ${JSON.stringify(this.toJSON())}`;
  }
}

class BodyTimeout extends Error {
  override name = 'BodyTimeout';
}

/** `response.text()` within `ms` (real time, like ky's timeout); on expiry the attempt is aborted. */
async function readText(response: Response, ms: number, attemptAbort: AbortController): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new BodyTimeout('the response body did not arrive in time'));
      attemptAbort.abort();
    }, Math.max(0, ms));
  });
  try {
    return await Promise.race([response.text(), expired]);
  } finally {
    clearTimeout(timer);
  }
}

function toQuery(params: Record<string, unknown>): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null) query.append(key, String(value));
  }
  return query.toString();
}

function describeCause(cause: unknown): string {
  const parts: string[] = [];
  let current: unknown = cause;
  for (let depth = 0; depth < 4 && current; depth++) {
    const { message, code } = current as { message?: unknown; code?: unknown };
    if (typeof code === 'string') parts.push(code);
    else if (typeof message === 'string' && message) parts.push(message);
    current = (current as { cause?: unknown }).cause;
  }
  return parts.join(': ') || 'network error';
}
