// Drives the webhook examples for real, each over the fulfillment kit, against the sandbox
// (createMockService on a real port) with a real PaymentsClient pointed at it: the sandbox
// settles payments and delivers their webhooks (signed with its sandbox secret) to the
// Express and node:http servers over real sockets, to the Lambda handler through a stand-in
// for API Gateway (base64 bodies), to the Worker's fetch and to the Next.js route handlers.
// For each: a paid order is fulfilled exactly once across duplicate deliveries, a failed one
// never, a bad signature is 401, the amount check refuses a payment that does not match its
// order (500, so the service delivers again), and a return page racing the webhook still
// gives one fulfilment. The Worker runs once more bundled in an edge runtime (no `process`,
// WebCrypto), verifying with the client over the network.
import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { EdgeVM } from '@edge-runtime/vm';
import { build, type Plugin } from 'esbuild';
import express from 'express';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { signWebhook, type SignedWebhook } from 'business-payments/testing';
import { ConfigurationError, PaymentsClient } from '../../src/index.js';
import { createMockService, type MockService } from '../../src/testing.js';
import type { FulfilledTransaction } from '../../src/fulfillment.js';
import { createApp, type Order } from '../../examples/express-webhook/server.js';
import { createWebhookServer } from '../../examples/node-http-webhook/server.js';
import { createHandler, handler as deployedLambda, type LambdaHttpEvent } from '../../examples/lambda-webhook/handler.js';
import edgeWorker, { createWorker, type Env, type ExecutionContext } from '../../examples/edge-webhook/handler.js';
import * as nextRoute from '../../examples/nextjs/app/api/webhooks/payments/route.js';
import * as nextEdgeRoute from '../../examples/nextjs/app/api/webhooks/payments-edge/route.js';
import { confirmOrder } from '../../examples/nextjs/lib/fulfillment.js';
import { createOrder, findOrder, savePayment } from '../../examples/nextjs/lib/orders.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

type Route = (request: Request) => Promise<Response>;

/** The sandbox on a real port, a client of it, and where its deliveries go (`route`). */
async function sandbox(options: { timeScale?: number; generation?: 'current' | 'earlier' } = {}) {
  let route: Route = () => Promise.reject(new Error('no route yet'));
  const mock = createMockService({ ...options, fetch: (input, init) => route(new Request(input, init)) });
  const server = await mock.listen({ port: 0 });
  cleanups.push(() => mock.close());
  const client = new PaymentsClient({ ...mock.credentials.sandbox, environment: 'sandbox', baseUrl: server.url });
  return {
    mock,
    client,
    baseUrl: server.url,
    secret: mock.credentials.sandbox.webhookSecret,
    deliverTo: (to: Route) => void (route = to),
  };
}
type Sandbox = Awaited<ReturnType<typeof sandbox>>;

/** The merchant's orders table as the examples need it, recording every fulfilment. */
function orderBook() {
  const rows = new Map<string, Order>();
  const fulfilled: string[] = [];
  const failed: string[] = [];
  let gate: Promise<void> | undefined;
  const orders = {
    find: vi.fn(async (id: string) => rows.get(id)),
    fulfil: async (order: Order, tx: FulfilledTransaction) => {
      await gate;
      fulfilled.push(`${order.id} ${tx.trx_id}`);
      order.status = 'paid';
    },
    markFailed: async (order: Order, tx: FulfilledTransaction) => {
      failed.push(`${order.id} ${tx.trx_id}`);
      order.status = 'failed';
    },
  };
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
    /** Holds every fulfilment until the returned function is called. */
    hold: () => {
      let release!: () => void;
      gate = new Promise((resolve) => (release = resolve));
      return () => {
        gate = undefined;
        release();
      };
    },
  };
}
type OrderBook = ReturnType<typeof orderBook>;

/** Creates the order's payment on the sandbox (its webhook to `ipnUrl`) and settles it. */
async function pay(env: Sandbox, ipnUrl: string, order: Order, outcome: 'success' | 'failed', charged = order.amount) {
  const payment = await env.client.payments.create(
    { payment_amount: charged, currency_code: order.currency, ref_trx: order.id, ipn_url: ipnUrl },
    { idempotencyKey: order.id },
  );
  order.trx_id = payment.trx_id;
  await env.mock.completeCheckout(payment.trx_id, outcome);
  return payment.trx_id;
}

const eventOf = (mock: MockService, trxId: string) =>
  mock.state.events.find((e) => (e.payload.data as { trx_id?: string }).trx_id === trxId)!;
const statusesOf = (mock: MockService, trxId: string) =>
  mock.state.deliveries.filter((d) => d.eventId === eventOf(mock, trxId).id).map((d) => d.status);

/** The sandbox's delivery of `trxId`, signed afresh (as its retries are), or altered. */
async function resign(env: Sandbox, trxId: string, options: { secret?: string; environment?: 'sandbox' | 'production' } = {}) {
  return signWebhook({ payload: eventOf(env.mock, trxId).body, secret: options.secret ?? env.secret, environment: options.environment });
}

async function send(route: Route, url: string, delivery: SignedWebhook) {
  const response = await route(new Request(url, { method: 'POST', body: delivery.body, headers: delivery.headers }));
  const text = await response.text();
  return { status: response.status, body: (text.startsWith('{') ? JSON.parse(text) : text) as Record<string, unknown> };
}

async function listen(server: Server): Promise<string> {
  // Connections too: one the server stopped reading (a 413) would otherwise hold close() for seconds.
  cleanups.push(() => new Promise((resolve) => (server.close(resolve), server.closeAllConnections())));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

// API Gateway in front of a Lambda handler: the delivery becomes a Lambda event with a base64
// body and lower-cased headers, the handler's result the HTTP answer.
function apiGateway(lambda: (event: LambdaHttpEvent) => Promise<{ statusCode: number; headers: Record<string, string>; body: string }>) {
  return async (request: Request): Promise<Response> => {
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => (headers[name] = value));
    const body = Buffer.from(await request.arrayBuffer()).toString('base64');
    const result = await lambda({ body, isBase64Encoded: true, headers });
    return new Response(result.body, { status: result.statusCode, headers: result.headers });
  };
}

