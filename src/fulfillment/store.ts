// The store behind the fulfillment kit, one small interface per concern: the claims (who holds
// a payment's or an event's key right now, and which outcome is already recorded), the
// unsettled list, the attempt counts and the inbox; FulfillmentStore is all of them. Small on
// purpose, so a merchant can bring DynamoDB or anything else with a conditional write. Below
// them, memoryStore(), the default.
import type { SubscriptionStore } from '../billing/store.js';
import type { RequestBudget } from './shared-budget.js';
import type { PayoutIntentStore } from '../payouts/store.js';
import type { PostgresQueryable } from './postgres-session.js';

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
  /**
   * Records `outcome` for the key and ends the claim. Resolves `false` (or rejects) when the
   * claim was no longer this holder's: its lease had run out (another holder may have run the
   * handler meanwhile), so the kit does not answer `ran`. `void` or `true`: it was.
   */
  complete(outcome: string): Promise<void | boolean>;
  /** Ends the claim without an outcome: the next claimer may run the handler. */
  release(): Promise<void>;
  /**
   * Extends the claim by its lease from now, while it is still this holder's (the kit calls
   * it every third of the lease while a handler runs, so a slow handler is never run twice).
   * Resolves `false` when the claim is no longer this holder's.
   */
  renew?(): Promise<boolean>;
  /**
   * Claims another key inside this claim (the kit: a payment's order): held until this claim
   * ends, and where the store is transactional (Postgres) its outcome commits with this
   * claim's. Without it, the kit claims the other key on its own.
   */
  claim?(key: string): Promise<ClaimResult<Db>>;
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
 * The claims part of a store: who holds a key right now, and which outcome is recorded for it.
 * Every store has it; the kit runs each handler inside a claim.
 *
 * - `claim(key, leaseMs)`: atomically, across every process sharing the store: if an outcome
 *   is recorded for `key`, `{ done: outcome }`; else if another claim holds it and its lease
 *   has not run out, `{ busy: true }`; else `{ claimed }`, held for `leaseMs` (how long a
 *   crashed holder keeps others out).
 * - `outcome(key)`: the recorded outcome, if any (used by `reconcile` to skip settled
 *   payments without a verify call).
 */
export interface ClaimStore<Db = unknown> {
  /** Claims `key` for `leaseMs` ms (see the interface). */
  claim(key: string, leaseMs: number): Promise<ClaimResult<Db>>;
  /** The outcome recorded for `key`, or `undefined`. */
  outcome(key: string): Promise<string | undefined>;
}

/**
 * The unsettled list of a store: keys reported but not settled yet. The earlier generation of
 * the service sends its IPN once and never again, and has no payment list, so these are what
 * `reconcile` walks there. Optional in a {@link FulfillmentStore} (the stores of this package
 * have it).
 */
export interface UnsettledStore {
  /** Records `key` as reported and not settled yet (idempotent; durable for as long as outcomes are). */
  remember(key: string): Promise<void>;
  /** Remembered keys without a recorded outcome, oldest first, at most `limit`. */
  unsettled(limit: number): Promise<string[]>;
}

/**
 * The attempts part of a store: how many attempts at paying an order were handed out
 * (`fulfillment.newAttempt`). Optional in a {@link FulfillmentStore}; without it,
 * `newAttempt` is refused.
 */
export interface AttemptStore {
  /**
   * Counts the attempts at paying `order`, atomically across processes: resolves 1, 2, 3…
   * (`fulfillment.newAttempt`). The count is readable as `outcome('attempts:' + order)`.
   */
  attempt(order: string): Promise<number>;
}

/**
 * The interface every store implements (memory, Postgres, Redis, or your own): the claims
 * ({@link ClaimStore}), and optionally the unsettled list ({@link UnsettledStore}), the
 * attempts ({@link AttemptStore}), the inbox ({@link InboxStore}), the payout intents and the
 * subscription records.
 */
