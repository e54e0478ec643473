// Drives the Fastify and Hono examples for real, against the sandbox (createMockService on a
// real port) with a real PaymentsClient pointed at it, each example listening on a real socket
// (Hono through @hono/node-server): the checkout route creates the payment attempt, the sandbox
// settles it and delivers its webhook (signed with its sandbox secret) to the example's
// route. For each: a paid order is fulfilled exactly once across duplicate deliveries and the
// return page, a new attempt pays an order whose payment failed, an unsigned or forged
// delivery is 401, the price check refuses a payment of another amount (500). Then what each
// framework gets wrong when the body is read before the kit: a Fastify body parsed to JSON
// (400 `invalid_payload`, and so is `req.raw` handed over after Fastify read it), a Hono
// middleware that read the body (400). The Hono app runs once more bundled in an edge runtime (no `process`,
// WebCrypto, the client over the network).
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createAdaptorServer } from '@hono/node-server';
import { EdgeVM } from '@edge-runtime/vm';
import { build, type Plugin } from 'esbuild';
import Fastify, { type FastifyInstance } from 'fastify';
import { Hono } from 'hono';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { signWebhook, type SignedWebhook } from 'business-payments/testing';
import { PaymentsClient } from '../../src/index.js';
import { createMockService, type MockService } from '../../src/testing.js';
import type { FulfilledTransaction } from '../../src/fulfillment.js';
import { buildApp, createShopFulfillment, type Order, type Orders } from '../../examples/fastify/server.js';
import honoApp, { createApp } from '../../examples/hono/app.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

type Route = (request: Request) => Promise<Response>;

/** The sandbox on a real port, a client of it, and where its deliveries go (`route`; over the socket by default). */
async function sandbox() {
  let route: Route = (request) => fetch(request);
  const mock = createMockService({ fetch: (input, init) => route(new Request(input, init)) });
  const server = await mock.listen({ port: 0 });
  cleanups.push(() => mock.close());
  const { webhookSecret, ...credentials } = mock.credentials.sandbox;
  const client = new PaymentsClient({ ...credentials, environment: 'sandbox', baseUrl: server.url });
  return { mock, client, baseUrl: server.url, secret: webhookSecret, credentials, deliverTo: (to: Route) => void (route = to) };
}
type Sandbox = Awaited<ReturnType<typeof sandbox>>;

/** The merchant's orders table as the examples need it, recording every fulfilment. */
function orderBook() {
  const rows = new Map<string, Order>();
  const fulfilled: string[] = [];
  const failed: string[] = [];
  const orders = {
    find: vi.fn(async (id: string) => rows.get(id)),
    savePayment: async (order: Order, payment: { ref_trx: string; trx_id: string }) => void Object.assign(order, payment),
    fulfil: async (order: Order, tx: FulfilledTransaction) => {
      fulfilled.push(`${order.id} ${tx.trx_id}`);
      order.status = 'paid';
    },
    markFailed: async (order: Order, tx: FulfilledTransaction) => {
      failed.push(`${order.id} ${tx.trx_id}`);
      order.status = 'failed';
    },
  } satisfies Orders;
  let next = 0;
  return {
    orders,
    fulfilled,
    failed,
    add: (amount = 25, currency = 'USD') => {
      const order: Order = { id: `order-${++next}-${Math.random().toString(36).slice(2, 8)}`, amount, currency, status: 'open' };
      rows.set(order.id, order);
      return order;
    },
  };
}
type OrderBook = ReturnType<typeof orderBook>;

const eventOf = (mock: MockService, trxId: string) =>
  mock.state.events.find((e) => (e.payload.data as { trx_id?: string }).trx_id === trxId)!;
const statusesOf = (mock: MockService, trxId: string) =>
  mock.state.deliveries.filter((d) => d.eventId === eventOf(mock, trxId).id).map((d) => d.status);

