/**
 * Webhook verification on its own: `verifyWebhook`, `verifyWebhookSignature`,
 * `WebhookVerificationError`, the event types and `WEBHOOK_EVENT_TYPES`. Loads neither the HTTP client nor zod.
 *
 * @module business-payments/webhooks
 */
// Entry of `business-payments/webhooks`: what a serverless function loads cold to check a
// delivery. It must not import ky or the client.
export {
  verifyWebhook,
  verifyWebhookSignature,
  type VerifyWebhookOptions,
  type VerifyWebhookRequestOptions,
  type VerifiedWebhookSignature,
  type WebhookPayload,
} from './webhooks/verify.js';
export { WebhookVerificationError, type WebhookVerificationReason } from './webhooks/errors.js';
export type { WebhookHeaders } from './webhooks/headers.js';
// The event types, and the one value among them: the list of documented event types (a value
// export of its own: `export type *` would make it type-only, there at compile time, missing at run time).
export type * from './webhooks/events.js';
export { WEBHOOK_EVENT_TYPES } from './webhooks/events.js';
