// A request whose body was read before it came to the SDK (issue: "In Fastify, passing
// `req.raw` after the body was read is reported as a wrong secret"). Read again, such a body
// gives no bytes (a bad signature) or nothing at all (a wait): handleWebhook and
// verifyWebhook(request, secret) refuse it with its own error instead, invalid_payload saying
// the body was already read and how to pass the raw one; the kit answers 400 and logs why.
// Real node:http requests (read first, then handed over) and used Fetch Requests.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { createFulfillment, type NodeWebhookRequest } from '../../src/fulfillment.js';
import { PaymentsClient, type Logger, type VerifiedTransaction } from '../../src/index.js';
import { signWebhook } from '../../src/testing.js';
import { verifyWebhook, WebhookVerificationError } from '../../src/webhooks.js';
import { fakeClient } from '../support/fulfillment-client.js';

const SECRET = 'whsec_test_consumed_body';
const ALREADY_READ =
  "The body was already read (consumed): pass the raw body, e.g. Fastify's `addContentTypeParser('application/json', { parseAs: 'buffer' }, …)` " +
  "and `{ payload: req.body, headers: req.headers }`, or Express's express.raw().";

const delivery = () =>
  signWebhook({
    secret: SECRET,
    payload: {
      id: 'evt_consumed_1',
      type: 'payment.completed',
      api_version: '2024-06-01',
      created_at: new Date().toISOString(),
      data: { trx_id: 'TRX_CONSUMED_1', merchant_ref: 'order-1', status: 'completed', amount: { value: 25, currency: 'USD' } },
    },
  });

/** A kit on a real client whose logger is captured (a refused delivery makes no call). */
function loggedKit() {
  const logger: Logger = { error: vi.fn(), warn: vi.fn(), info: vi.fn(), debug: vi.fn() };
  const client = new PaymentsClient({
    environment: 'sandbox',
    baseUrl: 'http://127.0.0.1:9',
    merchantKey: 'test_merchant',
    apiKey: 'test_key',
    apiSecret: 'test_api_secret',
    logger,
    logLevel: 'warn',
  });
  const onPaid = vi.fn();
  return { fulfillment: createFulfillment({ environment: 'sandbox', secret: SECRET, client, onPaid }), logger, onPaid };
}

/** Settles with `work`, or fails the test after 2 s: a consumed stream must never be waited on. */
const noHang = <T>(work: Promise<T>): Promise<T> =>
  Promise.race([work, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('hung on a consumed body')), 2_000))]);

/**
 * A node:http server whose handler is `handle(req)`: it answers with what handle returns
 * (status and body), or 599 with the error's reason and message.
 */
