// The payment policy on top of ky's retry: which failures may be sent again, and how long to
// wait. ky does the rest (methods, status codes, backoff with jitter, the waiting).
import type { RetryOptions, ShouldRetryState } from 'ky';
import { isHTTPError, isNetworkError, isTimeoutError } from './ky.js';
import { retryAfterSeconds } from '../core/error.js';
import { unsettledIn } from '../core/payout-outcome.js';

/**
 * - `safe`: reads and previews; retried on every transient failure.
 * - `create`: carries one Idempotency-Key for all attempts, so a retry cannot charge twice.
 * - `push`: not idempotent (it rings the customer's phone); retried only when the server
 *   provably never saw it (connection refused, DNS failure) or answered 429.
 * - `once`: money moving out or a phone ringing, with an Idempotency-Key (payouts, a
 *   subscription, a push-mode payment). Retried only as `push` is: a server that keeps only
 *   2xx answers per key would act again.
 */
export type RetryMode = 'safe' | 'create' | 'push' | 'once';

/** Whether calls of `mode` carry an Idempotency-Key. */
export const sendsKey = (mode: RetryMode): boolean => mode === 'create' || mode === 'once';

/** Modes whose retries are limited to requests that provably never reached the server, or 429. */
const once = (mode: RetryMode): boolean => mode === 'push' || mode === 'once';

/** Statuses worth another attempt (the SDK's own polls wait for their next slot after one). Never a 3xx: redirects are refused, not retried. */
export const RETRYABLE_STATUS = [408, 429, 500, 502, 503, 504];

// Error codes (Node/undici, Bun, Deno) that mean no byte reached the server.
const NEVER_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ConnectionRefused']);
// Codes of a connection that failed on the way (the server may or may not have seen it).
const CONNECTION_CODE = /^(E[A-Z]+|UND_ERR_[A-Z_]+|Connection[A-Za-z]*)$/;

// Statuses whose wait hint (Retry-After, RateLimit-Reset…) is honoured; 413 is never retried here.
const AFTER_STATUS = [429, 503];

const INITIAL_DELAY_MS = 500;
const MAX_DELAY_MS = 8_000;
/** Default of the `maxRetryAfter` option: a longer wait hint is not waited out, the error goes back to the caller. */
const MAX_RETRY_AFTER_MS = 60_000;

/**
 * ky's retry options for one call. The wait hint is read once, by the SDK
 * (`retryAfterSeconds`, the reading RateLimitError reports), never by ky: `afterStatusCodes`
 * is empty and the hint reaches ky as this call's next delay.
 */
export function retryOptions(mode: RetryMode, limit: number, maxRetryAfter = MAX_RETRY_AFTER_MS): RetryOptions {
  let hint: number | undefined;
  const options: RetryOptions = {
    limit,
    methods: ['get', 'post'],
    statusCodes: RETRYABLE_STATUS,
    afterStatusCodes: [],
    // The server's hint as it said; else capped before the jitter, so waits at the cap still spread out.
    delay: (attempt) => hint ?? Math.min(INITIAL_DELAY_MS * 2 ** (attempt - 1), MAX_DELAY_MS),
    // Up to a quarter off, so a burst of clients does not retry in lockstep.
    jitter: (delay) => (hint === undefined ? delay * (1 - 0.25 * Math.random()) : delay),
    shouldRetry: (state) => {
      const after = waitHint(state.error);
      hint = after === undefined ? undefined : after * 1000;
      // A wait longer than the cap goes back to the caller as the error (a serverless
      // function cannot sleep for minutes).
      return hint !== undefined && hint > maxRetryAfter ? false : shouldRetry(mode, state);
    },
  };
  if (!once(mode)) options.retryOnTimeout = true;
  return options;
}

// The seconds a 429 or 503 asked to wait, when it said.
const waitHint = (error: Error): number | undefined =>
  isHTTPError(error) && AFTER_STATUS.includes(error.response.status) ? retryAfterSeconds(error.response.headers) : undefined;

/**
 * The whole payment policy. `undefined` hands the decision to ky's defaults (its status
 * list, then the delay above), `false` vetoes a retry, `true` retries with that delay.
 */
function shouldRetry(mode: RetryMode, { error }: ShouldRetryState): boolean | undefined {
  if (isHTTPError(error)) {
    const { status } = error.response;
    if (once(mode) && status !== 429) return false;
    // A 429 that names an unsettled payout is an outcome, not a refusal.
    if (mode === 'once' && unsettledIn(error.data)) return false;
    return undefined;
  }
  if (isTimeoutError(error)) return !once(mode);
  if (once(mode)) return neverReachedServer(error);
  return isNetworkError(error) || connectionFailure(error);
}

/** True when the cause chain names a code that means the request never left. */
export function neverReachedServer(error: unknown): boolean {
  return someCause(error, (code) => NEVER_SENT_CODES.has(code), true);
}

// A custom fetch (node-fetch, undici's own) may reject with a coded error ky does not know.
function connectionFailure(error: unknown): boolean {
  return someCause(error, (code) => CONNECTION_CODE.test(code), false);
}

function someCause(error: unknown, test: (code: string) => boolean, all: boolean): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && test(code)) return true;
    // AggregateError (happy-eyeballs tries several addresses): every one must match when `all`.
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0) {
      const match = (e: unknown) => someCause(e, test, all);
      if (all ? errors.every(match) : errors.some(match)) return true;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
