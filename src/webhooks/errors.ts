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
  /** The machine-readable reason. */
  readonly reason: WebhookVerificationReason;

  constructor(reason: WebhookVerificationReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

/**
 * Refuses a request whose body was read before it came here (a framework's body parser): a
 * Fetch Request's `bodyUsed`, a Node request's `readableDidRead` or `readableEnded` (not
 * `complete`: that is the parser's, true before a byte is read). Read again it gives nothing,
 * which would fail as a wrong signature, or wait for bytes that never come.
 */
export function refuseReadBody(request: unknown): void {
  const r = request as { bodyUsed?: boolean; readableDidRead?: boolean; readableEnded?: boolean } | null;
  if (r?.bodyUsed || r?.readableDidRead || r?.readableEnded)
    throw new WebhookVerificationError(
      'invalid_payload',
      "The body was already read (consumed): pass the raw body, e.g. Fastify's `addContentTypeParser('application/json', { parseAs: 'buffer' }, …)` and `{ payload: req.body, headers: req.headers }`, or Express's express.raw().",
    );
}