function fakeContext() {
  const pending: Promise<unknown>[] = [];
  const ctx: ExecutionContext = { waitUntil: (promise) => void pending.push(promise) };
  return { ctx, pending };
}

/** Each example, started for one sandbox and one orders table: where it listens, and how a request reaches it. */
type Start = (env: Sandbox, book: OrderBook) => Promise<{ url: string; route: Route }>;

const examples: [name: string, start: Start][] = [
  [
    'Express',
    async (env, { orders }) => {
      const base = await listen(createServer(createApp({ environment: 'sandbox', secret: env.secret, client: env.client, orders })));
      return { url: `${base}/webhooks/payments`, route: (request) => fetch(request) };
    },
  ],
  [
    'node:http',
    async (env, { orders }) => {
      const base = await listen(createWebhookServer({ environment: 'sandbox', secret: env.secret, client: env.client, orders }));
      return { url: `${base}/webhooks/payments`, route: (request) => fetch(request) };
    },
  ],
  [
    'AWS Lambda',
    async (env, { orders }) => {
      const lambda = createHandler({ environment: 'sandbox', secret: env.secret, client: env.client, orders });
      return { url: 'https://abc.lambda-url.eu-west-1.on.aws/', route: apiGateway(lambda) };
    },
  ],
  [
    'Workers',
    async (env, { orders }) => {
      const worker = createWorker({ orders, client: env.client });
      const bindings: Env = { BUSINESS_PAYMENTS_WEBHOOK_SECRET: env.secret };
      return { url: 'https://hooks.example.com/', route: (request) => worker.fetch(request, bindings, fakeContext().ctx) };
    },
  ],
];

describe.each(examples)('%s example over the fulfillment kit, against the sandbox', (_name, start) => {
  async function shop(options: { timeScale?: number } = {}) {
    const env = await sandbox(options);
    const book = orderBook();
    const target = await start(env, book);
    env.deliverTo(target.route);
    return { env, book, ...target };
  }

  test('a paid order is fulfilled once; the same delivery again is 200 and fulfils nothing', async () => {
    const { env, book, url, route } = await shop();
    const order = book.add();
    const trxId = await pay(env, url, order, 'success');
    expect(statusesOf(env.mock, trxId)).toEqual([200]);
    expect(book.fulfilled).toEqual([`${order.id} ${trxId}`]);
    // At least once: the service may deliver it again (a retry signed later).
    expect(await send(route, url, await resign(env, trxId))).toEqual({ status: 200, body: { received: true, result: 'done' } });
    expect(book.fulfilled).toHaveLength(1);
    expect(book.failed).toEqual([]);
  });

  test('a failed payment is never fulfilled: onFailed marks the order, once', async () => {
    const { env, book, url, route } = await shop();
    const order = book.add();
    const trxId = await pay(env, url, order, 'failed');
    expect(statusesOf(env.mock, trxId)).toEqual([200]);
    expect((await send(route, url, await resign(env, trxId))).status).toBe(200);
    expect(book.failed).toEqual([`${order.id} ${trxId}`]);
    expect(book.fulfilled).toEqual([]);
    expect(order.status).toBe('failed');
  });

  test('a bad signature is 401, a delivery for the other environment 400: nothing is verified or fulfilled', async () => {
    const { env, book, url, route } = await shop();
    const order = book.add();
    const trxId = await pay(env, url, order, 'failed'); // settled, so a forged "completed" would be the only way to fulfil it
    const forged = await signWebhook({
      payload: eventOf(env.mock, trxId).body.replace('"payment.failed"', '"payment.completed"'),
      secret: 'whsec_someone_else',
    });
    const refused = await send(route, url, forged);
    expect(refused).toMatchObject({ status: 401, body: { error: 'invalid_signature' } });
    // The environment is pinned: a delivery signed with this secret but for production is refused.
    const production = await send(route, url, await resign(env, trxId, { environment: 'production' }));
    expect(production).toMatchObject({ status: 400, body: { error: 'environment_mismatch' } });
    expect(book.fulfilled).toEqual([]);
  });

  test('the amount check refuses a payment that does not match its order: 500, the service delivers again, never fulfilled', async () => {
    const { env, book, url } = await shop({ timeScale: 0.0005 }); // retries after 90 ms, 180 ms…
    const order = book.add(30);
    const trxId = await pay(env, url, order, 'success', 25);
    expect(statusesOf(env.mock, trxId)).toEqual([500]);
    expect(eventOf(env.mock, trxId)).toMatchObject({ status: 'pending', nextAttemptAt: expect.any(Number) });
    await vi.waitFor(() => expect(statusesOf(env.mock, trxId)).toEqual([500, 500]), { timeout: 2_000 });
    expect(book.fulfilled).toEqual([]);
    expect(order.status).toBe('open');
  });

  test('a handler that throws once (database down) is retried by the service and fulfils once', async () => {
    const { env, book, url } = await shop({ timeScale: 0.0005 });
    const order = book.add();
    book.orders.find.mockRejectedValueOnce(new Error('database unavailable'));
    const trxId = await pay(env, url, order, 'success');
    expect(statusesOf(env.mock, trxId)).toEqual([500]);
    await vi.waitFor(() => expect(statusesOf(env.mock, trxId)).toEqual([500, 200]), { timeout: 2_000 });
    expect(book.fulfilled).toEqual([`${order.id} ${trxId}`]);
  });

  test('two deliveries of one payment at once: one fulfils, the other is 409 (in flight), then 200', async () => {
    const { env, book, url, route } = await shop();
    const order = book.add();
    const release = book.hold();
    const settling = pay(env, url, order, 'success'); // the sandbox's own delivery, held in fulfil
    await vi.waitFor(() => expect(env.mock.state.events).toHaveLength(1));
    const trxId = order.trx_id!;
    await vi.waitFor(() => expect(book.orders.find).toHaveBeenCalled());
    expect(await send(route, url, await resign(env, trxId))).toEqual({ status: 409, body: { received: true, result: 'busy' } });
    release();
    await settling;
    expect(statusesOf(env.mock, trxId)).toEqual([200]);
    expect(book.fulfilled).toEqual([`${order.id} ${trxId}`]);
    expect(await send(route, url, await resign(env, trxId))).toMatchObject({ status: 200, body: { result: 'done' } });
  });
});

