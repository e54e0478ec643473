// testStore: a kit's conformance cases run against a store, the merchant's own included, with
// no test runner: plain async code that answers a report (or throws, when asked to).
import type { SubscriptionStore } from '../billing/store.js';
import { ConfigurationError } from '../core/base-error.js';
import type { RequestBudgetStore } from '../fulfillment/shared-budget.js';
import type { FulfillmentStore } from '../fulfillment/store.js';
import type { PayoutIntentStore } from '../payouts/store.js';
import { show } from './assert.js';
import { BILLING_CASES } from './billing.js';
import { BUDGET_CASES } from './budget.js';
import { CLAIM_CASES } from './claims.js';
import { claimsContext } from './context.js';
import { INBOX_CASES } from './inbox.js';
import { PAYOUT_CASES } from './payouts.js';
import { RECORD_CASES } from './records.js';
import { runCases, type RunOptions } from './run.js';
import type { BillingCheckOptions, BudgetCheckOptions, FulfillmentCheckOptions, PayoutsCheckOptions, StoreReport } from './types.js';

/** The fulfilment cases, in the order they run. */
const FULFILLMENT_CASES = [...CLAIM_CASES, ...RECORD_CASES, ...INBOX_CASES];

type CheckOptions = FulfillmentCheckOptions | PayoutsCheckOptions | BillingCheckOptions | BudgetCheckOptions;

const runOptions = (options: CheckOptions): RunOptions => ({
  throwOnFailure: options.throwOnFailure === true,
  caseTimeoutMs: options.caseTimeoutMs ?? 30_000,
});

/** A record store's instances for its cases: `count` on the same data, `store` first (itself again, without `another`). */
const instances =
  <Store>(store: Store, another: (() => Store) | undefined) =>
  (count: number) =>
    Array.from({ length: count }, (_, i) => (i === 0 || !another ? store : another()));

/** Refuses what is not a record store (payouts, billing): `what` names the store to pass. */
function recordStore(store: unknown, kit: string, what: string): void {
  if (typeof (store as { swap?: unknown }).swap !== 'function')
    throw new ConfigurationError(`testStore(store, { kit: '${kit}' }): store must be a ${what}`);
}

/**
 * Runs the store conformance suite of a kit against `store`, one case after another, and
 * answers what each did: passed, failed (with what broke), or skipped (with why). What the
 * SDK's own stores (memory, Postgres, Redis) pass in its tests, and what a store of your own
 * must pass before the kit can rely on it.
 *
 * - `kit: 'fulfillment'`: a `FulfillmentStore`. Claims and outcomes always; `remember` and
 *   `unsettled`, `attempt`, `renew` and the inbox where the store has them (else their cases
 *   are skipped). Give `another` (a second instance on the same data) so that instances race
 *   each other, and `kill` and `transactionalDb` where the store can do what they check.
 * - `kit: 'payouts'`: a `PayoutIntentStore` (`store.payouts`).
 * - `kit: 'billing'`: a `SubscriptionStore` (`store.subscriptions`).
 * - `kit: 'budget'`: a `RequestBudgetStore` (`store.budget`, for the client option
 *   `requestBudget`); its windows of a few hundred ms are waited out unless `elapse` moves the
 *   store's clock.
 *
 * Each case writes keys of its own (random), so a persistent database can be checked again
 * and again; leases of a few hundred ms are waited out in real time unless `elapse` moves
 * the store's clock. `throwOnFailure: true` throws a `StoreCheckError` at the first failure
 * instead (in a test runner, that fails the test, naming the case).
 *
 * @example
 * ```ts
 * import { memoryStore } from 'business-payments/payouts';
 * import { testStore } from 'business-payments/testing';
 *
 * const report = await testStore(memoryStore().payouts, { kit: 'payouts' });
 * console.log(`${report.passed.length} passed, ${report.skipped.length} skipped`);
 * if (!report.ok) throw new Error(report.failed.map(({ name, message }) => `${name}: ${message}`).join('\n'));
 * ```
 */
export function testStore<Db>(store: FulfillmentStore<Db>, options: FulfillmentCheckOptions<Db>): Promise<StoreReport>;
export function testStore(store: PayoutIntentStore, options: PayoutsCheckOptions): Promise<StoreReport>;
export function testStore(store: SubscriptionStore, options: BillingCheckOptions): Promise<StoreReport>;
export function testStore(store: RequestBudgetStore, options: BudgetCheckOptions): Promise<StoreReport>;
export async function testStore(
  store: FulfillmentStore | PayoutIntentStore | SubscriptionStore | RequestBudgetStore,
  options: CheckOptions,
): Promise<StoreReport> {
  if (options.kit === 'payouts') {
    recordStore(store, 'payouts', 'PayoutIntentStore (pass store.payouts)');
    const stores = instances(store as PayoutIntentStore, options.another);
    return runCases('payouts', PAYOUT_CASES, { stores }, runOptions(options));
  }
  if (options.kit === 'billing') {
    recordStore(store, 'billing', 'SubscriptionStore (pass store.subscriptions)');
    const stores = instances(store as SubscriptionStore, options.another);
    return runCases('billing', BILLING_CASES, { stores }, runOptions(options));
  }
  if (options.kit === 'budget') {
    if (typeof (store as Partial<RequestBudgetStore>).take !== 'function')
      throw new ConfigurationError("testStore(store, { kit: 'budget' }): store must be a RequestBudgetStore (pass store.budget)");
    const { another, elapse } = options;
    const stores = instances(store as RequestBudgetStore, another);
    const wait = async (ms: number) => void (await (elapse ?? ((ms: number) => new Promise((resolve) => setTimeout(resolve, ms))))(ms));
    return runCases('budget', BUDGET_CASES, { stores, wait }, runOptions(options));
  }
  if (options.kit !== 'fulfillment') {
    const kit = show((options as { kit: unknown }).kit);
    throw new ConfigurationError(`testStore: kit must be 'fulfillment', 'payouts', 'billing' or 'budget', not ${kit}`);
  }
  if (typeof (store as Partial<FulfillmentStore>).claim !== 'function')
    throw new ConfigurationError("testStore(store, { kit: 'fulfillment' }): store must be a FulfillmentStore (claim, outcome)");
  return runCases('fulfillment', FULFILLMENT_CASES, claimsContext(store as FulfillmentStore, options), runOptions(options));
}