let server: Server;
let url: string;
let handle: (req: IncomingMessage) => Promise<{ status: number; body: string }>;
beforeAll(async () => {
  server = createServer((req, res) => {
    handle(req).then(
      ({ status, body }) => res.writeHead(status, { 'content-type': 'application/json' }).end(body),
      (error: unknown) =>
        res.writeHead(599).end(
          JSON.stringify({
            thrown: (error as Error).name,
            reason: (error as WebhookVerificationError).reason,
            message: (error as Error).message,
          }),
        ),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

/** Posts a signed delivery to the server; its answer, parsed. */
async function post(): Promise<{ status: number; json: Record<string, unknown> }> {
  const { body, headers } = await delivery();
  const answer = await fetch(url, { method: 'POST', headers, body });
  return { status: answer.status, json: (await answer.json()) as Record<string, unknown> };
}

/** Reads a Node request to its end, as a framework's body parser does (Fastify, express.json()). */
async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('handleWebhook, a Node request whose body was read', () => {
  test('read to its end (readableEnded): 400 invalid_payload saying so, logged, never a 401', async () => {
    const { fulfillment, logger, onPaid } = loggedKit();
    handle = async (req) => {
      await readAll(req);
      expect(req.readableEnded).toBe(true);
      return noHang(fulfillment.handleWebhook(req as unknown as NodeWebhookRequest));
    };
    const { status, json } = await post();
    expect(status).toBe(400);
    expect(json).toEqual({ error: 'invalid_payload', message: ALREADY_READ });
    expect(onPaid).not.toHaveBeenCalled();
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(vi.mocked(logger.warn).mock.calls[0]![0]).toBe(`[business-payments] webhook refused, invalid_payload: ${ALREADY_READ}`);
  });

  test('read in part (readableDidRead, not ended): the same 400, at once', async () => {
    const { fulfillment } = loggedKit();
    handle = async (req) => {
      req.on('data', () => {}); // someone else's listener took the bytes
      await once(req, 'data');
      req.pause();
      expect(req.readableDidRead).toBe(true);
      return noHang(fulfillment.handleWebhook(req as unknown as NodeWebhookRequest));
    };
    const { status, json } = await post();
    expect(status).toBe(400);
    expect(json).toMatchObject({ error: 'invalid_payload', message: ALREADY_READ });
  });

  test('the body read and given (express.raw: req.body a Buffer): taken, the delivery settles', async () => {
    const { client } = fakeClient((trx_id) => ({ trx_id, status: 'success', amount: 25, currency: 'USD' }) as VerifiedTransaction);
    const paid: string[] = [];
    const fulfillment = createFulfillment({ environment: 'sandbox', secret: SECRET, client, onPaid: (tx) => void paid.push(tx.trx_id) });
    handle = async (req) => {
      const raw = await readAll(req);
      return fulfillment.handleWebhook(Object.assign(req, { body: raw }) as unknown as NodeWebhookRequest);
    };
    const { status } = await post();
    expect(status).toBe(200);
    expect(paid).toEqual(['TRX_CONSUMED_1']);
  });

  test('not read, though node:http has parsed it whole (complete): read and verified as usual', async () => {
    const { client } = fakeClient((trx_id) => ({ trx_id, status: 'success', amount: 25, currency: 'USD' }) as VerifiedTransaction);
    const fulfillment = createFulfillment({ environment: 'sandbox', secret: SECRET, client, onPaid: () => {} });
    handle = async (req) => {
      for (let i = 0; i < 100 && !req.complete; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      expect([req.complete, req.readableDidRead, req.readableEnded]).toEqual([true, false, false]);
      return fulfillment.handleWebhook(req as unknown as NodeWebhookRequest);
    };
    expect((await post()).status).toBe(200);
  });
});

describe('verifyWebhook(request, secret), a body already read', () => {
  test('a Node request read to its end: WebhookVerificationError invalid_payload, not invalid_signature', async () => {
    handle = async (req) => {
      await readAll(req);
      await noHang(verifyWebhook(req as unknown as Request, SECRET));
      return { status: 200, body: '{}' };
    };
    const { status, json } = await post();
    expect(status).toBe(599);
    expect(json).toEqual({ thrown: 'WebhookVerificationError', reason: 'invalid_payload', message: ALREADY_READ });
  });

  test('a used Fetch Request (bodyUsed): the same error; an unused one verifies, and stays readable', async () => {
    const { body, headers } = await delivery();
    const used = new Request(url, { method: 'POST', headers, body });
    await used.text();
    expect(used.bodyUsed).toBe(true);
    const error = await noHang(verifyWebhook(used, SECRET)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect(error).toMatchObject({ reason: 'invalid_payload', message: ALREADY_READ });

    const fresh = new Request(url, { method: 'POST', headers, body });
    await expect(verifyWebhook(fresh, SECRET)).resolves.toMatchObject({ type: 'payment.completed' });
    expect(await fresh.text()).toBe(body);
  });

  test("handleWebhook on a used Fetch Request: 400 with the kit's error body", async () => {
    const { fulfillment, logger } = loggedKit();
    const { body, headers } = await delivery();
    const used = new Request(url, { method: 'POST', headers, body });
    await used.arrayBuffer();
    const answer = await noHang(fulfillment.handleWebhook(used));
    expect(answer.status).toBe(400);
    expect(await answer.json()).toEqual({ error: 'invalid_payload', message: ALREADY_READ });
    expect(logger.warn).toHaveBeenCalledWith(`[business-payments] webhook refused, invalid_payload: ${ALREADY_READ}`);
  });
});