/** Sets `variables` in process.env; the function it returns puts back what was there. */
function setEnv(variables: Record<string, string>): () => void {
  const saved = Object.fromEntries(Object.keys(variables).map((key) => [key, process.env[key]]));
  Object.assign(process.env, variables);
  return () => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  };
}

describe('Express example: the return page', () => {
  async function shop() {
    const env = await sandbox();
    const book = orderBook();
    const base = await listen(
      createServer(createApp({ environment: 'sandbox', secret: env.secret, client: env.client, orders: book.orders })),
    );
    env.deliverTo((request) => fetch(request));
    return { env, book, base, url: `${base}/webhooks/payments` };
  }

  test('the return page and the webhook race: the order is fulfilled once', async () => {
    const { env, book, base, url } = await shop();
    for (let i = 0; i < 5; i++) {
      const order = book.add();
      const payment = await env.client.payments.create(
        { payment_amount: 25, currency_code: 'USD', ref_trx: order.id, ipn_url: url },
        { idempotencyKey: order.id },
      );
      order.trx_id = payment.trx_id;
      // The customer is sent back as the service delivers the webhook: both report the payment.
      const [, page] = await Promise.all([
        env.mock.completeCheckout(payment.trx_id, 'success'),
        fetch(`${base}/orders/${order.id}/return`),
      ]);
      expect(page.status).toBe(200);
      expect(await page.text()).toMatch(new RegExp(`^Order ${order.id} (is paid|is being confirmed)`));
      expect([[200], [409]]).toContainEqual(statusesOf(env.mock, payment.trx_id));
    }
    expect(book.fulfilled).toHaveLength(5);
    expect(new Set(book.fulfilled).size).toBe(5);
  });

  test('while the webhook holds the payment the page says "being confirmed"; after it, "paid"; fulfilled once', async () => {
    const { env, book, base, url } = await shop();
    const order = book.add();
    const release = book.hold();
    const settling = pay(env, url, order, 'success');
    await vi.waitFor(() => expect(book.orders.find).toHaveBeenCalled());
    expect(await (await fetch(`${base}/orders/${order.id}/return`)).text()).toBe(`Order ${order.id} is being confirmed.`);
    release();
    await settling;
    expect(await (await fetch(`${base}/orders/${order.id}/return`)).text()).toBe(`Order ${order.id} is paid: thank you!`);
    expect(book.fulfilled).toHaveLength(1);
  });

  test('the return page alone settles a payment whose webhook never came; an unknown order is 404', async () => {
    const { env, book, base } = await shop();
    const order = book.add();
    await pay(env, 'http://127.0.0.1:9/unreachable', order, 'success'); // the delivery fails: ECONNREFUSED
    expect(await (await fetch(`${base}/orders/${order.id}/return`)).text()).toBe(`Order ${order.id} is paid: thank you!`);
    expect(book.fulfilled).toHaveLength(1);
    expect((await fetch(`${base}/orders/nope/return`)).status).toBe(404);
  });

  test('a global express.json() in front of the webhook route breaks verification (invalid_payload)', async () => {
    const env = await sandbox();
    const book = orderBook();
    const app = express();
    app.use(express.json()); // the mistake: parses the body before the webhook route sees it
    app.use(createApp({ environment: 'sandbox', secret: env.secret, client: env.client, orders: book.orders }));
    const base = await listen(createServer(app));
    env.deliverTo((request) => fetch(request));
    const order = book.add();
    const trxId = await pay(env, `${base}/webhooks/payments`, order, 'success');
    expect(statusesOf(env.mock, trxId)).toEqual([400]);
    const res = await send((request) => fetch(request), `${base}/webhooks/payments`, await resign(env, trxId));
    expect(res).toMatchObject({ status: 400, body: { error: 'invalid_payload' } });
    expect(res.body.message).toMatch(/parsed object.*express\.raw/s);
    expect(book.fulfilled).toEqual([]);
  });
});

