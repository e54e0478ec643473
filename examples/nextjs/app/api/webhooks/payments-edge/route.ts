// The same webhook route on the Edge runtime: POST /api/webhooks/payments-edge. The verifier
// uses WebCrypto there. Keep whatever it imports edge-compatible (no node:* modules); the
// in-memory event store here stands in for an edge-reachable database (KV, Postgres over HTTP).
import { verifyWebhook, WebhookVerificationError } from 'business-payments/webhooks';
import { claimEvent, enqueue } from '../../../../lib/webhook-events';

export const runtime = 'edge';

export async function POST(request: Request): Promise<Response> {
  try {
    const event = await verifyWebhook(request, process.env.BUSINESS_PAYMENTS_WEBHOOK_SECRET!);
    if (!(await claimEvent(event.id))) return Response.json({ received: true, duplicate: true });
    await enqueue(event);
    return Response.json({ received: true, runtime: 'edge' });
  } catch (error) {
    if (error instanceof WebhookVerificationError) {
      return Response.json({ error: error.reason, message: error.message }, { status: error.reason === 'invalid_signature' ? 401 : 400 });
    }
    throw error;
  }
}