/** The sandbox's delivery of `trxId`, signed afresh (as its retries are), or with another secret. */
const resign = async (env: Sandbox, trxId: string, secret = env.secret) => signWebhook({ payload: eventOf(env.mock, trxId).body, secret });

/** Posts a delivery over the socket: the answer's status and JSON body. */
async function send(url: string, delivery: Pick<SignedWebhook, 'body' | 'headers'>) {
  const response = await fetch(url, { method: 'POST', body: delivery.body, headers: delivery.headers });
  const text = await response.text();
  return { status: response.status, body: (text.startsWith('{') ? JSON.parse(text) : text) as Record<string, unknown> };
}

async function listen(server: Server): Promise<string> {
  cleanups.push(() => new Promise((resolve) => (server.close(resolve), server.closeAllConnections())));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function listenFastify(app: FastifyInstance): Promise<string> {
  // Connections too: one the kit stopped reading (a 413) would otherwise hold close() until the client gives up.
  cleanups.push(() => Promise.all([app.close(), app.server.closeAllConnections()]));
  return app.listen({ host: '127.0.0.1', port: 0 });
}

/** Each example, started for one sandbox and one orders table: where it listens. */
type Start = (env: Sandbox, book: OrderBook) => Promise<string>;

const examples: [name: string, start: Start][] = [
  ['Fastify', (env, { orders }) => listenFastify(buildApp({ environment: 'sandbox', secret: env.secret, client: env.client, orders }))],
  [
    'Hono on Node (@hono/node-server)',
    // overrideGlobalObjects: false leaves this process's Request and Response as they are (the other test files share it).
    (env, { orders }) =>
      listen(
        createAdaptorServer({
          fetch: createApp({ orders, client: env.client, secret: env.secret }).fetch,
          overrideGlobalObjects: false,
        }) as Server,
      ),
  ],
];

describe.each(examples)('%s example over the fulfillment kit, against the sandbox', (_name, start) => {
  async function shop() {
    const env = await sandbox();
    const book = orderBook();
    const base = await start(env, book);
    return { env, book, base, url: `${base}/webhooks/payments` };
  }

  /** The customer presses "Pay": the checkout route's answer, and the payment it made (as the sandbox has it). */
  async function checkout(base: string, env: Sandbox, order: Order) {
    const answer = await fetch(`${base}/orders/${order.id}/checkout`, { method: 'POST', redirect: 'manual' });
    expect(answer.status).toBe(303);
    const payment = [...env.mock.state.payments.values()].find((p) => p.trx_id === order.trx_id)!;
    expect(answer.headers.get('location')).toBe(payment.checkout_url);
    return payment;
  }

  test('checkout, paid in the sandbox, its webhook to the route: fulfilled once; the same delivery again and the return page fulfil nothing', async () => {
    const { env, book, base, url } = await shop();
    const order = book.add();
    const payment = await checkout(base, env, order);
    // A payment attempt of its own, its webhook aimed at the example's route.
    expect(order.ref_trx).toBe(`${order.id}~a1`);
    expect(payment).toMatchObject({ merchant_ref: `${order.id}~a1`, ipn_url: url });
    const trxId = order.trx_id!;
    await env.mock.completeCheckout(trxId, 'success');
    expect(statusesOf(env.mock, trxId)).toEqual([200]);
    expect(book.fulfilled).toEqual([`${order.id} ${trxId}`]);
    // At least once: the service may deliver it again (a retry signed later).
    expect(await send(url, await resign(env, trxId))).toEqual({ status: 200, body: { received: true, result: 'done' } });
    expect(await (await fetch(`${base}/orders/${order.id}/return`)).text()).toBe(`Order ${order.id} is paid: thank you!`);
    expect(book.fulfilled).toHaveLength(1);
    // A paid order has no second checkout.
    expect((await fetch(`${base}/orders/${order.id}/checkout`, { method: 'POST', redirect: 'manual' })).status).toBe(409);
  });

  test('a failed payment marks the order failed; the next checkout is a new attempt (~a2), and paying it fulfils once', async () => {
    const { env, book, base } = await shop();
    const order = book.add();
    await checkout(base, env, order);
    const first = order.trx_id!;
    await env.mock.completeCheckout(first, 'failed');
    expect(statusesOf(env.mock, first)).toEqual([200]);
    expect(book.failed).toEqual([`${order.id} ${first}`]);
    expect(await (await fetch(`${base}/orders/${order.id}/return`)).text()).toBe(`Order ${order.id} was not paid.`);
    await checkout(base, env, order);
    expect(order.ref_trx).toBe(`${order.id}~a2`);
    const second = order.trx_id!;
    expect(second).not.toBe(first);
    await env.mock.completeCheckout(second, 'success');
    expect(statusesOf(env.mock, second)).toEqual([200]);
    expect(book.fulfilled).toEqual([`${order.id} ${second}`]);
  });

  test('an unsigned delivery is 401, a forged one 401: nothing is verified or fulfilled', async () => {
    const { env, book, base, url } = await shop();
    const order = book.add();
    await checkout(base, env, order);
    const trxId = order.trx_id!;
    await env.mock.completeCheckout(trxId, 'failed'); // settled, so a forged "completed" would be the only way to fulfil it
    const completed = eventOf(env.mock, trxId).body.replace('"payment.failed"', '"payment.completed"');
    const unsigned = await send(url, { body: completed, headers: { 'content-type': 'application/json' } });
    expect(unsigned).toMatchObject({ status: 401, body: { error: 'missing_header' } });
    const forged = await send(url, await signWebhook({ payload: completed, secret: 'whsec_someone_else' }));
    expect(forged).toMatchObject({ status: 401, body: { error: 'invalid_signature' } });
    expect(book.fulfilled).toEqual([]);
    expect(order.status).toBe('failed');
  });

  test("the price check (expect gives the order's price): a payment of another amount is 500 and never fulfils", async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const { env, book, base, url } = await shop();
    const order = book.add(30);
    const payment = await env.client.payments.create(
      { payment_amount: 25, currency_code: 'USD', ref_trx: `${order.id}~a1`, ipn_url: url },
      { idempotencyKey: `${order.id}~a1` },
    );
    await env.mock.completeCheckout(payment.trx_id, 'success');
    expect(statusesOf(env.mock, payment.trx_id)).toEqual([500]);
    expect(eventOf(env.mock, payment.trx_id).status).toBe('pending'); // the service delivers it again
    expect(book.fulfilled).toEqual([]);
    expect(order.status).toBe('open');
    expect((await fetch(`${base}/orders/nope/return`)).status).toBe(404);
  });

  test('the return page alone settles a payment whose webhook never came', async () => {
    const { env, book, base } = await shop();
    const order = book.add();
    await checkout(base, env, order);
    env.deliverTo(() => Promise.reject(new Error('connect ECONNREFUSED')));
    await env.mock.completeCheckout(order.trx_id!, 'success');
    expect(statusesOf(env.mock, order.trx_id!)).toEqual([null]);
    expect(await (await fetch(`${base}/orders/${order.id}/return`)).text()).toBe(`Order ${order.id} is paid: thank you!`);
    expect(book.fulfilled).toEqual([`${order.id} ${order.trx_id}`]);
  });
});

