// Idempotency-Key on create routes: the same key, merchant, environment, route and body
// within 24 h (the spec's retention, on the service clock) replays the stored response
// (status and body, byte for byte) without creating anything; the same key with another body
// is refused. Only successful (2xx) responses are stored, so a request that failed
// (validation, decision order) can be fixed and resent with the same key. Concurrent
// requests with one key wait for the first to finish.
//
// Bounded for a sandbox left running for days: each answered key costs one small flat
// record (a 53-bit hash of the body instead of the body, the answer's text, two numbers).
// Keys leave only when their 24 h are over. When `max` keys are all younger than that, a
// request with a *new* key is refused with 503 and a Retry-After until the oldest expires:
// answering it without keeping its key could create a second payment when it is replayed.
// Replays of kept keys, and requests without a key, are served as always.
import type { Ctx } from './context.js';
import { TIMING } from './defaults.js';
import { errorResponse, RAW_TEXT, validationFailed } from './responses.js';
import { canonicalJson } from './util.js';

/** An answered key: what a replay needs, and nothing else. */
interface Answered {
  /** Clock time (ms) of the answer: the key expires 24 h later. */
  at: number;
  /** 53-bit hash of the canonical request body. */
  fingerprint: number;
  status: number;
  /** The answer's JSON text. */
  body: string;
}

/** Longest accepted Idempotency-Key. */
const MAX_KEY_LENGTH = 64;

/** Default of `limits.idempotencyKeys`: keys kept at once (each for 24 h). */
export const DEFAULT_MAX_KEYS = 50_000;

/** Where a key applies: one merchant, environment and route. */
export interface IdempotencyScope {
  merchantId: number;
  environment: string;
  path: string;
  headers: Headers;
  body: unknown;
}

export class IdempotencyStore {
  // Insertion order is answer order: the first entries are the first to expire.
  readonly #answered = new Map<string, Answered>();
  readonly #inFlight = new Map<string, Promise<void>>();
  readonly #max: number;

  /** `max`: most keys kept at once (the service's `limits.idempotencyKeys`). */
  constructor(max: number) {
    this.#max = max;
  }

  /** Keys kept now (answered, not yet expired at the last request). */
  get size(): number {
    return this.#answered.size;
  }

  /**
   * Runs `create` under the request's Idempotency-Key (if any): replays, refuses reuse,
   * refuses a new key when the store is full, or creates and keeps the answer.
   */
  async run(ctx: Ctx, scope: IdempotencyScope, create: () => Promise<Response>): Promise<Response> {
    const key = scope.headers.get('idempotency-key');
    if (key === null || key === '') return create();
    if (key.length > MAX_KEY_LENGTH) {
      return validationFailed({ 'Idempotency-Key': [`The Idempotency-Key header may not be greater than ${MAX_KEY_LENGTH} characters.`] });
    }
    this.#purge(ctx.now());
    // Create routes are all POST: merchant, environment, path and key name the scope.
    const storeKey = `${scope.merchantId} ${scope.environment} ${scope.path} ${key}`;
    const fingerprint = hash53(canonicalJson(scope.body));
    // Another request with this key is being answered: wait, then look again.
    for (let pending = this.#inFlight.get(storeKey); pending; pending = this.#inFlight.get(storeKey)) await pending;
    const stored = this.#answered.get(storeKey);
    if (stored) return stored.fingerprint === fingerprint ? replay(stored) : reuse();
    if (this.#answered.size + this.#inFlight.size >= this.#max) return this.#full(ctx.now());
    return this.#createOnce(ctx, storeKey, fingerprint, create);
  }

  async #createOnce(ctx: Ctx, storeKey: string, fingerprint: number, create: () => Promise<Response>): Promise<Response> {
    let finish!: () => void;
    this.#inFlight.set(storeKey, new Promise<void>((resolve) => (finish = resolve)));
    try {
      const response = await create();
      if (response.status >= 200 && response.status < 300) {
        const body = RAW_TEXT.get(response) ?? (await response.clone().text());
        this.#answered.set(storeKey, { at: ctx.now(), fingerprint, status: response.status, body });
      }
      return response;
    } finally {
      this.#inFlight.delete(storeKey);
      finish();
    }
  }

  // 503 with the wait until the oldest key expires (the only way a place frees up).
  #full(now: number): Response {
    const oldest = this.#answered.values().next().value;
    const seconds = oldest ? Math.max(1, Math.ceil((oldest.at + TIMING.idempotencyMs - now) / 1000)) : 1;
    return errorResponse(
      503,
      'Idempotency key store full',
      `The sandbox keeps at most ${this.#max} Idempotency-Keys, each for 24 hours, and all are in use: a new key is accepted again in ${seconds} s. ` +
        'Replays of kept keys and requests without an Idempotency-Key still work; restart the sandbox or raise its idempotency-keys limit to start afresh.',
      { headers: { 'Retry-After': String(seconds) } },
    );
  }

  #purge(now: number): void {
    for (const [key, entry] of this.#answered) {
      if (now - entry.at < TIMING.idempotencyMs) return;
      this.#answered.delete(key);
    }
  }
}

function replay(stored: Answered): Response {
  const response = new Response(stored.body, {
    status: stored.status,
    headers: { 'Content-Type': 'application/json', 'Idempotent-Replayed': 'true' },
  });
  RAW_TEXT.set(response, stored.body);
  return response;
}

const reuse = (): Response =>
  errorResponse(
    422,
    'Idempotency key reuse',
    'This Idempotency-Key was already used with a different request body on this route; use a new key for a new request.',
  );

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
