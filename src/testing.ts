/**
 * For your tests: `createMockService` (the simulated service, in memory or as a local HTTP
 * server), `signWebhook` (signed test deliveries) and the fixed test values.
 *
 * @module business-payments/testing
 */
// Entry of `business-payments/testing`: tools for merchants' own tests.
export { signWebhook, type SignWebhookOptions, type SignedWebhook } from './testing/sign-webhook.js';
export { phpJson, type PhpJsonFlags } from './testing/mock-service/php-json.js';
export { createMockService } from './testing/mock-service/service.js';
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
