// Which failures are retried, and how long to wait. One place, so the rules read as a table.

/**
 * - `safe`: reads and previews; retried on every transient failure.
 * - `create`: carries one Idempotency-Key for all attempts, so a retry cannot charge twice.
 * - `push`: not idempotent (it rings the customer's phone); retried only when the server
 *   provably never saw it (connection refused, DNS failure) or answered 429.
 */
export type RetryMode = 'safe' | 'create' | 'push';

const RETRYABLE_STATUS = new Set([408, 429, 500, 502, 503, 504]);

// Error codes (Node/undici, Bun, Deno) that mean no byte reached the server.
const NEVER_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ConnectionRefused']);

export const INITIAL_DELAY_MS = 500;
export const MAX_DELAY_MS = 8_000;
/** A Retry-After longer than this is not waited out: the error goes back to the caller. */
export const MAX_RETRY_AFTER_MS = 60_000;

export function retryableStatus(mode: RetryMode, status: number): boolean {
  if (mode === 'push') return status === 429;
  return RETRYABLE_STATUS.has(status);
}

/** `timedOut`: the attempt ran past its timeout (the server may have acted on it). */
export function retryableFailure(mode: RetryMode, error: unknown, timedOut: boolean): boolean {
  if (mode !== 'push') return true;
  return !timedOut && neverReachedServer(error);
}

export function neverReachedServer(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && NEVER_SENT_CODES.has(code)) return true;
    // AggregateError (happy-eyeballs tries several addresses): every one must have been refused.
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0 && errors.every((e) => neverReachedServer(e))) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Milliseconds to wait before retry number `retry` (1-based). A server Retry-After wins
 * when it is sane; `undefined` means "do not retry" (the server asked for too long a wait).
 */
export function retryDelay(retry: number, retryAfterMs: number | undefined, random: number): number | undefined {
  if (retryAfterMs !== undefined) {
    if (retryAfterMs > MAX_RETRY_AFTER_MS) return undefined;
    if (retryAfterMs >= 0) return retryAfterMs;
  }
  const base = Math.min(INITIAL_DELAY_MS * 2 ** (retry - 1), MAX_DELAY_MS);
  // Jitter takes up to a quarter off, so a burst of clients does not retry in lockstep.
  return base * (1 - 0.25 * random);
}
