/**
 * Webhook verification on its own: `verifyWebhook`, `verifyWebhookSignature`,
 * `WebhookVerificationError` and the event types. Loads neither the HTTP client nor zod.
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
export type * from './webhooks/events.js';
