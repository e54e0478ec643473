// Drives the webhook examples for real: the Express and node:http servers on
// 127.0.0.1 port 0 with real HTTP deliveries, the Next.js route and the fetch-style
// handler with Fetch Requests, and the fetch-style handler once more bundled and run in an
// edge runtime (no `process`, so the verifier takes the WebCrypto path). The Lambda handler gets
// the sandbox's own deliveries through a stand-in for API Gateway (base64 bodies).
import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { EdgeVM } from '@edge-runtime/vm';
import { build } from 'esbuild';
import express from 'express';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { signWebhook, type SignedWebhook } from 'business-payments/testing';
import type { WebhookEvent } from 'business-payments/webhooks';
import { ConfigurationError } from '../../src/index.js';
import { createApp } from '../../examples/express-webhook/server.js';
import { createWebhookServer } from '../../examples/node-http-webhook/server.js';
import * as nextRoute from '../../examples/nextjs/app/api/webhooks/payments/route.js';
import { queuedEvents } from '../../examples/nextjs/lib/webhook-events.js';
import edgeWorker, { type ExecutionContext } from '../../examples/edge-webhook/handler.js';
import { handler as lambdaHandler, received as lambdaReceived, type LambdaHttpEvent } from '../../examples/lambda-webhook/handler.js';
import { createMockService } from '../../src/testing.js';
import { PaymentsClient } from '../../src/index.js';

// The examples import the package by name, as an application would. `business-payments`
// resolves to its own exports map (dist/, absent until a build), so point the two entry
// points at the source, here, for this file and every module it loads.
vi.mock('business-payments/webhooks', () => import('../../src/webhooks.js'));
vi.mock('business-payments/testing', () => import('../../src/testing.js'));

const SECRET = 'whsec_examples_0123456789';
const OLD_SECRET = 'whsec_examples_previous';
const nowSeconds = () => Math.floor(Date.now() / 1000);

function paymentEvent(overrides: Record<string, unknown> = {}) {
  return {
    id: `evt_${randomUUID()}`,
    type: 'payment.completed',
    api_version: '2025-01-01',
    created_at: '2026-11-22T12:00:00+00:00',
    data: {
      trx_id: 'TRX123456',
      merchant_ref: 'order-1001',
      status: 'completed',
      amount: { value: 25, currency: 'USD' },
      settlement: {
        gross: { value: 25, currency: 'USD' },
        fees: { value: 0.75, currency: 'USD' },
        net: { value: 24.25, currency: 'USD' },
      },
      // Non-ASCII on purpose: the signature is over UTF-8 bytes.
      customer: { name: 'Zoë Mwangi ☕', email: 'zoe@example.com', phone: '255712345678' },
      environment: 'sandbox',
    },
    ...overrides,
  };
}

const sign = (payload: Record<string, unknown> | string, options: { secret?: string; timestamp?: number; brand?: string } = {}) =>
  signWebhook({ payload, secret: options.secret ?? SECRET, timestamp: options.timestamp, brand: options.brand });

function tamper(delivery: SignedWebhook): SignedWebhook {
  const body = delivery.body.replace('"value":25,', '"value":2500,');
  expect(body).not.toBe(delivery.body);
  return { ...delivery, body };
}

// ---------------------------------------------------------------------------------------
// Express and node:http: real servers, real HTTP.

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function post(url: string, delivery: SignedWebhook) {
  const response = await fetch(url, { method: 'POST', body: delivery.body, headers: delivery.headers });
  const text = await response.text();
  return { status: response.status, body: text.startsWith('{') ? (JSON.parse(text) as Record<string, unknown>) : text };
}

interface ServerOptions {
  secret: string | readonly string[];
  enqueue: (event: WebhookEvent) => void | Promise<void>;
}

const serverExamples: [name: string, make: (options: ServerOptions) => Server][] = [
  ['express', (options) => createServer(createApp(options))],
  ['node:http', (options) => createWebhookServer(options)],
];