describe('node:http example: the raw body, routing and limits', () => {
  async function start() {
    const env = await sandbox();
    const book = orderBook();
    const base = await listen(createWebhookServer({ environment: 'sandbox', secret: env.secret, client: env.client, orders: book.orders }));
    env.deliverTo((request) => fetch(request));
    return { env, book, base, url: `${base}/webhooks/payments` };
  }

  test('a body arriving in chunks that split a UTF-8 character verifies (raw bytes, not strings)', async () => {
    const { env, book, url } = await start();
    const order = book.add();
    const trxId = await pay(env, url, order, 'failed');
    // The sandbox's body with a non-ASCII field, split inside the 3-byte ☕.
    const payload = eventOf(env.mock, trxId).body.replace('"data":{', '"note":"Zoë ☕","data":{');
    const delivery = await signWebhook({ payload, secret: env.secret });
    const bytes = Buffer.from(delivery.body, 'utf8');
    const split = bytes.indexOf(Buffer.from('☕', 'utf8')) + 1;
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(url, { method: 'POST', headers: { ...delivery.headers, 'Transfer-Encoding': 'chunked' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.write(bytes.subarray(0, split));
      setTimeout(() => req.end(bytes.subarray(split)), 20);
    });
    expect(status).toBe(200);
  });

  test('other paths are 404, other methods 405, bodies over 1 MiB 413', async () => {
    const { base, env } = await start();
    expect((await fetch(`${base}/elsewhere`, { method: 'POST', body: '{}' })).status).toBe(404);
    const get = await fetch(`${base}/webhooks/payments`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const huge = await signWebhook({
      payload: { id: 'evt_1', type: 'payment.completed', padding: 'x'.repeat(1024 * 1024) },
      secret: env.secret,
    });
    expect((await send((request) => fetch(request), `${base}/webhooks/payments`, huge)).status).toBe(413);
  });

  test('a secret with a trailing newline is refused when the server is made, not answered 500 at the first delivery', async () => {
    const env = await sandbox();
    const book = orderBook();
    const make = () => createWebhookServer({ environment: 'sandbox', secret: `${env.secret}\n`, client: env.client, orders: book.orders });
    expect(make).toThrow(ConfigurationError);
    expect(make).toThrow(
      /^createFulfillment\(\{ secret \}\): webhook secret has leading or trailing whitespace \(a copy-paste slip\?\): remove it\.$/,
    );
    expect(book.fulfilled).toEqual([]);
  });
});

describe('AWS Lambda example: base64 bodies and the deployed handler', () => {
  test('a body left base64-encoded gets the hint; rotation accepts the old secret', async () => {
    const env = await sandbox();
    const book = orderBook();
    const lambda = createHandler({
      environment: 'sandbox',
      secret: ['whsec_new_0123456789', env.secret],
      client: env.client,
      orders: book.orders,
    });
    env.deliverTo(apiGateway(lambda)); // signed with the sandbox secret, the "old" one here
    const order = book.add();
    const trxId = await pay(env, 'https://abc.lambda-url.eu-west-1.on.aws/', order, 'success');
    expect(statusesOf(env.mock, trxId)).toEqual([200]);
    expect(book.fulfilled).toHaveLength(1);
    const delivery = await resign(env, trxId);
    const headers = Object.fromEntries(Object.entries(delivery.headers).map(([name, value]) => [name.toLowerCase(), value]));
    const undecoded = await lambda({ body: Buffer.from(delivery.body).toString('base64'), isBase64Encoded: false, headers });
    expect(undecoded.statusCode).toBe(401);
    expect(JSON.parse(undecoded.body).message).toContain('looks base64-encoded: decode it first');
  });

  test('the exported handler builds its client and kit from the environment; its stand-in orders table knows no order (500)', async () => {
    const env = await sandbox();
    const { webhookSecret: _secret, ...credentials } = env.mock.credentials.sandbox;
    vi.stubEnv('BUSINESS_PAYMENTS_ENVIRONMENT', 'sandbox');
    vi.stubEnv('BUSINESS_PAYMENTS_BASE_URL', env.baseUrl);
    vi.stubEnv('BUSINESS_PAYMENTS_MERCHANT_KEY', credentials.merchantKey);
    vi.stubEnv('BUSINESS_PAYMENTS_API_KEY', credentials.apiKey);
    vi.stubEnv('BUSINESS_PAYMENTS_API_SECRET', credentials.apiSecret);
    vi.stubEnv('BUSINESS_PAYMENTS_WEBHOOK_SECRET', env.secret);
    env.deliverTo(apiGateway(deployedLambda));
    const order = orderBook().add();
    const trxId = await pay(env, 'https://abc.lambda-url.eu-west-1.on.aws/', order, 'success');
    // Verified with the sandbox, then refused: its stand-in orders table knows no order.
    expect(statusesOf(env.mock, trxId)).toEqual([500]);
    const forged = await signWebhook({ payload: eventOf(env.mock, trxId).body, secret: 'whsec_someone_else' });
    expect((await send(apiGateway(deployedLambda), 'https://abc.lambda-url.eu-west-1.on.aws/', forged)).status).toBe(401);
  });
});

describe('Workers example: waitUntil, bindings, rotation', () => {
  test('the kit hands its work to ctx.waitUntil; GET is 405', async () => {
    const env = await sandbox();
    const book = orderBook();
    const worker = createWorker({ orders: book.orders, client: env.client });
    const { ctx, pending } = fakeContext();
    env.deliverTo((request) => worker.fetch(request, { BUSINESS_PAYMENTS_WEBHOOK_SECRET: env.secret }, ctx));
    const trxId = await pay(env, 'https://hooks.example.com/', book.add(), 'success');
    expect(statusesOf(env.mock, trxId)).toEqual([200]);
    expect(pending).toHaveLength(1);
    await Promise.all(pending);
    expect(book.fulfilled).toHaveLength(1);
    expect((await worker.fetch(new Request('https://hooks.example.com/'), {}, ctx)).status).toBe(405);
  });

  test('the previous secret is accepted while rotating; without env and ctx (Vercel) process.env is read', async () => {
    const env = await sandbox();
    const book = orderBook();
    const worker = createWorker({ orders: book.orders, client: env.client });
    const rotating: Env = {
      BUSINESS_PAYMENTS_WEBHOOK_SECRET: 'whsec_new_0123456789',
      BUSINESS_PAYMENTS_WEBHOOK_SECRET_PREVIOUS: env.secret,
    };
    env.deliverTo((request) => worker.fetch(request, rotating, fakeContext().ctx));
    const trxId = await pay(env, 'https://hooks.example.com/', book.add(), 'success');
    expect(statusesOf(env.mock, trxId)).toEqual([200]);
    vi.stubEnv('BUSINESS_PAYMENTS_WEBHOOK_SECRET', env.secret);
    const again = await send((request) => worker.fetch(request), 'https://hooks.example.com/', await resign(env, trxId));
    expect(again).toMatchObject({ status: 200, body: { result: 'done' } });
    expect(book.fulfilled).toHaveLength(1);
  });

  test('an unset secret throws ConfigurationError (a 500: the service retries)', async () => {
    const env = await sandbox();
    vi.stubEnv('BUSINESS_PAYMENTS_WEBHOOK_SECRET', undefined);
    const worker = createWorker({ orders: orderBook().orders, client: env.client });
    const delivery = await signWebhook({
      payload: { id: 'evt_1', type: 'payment.completed', data: { trx_id: 'TRX1' } },
      secret: env.secret,
    });
    await expect(
      send((request) => worker.fetch(request, {}, fakeContext().ctx), 'https://hooks.example.com/', delivery),
    ).rejects.toBeInstanceOf(ConfigurationError);
    // The default export too (its client is built from the same variables).
    await expect(send((request) => edgeWorker.fetch(request, {}), 'https://hooks.example.com/', delivery)).rejects.toBeInstanceOf(
      ConfigurationError,
    );
  });

  test('bundled and run in an edge runtime (no process, WebCrypto, the client over the network): fulfilled once, forged 401', async () => {
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
      entryPoints: [fileURLToPath(new URL('../../examples/edge-webhook/handler.ts', import.meta.url))],
      bundle: true,
      write: false,
      format: 'iife',
      globalName: '__webhookWorker',
      platform: 'browser',
      target: 'es2022',
      logLevel: 'silent',
      plugins: [entries],
    });
    const vm = new EdgeVM();
    vm.evaluate(bundle.outputFiles[0]!.text);
    expect(vm.evaluate('typeof process')).toBe('undefined');
    const book = orderBook();
    // The client is built inside the edge runtime from the bindings, and calls the sandbox over HTTP.
    const worker = (vm.evaluate('__webhookWorker.createWorker') as typeof createWorker)({ orders: book.orders });
    const { webhookSecret: _secret, ...credentials } = env.mock.credentials.sandbox;
    const bindings: Env = {
      BUSINESS_PAYMENTS_ENVIRONMENT: 'sandbox',
      BUSINESS_PAYMENTS_BASE_URL: env.baseUrl,
      BUSINESS_PAYMENTS_MERCHANT_KEY: credentials.merchantKey,
      BUSINESS_PAYMENTS_API_KEY: credentials.apiKey,
      BUSINESS_PAYMENTS_API_SECRET: credentials.apiSecret,
      BUSINESS_PAYMENTS_WEBHOOK_SECRET: env.secret,
    };
    // A Request of the edge runtime's own (its class is what the bundled code checks against).
    const { ctx } = fakeContext();
    const route: Route = async (request) => {
      const headers = Object.fromEntries(request.headers);
      const inner = new vm.context.Request(request.url, { method: 'POST', body: await request.text(), headers }) as Request;
      const answer = await worker.fetch(inner, bindings, ctx);
      return new Response(await answer.text(), { status: answer.status });
    };
    env.deliverTo(route);
    const order = book.add();
    const trxId = await pay(env, 'https://hooks.example.com/', order, 'success');
    expect(statusesOf(env.mock, trxId)).toEqual([200]);
    expect(book.fulfilled).toEqual([`${order.id} ${trxId}`]);
    expect(await send(route, 'https://hooks.example.com/', await resign(env, trxId))).toMatchObject({
      status: 200,
      body: { result: 'done' },
    });
    const forged = await signWebhook({ payload: eventOf(env.mock, trxId).body, secret: 'whsec_someone_else' });
    expect(await send(route, 'https://hooks.example.com/', forged)).toMatchObject({ status: 401, body: { error: 'invalid_signature' } });
    expect(book.fulfilled).toHaveLength(1);
  });
});

