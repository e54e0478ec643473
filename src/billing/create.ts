// The billing kit: one live subscription per customer and plan, never charged twice, access
// from events in any order. A subscription is recorded in the merchant's store before its
// create is sent; every change to a record is a compare-and-swap on its version, and its
// state is worked out from the facts it holds. It loads in serverless handlers and cron jobs,
// so it imports neither ky nor the client: the merchant's PaymentsClient is passed in.
// This file only wires the steps (subscribe.ts, cancel.ts, events.ts, reconcile.ts, access.ts) over
// their base (base.ts).
import { entitlement, listSubscriptions } from './access.js';
import { BillingBase } from './base.js';
import { handleEvent } from './events.js';
import { reconcile } from './reconcile.js';
import { cancel } from './cancel.js';
import { subscribe } from './subscribe.js';
import type { BillingKit, BillingOptions } from './types.js';

/**
 * The billing kit: one live subscription per customer and plan, on your store, its access
 * worked out from the events (in any order) and the invoices.
 *
 * @example
 * ```ts
 * import { createBilling } from 'business-payments/billing';
 * import { createFulfillment } from 'business-payments/fulfillment';
 * import { postgresStore } from 'business-payments/fulfillment/postgres';
 *
 * const store = postgresStore(pool);
 * const billing = createBilling({ client, store });
 * const { plan_code } = await client.billing.plans.create({ name: 'Clinic', amount: 30000, currency: 'TZS', interval: 'month' });
 * const terms_shown = '30,000 TZS a month, each charge approved by USSD push; cancel any time.';
 * const { record } = await billing.subscribe({ customer: 'clinic-42', plan_code, customer_phone: '0712 345 678', terms_shown });
 * // The webhook route: subscription.* and invoice.* events go to the billing kit.
 * const fulfillment = createFulfillment({
 *   environment: client.environment, client, store, secret, onPaid: async () => {}, onEvent: billing.handleEvent,
 * });
 * const { active, state } = await billing.entitlement('clinic-42', plan_code);
 * console.log(record.key.startsWith('sub:clinic-42:'), active, state, typeof fulfillment.handleWebhook); // true false pending function
 * const report = await billing.reconcile(); // cron
 * ```
 */
export function createBilling(options: BillingOptions): BillingKit {
  const base = new BillingBase(options);
  return {
    durable: base.durable,
    subscribe: (params, options) => subscribe(base, params, options?.signal),
    handleEvent: (event, context) => handleEvent(base, event, context),
    entitlement: (customer, plan) => entitlement(base, customer, plan),
    cancel: (customer, plan) => cancel(base, customer, plan),
    reconcile: (options) => reconcile(base, options?.signal),
    subscriptions: (options) => listSubscriptions(base, options),
  };
}