// ---------------------------------------------------------------------------------------
// Fastify: why the raw body matters. Fastify parses a JSON body before the handler runs.

describe('Fastify example: the raw body', () => {
  test('a body Fastify parsed to JSON is refused (400), and so is req.raw after Fastify read it; the raw Buffer verifies', async () => {
    const env = await sandbox();
    const book = orderBook();
    const fulfillment = createShopFulfillment({ environment: 'sandbox', secret: env.secret, client: env.client, orders: book.orders });
    const app = Fastify();
    // The mistakes, with Fastify's own JSON parser in place: req.body is an object.
    app.post('/parsed', async (req, reply) => {
      const { status, body } = await fulfillment.handleWebhook({ payload: req.body as string, headers: req.headers });
      return reply.code(status).type('application/json').send(body);
    });
    app.post('/raw-after-parse', async (req, reply) => {
      const { status, body } = await fulfillment.handleWebhook(req.raw); // its stream already read to its end
      return reply.code(status).type('application/json').send(body);
    });
    // docs/webhooks.md's recipe: a plugin whose JSON parser keeps the bytes as a Buffer.
    void app.register(async (webhooks) => {
      webhooks.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
      webhooks.post('/buffer', async (req, reply) => {
        const { status, body } = await fulfillment.handleWebhook({ payload: req.body as Buffer, headers: req.headers });
        return reply.code(status).type('application/json').send(body);
      });
    });
    const base = await listenFastify(app);
    const order = book.add();
    const payment = await env.client.payments.create(
      { payment_amount: 25, currency_code: 'USD', ref_trx: order.id, ipn_url: `${base}/parsed` },
      { idempotencyKey: order.id },
    );
    await env.mock.completeCheckout(payment.trx_id, 'success');
    expect(statusesOf(env.mock, payment.trx_id)).toEqual([400]);
    const parsed = await send(`${base}/parsed`, await resign(env, payment.trx_id));
    expect(parsed).toMatchObject({ status: 400, body: { error: 'invalid_payload' } });
    expect(parsed.body.message).toMatch(/parsed object/);
    const rawAfterParse = await send(`${base}/raw-after-parse`, await resign(env, payment.trx_id));
    expect(rawAfterParse).toMatchObject({ status: 400, body: { error: 'invalid_payload' } });
    expect(rawAfterParse.body.message).toMatch(/^The body was already read/);
    expect(book.fulfilled).toEqual([]);
    expect(await send(`${base}/buffer`, await resign(env, payment.trx_id))).toEqual({
      status: 200,
      body: { received: true, result: 'ran' },
    });
    expect(book.fulfilled).toEqual([`${order.id} ${payment.trx_id}`]);
  });

  test("the example's route reads the body itself: any content type; a signed body over 1 MiB is the kit's 413", async () => {
    const env = await sandbox();
    const book = orderBook();
    const base = await listenFastify(buildApp({ environment: 'sandbox', secret: env.secret, client: env.client, orders: book.orders }));
    const url = `${base}/webhooks/payments`;
    const order = book.add();
    env.deliverTo(() => Promise.reject(new Error('not yet')));
    const payment = await env.client.payments.create(
      { payment_amount: 25, currency_code: 'USD', ref_trx: order.id, ipn_url: url },
      { idempotencyKey: order.id },
    );
    await env.mock.completeCheckout(payment.trx_id, 'success');
    // A proxy that sends it as text/plain, or with no content type: the kit reads the bytes alike.
    const delivery = await resign(env, payment.trx_id);
    const { 'Content-Type': _type, ...untyped } = delivery.headers as Record<string, string>;
    expect(await send(url, { body: delivery.body, headers: { ...untyped, 'content-type': 'text/plain' } })).toMatchObject({ status: 200 });
    expect(await send(url, { body: delivery.body, headers: untyped })).toMatchObject({ status: 200, body: { result: 'done' } });
    expect(book.fulfilled).toHaveLength(1);
    const huge = await signWebhook({
      payload: { id: 'evt_big', type: 'payment.completed', data: { trx_id: 'TRX_BIG', pad: 'x'.repeat(1 << 20) } },
      secret: env.secret,
    });
    expect(await send(url, huge)).toMatchObject({ status: 413, body: { error: 'payload_too_large' } });
  });
});

