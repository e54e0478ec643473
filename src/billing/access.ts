// The reads: whether a customer has access to a plan now (`entitlement`), and the records by
// state (`subscriptions()`). Both work each record's state out at the time of the read, from
// its facts (reduce.ts): time moves a record on (active → past_due → …) without a change.
import { STATES, type BillingBase } from './base.js';
import { BillingError } from './errors.js';
import type { SubscriptionRecord, SubscriptionState } from './store.js';
import type { BillingEntitlement } from './types.js';

/**
 * `entitlement`: judged by the latest record of the pair that grants access now, else by the
 * latest one (an earlier record a late invoice brought back counts too).
 */
export async function entitlement(base: BillingBase, customer: string, plan: string): Promise<BillingEntitlement> {
  const chain = await base.chain(customer, plan, 'entitlement');
  const judged = chain.findLast((record) => base.standing(record).active) ?? chain.at(-1);
  if (!judged) return { active: false, state: 'none' };
  const { state, active, paidThrough } = base.standing(judged);
  return { active, state, ...(paidThrough === undefined ? {} : { paidThrough }), subscription: { ...judged, state } };
}

/** `subscriptions()`: the records in `state` now (every state when none), by key, at most `limit`. */
export async function listSubscriptions(
  base: BillingBase,
  { state, limit = 1000 }: { state?: SubscriptionState | undefined; limit?: number | undefined } = {},
): Promise<SubscriptionRecord[]> {
  if (state !== undefined && !STATES.includes(state))
    throw new BillingError('invalid_params', `billing.subscriptions: state must be one of ${STATES.join(', ')}`);
  if (!(typeof limit === 'number' && limit >= 0))
    throw new BillingError('invalid_params', 'billing.subscriptions: limit must be a number ≥ 0');
  const records = (await base.all()).map((record) => base.current(record));
  return records.filter((record) => state === undefined || record.state === state).slice(0, limit);
}