// ---------------------------------------------------------------------------------------
// Headers first, bodies bounded: each example refuses an unsigned or stale delivery
// before reading its body, and reads at most 1 MiB. Over real sockets (Express, node:http) a
// flood keeps sending after its answer: it gets the answer while still sending, and the
// server stops reading the connection (no drain of the rest); the Fetch routes are given
// bodies that count what is pulled from them.

/**
 * POSTs `total` bytes (chunked, 64 KiB at a time) over a plain socket, as a flood would: on
 * after the answer too. Resolves once answered and then 300 ms on: the answer, how much had
 * been sent when it came, and how much the server had read of the connection by the end.
 */
function flood(server: Server, headers: Record<string, string>, total: number) {
  return new Promise<{ status: number; body: string; sentAtAnswer: number; serverRead: number }>((resolve, reject) => {
    const { port } = server.address() as AddressInfo;
    let accepted: Socket | undefined;
    server.once('connection', (socket: Socket) => (accepted = socket));
    const data = Buffer.alloc(64 * 1024, 0x20);
    const chunk = Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);
    const head = Object.entries({ host: '127.0.0.1', ...headers, 'transfer-encoding': 'chunked' }).map(
      ([name, value]) => `${name}: ${value}\r\n`,
    );
    let sent = 0;
    let text = '';
    let answered: { status: number; body: string; sentAtAnswer: number } | undefined;
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`POST /webhooks/payments HTTP/1.1\r\n${head.join('')}\r\n`);
      const pump = () => {
        while (!socket.destroyed && sent < total) {
          sent += data.length;
          if (!socket.write(chunk)) return void socket.once('drain', pump);
        }
      };
      pump();
    });
    socket.on('data', (bytes) => {
      if (answered) return;
      text += bytes.toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return;
      const [head, raw] = [text.slice(0, split), text.slice(split + 4)];
      // The answer's body: by its content-length (Express), or chunked (node:http's writeHead().end()).
      const length = /\r\ncontent-length: (\d+)/i.exec(head)?.[1];
      const body = length ? raw : raw.endsWith('0\r\n\r\n') ? raw.replace(/^[\da-f]+\r\n|\r\n0\r\n\r\n$/gi, '') : undefined;
      if (body === undefined || Buffer.byteLength(body) < Number(length ?? 0)) return;
      answered = { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), body, sentAtAnswer: sent };
      setTimeout(() => {
        resolve({ ...answered!, serverRead: accepted?.bytesRead ?? NaN });
        socket.destroy();
      }, 300);
    });
    socket.on('error', (error) => answered || reject(error));
  });
}

/** A Fetch body of `total` bytes in 64 KiB chunks, made only when read (highWaterMark 0): `seen.pulled` counts them. */
function countedBody(total: number) {
  const seen = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (seen.pulled >= total) return controller.close();
        seen.pulled += 64 * 1024;
        controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
      },
      cancel: () => void (seen.cancelled = true),
    },
    { highWaterMark: 0 },
  );
  return { stream, seen };
}

