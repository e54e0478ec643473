/**
 * For your tests: `createMockService` (the simulated service, in memory or as a local HTTP
 * server), `signWebhook` (signed test deliveries), the fixed test values, and `testStore`
 * (the store conformance suite, for a store of your own).
 *
 * @module business-payments/testing
 */
// Entry of `business-payments/testing`: tools for merchants' own tests.
export { signWebhook, type SignWebhookOptions, type SignedWebhook } from './testing/sign-webhook.js';
export { phpJson, type PhpJsonFlags } from './testing/mock-service/php-json.js';
export { createMockService } from './testing/mock-service/service.js';
export { createTestClock, type TestClock, type TestClockWork } from './testing/test-clock.js';
export { TEST_PHONE_NUMBERS, DEFAULT_CREDENTIALS } from './testing/mock-service/defaults.js';
export { PAYOUT_TEST_AMOUNTS } from './testing/mock-service/payouts.js';
export type {
  MockCredentials,
  MockDeliveryAttempt,
  MockGateway,
  MockMerchant,
  MockRequestLogEntry,
  MockPayoutBehaviour,
  MockServer,
  MockService,
  MockServiceOptions,
  MockState,
  MockWebhookEvent,
  MswRequestHandler,
} from './testing/mock-service/types.js';
// The store conformance suite: no test runner needed (src/store-check).
export { testStore } from './store-check/test-store.js';
export { StoreCheckError } from './store-check/error.js';
export type {
  BillingCheckOptions,
  BudgetCheckOptions,
  FulfillmentCheckOptions,
  PayoutsCheckOptions,
  StoreKit,
  StoreQueryable,
  StoreReport,
  StoreWrites,
} from './store-check/types.js';