// ---------------------------------------------------------------------------------------
// Hono: the Request as it came, headers first; and the same app in an edge runtime.

/** A Fetch body of `total` bytes in 64 KiB chunks, made only when read: `seen.pulled` counts them. */
function countedBody(total: number) {
  const seen = { pulled: 0 };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (seen.pulled >= total) return controller.close();
        seen.pulled += 64 * 1024;
        controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, seen };
}

describe('Hono example: the Request as it came', () => {
  test('an unsigned post is 401 with not a byte of its body pulled; a signed one past 1 MiB is 413', async () => {
    const env = await sandbox();
    const app = createApp({ orders: orderBook().orders, client: env.client, secret: env.secret });
    const post = (headers: Record<string, string>, body: ReadableStream<Uint8Array>) =>
      app.request('https://shop.example.com/webhooks/payments', { method: 'POST', headers, body, duplex: 'half' } as RequestInit);
    const unsigned = countedBody(64 << 20);
    expect((await post({ 'content-type': 'application/json' }, unsigned.stream)).status).toBe(401);
    expect(unsigned.seen.pulled).toBe(0);
    const signed = countedBody(64 << 20);
    const headers = (
      await signWebhook({ secret: env.secret, payload: { id: 'evt_big', type: 'payment.completed', data: { trx_id: 'TRX_BIG' } } })
    ).headers;
    const answer = await post(headers, signed.stream);
    expect(answer.status).toBe(413);
    expect(signed.seen.pulled).toBeLessThanOrEqual((1 << 20) + 64 * 1024);
  });

  test('a middleware that read the body first (c.req.json()) leaves the kit nothing to verify: 400, never fulfilled', async () => {
    const env = await sandbox();
    const book = orderBook();
    const app = createApp({ orders: book.orders, client: env.client, secret: env.secret });
    const mistaken = new Hono();
    mistaken.use('/webhooks/*', async (c, next) => {
      await c.req.json(); // the mistake: logs the event, say
      await next();
    });
    mistaken.route('/', app);
    const base = await listen(createAdaptorServer({ fetch: mistaken.fetch, overrideGlobalObjects: false }) as Server);
    const order = book.add();
    const payment = await env.client.payments.create(
      { payment_amount: 25, currency_code: 'USD', ref_trx: order.id, ipn_url: `${base}/webhooks/payments` },
      { idempotencyKey: order.id },
    );
    await env.mock.completeCheckout(payment.trx_id, 'success');
    expect(statusesOf(env.mock, payment.trx_id)).toEqual([400]);
    const answer = await send(`${base}/webhooks/payments`, await resign(env, payment.trx_id));
    expect(answer).toMatchObject({ status: 400, body: { error: 'invalid_payload' } });
    expect(answer.body.message).toMatch(/^The body was already read/);
    expect(book.fulfilled).toEqual([]);
  });

  test('the default export (Workers, Bun, Deno) builds its client and kit from the bindings; its stand-in orders table knows no order (500)', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {}); // the kit says why it answered 500
    const env = await sandbox();
    const bindings = {
      BUSINESS_PAYMENTS_ENVIRONMENT: 'sandbox',
      BUSINESS_PAYMENTS_BASE_URL: env.baseUrl,
      BUSINESS_PAYMENTS_MERCHANT_KEY: env.credentials.merchantKey,
      BUSINESS_PAYMENTS_API_KEY: env.credentials.apiKey,
      BUSINESS_PAYMENTS_API_SECRET: env.credentials.apiSecret,
      BUSINESS_PAYMENTS_WEBHOOK_SECRET: env.secret,
    };
    const route: Route = async (request) => honoApp.fetch(request, bindings);
    env.deliverTo(route);
    const url = 'https://shop.example.com/webhooks/payments';
    expect((await route(new Request('https://shop.example.com/orders/order-1/checkout', { method: 'POST' }))).status).toBe(404);
    const payment = await env.client.payments.create(
      { payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1~a1', ipn_url: url },
      { idempotencyKey: 'order-1~a1' },
    );
    await env.mock.completeCheckout(payment.trx_id, 'success');
    // Verified with the sandbox, then refused: the stand-in knows no order.
    expect(statusesOf(env.mock, payment.trx_id)).toEqual([500]);
    const forged = await resign(env, payment.trx_id, 'whsec_someone_else');
    expect((await route(new Request(url, { method: 'POST', body: forged.body, headers: forged.headers }))).status).toBe(401);
  });

  test('bundled and run in an edge runtime (no process, WebCrypto, the client over the network): checkout, fulfilled once, forged 401', async () => {
    const env = await sandbox();
    const src = (file: string) => fileURLToPath(new URL(`../../src/${file}`, import.meta.url));
    const entries: Plugin = {
      name: 'package-entries',
      setup(b) {
        b.onResolve({ filter: /^business-payments$/ }, () => ({ path: src('index.ts') }));
        b.onResolve({ filter: /^business-payments\/fulfillment$/ }, () => ({ path: src('fulfillment.ts') }));
      },
    };
    const bundle = await build({
      entryPoints: [fileURLToPath(new URL('../../examples/hono/app.ts', import.meta.url))],
      bundle: true,
      write: false,
      format: 'iife',
      globalName: '__honoShop',
      platform: 'browser',
      target: 'es2022',
      logLevel: 'silent',
      plugins: [entries],
    });
    const vm = new EdgeVM();
    vm.evaluate(bundle.outputFiles[0]!.text);
    expect(vm.evaluate('typeof process')).toBe('undefined');
    expect(vm.evaluate('typeof __honoShop.default.fetch')).toBe('function');
    const book = orderBook();
    // The client and the kit are made inside the edge runtime from the bindings, and call the sandbox over HTTP.
    const app = (vm.evaluate('__honoShop.createApp') as typeof createApp)({ orders: book.orders });
    const bindings = {
      BUSINESS_PAYMENTS_ENVIRONMENT: 'sandbox',
      BUSINESS_PAYMENTS_BASE_URL: env.baseUrl,
      BUSINESS_PAYMENTS_MERCHANT_KEY: env.credentials.merchantKey,
      BUSINESS_PAYMENTS_API_KEY: env.credentials.apiKey,
      BUSINESS_PAYMENTS_API_SECRET: env.credentials.apiSecret,
      BUSINESS_PAYMENTS_WEBHOOK_SECRET: env.secret,
    };
    // A Request of the edge runtime's own, and its Response read back out.
    const route: Route = async (request) => {
      const init = {
        method: request.method,
        headers: Object.fromEntries(request.headers),
        body: request.method === 'GET' ? undefined : await request.text(),
      };
      const answer = (await app.fetch(new vm.context.Request(request.url, init) as Request, bindings)) as Response;
      return new Response(await answer.text(), { status: answer.status, headers: Object.fromEntries(answer.headers) });
    };
    env.deliverTo(route);
    const origin = 'https://shop.example.com';
    const order = book.add();
    const pay = await route(new Request(`${origin}/orders/${order.id}/checkout`, { method: 'POST' }));
    expect(pay.status).toBe(303);
    expect(order).toMatchObject({ ref_trx: `${order.id}~a1`, trx_id: expect.any(String) });
    const trxId = order.trx_id!;
    await env.mock.completeCheckout(trxId, 'success');
    expect(statusesOf(env.mock, trxId)).toEqual([200]);
    expect(book.fulfilled).toEqual([`${order.id} ${trxId}`]);
    const again = await resign(env, trxId);
    expect(
      (await route(new Request(`${origin}/webhooks/payments`, { method: 'POST', body: again.body, headers: again.headers }))).status,
    ).toBe(200);
    const forged = await resign(env, trxId, 'whsec_someone_else');
    expect(
      (await route(new Request(`${origin}/webhooks/payments`, { method: 'POST', body: forged.body, headers: forged.headers }))).status,
    ).toBe(401);
    expect(await (await route(new Request(`${origin}/orders/${order.id}/return`))).text()).toBe(`Order ${order.id} is paid: thank you!`);
    expect(book.fulfilled).toHaveLength(1);
  });
});
