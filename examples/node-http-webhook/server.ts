// Webhook endpoint on plain node:http, no framework.
//
// The signature covers the raw body byte for byte: collect the chunks as Buffers and
// verify the concatenation. Do not decode each chunk to a string on its own (a UTF-8
// character split across two chunks would be mangled) and do not JSON.parse first.
//
// Run it: npm run build, then
//   BUSINESS_PAYMENTS_WEBHOOK_SECRET=whsec_... node examples/node-http-webhook/server.ts
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { verifyWebhook, WebhookVerificationError, type WebhookEvent } from 'business-payments/webhooks';

export interface WebhookHandlerOptions {
  /** The webhook signing secret; `[newSecret, oldSecret]` while rotating. */
  secret: string | readonly string[];
  /** Hands the event to your job queue. If it throws we answer 500 and the service retries. */
  enqueue: (event: WebhookEvent) => void | Promise<void>;
  /** Ids of events already accepted. In memory here: USE YOUR DATABASE (a unique key on the event id). */
  processed?: Set<string>;
}

const PATH = '/webhooks/payments';
const MAX_BODY_BYTES = 1024 * 1024;

// Collects the body as bytes; undefined when it is larger than MAX_BODY_BYTES (the rest is
// read and dropped, so the connection stays usable for the 413).
function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => resolve(size <= MAX_BODY_BYTES ? Buffer.concat(chunks) : undefined));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

export function createWebhookHandler({ secret, enqueue, processed = new Set() }: WebhookHandlerOptions) {
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== PATH) return send(res, 404, { error: 'not_found' });
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return send(res, 405, { error: 'method_not_allowed' });
    }

    const payload = await readBody(req);
    if (payload === undefined) return send(res, 413, { error: 'payload_too_large' });

    let event: WebhookEvent;
    try {
      event = await verifyWebhook({ payload, headers: req.headers, secret });
    } catch (error) {
      if (error instanceof WebhookVerificationError) {
        return send(res, error.reason === 'invalid_signature' ? 401 : 400, { error: error.reason, message: error.message });
      }
      throw error; // ConfigurationError (bad secret) and the like: 500 below, the service retries later.
    }

    // Deliveries are at-least-once: the same event id can arrive again. Answer 200, do nothing.
    // (A payment event always has an id; one of a shape the spec does not show may not.)
    const id = event.id ?? '';
    if (id && processed.has(id)) return send(res, 200, { received: true, duplicate: true });
    if (id) processed.add(id);
    try {
      await enqueue(event); // fast: the work happens in your worker, after we answer
    } catch (error) {
      processed.delete(id); // not accepted after all: let the retry through
      throw error;
    }
    send(res, 200, { received: true });
  }

  return (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((error: unknown) => {
      console.error('webhook handler failed:', error);
      if (!res.headersSent) send(res, 500, { error: 'internal_error' });
      else res.end();
    });
  };
}

export function createWebhookServer(options: WebhookHandlerOptions): Server {
  return createServer(createWebhookHandler(options));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const secret = process.env.BUSINESS_PAYMENTS_WEBHOOK_SECRET;
  if (!secret) throw new Error('Set BUSINESS_PAYMENTS_WEBHOOK_SECRET');
  const server = createWebhookServer({
    secret,
    // Stand-in for your job queue (BullMQ, SQS, a jobs table…).
    enqueue: (event) => console.log('queued', event.type, event.id),
  });
  const port = Number(process.env.PORT ?? 3000);
  server.listen(port, () => console.log(`POST http://localhost:${port}${PATH}`));
}