const MiB = 1024 * 1024;
const UNSIGNED = { 'content-type': 'application/json' };
/** Headers of a delivery signed with `secret` (the body sent is another: the headers are checked first). */
const signedHeaders = async (secret: string) =>
  (await signWebhook({ secret, payload: { id: 'evt_big', type: 'payment.completed', data: { trx_id: 'TRX_BIG' } } })).headers;

describe.each([
  [
    'Express',
    (env: Sandbox, orders: OrderBook['orders']) =>
      createServer(createApp({ environment: 'sandbox', secret: env.secret, client: env.client, orders })),
  ],
  [
    'node:http',
    (env: Sandbox, orders: OrderBook['orders']) =>
      createWebhookServer({ environment: 'sandbox', secret: env.secret, client: env.client, orders }),
  ],
])('%s example: headers first, at most 1 MiB read', (_name, make) => {
  const TOTAL = 256 * MiB;
  /** The example listening; its connections (left unread, so a client's close goes unseen until the idle timeout) are closed with it. */
  async function start(server: Server) {
    await listen(server);
    cleanups.push(() => server.closeAllConnections());
  }

  test('a 256 MiB unsigned POST is 401 while it is still being sent, and the server stops reading it; a stale one too', async () => {
    const env = await sandbox();
    const server = make(env, orderBook().orders);
    await start(server);
    const unsigned = await flood(server, UNSIGNED, TOTAL);
    expect(unsigned.status).toBe(401);
    expect(JSON.parse(unsigned.body)).toMatchObject({ error: 'missing_header' });
    // The answer came while the kernel's buffers were filling; the server read little more
    // than its headers, and stopped reading (it would drain the rest otherwise).
    expect(unsigned.sentAtAnswer).toBeLessThan(64 * MiB);
    expect(unsigned.serverRead).toBeLessThan(2 * MiB);
    const stale = await signWebhook({
      secret: env.secret,
      payload: '{}',
      type: 'payment.completed',
      timestamp: Math.floor(Date.now() / 1000) - 301,
    });
    const refused = await flood(server, stale.headers, TOTAL);
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body)).toMatchObject({ error: 'timestamp_too_old' });
    expect(refused.serverRead).toBeLessThan(2 * MiB);
  });

  test('a signed 256 MiB POST is 413 once past 1 MiB, while it is still being sent, and the server stops reading it', async () => {
    const env = await sandbox();
    const book = orderBook();
    const server = make(env, book.orders);
    await start(server);
    const answer = await flood(server, await signedHeaders(env.secret), TOTAL);
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'payload_too_large' });
    expect(answer.sentAtAnswer).toBeLessThan(64 * MiB);
    // 1 MiB and a chunk or so, then nothing more.
    expect(answer.serverRead).toBeLessThan(3 * MiB);
    expect(book.fulfilled).toEqual([]);
  });
});

describe('Workers and Lambda examples: headers first, at most 1 MiB read', () => {
  test('Workers: an unsigned flood is 401 with nothing pulled; a signed one 413 with at most 1 MiB and a chunk pulled, the stream cancelled', async () => {
    const env = await sandbox();
    const worker = createWorker({ orders: orderBook().orders, client: env.client });
    const bindings: Env = { BUSINESS_PAYMENTS_WEBHOOK_SECRET: env.secret };
    const post = (headers: Record<string, string>, body: ReadableStream<Uint8Array>) =>
      worker.fetch(
        new Request('https://hooks.example.com/', { method: 'POST', headers, body, duplex: 'half' } as RequestInit),
        bindings,
        fakeContext().ctx,
      );
    const unsigned = countedBody(1024 * MiB);
    expect((await post(UNSIGNED, unsigned.stream)).status).toBe(401);
    expect(unsigned.seen.pulled).toBe(0);
    const signed = countedBody(1024 * MiB);
    const answer = await post(await signedHeaders(env.secret), signed.stream);
    expect(answer.status).toBe(413);
    expect(await answer.json()).toMatchObject({ error: 'payload_too_large' });
    expect(signed.seen.pulled).toBeLessThanOrEqual(MiB + 64 * 1024);
    expect(signed.seen.cancelled).toBe(true);
  });

  test('Lambda: a signed body over 1 MiB is 413, unverified; an unsigned one 401', async () => {
    const env = await sandbox();
    const lambda = createHandler({ environment: 'sandbox', secret: env.secret, client: env.client, orders: orderBook().orders });
    const big = await signWebhook({
      secret: env.secret,
      payload: { id: 'evt_big', type: 'payment.completed', data: { trx_id: 'TRX_BIG', pad: 'x'.repeat(MiB) } },
    });
    const headers = Object.fromEntries(Object.entries(big.headers).map(([name, value]) => [name.toLowerCase(), value]));
    const tooLarge = await lambda({ body: Buffer.from(big.body).toString('base64'), isBase64Encoded: true, headers });
    expect(tooLarge.statusCode).toBe(413);
    expect(JSON.parse(tooLarge.body)).toMatchObject({ error: 'payload_too_large' });
    expect((await lambda({ body: big.body, headers: { 'content-type': 'application/json' } })).statusCode).toBe(401);
  });
});

// ---------------------------------------------------------------------------------------
// Next.js: the route handlers and the return page's check, called as Next calls them. The
// example's kit and orders are one per process (on globalThis), made from BUSINESS_PAYMENTS_*
// on first use: one sandbox serves this whole block.

