import { PaymentsError } from '../core/base-error.js';

/** Why a webhook delivery was refused. */
export type WebhookVerificationReason =
  | 'missing_header'
  | 'invalid_signature'
  | 'timestamp_too_old'
  | 'timestamp_in_future'
  | 'invalid_timestamp'
  | 'invalid_payload'
  | 'environment_mismatch'
  | 'event_mismatch';

/**
 * Thrown by `verifyWebhook` / `verifyWebhookSignature` when a delivery must not be
 * trusted. Answer the sender with 401 (a signature, timestamp or header problem) or 400 (the rest) and do not process it.
 */
export class WebhookVerificationError extends PaymentsError {
  override name = 'WebhookVerificationError';
  // Declared, set in the constructor: no separate field initialiser in this size-budgeted entry.
  /** The machine-readable reason. */
  declare readonly reason: WebhookVerificationReason;

  constructor(reason: WebhookVerificationReason, message: string) {
    super(message);
    this.reason = reason;
  }
}
