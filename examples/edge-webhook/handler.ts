// Fetch-style webhook handler: a Cloudflare Worker (`export default { fetch }`), also
// deployable as a Vercel function with the same export.
//
// Only web APIs: the verifier uses WebCrypto where node:crypto is not available, and
// imports the CryptoKey once per secret per isolate. The body is read from the Request as
// is: nothing here parses it before verification.
//
// Cloudflare: set the secret with `wrangler secret put BUSINESS_PAYMENTS_WEBHOOK_SECRET`.
// Vercel: there is no env or ctx argument; the secret comes from process.env and the work
// is awaited before answering (or use waitUntil from @vercel/functions).
import { verifyWebhook, WebhookVerificationError, type WebhookEvent } from 'business-payments/webhooks';

export interface Env {
  BUSINESS_PAYMENTS_WEBHOOK_SECRET?: string;
  /** The previous secret, set only while rotating. */
  BUSINESS_PAYMENTS_WEBHOOK_SECRET_PREVIOUS?: string;
}

/** The part of Cloudflare's ExecutionContext used here. */
export interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
}

// Ids of events already accepted. USE YOUR DATABASE (D1, a Durable Object, your backend):
// isolate memory is per instance and short-lived, so this only catches quick repeats.
const accepted = new Set<string>();

export default {
  async fetch(request: Request, env?: Env, ctx?: ExecutionContext): Promise<Response> {
    if (request.method !== 'POST') return new Response(null, { status: 405, headers: { allow: 'POST' } });

    let event: WebhookEvent;
    try {
      event = await verifyWebhook(request, secrets(env));
    } catch (error) {
      if (error instanceof WebhookVerificationError) {
        const status = error.reason === 'invalid_signature' ? 401 : 400;
        return Response.json({ error: error.reason, message: error.message }, { status });
      }
      throw error; // ConfigurationError (secret unset or padded): a 500, so the service retries.
    }

    // Deliveries are at-least-once: the same event id can arrive again. Answer 200, do nothing.
    // (A payment event always has an id; one of a shape the spec does not show may not.)
    const id = event.id ?? '';
    if (id && accepted.has(id)) return Response.json({ received: true, duplicate: true });
    if (id) accepted.add(id);

    // Answer now; the work continues after the response. The service got its 200 and will
    // not retry, so a failure here is only logged: keep this work idempotent and small, or
    // put the event on a durable queue first (Cloudflare Queues: await env.QUEUE.send(event)).
    const work = handleEvent(event).catch((error: unknown) => {
      accepted.delete(id); // so a later redelivery of this event is processed
      console.error(`webhook ${event.id} (${event.type}) failed:`, error);
    });
    if (ctx) ctx.waitUntil(work);
    else await work;
    return Response.json({ received: true });
  },
};

function secrets(env: Env | undefined): string[] {
  const vars = env?.BUSINESS_PAYMENTS_WEBHOOK_SECRET !== undefined ? env : globalThis.process?.env;
  const current = vars?.BUSINESS_PAYMENTS_WEBHOOK_SECRET;
  const previous = vars?.BUSINESS_PAYMENTS_WEBHOOK_SECRET_PREVIOUS;
  // An empty array makes the verifier throw ConfigurationError ("webhook secret missing").
  return [current, previous].filter((s): s is string => s !== undefined);
}

async function handleEvent(event: WebhookEvent): Promise<void> {
  switch (event.type) {
    case 'payment.completed':
      // Idempotent on merchant_ref and trx_id: a payments.verify call may have fulfilled it already.
      console.info(`order ${event.data.merchant_ref} paid (${event.data.trx_id})`);
      break;
    case 'payment.failed':
      console.info(`order ${event.data.merchant_ref} payment failed (${event.data.trx_id})`);
      break;
    default:
      console.info(`ignored ${event.type} ${event.id}`);
  }
}