describe('Next.js example', () => {
  let env: Sandbox;
  let restore = () => {};
  const shared = globalThis as Record<string, unknown>;

  beforeAll(async () => {
    env = await sandbox();
    cleanups.pop(); // closed in afterAll, not after the first test
    const { webhookSecret, ...credentials } = env.mock.credentials.sandbox;
    const variables = {
      BUSINESS_PAYMENTS_ENVIRONMENT: 'sandbox',
      BUSINESS_PAYMENTS_BASE_URL: env.baseUrl,
      BUSINESS_PAYMENTS_MERCHANT_KEY: credentials.merchantKey,
      BUSINESS_PAYMENTS_API_KEY: credentials.apiKey,
      BUSINESS_PAYMENTS_API_SECRET: credentials.apiSecret,
      BUSINESS_PAYMENTS_WEBHOOK_SECRET: webhookSecret,
    };
    restore = setEnv(variables);
    env.deliverTo((request) => (new URL(request.url).pathname.endsWith('-edge') ? nextEdgeRoute.POST(request) : nextRoute.POST(request)));
  });
  afterAll(async () => {
    await env.mock.close();
    restore();
    // The example's one-per-process client, kit and orders (see lib/fulfillment.ts).
    for (const key of ['shopClient', 'shopFulfillment', 'shopOrders']) delete shared[key];
  });

  const NODE_URL = 'https://shop.example.com/api/webhooks/payments';
  const EDGE_URL = 'https://shop.example.com/api/webhooks/payments-edge';
  const route: Route = (request) => nextRoute.POST(request);

  /** An order made as the checkout action makes it, and its payment created (not yet settled). */
  async function checkout(ipnUrl = NODE_URL, charged?: number) {
    const order = createOrder();
    const payment = await env.client.payments.create(
      { payment_amount: charged ?? order.amount, currency_code: order.currency, ref_trx: order.id, ipn_url: ipnUrl },
      { idempotencyKey: order.id },
    );
    savePayment(order, payment.trx_id);
    return { order, trxId: payment.trx_id };
  }

  function fulfilments() {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    return (orderId: string) => log.mock.calls.filter(([line]) => String(line).startsWith(`order ${orderId} fulfilled`)).length;
  }

  test('each route file exports only what a route file may: POST and runtime', () => {
    expect(Object.keys(nextRoute).sort()).toEqual(['POST', 'runtime']);
    expect(nextRoute.runtime).toBe('nodejs');
    expect(Object.keys(nextEdgeRoute).sort()).toEqual(['POST', 'runtime']);
    expect(nextEdgeRoute.runtime).toBe('edge');
  });

  test('paid: the webhook fulfils the order once; the same delivery again is 200 and fulfils nothing', async () => {
    const count = fulfilments();
    const { order, trxId } = await checkout();
    await env.mock.completeCheckout(trxId, 'success');
    expect(statusesOf(env.mock, trxId)).toEqual([200]);
    expect(findOrder(order.id)?.status).toBe('paid');
    expect(await send(route, NODE_URL, await resign(env, trxId))).toEqual({ status: 200, body: { received: true, result: 'done' } });
    expect(count(order.id)).toBe(1);
  });

  test('failed: never fulfilled, the order is marked failed', async () => {
    const count = fulfilments();
    const { order, trxId } = await checkout();
    await env.mock.completeCheckout(trxId, 'failed');
    expect(statusesOf(env.mock, trxId)).toEqual([200]);
    expect(findOrder(order.id)?.status).toBe('failed');
    expect(await confirmOrder(order.id)).toMatchObject({ payment: 'failed' });
    expect(count(order.id)).toBe(0);
  });

  test('a bad signature is 401; a stale one 401; a body that is not an event 400', async () => {
    const count = fulfilments();
    const { order, trxId } = await checkout();
    await env.mock.completeCheckout(trxId, 'failed');
    const forged = await signWebhook({
      payload: eventOf(env.mock, trxId).body.replace('payment.failed', 'payment.completed'),
      secret: 'whsec_x',
    });
    expect(await send(route, NODE_URL, forged)).toMatchObject({ status: 401, body: { error: 'invalid_signature' } });
    const stale = await signWebhook({
      payload: eventOf(env.mock, trxId).body,
      secret: env.secret,
      timestamp: Math.floor(Date.now() / 1000) - 301,
    });
    expect(await send(route, NODE_URL, stale)).toMatchObject({ status: 401, body: { error: 'timestamp_too_old' } });
    const notAnEvent = await signWebhook({ payload: '[1,2]', secret: env.secret, type: 'payment.completed' });
    expect(await send(route, NODE_URL, notAnEvent)).toMatchObject({ status: 400, body: { error: 'invalid_payload' } });
    expect(count(order.id)).toBe(0);
  });

  test('the amount check: a payment of another amount is 500 (delivered again) and never fulfils; the return page says "confirming"', async () => {
    const count = fulfilments();
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const { order, trxId } = await checkout(NODE_URL, 30);
    await env.mock.completeCheckout(trxId, 'success');
    expect(statusesOf(env.mock, trxId)).toEqual([500]);
    expect(eventOf(env.mock, trxId).status).toBe('pending');
    expect(await confirmOrder(order.id)).toMatchObject({ payment: 'error', order: { status: 'open' } });
    expect(count(order.id)).toBe(0);
  });

  test('the return page and the webhook race: one fulfilment, whichever is first', async () => {
    const count = fulfilments();
    const results: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { order, trxId } = await checkout();
      // The customer comes back while the service delivers the webhook.
      const [, page] = await Promise.all([env.mock.completeCheckout(trxId, 'success'), confirmOrder(order.id)]);
      results.push(`${page?.payment} ${statusesOf(env.mock, trxId).join()}`);
      expect(count(order.id)).toBe(1);
      expect(findOrder(order.id)?.status).toBe('paid');
    }
    // The page first (the webhook then 409 or 200 from the store), the webhook first, or at it (pending).
    for (const result of results) expect(['paid 200', 'paid 409', 'pending 200']).toContain(result);
  });

  test('the return page alone settles a payment whose webhook never came', async () => {
    const count = fulfilments();
    const { order, trxId } = await checkout('http://127.0.0.1:9/unreachable');
    env.deliverTo((request) => fetch(request));
    await env.mock.completeCheckout(trxId, 'success');
    env.deliverTo((request) => (new URL(request.url).pathname.endsWith('-edge') ? nextEdgeRoute.POST(request) : nextRoute.POST(request)));
    expect(statusesOf(env.mock, trxId)).toEqual([null]);
    expect(await confirmOrder(order.id)).toMatchObject({ payment: 'paid', order: { status: 'paid' } });
    expect(count(order.id)).toBe(1);
    expect(await confirmOrder('order-unknown')).toBeUndefined();
  });

  test('both routes check the headers before the body, and read at most 1 MiB of it', async () => {
    for (const [POST, url] of [
      [nextRoute.POST, NODE_URL],
      [nextEdgeRoute.POST, EDGE_URL],
    ] as const) {
      const unsigned = countedBody(1024 * MiB);
      expect(
        (await POST(new Request(url, { method: 'POST', headers: UNSIGNED, body: unsigned.stream, duplex: 'half' } as RequestInit))).status,
      ).toBe(401);
      expect(unsigned.seen.pulled).toBe(0);
      const signed = countedBody(1024 * MiB);
      const headers = await signedHeaders(env.secret);
      expect((await POST(new Request(url, { method: 'POST', headers, body: signed.stream, duplex: 'half' } as RequestInit))).status).toBe(
        413,
      );
      expect(signed.seen.pulled).toBeLessThanOrEqual(MiB + 64 * 1024);
    }
  });

  test('the edge route is the same kit', async () => {
    const count = fulfilments();
    const { order, trxId } = await checkout(EDGE_URL);
    await env.mock.completeCheckout(trxId, 'success');
    expect(statusesOf(env.mock, trxId)).toEqual([200]);
    expect(await send((request) => nextEdgeRoute.POST(request), EDGE_URL, await resign(env, trxId))).toMatchObject({
      status: 200,
      body: { result: 'done' },
    });
    expect(count(order.id)).toBe(1);
  });
});

