// The intent part of a store: one record per payout intent (its key, what to pay, where it
// stands), changed only by compare-and-swap on its version, so that every process sharing
// the store agrees on who sends and what the service said. Small on purpose, like the
// fulfillment store: a merchant can bring any database with a conditional write.

/**
 * Where a payout intent stands:
 * - `pending`: recorded, not sent (a crash came between the record and the send);
 * - `unknown`: sent, and the answer is not known (lost, a timeout, a 5xx, a crash while it was
 *   in flight);
 * - `in_progress`, `ambiguous`: the service said INPROGRESS or AMBIGUOUS (or another word that
 *   names no outcome): a payout exists or may, and is not settled;
 * - `sent`: the service accepted it and paid (`payout.status` is its own word);
 * - `failed`: the service refused it, or the payout failed: nothing was paid, so a new key may
 *   try again;
 * - `needs_review`: resolve could not tell, and sending again could pay twice: for a person
 *   (`note` says why; `confirmResend(key)` is the way out).
 *
 * `sent`, `failed` and `needs_review` are final: `resolve()` leaves them alone.
 */
export type PayoutIntentState = 'pending' | 'in_progress' | 'ambiguous' | 'unknown' | 'sent' | 'failed' | 'needs_review';

/** One payout intent, as the store keeps it (plain JSON: numbers are ms since the epoch). */
export interface PayoutIntent {
  /** Your key for this payout (also its Idempotency-Key): 1–64 characters. */
  key: string;
  /** The amount to pay out, in currency units. */
  amount: number;
  /** The settlement number to pay, when given. */
  destination?: string | undefined;
  /** Where it stands (see {@link PayoutIntentState}). */
  state: PayoutIntentState;
  /** 1 when recorded, one more on each change: every change is a compare-and-swap on it. */
  version: number;
  /** When it was recorded (the kit's clock, ms since the epoch). */
  createdAt: number;
  /** When it last changed. */
  updatedAt: number;
  /** When it was last sent (its first send, or a re-send), if ever. */
  sentAt?: number | undefined;
  /**
   * The service's time of its first send (its clock, from the `Date` of the answer, or of the
   * last answer the sending process saw), when known: `resolve()` judges the key window from it.
   */
  serviceAt?: number | undefined;
  /** How many times it was sent (re-sends carry the same key). */
  sends: number;
  /** The service's payout id, once known. */
  payoutId?: string | undefined;
  /** The payout as the service last described it (its `status` is the service's own word). */
  payout?: Record<string, unknown> | undefined;
  /** How the payout was found: its `answer`, `retrieve` by id, or a `list` match (by amount, destination and time: ambiguous by nature). */
  matchedBy?: 'answer' | 'retrieve' | 'list' | undefined;
  /** Why it stands where it does, when there is more to say (always for `needs_review`). */
  note?: string | undefined;
  /** The last error met while sending or looking it up (redacted, as the SDK's errors are). */
  error?: string | undefined;
}

/**
 * The interface a store implements for payout intents (`memoryStore`, `postgresStore` and
 * `redisStore` do, as `store.payouts`). Every method is atomic across the processes sharing
 * the store.
 */
export interface PayoutIntentStore {
  /**
   * Records `intent` (its `version` is 1) unless an intent with its key exists. Resolves the
   * stored intent: `intent` itself when recorded now (`created: true`), else the one found.
   */
  add(intent: PayoutIntent): Promise<{ intent: PayoutIntent; created: boolean }>;
  /** The intent with this key, or `undefined`. */
  get(key: string): Promise<PayoutIntent | undefined>;
  /**
   * Replaces the intent with `next.key` by `next` only if the stored one's version is
   * `next.version - 1`. Resolves whether it did (false: another change came first, or there
   * is no such intent).
   */
  swap(next: PayoutIntent): Promise<boolean>;
  /** Intents in `state`, ordered by key, those with a key greater than `after` (when given), at most `limit`. */
  list(state: PayoutIntentState, limit: number, after?: string): Promise<PayoutIntent[]>;
  /**
   * Binds the service's payout `payoutId` to the intent `key` unless another intent holds it.
   * Resolves the key that holds it now (`key` itself, or the other one): a payout is never
   * matched to two intents.
   */
  bind(payoutId: string, key: string): Promise<string>;
  /** The key of the intent that holds `payoutId`, or `undefined`. */
  owner(payoutId: string): Promise<string | undefined>;
}

/* eslint-disable @typescript-eslint/require-await -- the memory store answers at once: `async` makes its promises */

/**
 * A store of payout intents in this process's memory, for tests and one-process scripts: it
 * forgets with its process (`durable: false`, so the CLI refuses it). In production pass
 * `postgresStore(pool)` or `redisStore(redis)`, which hold the intents beside the fulfilment
 * kit's records.
 *
 * @example
 * ```ts
 * import { createPayouts, memoryStore } from 'business-payments/payouts';
 *
 * const payouts = createPayouts({ client, store: memoryStore() });
 * ```
 */
export function memoryStore(): { readonly durable: false; readonly payouts: PayoutIntentStore } {
  return { durable: false, payouts: memoryIntents() };
}

/**
 * @internal The intents of `memoryStore()`: Maps in this process, kept as JSON text, so a caller
 * never holds the stored object.
 */
export function memoryIntents(): PayoutIntentStore {
  const intents = new Map<string, string>();
  const owners = new Map<string, string>();
  // Synchronous: a swap reads and writes in one turn of the event loop, so none comes between.
  const read = (key: string) => {
    const text = intents.get(key);
    return text === undefined ? undefined : (JSON.parse(text) as PayoutIntent);
  };
  return {
    async add(intent) {
      const created = !intents.has(intent.key);
      if (created) intents.set(intent.key, JSON.stringify(intent));
      return { intent: read(intent.key)!, created };
    },
    get: async (key) => read(key),
    swap: async (next) => read(next.key)?.version === next.version - 1 && !!intents.set(next.key, JSON.stringify(next)),
    list: async (state, limit, after = '') =>
      [...intents.keys()]
        .sort()
        .map((key) => JSON.parse(intents.get(key)!) as PayoutIntent)
        .filter((intent) => intent.state === state && intent.key > after)
        .slice(0, limit),
    bind: async (payoutId, key) => owners.get(payoutId) ?? (owners.set(payoutId, key), key),
    owner: async (payoutId) => owners.get(payoutId),
  };
}
