/**
 * `createPayouts`: each payout intent sent at most once and never lost, on your Postgres or
 * Redis (the fulfillment kit's stores).
 *
 * @module business-payments/payouts
 */
// Entry of `business-payments/payouts`. It loads in cron jobs and serverless handlers, so it
// must not import ky or the client (the client is passed in).
export {
  createPayouts,
  PayoutIntentError,
  type PayoutIntentChange,
  type PayoutResolveReport,
  type Payouts,
  type PayoutsClient,
  type PayoutSendParams,
  type PayoutsOptions,
} from './payouts/create.js';
export { memoryStore, type PayoutIntent, type PayoutIntentState, type PayoutIntentStore } from './payouts/store.js';