// The same example on a server of the earlier generation (docs/generations.md): the checkout
// action initiates (no payments.create there; the answer has no trx_id), the IPN (signed with
// the API secret, which is then BUSINESS_PAYMENTS_WEBHOOK_SECRET) brings the trx_id, onPaid
// compares paidAmount (verify's `amount` is the net there), and the return page says
// "confirming" until the IPN has come.
describe('Next.js example on the earlier generation', () => {
  let env: Sandbox;
  let restore = () => {};
  const shared = globalThis as Record<string, unknown>;
  const NODE_URL = 'https://shop.example.com/api/webhooks/payments';
  const route: Route = (request) => nextRoute.POST(request);

  beforeAll(async () => {
    for (const key of ['shopClient', 'shopFulfillment', 'shopOrders']) delete shared[key];
    env = await sandbox({ generation: 'earlier' });
    cleanups.pop(); // closed in afterAll
    const { merchantKey, apiKey, apiSecret, webhookSecret } = env.mock.credentials.sandbox;
    expect(webhookSecret).toBe(apiSecret);
    const variables = {
      BUSINESS_PAYMENTS_ENVIRONMENT: 'sandbox',
      BUSINESS_PAYMENTS_BASE_URL: env.baseUrl,
      BUSINESS_PAYMENTS_MERCHANT_KEY: merchantKey,
      BUSINESS_PAYMENTS_API_KEY: apiKey,
      BUSINESS_PAYMENTS_API_SECRET: apiSecret,
      BUSINESS_PAYMENTS_WEBHOOK_SECRET: apiSecret, // the earlier generation signs its IPN with the API secret
    };
    restore = setEnv(variables);
    env.deliverTo((request) => (new URL(request.url).pathname.endsWith('-edge') ? nextEdgeRoute.POST(request) : nextRoute.POST(request)));
  });
  afterAll(async () => {
    await env.mock.close();
    restore();
    for (const key of ['shopClient', 'shopFulfillment', 'shopOrders']) delete shared[key];
  });

  /** An order and its payment as the checkout action makes them there: initiate, no trx_id. */
  async function checkout() {
    const order = createOrder();
    const session = await env.client.payments.initiate({
      payment_amount: order.amount,
      currency_code: order.currency,
      ref_trx: order.id,
      description: order.item,
      success_redirect: `https://shop.example.com/orders/${order.id}/thanks`,
      cancel_redirect: `https://shop.example.com/orders/${order.id}/thanks`,
      ipn_url: NODE_URL,
    });
    expect(session.data?.trx_id).toBeUndefined();
    // The sandbox's record of it (the merchant learns the trx_id from the IPN only).
    const row = [...env.mock.state.payments.values()].find((p) => p.merchant_ref === order.id)!;
    return { order, trxId: row.trx_id as string };
  }

  test('paid: the IPN fulfils the order once for its gross; the return page then says paid; the same IPN again is 200 done', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const lines = (orderId: string) => log.mock.calls.map(([line]) => String(line)).filter((line) => line.startsWith(`order ${orderId} `));
    const { order, trxId } = await checkout();
    expect(await confirmOrder(order.id)).toMatchObject({ payment: undefined, order: { status: 'open' } });
    await env.mock.completeCheckout(trxId, 'success');
    expect(statusesOf(env.mock, trxId)).toEqual([200]);
    expect(findOrder(order.id)).toMatchObject({ status: 'paid', trx_id: trxId });
    expect(lines(order.id)).toEqual([`order ${order.id} fulfilled (${trxId}, 25 USD)`]);
    expect(await confirmOrder(order.id)).toMatchObject({ payment: 'paid' });
    // The same bytes signed again as the service signs them (its IPN is never re-sent: a duplicate from a proxy, say).
    const again = await signWebhook({
      format: 'legacy',
      payload: eventOf(env.mock, trxId).body,
      secret: env.mock.credentials.sandbox.apiSecret,
    });
    expect(await send(route, NODE_URL, again)).toEqual({ status: 200, body: { received: true, result: 'done' } });
    expect(lines(order.id)).toHaveLength(1);
  });

  test('failed: the IPN marks the order failed (with its trx_id); never fulfilled', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const { order, trxId } = await checkout();
    await env.mock.completeCheckout(trxId, 'failed');
    expect(statusesOf(env.mock, trxId)).toEqual([200]);
    expect(findOrder(order.id)).toMatchObject({ status: 'failed', trx_id: trxId });
    expect(await confirmOrder(order.id)).toMatchObject({ payment: 'failed' });
    expect(log.mock.calls.filter(([line]) => String(line).startsWith(`order ${order.id} fulfilled`))).toHaveLength(0);
  });
});
