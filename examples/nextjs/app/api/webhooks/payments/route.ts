// Next.js App Router route handler: POST /api/webhooks/payments
//
// Route handlers get the untouched body: verifyWebhook(request, secret) reads it as text
// (from a clone, so `request` stays readable). Never verify `await request.json()`:
// re-serialised JSON is not the bytes that were signed. (Pages Router API routes are
// different: they parse the body unless `export const config = { api: { bodyParser: false } }`;
// see docs/webhooks.md.)
import { verifyWebhook, WebhookVerificationError, type WebhookEvent } from 'business-payments/webhooks';
import { claimEvent, enqueue, releaseEvent } from '../../../../lib/webhook-events';

// The verifier also runs on the Edge runtime (WebCrypto): 'edge' works as well, provided the
// event store and queue you import are edge-compatible too.
export const runtime = 'nodejs';

export async function POST(request: Request): Promise<Response> {
  let event: WebhookEvent;
  try {
    // A missing or whitespace-padded secret throws ConfigurationError: Next answers 500 and
    // the service retries, so fix the variable and the deliveries come through.
    event = await verifyWebhook(request, process.env.BUSINESS_PAYMENTS_WEBHOOK_SECRET!);
  } catch (error) {
    if (error instanceof WebhookVerificationError) {
      const status = error.reason === 'invalid_signature' ? 401 : 400;
      return Response.json({ error: error.reason, message: error.message }, { status });
    }
    throw error;
  }

  // Deliveries are at-least-once: the same event id can arrive again. Answer 200, do nothing.
  if (!(await claimEvent(event.id))) return Response.json({ received: true, duplicate: true });

  try {
    // Answer fast: queue the event and let a worker process it. (For light work, `after()`
    // from 'next/server' runs code after the response instead, but then a failure is not retried.)
    await enqueue(event);
  } catch (error) {
    await releaseEvent(event.id); // not accepted after all: let the retry through
    throw error;
  }
  return Response.json({ received: true });
}
