/**
 * `createBilling`: one live subscription per customer and plan, never charged twice, access
 * worked out from the events in any order, on your Postgres or Redis (the kits' stores).
 *
 * @module business-payments/billing
 */
// Entry of `business-payments/billing`. It loads in serverless handlers and cron jobs, so it
// must not import ky or the client (the client is passed in).
export { createBilling } from './billing/create.js';
export { BillingError } from './billing/errors.js';
export { memoryStore } from './billing/memory.js';
export type {
  BillingChangeContext,
  BillingClient,
  BillingEntitlement,
  BillingKit,
  BillingOptions,
  BillingReconcileReport,
  BillingSubscribeParams,
  BillingSubscribeResult,
} from './billing/types.js';
export type { PaidPeriod, SubscriptionConsent, SubscriptionRecord, SubscriptionState, SubscriptionStore } from './billing/store.js';
