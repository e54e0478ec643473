/**
 * `postgresStore(client)`: the fulfillment store on your Postgres (pg Pool or Client, Neon,
 * PGlite); what `onPaid` writes through `ctx.db` commits with the claim.
 *
 * @module business-payments/fulfillment/postgres
 */
// Entry of `business-payments/fulfillment/postgres`: the fulfillment store on the merchant's
// Postgres, through their own client (pg Pool or Client, Neon's Pool, PGlite). Its own entry,
// so that an app on Redis (or memory) never ships it; it imports no driver, no ky and no Node
// built-in (it loads cold in serverless handlers).
export {
  postgresStore,
  POSTGRES_STORE_SQL,
  type PostgresClaimDb,
  type PostgresQueryable,
  type PostgresStoreOptions,
} from './fulfillment/postgres.js';
export type {
  FulfillmentStore,
  ClaimStore,
  UnsettledStore,
  AttemptStore,
  StoreClaim,
  ClaimResult,
  InboxLease,
  InboxNext,
  InboxRecord,
  InboxState,
  InboxStore,
} from './fulfillment/store.js';
// The intent part of a store, for `createPayouts` (business-payments/payouts).
export type { PayoutIntent, PayoutIntentState, PayoutIntentStore } from './payouts/store.js';
// The subscription part of a store, for `createBilling` (business-payments/billing).
export type { SubscriptionRecord, SubscriptionState, SubscriptionStore } from './billing/store.js';
