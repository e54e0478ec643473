// The store behind the fulfillment kit: who holds a payment's (or an event's) claim right
// now, and which outcome is already recorded. Small on purpose, so a merchant can bring
// DynamoDB or anything else with a conditional write.

/**
 * A claim won on one key: run the handler, then `complete` (the outcome is recorded and the
 * key is never claimed again) or `release` (the key is free at once, e.g. the handler threw).
 */
export interface StoreClaim<Db = unknown> {
  /**
   * Where the handler may write so that its writes commit with the claim (Postgres: the
   * claim's own transaction). `undefined` for stores without one.
   */
  readonly db?: Db;
  /** Records `outcome` for the key and ends the claim. */
  complete(outcome: string): Promise<void>;
  /** Ends the claim without an outcome: the next claimer may run the handler. */
  release(): Promise<void>;
}

/** What {@link FulfillmentStore.claim} found. */
export type ClaimResult<Db = unknown> =
  /** The key is this caller's until it completes, releases, or the lease runs out. */
  | { claimed: StoreClaim<Db> }
  /** An outcome is recorded already: nothing to run. */
  | { done: string }
  /** Another live claim holds the key. */
  | { busy: true };

/**
 * The interface every store implements (memory, Postgres, Redis, or your own).
 *
 * - `claim(key, leaseMs)`: atomically, across every process sharing the store: if an outcome
 *   is recorded for `key`, `{ done: outcome }`; else if another claim holds it and its lease
 *   has not run out, `{ busy: true }`; else `{ claimed }`, held for `leaseMs` (how long a
 *   crashed holder keeps others out).
 * - `outcome(key)`: the recorded outcome, if any (used by `reconcile` to skip settled
 *   payments without a verify call).
 * - `remember(key)` and `unsettled(limit)` (optional; the stores of this package have them):
 *   keys reported but not settled yet. The earlier generation of the service sends its IPN
 *   once and never again, and has no payment list, so these are what `reconcile` walks there.
 */
export interface FulfillmentStore<Db = unknown> {
  /** Claims `key` for `leaseMs` ms (see the interface). */
  claim(key: string, leaseMs: number): Promise<ClaimResult<Db>>;
  /** The outcome recorded for `key`, or `undefined`. */
  outcome(key: string): Promise<string | undefined>;
  /** Records `key` as reported and not settled yet (idempotent; durable for as long as outcomes are). */
  remember?(key: string): Promise<void>;
  /** Remembered keys without a recorded outcome, oldest first, at most `limit`. */
  unsettled?(limit: number): Promise<string[]>;
  /** `false` for a store that forgets with its process (`memoryStore`): the CLI's reconcile refuses it. */
  readonly durable?: boolean;
}

type Entry = { outcome: string } | { token: object; until: number };

let warned = false;

/**
 * The default store: a `Map` in this process, its leases timed on a monotonic clock
 * (`performance.now()`; `now` injects another). Claims are exact within one process and
 * nothing more: on serverless platforms and with several servers, every instance has its
 * own map, so use `postgresStore` or `redisStore` there. It says so once (console.warn) when
 * it sees `NODE_ENV=production`.
 */
export function memoryStore(options: { now?: () => number } = {}): FulfillmentStore<undefined> {
  // Leases on a monotonic clock: a wall-clock step (NTP, a VM resumed) neither ends a claim
  // early nor keeps it for ever.
  const now = options.now ?? (() => performance.now());
  const entries = new Map<string, Entry>();
  // Insertion order is the order they were reported in: oldest first.
  const remembered = new Set<string>();
  const settled = (key: string) => {
    const entry = entries.get(key);
    return entry !== undefined && 'outcome' in entry;
  };
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  if (!warned && env?.NODE_ENV === 'production') {
    warned = true;
    console.warn('[business-payments] memoryStore() is for one process: use postgresStore or redisStore in production.');
  }
  return {
    durable: false,
    claim(key, leaseMs) {
      const entry = entries.get(key);
      if (entry && 'outcome' in entry) return Promise.resolve({ done: entry.outcome });
      if (entry && entry.until > now()) return Promise.resolve({ busy: true } as const);
      const token = {};
      entries.set(key, { token, until: now() + leaseMs });
      // Only the holder may end its claim: one whose lease ran out and was taken over is stale.
      const mine = () => (entries.get(key) as { token?: object } | undefined)?.token === token;
      const claimed: StoreClaim<undefined> = {
        complete: (outcome) => Promise.resolve(void (mine() && entries.set(key, { outcome }))),
        release: () => Promise.resolve(void (mine() && entries.delete(key))),
      };
      return Promise.resolve({ claimed });
    },
    outcome: (key) => {
      const entry = entries.get(key);
      return Promise.resolve(entry && 'outcome' in entry ? entry.outcome : undefined);
    },
    remember: (key) => Promise.resolve(void (settled(key) || remembered.add(key))),
    unsettled(limit) {
      const out: string[] = [];
      for (const key of remembered) {
        if (settled(key)) remembered.delete(key);
        else if (out.push(key) >= limit) break;
      }
      return Promise.resolve(out);
    },
  };
}
