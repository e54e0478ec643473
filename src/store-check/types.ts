// What testStore takes and what it answers: the options of each kit's check and the report.
import type { SubscriptionStore } from '../billing/store.js';
import type { RequestBudgetStore } from '../fulfillment/shared-budget.js';
import type { FulfillmentStore, StoreClaim } from '../fulfillment/store.js';
import type { PayoutIntentStore } from '../payouts/store.js';

/**
 * Which kit's store to check: `'fulfillment'` (a `FulfillmentStore`: claims and outcomes,
 * and the optional parts it has), `'payouts'` (a `PayoutIntentStore`: `store.payouts`) or
 * `'billing'` (a `SubscriptionStore`: `store.subscriptions`) or `'budget'` (a
 * `RequestBudgetStore`: `store.budget`).
 *
 * @example
 * ```ts
 * import type { StoreKit } from 'business-payments/testing';
 *
 * const kits: StoreKit[] = ['fulfillment', 'payouts', 'billing', 'budget'];
 * ```
 */
export type StoreKit = 'fulfillment' | 'payouts' | 'billing' | 'budget';

/**
 * What the check says of a store: the cases that passed, those that failed (each with what
 * broke), and those that did not apply to it (each with why).
 *
 * @example
 * ```ts
 * import { memoryStore } from 'business-payments/payouts';
 * import { testStore, type StoreReport } from 'business-payments/testing';
 *
 * const report: StoreReport = await testStore(memoryStore().payouts, { kit: 'payouts' });
 * for (const { name, message } of report.failed) console.error(`${name}: ${message}`);
 * ```
 */
export interface StoreReport {
  /** The kit whose cases ran. */
  readonly kit: StoreKit;
  /** `true` when no case failed. */
  readonly ok: boolean;
  /** The cases that passed, by name, in the order they ran. */
  readonly passed: string[];
  /** The cases that failed: each one's name and what broke (the first check that did not hold, or what the store threw). */
  readonly failed: Array<{ name: string; message: string }>;
  /** The cases that did not run: each one's name and why (a part the store does not have, an option not given). */
  readonly skipped: Array<{ name: string; reason: string }>;
  /** How long the check took, in ms. */
  readonly ms: number;
}

/** What every kit's check takes. */
interface CheckOptions {
  /**
   * `true`: throw a `StoreCheckError` (naming the case) at the first case that fails, instead of
   * answering a report (in a test runner, that fails the test). Default `false`.
   */
  throwOnFailure?: boolean | undefined;
  /** How long one case may take before it fails as hung, in ms. Default 30,000. */
  caseTimeoutMs?: number | undefined;
}

/**
 * Reads and writes the handler's own data, to check that what a handler writes through
 * `claimed.db` commits with the claim and only then.
 *
 * @example
 * ```ts
 * import type { StoreWrites } from 'business-payments/testing';
 *
 * const rows: string[] = []; // committed writes (a store without transactions has none to check)
 * const writes: StoreWrites = {
 *   count: async (key) => rows.filter((row) => row === key).length,
 *   write: async (_db, key) => void rows.push(key),
 * };
 * ```
 */
export interface StoreWrites<Db = unknown> {
  /** How many rows `write` made for `key` that are committed (read outside any claim). */
  count(key: string): Promise<number>;
  /** Writes one row for `key` through a claim's `db`. */
  write(db: Db, key: string): Promise<void>;
}

/**
 * Anything with `query(text, values)` answering `{ rows }` (a pg Pool, PGlite): given as
 * `transactionalDb`, the check writes through `claimed.db` into a table of its own,
 * `business_payments_store_check_writes`, created if missing.
 *
 * @example
 * ```ts
 * import type { StoreQueryable } from 'business-payments/testing';
 *
 * const db: StoreQueryable = { query: async () => ({ rows: [] }) };
 * ```
 */
