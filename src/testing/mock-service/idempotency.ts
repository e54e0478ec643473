// Idempotency-Key on create routes: the same key, merchant, environment, route and body
// within 24 h replays the stored response (status and body, byte for byte) without creating
// anything; the same key with another body is refused. Only successful (2xx) responses are
// stored, so a request that failed (validation, decision order) can be fixed and resent
// with the same key. Concurrent requests with one key wait for the first to finish.
import type { Ctx } from './context.js';
import { TIMING } from './defaults.js';
import { canonicalJson, errorResponse, validationFailed } from './util.js';

interface Entry {
  /** A 53-bit hash of the canonical request body (the whole text costs memory per key). */
  fingerprint: number;
  createdAt: number;
  /** Settles when the first request is answered; dropped then (it is kept for every key). */
  done?: Promise<void> | undefined;
  response?: { status: number; body: string; contentType: string };
}

/** Longest accepted Idempotency-Key. */
export const MAX_KEY_LENGTH = 64;

export class IdempotencyStore {
  readonly #entries = new Map<string, Entry>();
  readonly #max: number;

  /** `max`: most keys kept; past it the oldest answered ones go first (the service's `limits.idempotencyKeys`). */
  constructor(max: number) {
    this.#max = max;
  }

  /**
   * Runs `create` under the request's Idempotency-Key (if any): replays, refuses reuse, or
   * creates and stores the result.
   */
  async run(
    ctx: Ctx,
    scope: { merchantId: number; environment: string; method: string; path: string; headers: Headers; body: unknown },
    create: () => Promise<Response>,
  ): Promise<Response> {
    const key = scope.headers.get('idempotency-key');
    if (key === null || key === '') return create();
    if (key.length > MAX_KEY_LENGTH) {
      return validationFailed({ 'Idempotency-Key': [`The Idempotency-Key header may not be greater than ${MAX_KEY_LENGTH} characters.`] });
    }
    this.#purge(ctx.now());
    const storeKey = JSON.stringify([scope.merchantId, scope.environment, scope.method, scope.path, key]);
    const fingerprint = hash53(canonicalJson(scope.body));

    let entry = this.#entries.get(storeKey);
    while (entry && !entry.response) {
      // Another request with this key is being answered: wait, then look again.
      await entry.done;
      entry = this.#entries.get(storeKey);
    }
    if (entry?.response) {
      if (entry.fingerprint !== fingerprint) {
        return errorResponse(
          422,
          'Idempotency key reuse',
          'This Idempotency-Key was already used with a different request body on this route; use a new key for a new request.',
        );
      }
      return new Response(entry.response.body, {
        status: entry.response.status,
        headers: { 'Content-Type': entry.response.contentType, 'Idempotent-Replayed': 'true' },
      });
    }

    let finish!: () => void;
    const fresh: Entry = { fingerprint, createdAt: ctx.now(), done: new Promise<void>((resolve) => (finish = resolve)) };
    this.#entries.set(storeKey, fresh);
    try {
      const response = await create();
      if (response.status >= 200 && response.status < 300) {
        fresh.response = {
          status: response.status,
          body: await response.clone().text(),
          contentType: response.headers.get('content-type') ?? 'application/json',
        };
      } else {
        this.#entries.delete(storeKey);
      }
      return response;
    } catch (error) {
      this.#entries.delete(storeKey);
      throw error;
    } finally {
      finish();
      fresh.done = undefined;
    }
  }

  #purge(now: number): void {
    // Insertion order is creation order: stop at the first entry still inside 24 h.
    for (const [key, entry] of this.#entries) {
      if (now - entry.createdAt < TIMING.idempotencyMs && this.#entries.size <= this.#max) break;
      if (entry.response) this.#entries.delete(key);
    }
  }
}

// cyrb53: a fast 53-bit string hash. A collision (about 1 in 2^53 per pair) would replay an
// answer for a different body; acceptable in a simulation, and it keeps each key small.
function hash53(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