describe.each(serverExamples)('%s example', (_name, make) => {
  async function start(secret: string | readonly string[] = SECRET, enqueue?: ServerOptions['enqueue']) {
    const queued: WebhookEvent[] = [];
    const base = await listen(make({ secret, enqueue: enqueue ?? ((event) => void queued.push(event)) }));
    return { url: `${base}/webhooks/payments`, queued };
  }

  test('the sandbox delivers a settled payment to it over a real socket: 200, queued once', async () => {
    const mock = createMockService();
    const server = await mock.listen({ port: 0 });
    try {
      const { url, queued } = await start(mock.credentials.webhookSecret);
      const client = new PaymentsClient({ ...mock.credentials.sandbox, environment: 'sandbox', baseUrl: server.url });
      const payment = await client.payments.create({
        payment_amount: 25,
        currency_code: 'USD',
        ref_trx: 'example-sandbox-1',
        ipn_url: url,
      });
      await mock.completeCheckout(payment.trx_id, 'success');
      expect(mock.state.deliveries.map((d) => [d.url, d.status])).toEqual([[url, 200]]);
      expect(queued).toHaveLength(1);
      expect(queued[0]).toMatchObject({ type: 'payment.completed', data: { trx_id: payment.trx_id } });
    } finally {
      await mock.close();
    }
  });

  test('production deliveries are signed with the production secret: an endpoint with only the sandbox one refuses them', async () => {
    const mock = createMockService();
    const server = await mock.listen({ port: 0 });
    try {
      const sandboxOnly = await start(mock.credentials.sandbox.webhookSecret);
      const production = await start(mock.credentials.production.webhookSecret);
      const { webhookSecret: _secret, ...credentials } = mock.credentials.production;
      const client = new PaymentsClient({ ...credentials, environment: 'production', baseUrl: server.url, maxRetries: 0 });
      // The merchant's default webhook URL (production ipn_url values must be https).
      for (const [endpoint, ref] of [
        [sandboxOnly, 'example-production-1'],
        [production, 'example-production-2'],
      ] as const) {
        mock.state.merchants[0]!.defaultWebhookUrl = endpoint.url;
        const payment = await client.payments.create({ payment_amount: 25, currency_code: 'USD', ref_trx: ref });
        await mock.completeCheckout(payment.trx_id, 'success');
      }
      expect(mock.state.deliveries.map((d) => [d.url, d.status])).toEqual([
        [sandboxOnly.url, 401],
        [production.url, 200],
      ]);
      expect(sandboxOnly.queued).toEqual([]);
      expect(production.queued).toMatchObject([{ type: 'payment.completed', data: { environment: 'production' } }]);
    } finally {
      await mock.close();
    }
  });

  test('a valid delivery is answered 200 and queued once, exactly as sent', async () => {
    const { url, queued } = await start();
    const event = paymentEvent();
    const res = await post(url, await sign(event));
    expect(res).toEqual({ status: 200, body: { received: true } });
    expect(queued).toEqual([event]);
  });

  test('a duplicate delivery (same event id) is answered 200 and not queued again', async () => {
    const { url, queued } = await start();
    const event = paymentEvent();
    const delivery = await sign(event);
    expect((await post(url, delivery)).status).toBe(200);
    // The same bytes again, then a retry signed later with a new timestamp.
    expect(await post(url, delivery)).toEqual({ status: 200, body: { received: true, duplicate: true } });
    expect(await post(url, await sign(event, { timestamp: nowSeconds() + 1 }))).toEqual({
      status: 200,
      body: { received: true, duplicate: true },
    });
    expect(queued.map((e) => e.id)).toEqual([event.id]);
  });

  test('a tampered body is refused 401 invalid_signature', async () => {
    const { url, queued } = await start();
    const res = await post(url, tamper(await sign(paymentEvent())));
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: 'invalid_signature' });
    expect(queued).toEqual([]);
  });

  test('a delivery signed with another secret is refused 401 invalid_signature', async () => {
    const { url, queued } = await start();
    const res = await post(url, await sign(paymentEvent(), { secret: 'whsec_someone_else' }));
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: 'invalid_signature' });
    expect(queued).toEqual([]);
  });

  test('a stale timestamp is refused 400 timestamp_too_old, a future one 400 timestamp_in_future', async () => {
    const { url, queued } = await start();
    const stale = await post(url, await sign(paymentEvent(), { timestamp: nowSeconds() - 301 }));
    expect(stale.status).toBe(400);
    expect(stale.body).toMatchObject({ error: 'timestamp_too_old' });
    const future = await post(url, await sign(paymentEvent(), { timestamp: nowSeconds() + 600 }));
    expect(future.status).toBe(400);
    expect(future.body).toMatchObject({ error: 'timestamp_in_future' });
    expect(queued).toEqual([]);
  });

  test('a delivery without the signature header is refused 400 missing_header', async () => {
    const { url } = await start();
    const delivery = await sign(paymentEvent());
    const { 'X-Service-Signature': _dropped, ...headers } = delivery.headers;
    const res = await post(url, { ...delivery, headers });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'missing_header' });
  });

  test('another brand in the header names, and a charset in Content-Type, are accepted', async () => {
    const { url, queued } = await start();
    const delivery = await sign(paymentEvent(), { brand: 'Acme' });
    expect(Object.keys(delivery.headers)).toContain('X-Acme-Signature');
    delivery.headers['Content-Type'] = 'application/json; charset=utf-8';
    expect((await post(url, delivery)).status).toBe(200);
    expect(queued).toHaveLength(1);
  });

  test('during rotation a delivery signed with the old secret is accepted', async () => {
    const { url, queued } = await start([SECRET, OLD_SECRET]);
    expect((await post(url, await sign(paymentEvent(), { secret: OLD_SECRET }))).status).toBe(200);
    expect((await post(url, await sign(paymentEvent(), { secret: SECRET }))).status).toBe(200);
    expect(queued).toHaveLength(2);
  });

  test('a body arriving in chunks that split a UTF-8 character verifies (raw bytes, not strings)', async () => {
    const { url, queued } = await start();
    const event = paymentEvent();
    const delivery = await sign(event);
    const bytes = Buffer.from(delivery.body, 'utf8');
    const split = bytes.indexOf(Buffer.from('☕', 'utf8')) + 1; // inside the 3-byte character
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
    expect(queued).toEqual([event]);
  });

  test('when queueing fails the answer is 500 and the retry is accepted, not taken for a duplicate', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    let failures = 1;
    const queued: WebhookEvent[] = [];
    const { url } = await start(SECRET, (event) => {
      if (failures-- > 0) throw new Error('queue unavailable');
      queued.push(event);
    });
    const event = paymentEvent();
    expect((await post(url, await sign(event))).status).toBe(500);
    expect(await post(url, await sign(event))).toEqual({ status: 200, body: { received: true } });
    expect(queued.map((e) => e.id)).toEqual([event.id]);
  });

  test('a secret with a trailing newline is a configuration error: 500, nothing queued', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const { url, queued } = await start(`${SECRET}\n`);
    const res = await post(url, await sign(paymentEvent()));
    expect(res.status).toBe(500);
    expect(queued).toEqual([]);
  });
});

