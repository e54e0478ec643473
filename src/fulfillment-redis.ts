/**
 * `redisStore(client)`: the fulfillment store on your Redis (node-redis or ioredis).
 *
 * @module business-payments/fulfillment/redis
 */
// Entry of `business-payments/fulfillment/redis`: the fulfillment store on the merchant's
// Redis, through their node-redis or ioredis client. Its own entry, so that an app on
// Postgres (or memory) never ships it; it imports no client library and nothing else.
export { redisStore, type RedisStoreOptions, type NodeRedisClientLike, type IORedisClientLike } from './fulfillment/redis.js';
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
