/**
 * `createFulfillment`, `memoryStore` and `paidAmount`: each paid order fulfilled exactly once, whichever of
 * the webhook, the return page or the `reconcile` sweep reports it first.
 *
 * @module business-payments/fulfillment
 */
// Entry of `business-payments/fulfillment`: each paid order fulfilled exactly once. It loads
// in serverless handlers, so it must not import ky or the client (the client is passed in).
export { createFulfillment } from './fulfillment/create.js';
export type {
  ExpectedPrice,
  FulfillmentClient,
  FulfillmentContext,
  Handler as FulfillmentHandler,
  FulfillmentOptions,
  FulfilledTransaction,
} from './fulfillment/options.js';
export type {
  DrainReport,
  Fulfillment,
  FulfillmentTrace,
  OutcomeOptions,
  PaymentAttempt,
  PaymentState,
  ProcessResult,
  ReconcileOptions,
  ReconcileReport,
  SettleResult,
  WebhookAnswer,
} from './fulfillment/results.js';
export type { NodeWebhookRequest } from './fulfillment/body.js';
// Triggers: the merchant's queue engine wakes the inbox (the engines' own in their entries).
export { queueTrigger, type FulfillmentTrigger } from './fulfillment/trigger.js';
export type { PostgresQueryable } from './fulfillment/postgres-session.js';
export {
  memoryStore,
  type AttemptStore,
  type ClaimResult,
  type ClaimStore,
  type FulfillmentStore,
  type InboxLease,
  type InboxNext,
  type InboxRecord,
  type InboxState,
  type InboxStore,
  type StoreClaim,
  type UnsettledStore,
} from './fulfillment/store.js';
// The gross a customer paid, on either generation: what an order's price is compared with.
export { paidAmount, type PaidAmountInput } from './core/paid-amount.js';
// The intent part of a store, for `createPayouts` (business-payments/payouts).
export type { PayoutIntent, PayoutIntentState, PayoutIntentStore } from './payouts/store.js';