describe('express example: the raw-body pitfall', () => {
  test('a global express.json() in front of the webhook route breaks verification (invalid_payload)', async () => {
    const queued: WebhookEvent[] = [];
    const app = express();
    app.use(express.json()); // the mistake: parses the body before the webhook route sees it
    app.use(createApp({ secret: SECRET, enqueue: (event) => void queued.push(event) }));
    const base = await listen(createServer(app));
    const res = await post(`${base}/webhooks/payments`, await sign(paymentEvent()));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_payload' });
    expect((res.body as { message: string }).message).toMatch(/parsed object.*express\.raw/s);
    expect(queued).toEqual([]);
  });
});

describe('node:http example: routing and limits', () => {
  test('other paths are 404, other methods 405, bodies over 1 MiB 413', async () => {
    const base = await listen(createWebhookServer({ secret: SECRET, enqueue: () => {} }));
    expect((await fetch(`${base}/elsewhere`, { method: 'POST', body: '{}' })).status).toBe(404);
    const get = await fetch(`${base}/webhooks/payments`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const huge = await sign(paymentEvent({ padding: 'x'.repeat(1024 * 1024) }));
    expect((await post(`${base}/webhooks/payments`, huge)).status).toBe(413);
  });
});

// ---------------------------------------------------------------------------------------
// Next.js App Router route handler: called directly with Fetch Requests.

const request = (delivery: SignedWebhook, url = 'https://shop.example.com/api/webhooks/payments') =>
  new Request(url, { method: 'POST', body: delivery.body, headers: delivery.headers });

async function answer(response: Response) {
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('Next.js route handler example', () => {
  const queuedIds = () => queuedEvents.map((e) => e.id);

  test('exports only what a route file may: POST and runtime', () => {
    expect(Object.keys(nextRoute).sort()).toEqual(['POST', 'runtime']);
    expect(nextRoute.runtime).toBe('nodejs');
  });

  test('valid → 200 and queued; the same event again → 200, queued once', async () => {
    vi.stubEnv('BUSINESS_PAYMENTS_WEBHOOK_SECRET', SECRET);
    const event = paymentEvent();
    expect(await answer(await nextRoute.POST(request(await sign(event))))).toEqual({ status: 200, body: { received: true } });
    expect(await answer(await nextRoute.POST(request(await sign(event))))).toEqual({
      status: 200,
      body: { received: true, duplicate: true },
    });
    expect(queuedIds().filter((id) => id === event.id)).toEqual([event.id]);
    expect(queuedEvents.find((e) => e.id === event.id)).toEqual(event);
  });

  test('tampered → 401 invalid_signature; stale → 400 timestamp_too_old; nothing queued', async () => {
    vi.stubEnv('BUSINESS_PAYMENTS_WEBHOOK_SECRET', SECRET);
    const before = queuedEvents.length;
    const tampered = await answer(await nextRoute.POST(request(tamper(await sign(paymentEvent())))));
    expect(tampered).toMatchObject({ status: 401, body: { error: 'invalid_signature' } });
    const stale = await answer(await nextRoute.POST(request(await sign(paymentEvent(), { timestamp: nowSeconds() - 301 }))));
    expect(stale).toMatchObject({ status: 400, body: { error: 'timestamp_too_old' } });
    expect(queuedEvents.length).toBe(before);
  });

  test('a body that is not an event is 400 invalid_payload even with a valid signature', async () => {
    vi.stubEnv('BUSINESS_PAYMENTS_WEBHOOK_SECRET', SECRET);
    const res = await answer(
      await nextRoute.POST(request(await signWebhook({ payload: '[1,2]', secret: SECRET, type: 'payment.completed' }))),
    );
    expect(res).toMatchObject({ status: 400, body: { error: 'invalid_payload' } });
  });

  test('an unset or whitespace-padded secret throws ConfigurationError (Next answers 500, the service retries)', async () => {
    vi.stubEnv('BUSINESS_PAYMENTS_WEBHOOK_SECRET', undefined);
    await expect(nextRoute.POST(request(await sign(paymentEvent())))).rejects.toBeInstanceOf(ConfigurationError);
    vi.stubEnv('BUSINESS_PAYMENTS_WEBHOOK_SECRET', `${SECRET}\n`);
    await expect(nextRoute.POST(request(await sign(paymentEvent())))).rejects.toThrow(/whitespace/);
  });
});

// ---------------------------------------------------------------------------------------
// Fetch-style handler (Cloudflare Workers, Vercel).

function fakeContext() {
  const pending: Promise<unknown>[] = [];
  const ctx: ExecutionContext = { waitUntil: (promise) => void pending.push(promise) };
  return { ctx, pending, settle: () => Promise.all(pending) };
}

describe('AWS Lambda handler example, delivered to by the sandbox', () => {
  // API Gateway in front of the handler: the sandbox's delivery becomes a Lambda event with a
  // base64 body and lower-cased headers, the handler's result becomes the HTTP answer.
  async function viaApiGateway(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => (headers[name] = value));
    const event: LambdaHttpEvent = { body: Buffer.from(String(init?.body ?? '')).toString('base64'), isBase64Encoded: true, headers };
    const result = await lambdaHandler(event);
    return new Response(result.body, { status: result.statusCode, headers: result.headers });
  }

  test('a payment settled in the sandbox reaches the handler base64-encoded, verified once; a tampered one is refused', async () => {
    const mock = createMockService({ fetch: viaApiGateway as typeof fetch });
    vi.stubEnv('BUSINESS_PAYMENTS_WEBHOOK_SECRET', mock.credentials.webhookSecret);
    const client = new PaymentsClient({
      ...mock.credentials.sandbox,
      environment: 'sandbox',
      baseUrl: 'https://sandbox.business-payments.test',
      fetch: (input, init) => mock.handle(new Request(input, init)),
    });
    const payment = await client.payments.create({
      payment_amount: 25,
      currency_code: 'USD',
      ref_trx: 'lambda-1',
      ipn_url: 'https://abc.lambda-url.eu-west-1.on.aws/',
    });
    await mock.completeCheckout(payment.trx_id, 'success');
    expect(mock.state.deliveries.map((d) => d.status)).toEqual([200]);
    const event = lambdaReceived.at(-1)!;
    expect(event).toMatchObject({ type: 'payment.completed', data: { trx_id: payment.trx_id } });

    // The same delivery again is a duplicate; a changed body is 401; the undecoded body gets the hint.
    const delivered = mock.state.events.at(-1)!;
    const headers: Record<string, string> = {};
    const signed = await signWebhook({ payload: delivered.body, secret: mock.credentials.webhookSecret });
    for (const [name, value] of Object.entries(signed.headers)) headers[name.toLowerCase()] = value;
    const again = await lambdaHandler({ body: Buffer.from(delivered.body).toString('base64'), isBase64Encoded: true, headers });
    expect(JSON.parse(again.body)).toEqual({ received: true, duplicate: true });
    const changed = await lambdaHandler({ body: delivered.body.replace('"lambda-1"', '"lambda-2"'), headers });
    expect(changed.statusCode).toBe(401);
    const undecoded = await lambdaHandler({ body: Buffer.from(delivered.body).toString('base64'), isBase64Encoded: false, headers });
    expect(JSON.parse(undecoded.body).message).toContain('looks base64-encoded: decode it first');
    await mock.close();
  });
});

describe('fetch-style edge handler example', () => {
  const env = { BUSINESS_PAYMENTS_WEBHOOK_SECRET: SECRET };

  test('valid → 200 at once, work in waitUntil; a duplicate → 200 and no more work', async () => {
    const info = vi.spyOn(console, 'info').mockImplementation(() => {});
    const { ctx, pending, settle } = fakeContext();
    const event = paymentEvent();
    expect(await answer(await edgeWorker.fetch(request(await sign(event)), env, ctx))).toEqual({ status: 200, body: { received: true } });
    expect(pending).toHaveLength(1);
    await settle();
    expect(info).toHaveBeenCalledWith('order order-1001 paid (TRX123456)');
    expect(await answer(await edgeWorker.fetch(request(await sign(event)), env, ctx))).toEqual({
      status: 200,
      body: { received: true, duplicate: true },
    });
    expect(pending).toHaveLength(1);
    expect(info).toHaveBeenCalledTimes(1);
  });

  test('tampered → 401, stale → 400, GET → 405; no work scheduled', async () => {
    const { ctx, pending } = fakeContext();
    expect(await answer(await edgeWorker.fetch(request(tamper(await sign(paymentEvent()))), env, ctx))).toMatchObject({
      status: 401,
      body: { error: 'invalid_signature' },
    });
    const stale = await edgeWorker.fetch(request(await sign(paymentEvent(), { timestamp: nowSeconds() - 3600 })), env, ctx);
    expect(await answer(stale)).toMatchObject({ status: 400, body: { error: 'timestamp_too_old' } });
    const get = await edgeWorker.fetch(new Request('https://hooks.example.com/'), env, ctx);
    expect(get.status).toBe(405);
    expect(pending).toHaveLength(0);
  });

  test('the previous secret is accepted while rotating', async () => {
    vi.spyOn(console, 'info').mockImplementation(() => {});
    const { ctx } = fakeContext();
    const rotating = { BUSINESS_PAYMENTS_WEBHOOK_SECRET: SECRET, BUSINESS_PAYMENTS_WEBHOOK_SECRET_PREVIOUS: OLD_SECRET };
    const res = await edgeWorker.fetch(request(await sign(paymentEvent(), { secret: OLD_SECRET })), rotating, ctx);
    expect(res.status).toBe(200);
  });

  test('without env and ctx (Vercel) the secret comes from process.env and the work is done before answering', async () => {
    const info = vi.spyOn(console, 'info').mockImplementation(() => {});
    vi.stubEnv('BUSINESS_PAYMENTS_WEBHOOK_SECRET', SECRET);
    const res = await edgeWorker.fetch(request(await sign(paymentEvent({ type: 'payment.failed' }))));
    expect(res.status).toBe(200);
    expect(info).toHaveBeenCalledWith('order order-1001 payment failed (TRX123456)');
  });

  test('an unset secret throws ConfigurationError (a 500: the service retries)', async () => {
    vi.stubEnv('BUSINESS_PAYMENTS_WEBHOOK_SECRET', undefined);
    await expect(edgeWorker.fetch(request(await sign(paymentEvent())), {}, fakeContext().ctx)).rejects.toBeInstanceOf(ConfigurationError);
  });

  test('bundled and run in an edge runtime (no process, WebCrypto): valid → 200, duplicate → 200, tampered → 401', async () => {
    const bundle = await build({
      entryPoints: [fileURLToPath(new URL('../../examples/edge-webhook/handler.ts', import.meta.url))],
      bundle: true,
      write: false,
      format: 'iife',
      globalName: '__webhookWorker',
      platform: 'browser',
      target: 'es2022',
      logLevel: 'silent',
      // The package names resolve through tsconfig.json's `paths` to src/.
    });
    const vm = new EdgeVM();
    const logs: string[] = [];
    vm.context.console.info = (...args: unknown[]) => void logs.push(args.join(' '));
    vm.evaluate(bundle.outputFiles[0]!.text);
    expect(vm.evaluate('typeof process')).toBe('undefined');
    const worker = vm.evaluate('__webhookWorker.default') as typeof edgeWorker;
    // A Request of the edge runtime's own (its class is what the bundled verifier checks against).
    const edgeRequest = (delivery: SignedWebhook) =>
      new vm.context.Request('https://hooks.example.com/', {
        method: 'POST',
        body: delivery.body,
        headers: delivery.headers,
      }) as unknown as Request;
    const { ctx, settle } = fakeContext();

    const event = paymentEvent();
    const ok = await worker.fetch(edgeRequest(await sign(event)), env, ctx);
    expect(ok.status).toBe(200);
    await settle();
    expect(logs).toEqual(['order order-1001 paid (TRX123456)']);
    const again = await worker.fetch(edgeRequest(await sign(event, { timestamp: nowSeconds() + 2 })), env, ctx);
    expect(await again.json()).toEqual({ received: true, duplicate: true });
    const bad = await worker.fetch(edgeRequest(tamper(await sign(paymentEvent()))), env, ctx);
    expect(bad.status).toBe(401);
    expect(await bad.json()).toMatchObject({ error: 'invalid_signature' });
    expect(logs).toHaveLength(1);
  });
});