export interface FulfillmentStore<Db = unknown> extends ClaimStore<Db>, Partial<UnsettledStore>, Partial<AttemptStore> {
  /** `false` for a store that forgets with its process (`memoryStore`): the CLI's reconcile refuses it. */
  readonly durable?: boolean;
  /** Where verified deliveries wait to be processed (the kit's inbox). Without it, `inbox: true` is refused. */
  readonly inbox?: InboxStore | undefined;
  /** Where payout intents live (`createPayouts` from `business-payments/payouts`). */
  readonly payouts?: PayoutIntentStore | undefined;
  /** Where subscription records live (`createBilling` from `business-payments/billing`). */
  readonly subscriptions?: SubscriptionStore | undefined;
  /**
   * The request budget every process sharing the store keeps (`postgresStore`, `redisStore`):
   * give it to the client, `new PaymentsClient({ requestBudget: store.budget })`.
   */
  readonly budget?: RequestBudget | undefined;
}

/**
 * The state of an inbox record: `pending` (due now or later), `done`, `dead` (failed
 * `maxAttempts` times), `review` (a payment for a person to look at: a duplicate payment of an
 * order, or an amount that does not match).
 */
export type InboxState = 'pending' | 'done' | 'dead' | 'review';

/** One record of the inbox. */
export interface InboxRecord {
  /** The delivery's id: the event id, or for an earlier-generation IPN `ipn:<trx_id>:<type>`. */
  id: string;
  /** Where it stands. */
  state: InboxState;
  /** The verified event (JSON text). */
  event: string;
  /** Processing attempts that failed so far. */
  attempts: number;
  /** The last failure's message, when one failed. */
  error?: string | undefined;
  /** When it was recorded, ms since the epoch. */
  at: number;
}

/** A record taken for processing: `token` fences it (a stale taker cannot finish it). */
export interface InboxLease extends InboxRecord {
  /** This taker's token. */
  token: string;
}

/** What a processed record becomes (`finish`). */
export interface InboxNext {
  /** The new state. */
  state: InboxState;
  /** The attempts count to keep. */
  attempts: number;
  /** `pending`: due again after this many ms. */
  delayMs?: number | undefined;
  /** The failure's message, if any. */
  error?: string | undefined;
}

/**
 * The inbox part of a store: verified deliveries recorded at once, processed later by any
 * process. Every method is atomic across the processes sharing the store; due times are
 * timed on the store's own clock (the database's, Redis's, or a monotonic one in memory).
 */
export interface InboxStore {
  /**
   * Records a record unless one with this id exists (then nothing changes); due at once. Resolves
   * `true` when recorded now. `within`, where the store can (Postgres): run inside the insert's
   * transaction when the record is new, before it commits (it throws: nothing is recorded); a
   * store that cannot ignores it (the kit then sends its trigger after the add).
   */
  add(id: string, event: string, state?: InboxState, within?: (db: PostgresQueryable) => Promise<void>): Promise<boolean>;
  /** The record `id` (its state now), or `undefined` when there is none. Without it, `fulfillment.process` cannot tell a redelivered job from one to retry. */
  get?(id: string): Promise<InboxRecord | undefined>;
  /**
   * Takes one due `pending` record (the one with `id` when given, if it is due and not taken)
   * for `leaseMs` ms: no other taker gets it meanwhile. `undefined` when there is none.
   */
  take(leaseMs: number, id?: string): Promise<InboxLease | undefined>;
  /** Ends a take with `next`, only while `lease.token` still holds it; resolves whether it did. */
  finish(lease: InboxLease, next: InboxNext): Promise<boolean>;
  /** Records in `state`, oldest first, at most `limit`. */
  list(state: InboxState, limit: number): Promise<InboxRecord[]>;
  /** Makes the record `pending` and due at once, its attempts 0; `false` when there is no such record. */
  replay(id: string): Promise<boolean>;
}

/* eslint-disable @typescript-eslint/require-await -- the memory store answers at once: `async` makes its promises */

// An outcome, or a live claim: its holder's token and when its lease runs out.
type Entry = string | { token: object; until: number };
type Held = InboxRecord & { due: number; token?: string };

