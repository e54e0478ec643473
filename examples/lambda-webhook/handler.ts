// AWS Lambda webhook handler (API Gateway HTTP API, or a Lambda function URL).
//
// API Gateway hands the body over as a string, base64-encoded when `isBase64Encoded` is
// true (binary media types, function URLs): decode it to the exact bytes that were signed
// before verifying. Never JSON.parse it first. Header names arrive lower-cased, which the
// verifier accepts.
import { verifyWebhook, WebhookVerificationError, type WebhookEvent } from 'business-payments/webhooks';

/** The parts of an API Gateway v2 / function URL event used here. */
export interface LambdaHttpEvent {
  body?: string | null;
  isBase64Encoded?: boolean;
  headers: Record<string, string | undefined>;
}

/** What API Gateway expects back. */
export interface LambdaHttpResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

// Ids of events already accepted. USE YOUR DATABASE (DynamoDB with a conditional put on the
// event id): Lambda runs many instances, each with its own memory.
const accepted = new Set<string>();

/** Events accepted by this instance, for the example's tests (a real app queues them: SQS…). */
export const received: WebhookEvent[] = [];

const reply = (statusCode: number, body: unknown): LambdaHttpResult => ({
  statusCode,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

export async function handler(event: LambdaHttpEvent): Promise<LambdaHttpResult> {
  const raw = event.body ?? '';
  const payload = event.isBase64Encoded ? Buffer.from(raw, 'base64') : raw;
  let verified: WebhookEvent;
  try {
    verified = await verifyWebhook({ payload, headers: event.headers, secret: process.env.BUSINESS_PAYMENTS_WEBHOOK_SECRET! });
  } catch (error) {
    if (error instanceof WebhookVerificationError) {
      return reply(error.reason === 'invalid_signature' ? 401 : 400, { error: error.reason, message: error.message });
    }
    throw error; // a configuration error: 500, and the service retries once it is fixed
  }
  // (A payment event always has an id; one of a shape the spec does not show may not.)
  const id = verified.id ?? '';
  if (id && accepted.has(id)) return reply(200, { received: true, duplicate: true });
  if (id) accepted.add(id);
  received.push(verified);
  return reply(200, { received: true });
}