export interface StoreQueryable {
  /** Runs one statement (`$1`, `$2`… placeholders). */
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * `testStore(store, options)` for a fulfilment store. Without `another`, every case uses the
 * one instance (the cases that need a second one on the same data are skipped); the other
 * hooks each add the cases they make possible.
 *
 * @example
 * ```ts
 * import { memoryStore } from 'business-payments/fulfillment';
 * import { testStore, type FulfillmentCheckOptions } from 'business-payments/testing';
 *
 * // The store's clock injected, so the cases move it on instead of waiting out leases.
 * let now = 0;
 * const options: FulfillmentCheckOptions = { kit: 'fulfillment', elapse: (ms) => void (now += ms) };
 * const report = await testStore(memoryStore({ now: () => now }), options);
 * if (!report.ok) throw new Error(`${report.failed.length} cases failed: ${report.failed[0]?.message}`);
 * ```
 */
export interface FulfillmentCheckOptions<Db = unknown> extends CheckOptions {
  /** The kit whose cases run. */
  kit: 'fulfillment';
  /**
   * Makes another instance on the same data, as another process would (for a server store:
   * over a connection or client of its own): the cases race instances against each other and
   * read what one wrote through another. Called again for each instance a case needs.
   */
  another?: (() => FulfillmentStore<Db>) | undefined;
  /**
   * Moves the store's clock on by `ms` (a lease running out, a delay passing). Default: waits
   * `ms` of real time, as a store timed on its server's clock needs.
   */
  elapse?: ((ms: number) => Promise<void> | void) | undefined;
  /**
   * Kills a claim's holder as a crash would (its connection dropped), without its `complete`
   * or `release`. Without it, only the lease running out is checked.
   */
  kill?: ((claim: StoreClaim<Db>) => Promise<void>) | undefined;
  /**
   * For a store whose claims are transactions (`claimed.db`): `{ count, write }`, or a
   * Postgres queryable on the same database. Without it, `claimed.db` is not checked.
   */
  transactionalDb?: StoreWrites<Db> | StoreQueryable | undefined;
}

/**
 * `testStore(store, options)` for a payout intent store (`store.payouts`).
 *
 * @example
 * ```ts
 * import { memoryStore } from 'business-payments/payouts';
 * import { testStore, type PayoutsCheckOptions } from 'business-payments/testing';
 *
 * const intents = memoryStore().payouts;
 * const options: PayoutsCheckOptions = { kit: 'payouts', another: () => intents };
 * console.log((await testStore(intents, options)).ok);
 * ```
 */
export interface PayoutsCheckOptions extends CheckOptions {
  /** The kit whose cases run. */
  kit: 'payouts';
  /**
   * Makes another instance on the same data, as another process would (for a server store:
   * over a connection or client of its own). Called again for each instance a case needs
   * (up to 20 at once). Without it, every case uses the one instance.
   */
  another?: (() => PayoutIntentStore) | undefined;
}

/**
 * `testStore(store, options)` for a subscription record store (`store.subscriptions`, the
 * billing kit's).
 *
 * @example
 * ```ts
 * import { postgresStore } from 'business-payments/fulfillment/postgres';
 * import { testStore, type BillingCheckOptions } from 'business-payments/testing';
 *
 * // `pool`: your pg Pool. Each instance as another process would have it.
 * const options: BillingCheckOptions = { kit: 'billing', another: () => postgresStore(pool).subscriptions! };
 * const report = await testStore(postgresStore(pool).subscriptions!, options);
 * if (!report.ok) throw new Error(report.failed.map(({ name, message }) => `${name}: ${message}`).join('\n'));
 * ```
 */
export interface BillingCheckOptions extends CheckOptions {
  /** The kit whose cases run. */
  kit: 'billing';
  /**
   * Makes another instance on the same data, as another process would (for a server store:
   * over a connection or client of its own). Called again for each instance a case needs
   * (up to 20 at once). Without it, every case uses the one instance.
   */
  another?: (() => SubscriptionStore) | undefined;
}

/**
 * `testStore(store, options)` for a request budget store (`store.budget`, for the client option
 * `requestBudget`).
 *
 * @example
 * ```ts
 * import { postgresStore } from 'business-payments/fulfillment/postgres';
 * import { testStore, type BudgetCheckOptions } from 'business-payments/testing';
 *
 * // `pool`: your pg Pool. Each instance as another process would have it.
 * const options: BudgetCheckOptions = { kit: 'budget', another: () => postgresStore(pool).budget! };
 * const report = await testStore(postgresStore(pool).budget!, options);
 * if (!report.ok) throw new Error(report.failed.map(({ name, message }) => `${name}: ${message}`).join('\n'));
 * ```
 */
export interface BudgetCheckOptions extends CheckOptions {
  /** The kit whose cases run. */
  kit: 'budget';
  /**
   * Makes another instance on the same data, as another process would (for a server store:
   * over a connection or client of its own). Called again for each instance a case needs
   * (up to 10 at once). Without it, every case uses the one instance.
   */
  another?: (() => RequestBudgetStore) | undefined;
  /**
   * Moves the store's clock on by `ms` (a window sliding, a pause ending). Default: waits `ms`
   * of real time, as a store timed on its server's clock needs.
   */
  elapse?: ((ms: number) => Promise<void> | void) | undefined;
}