let warned = false;

/**
 * The default store: a `Map` in this process, its leases and the inbox's due times timed on a
 * monotonic clock (`performance.now()`; `now` injects another). Claims are exact within one
 * process and nothing more: on serverless platforms and with several servers, every instance
 * has its own map, so use `postgresStore` or `redisStore` there. It says so once
 * (console.warn) when it sees `NODE_ENV=production`. It is not durable, so the kit's inbox is
 * off with it unless asked for.
 */
export function memoryStore(options: { now?: () => number } = {}): FulfillmentStore<undefined> {
  // Leases on a monotonic clock: a wall-clock step (NTP, a VM resumed) neither ends a claim
  // early nor keeps it for ever.
  const now = options.now ?? (() => performance.now());
  const entries = new Map<string, Entry>();
  // Insertion order is the order they were reported in: oldest first.
  const remembered = new Set<string>();
  const outcome = (key: string) => {
    const entry = entries.get(key);
    return typeof entry === 'string' ? entry : undefined;
  };
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  if (!warned && env?.NODE_ENV === 'production') {
    warned = true;
    console.warn('[business-payments] memoryStore() is for one process: use postgresStore or redisStore in production.');
  }
  return {
    durable: false,
    inbox: memoryInbox(now),
    async claim(key, leaseMs) {
      const entry = entries.get(key);
      if (typeof entry === 'string') return { done: entry };
      if (entry && entry.until > now()) return { busy: true };
      const token = {};
      const hold = () => entries.set(key, { token, until: now() + leaseMs });
      hold();
      // Only the holder may end or renew its claim: one whose lease ran out and was taken over is stale.
      const mine = () => (entries.get(key) as { token?: object } | undefined)?.token === token;
      const claimed: StoreClaim<undefined> = {
        complete: async (outcome) => mine() && !!entries.set(key, outcome),
        release: async () => void (mine() && entries.delete(key)),
        renew: async () => mine() && !!hold(),
      };
      return { claimed };
    },
    outcome: async (key) => outcome(key),
    remember: async (key) => void (outcome(key) ?? remembered.add(key)),
    async unsettled(limit) {
      const out: string[] = [];
      for (const key of remembered) {
        if (outcome(key) !== undefined) remembered.delete(key);
        else if (out.push(key) >= limit) break;
      }
      return out;
    },
    async attempt(order) {
      const n = Number(outcome(`attempts:${order}`) ?? 0) + 1;
      entries.set(`attempts:${order}`, String(n));
      return n;
    },
  };
}

// The memory store's inbox: records in a Map whose order is the order they last changed.
function memoryInbox(now: () => number): InboxStore {
  const records = new Map<string, Held>();
  const copy = ({ due: _due, token: _token, ...record }: Held): InboxRecord => record;
  const put = (record: InboxRecord, due: number) => (records.delete(record.id), records.set(record.id, { ...copy(record as Held), due }));
  return {
    add: async (id, event, state = 'pending') =>
      !records.has(id) && !!records.set(id, { id, state, event, attempts: 0, at: Date.now(), due: now() }),
    get: async (id) => {
      const record = records.get(id);
      return record && copy(record);
    },
    async take(leaseMs, id) {
      for (const record of id === undefined ? records.values() : [records.get(id)]) {
        if (record?.state === 'pending' && record.due <= now()) {
          record.due = now() + leaseMs;
          return { ...copy(record), token: (record.token = crypto.randomUUID()) };
        }
      }
    },
    async finish(lease, { state, attempts, delayMs = 0, error }) {
      const record = records.get(lease.id);
      return record?.token === lease.token && !!put({ ...record, state, attempts, error }, now() + delayMs);
    },
    list: async (state, limit) =>
      [...records.values()]
        .filter((record) => record.state === state)
        .slice(0, limit)
        .map(copy),
    async replay(id) {
      const record = records.get(id);
      return !!record && !!put({ ...record, state: 'pending', attempts: 0, error: undefined }, now());
    },
  };
}
