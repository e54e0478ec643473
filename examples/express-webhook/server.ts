// Express 5 webhook endpoint for Business Payments deliveries.
//
// The signature covers the raw body byte for byte, so the webhook route gets
// express.raw() (req.body is then a Buffer) and is registered BEFORE any global
// express.json(). A global app.use(express.json()) placed first would parse the body
// into an object; the bytes are gone, and re-serialising never reproduces them exactly
// (key order, spacing, escapes), so verification fails with reason `invalid_payload`.
//
// Run it: npm run build, then
//   BUSINESS_PAYMENTS_WEBHOOK_SECRET=whsec_... node examples/express-webhook/server.ts
import { fileURLToPath } from 'node:url';
import express, { type Request, type Response } from 'express';
import { verifyWebhook, WebhookVerificationError, type WebhookEvent } from 'business-payments/webhooks';

export interface WebhookAppOptions {
  /** The webhook signing secret; `[newSecret, oldSecret]` while rotating. */
  secret: string | readonly string[];
  /** Hands the event to your job queue. If it throws we answer 500 and the service retries. */
  enqueue: (event: WebhookEvent) => void | Promise<void>;
  /** Ids of events already accepted. In memory here: USE YOUR DATABASE (a unique key on the event id). */
  processed?: Set<string>;
}

export function createApp({ secret, enqueue, processed = new Set() }: WebhookAppOptions): express.Express {
  const app = express();

  app.post('/webhooks/payments', express.raw({ type: 'application/json' }), async (req: Request, res: Response) => {
    let event: WebhookEvent;
    try {
      // req.body is the Buffer express.raw() collected; the headers are Node's.
      event = await verifyWebhook({ payload: req.body, headers: req.headers, secret });
    } catch (error) {
      if (error instanceof WebhookVerificationError) {
        res.status(error.reason === 'invalid_signature' ? 401 : 400).json({ error: error.reason, message: error.message });
        return;
      }
      throw error; // ConfigurationError (bad secret) and the like: Express answers 500, the service retries later.
    }

    // Deliveries are at-least-once: the same event id can arrive again. Answer 200, do nothing.
    // (A payment event always has an id; one of a shape the spec does not show may not.)
    const id = event.id ?? '';
    if (id && processed.has(id)) {
      res.status(200).json({ received: true, duplicate: true });
      return;
    }
    if (id) processed.add(id);
    try {
      await enqueue(event); // fast: the work happens in your worker, after we answer
    } catch (error) {
      processed.delete(id); // not accepted after all: let the retry through
      throw error;
    }
    res.status(200).json({ received: true });
  });

  // The rest of your API parses JSON as usual: registered after the webhook route, so the
  // webhook's body has already been read raw by the time this parser runs.
  app.use(express.json());

  return app;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const secret = process.env.BUSINESS_PAYMENTS_WEBHOOK_SECRET;
  if (!secret) throw new Error('Set BUSINESS_PAYMENTS_WEBHOOK_SECRET');
  const app = createApp({
    secret,
    // Stand-in for your job queue (BullMQ, SQS, a jobs table…).
    enqueue: (event) => console.log('queued', event.type, event.id),
  });
  const port = Number(process.env.PORT ?? 3000);
  app.listen(port, () => console.log(`POST http://localhost:${port}/webhooks/payments`));
}
