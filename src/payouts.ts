/**
 * `createPayouts`: each payout intent sent at most once and never lost, on your Postgres or
 * Redis (the fulfillment kit's stores).
 *
 * @module business-payments/payouts
 */
// Entry of `business-payments/payouts`. It loads in cron jobs and serverless handlers, so it
// must not import ky or the client (the client is passed in).
export { createPayouts } from './payouts/create.js';
export { PayoutIntentError } from './payouts/errors.js';
export type {
  PayoutIntentChange,
  PayoutKit,
  PayoutResolveReport,
  PayoutsClient,
  PayoutSendParams,
  PayoutsOptions,
} from './payouts/types.js';
export { memoryStore, type PayoutIntent, type PayoutIntentState, type PayoutIntentStore } from './payouts/store.js';
