// How the mock is mounted: openapi.json, msw handlers, a real HTTP server; and, last, the
// SDK's PaymentsClient driving it over a real socket to prove the two interoperate.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setupServer } from 'msw/node';
import { describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  MerchantPendingApprovalError,
  NotFoundError,
  PaymentsClient,
  UnprocessableEntityError,
} from '../../../src/index.js';
import { createMockService, TEST_PHONE_NUMBERS } from '../../../src/testing.js';
import { BASE, hostedBody, setup, sign } from '../../support/mock-service.js';

const SPEC_ROUTES = [
  'POST /api/v1/payments',
  'GET /api/v1/payments',
  'GET /api/v1/payments/{trx_id}',
  'POST /api/v1/payments/{trx_id}/push',
  'GET /api/v1/balance',
  'POST /api/v1/initiate-payment',
  'GET /api/v1/verify-payment/{trxId}',
  'GET /api/v1/site-info',
  'POST /api/v1/payouts/preview',
  'POST /api/v1/payouts',
  'GET /api/v1/payouts',
  'GET /api/v1/payouts/{id}',
  'POST /api/v1/billing/plans',
  'POST /api/v1/billing/subscriptions',
  'GET /api/v1/billing/invoices',
  'GET /api/v1/openapi.json',
];

describe('mock service: openapi.json', () => {
  it('is an OpenAPI 3.1 document listing every route of the spec', async () => {
    const { call } = setup();
    const reply = await call('GET', '/api/v1/openapi.json');
    expect(reply.status).toBe(200);
    const doc = reply.body;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([{ url: BASE }]);
    const listed = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(listed.sort()).toEqual([...SPEC_ROUTES].sort());
    // Every $ref resolves.
    const refs = [...reply.text.matchAll(/"\$ref":"#\/components\/schemas\/(\w+)"/g)].map((m) => m[1]!);
    for (const name of refs) expect(doc.components.schemas, name).toHaveProperty(name);
    expect(doc.paths['/api/v1/payments'].post.parameters).toContainEqual(
      expect.objectContaining({ name: 'Idempotency-Key', in: 'header' }),
    );
  });

  it('lists 409 DUPLICATE_REFERENCE on the payment creates and 503 (key store full) on every create, in status order', async () => {
    const { call } = setup();
    const { paths } = (await call('GET', '/api/v1/openapi.json')).body as {
      paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>>;
    };
    for (const path of ['/api/v1/payments', '/api/v1/initiate-payment']) {
      expect(paths[path]!.post!.responses['409']!.description, path).toMatch(/^DUPLICATE_REFERENCE/);
    }
    expect(paths['/api/v1/payouts']!.post!.responses).not.toHaveProperty('409');
    for (const path of [
      '/api/v1/payments',
      '/api/v1/initiate-payment',
      '/api/v1/payouts',
      '/api/v1/billing/plans',
      '/api/v1/billing/subscriptions',
    ]) {
      const statuses = Object.keys(paths[path]!.post!.responses);
      expect(statuses, path).toContain('503');
      expect(statuses, path).toEqual([...statuses].sort());
    }
    expect(paths['/api/v1/balance']!.get!.responses).not.toHaveProperty('503');
  });

  it('every listed route answers (not 404/405) when called signed', async () => {
    const { call } = setup();
    for (const route of SPEC_ROUTES) {
      const [method, template] = route.split(' ') as [string, string];
      const path = template
        .replace('{trx_id}', 'TRXNONE')
        .replace('{trxId}', 'TRXNONE')
        .replace('{id}', '123e4567-e89b-12d3-a456-426614174000');
      const reply = await call(method, path, method === 'POST' ? {} : undefined);
      expect(reply.status, route).not.toBe(405);
      if (!template.includes('{')) expect(reply.status, route).not.toBe(404);
    }
  });
});

describe('mock service: msw handlers', () => {
  it('mounts with setupServer(...mock.handlers) and answers signed fetches on baseUrl', async () => {
    const mock = createMockService({ autoRun: false });
    expect(mock.handlers).toBe(mock.handlers); // built once
    const server = setupServer(...mock.handlers);
    server.listen({ onUnhandledFrame: 'error' });
    try {
      const { sandbox } = mock.credentials;
      const path = '/api/v1/payments?limit=1';
      const ts = Math.floor(Date.now() / 1000);
      const res = await fetch(BASE + path, {
        headers: {
          'X-Environment': 'sandbox',
          'X-Merchant-Key': sandbox.merchantKey,
          'X-API-Key': sandbox.apiKey,
          'X-Timestamp': String(ts),
          'X-Signature': sign(sandbox.apiSecret, ts, 'GET', path, ''),
        },
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ data: [], total: 0 });
      const unsigned = await fetch(`${BASE}/api/v1/balance`);
      expect(unsigned.status).toBe(401);
      expect(mock.state.requests.at(-1)).toMatchObject({ path: '/api/v1/balance', status: 401 });
    } finally {
      server.close();
    }
  });

  it('serves under a baseUrl with a path prefix, signing the full path', async () => {
    const mock = createMockService({ autoRun: false, baseUrl: 'https://api.example.test/gateway/' });
    const server = setupServer(...mock.handlers);
    server.listen({ onUnhandledFrame: 'error' });
    try {
      const client = new PaymentsClient({
        environment: 'sandbox',
        ...mock.credentials.sandbox,
        baseUrl: 'https://api.example.test/gateway',
        maxRetries: 0,
      });
      const payment = await client.payments.create({
        payment_amount: 5,
        currency_code: 'USD',
        ref_trx: 'p-1',
        ipn_url: 'https://shop.example.com/ipn',
      });
      expect(payment.checkout_url).toMatch(/^https:\/\/api\.example\.test\/gateway\/checkout\/TRX/);
      expect((await client.payments.verify(payment.trx_id)).status).toBe('pending');
    } finally {
      server.close();
    }
  });

  it('says npm install -D msw when msw cannot be found', () => {
    const empty = mkdtempSync(join(tmpdir(), 'no-msw-'));
    const cwd = process.cwd();
    try {
      process.chdir(empty);
      expect(() => createMockService().handlers).toThrow(/npm install -D msw/);
    } finally {
      process.chdir(cwd);
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('mock service: listen()', () => {
  it('answers over a real socket, keeping the raw request target and body bytes', async () => {
    const mock = createMockService({ autoRun: false });
    const server = await mock.listen({ port: 0 });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const { sandbox } = mock.credentials;
      // Unusual but valid bytes: the signature covers them exactly as sent.
      const raw = '{ "payment_amount": 25.0, "currency_code": "USD", "ref_trx": "ünï-1", "ipn_url": "https://shop.example.com/ipn" }';
      const path = '/api/v1/payments?source=%7Etest';
      const ts = Math.floor(Date.now() / 1000);
      const res = await fetch(server.url + path, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'X-Environment': 'sandbox',
          'X-Business-Key': sandbox.merchantKey,
          'X-API-Key': sandbox.apiKey,
          'X-Timestamp': String(ts),
          'X-Signature': sign(sandbox.apiSecret, ts, 'POST', path, raw),
        },
        body: raw,
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { data: { merchant_ref: string; checkout_url: string } };
      expect(body.data.merchant_ref).toBe('ünï-1');
      expect(body.data.checkout_url.startsWith(`${server.url}/checkout/`)).toBe(true);
      expect(mock.state.requests.at(-1)).toMatchObject({ method: 'POST', path, status: 200 });
      const page = await fetch(body.data.checkout_url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<form');
    } finally {
      await server.close();
      await mock.close();
    }
  });

  it('close() of the mock closes its servers', async () => {
    const mock = createMockService();
    const server = await mock.listen();
    await mock.close();
    await expect(fetch(`${server.url}/api/v1/site-info`)).rejects.toThrow();
  });
});

describe('mock service + SDK PaymentsClient over a real socket', () => {
  it('interoperates on every route, error label and the push outcome', async () => {
    const mock = createMockService({ timeScale: 0.001 });
    const server = await mock.listen();
    const client = new PaymentsClient({ environment: 'sandbox', ...mock.credentials.sandbox, baseUrl: server.url, maxRetries: 0 });
    try {
      const hosted = await client.payments.create(hostedBody({ ref_trx: 'sdk-1' }) as never);
      expect(hosted).toMatchObject({ status: 'pending', merchant_ref: 'sdk-1', environment: 'sandbox' });
      expect(hosted.checkout_url).toContain(`${server.url}/checkout/${hosted.trx_id}`);

      const session = await client.payments.initiate({
        payment_amount: 12,
        currency_code: 'TZS',
        ref_trx: 'sdk-legacy',
        success_redirect: 'https://shop.example.com/ok',
        cancel_redirect: 'https://shop.example.com/no',
        ipn_url: 'https://shop.example.com/ipn',
        allow_payment_methods: 'mpesa',
      });
      expect(session.info?.merchant_payment_method_codes).toEqual(['mpesa']);

      const push = await client.payments.create({
        payment_amount: 5000,
        currency_code: 'TZS',
        ref_trx: 'sdk-push',
        ipn_url: 'https://shop.example.com/ipn',
        payment_mode: 'push',
        customer_phone: TEST_PHONE_NUMBERS.success,
      });
      const outcome = await client.payments.waitForOutcome(push.trx_id, { interval: 10, timeout: 5_000 });
      expect(outcome).toMatchObject({ status: 'success', fee: 150, net_amount: 4850 });

      await mock.completeCheckout(hosted.trx_id, 'success');
      expect((await client.payments.verify(hosted.trx_id)).status).toBe('success');
      expect(await client.payments.retrieve(hosted.trx_id)).toMatchObject({ trx_id: hosted.trx_id, status: 'success' });

      const page = await client.payments.list({ limit: 2 });
      expect(page).toMatchObject({ total: 3, has_more: true });
      const all: string[] = [];
      for await (const p of client.payments.list({ limit: 2 })) all.push(p.trx_id!);
      expect(all).toHaveLength(3);
      expect((await client.payments.list({ merchant_ref: 'sdk-push' })).data).toHaveLength(1);

      const pending = await client.payments.create(hostedBody({ ref_trx: 'sdk-2', currency_code: 'TZS' }) as never);
      expect(await client.payments.push(pending.trx_id, { customer_phone: TEST_PHONE_NUMBERS.declined })).toMatchObject({
        trx_id: pending.trx_id,
      });

      expect(await client.balance.retrieve()).toBeTruthy();
      expect((await client.siteInfo.retrieve()).api_version).toBe('v1');
      expect((await client.openapi()).openapi).toBe('3.1.0');

      expect(await client.payouts.preview({ amount: 100 })).toMatchObject({ amount: 100, fee: 1, payable_amount: 99 });
      const payout = await client.payouts.create({ amount: 13.13 });
      expect(payout.status).toBe('AMBIGUOUS');
      expect((await client.payouts.retrieve(payout.id!)).status).toBe('AMBIGUOUS');
      expect((await client.payouts.list()).data).toHaveLength(1);

      const plan = await client.billing.plans.create({ name: 'Gold', amount: 10_000, currency: 'TZS' });
      const sub = await client.billing.subscriptions.create({
        plan_code: plan.plan_code!,
        customer_phone: TEST_PHONE_NUMBERS.success,
        terms_shown: 'TZS 10,000 monthly until cancelled.',
      });
      expect(sub.id).toMatch(/^sub_/);
      expect((await client.billing.invoices.list({ subscription: sub.id! })).data).toHaveLength(1);

      // The spec's error labels reach the client's error classes.
      const wallet = await client.payments.create(hostedBody({ currency_code: 'EUR' }) as never).catch((e: unknown) => e);
      expect(wallet).toBeInstanceOf(UnprocessableEntityError);
      expect((wallet as UnprocessableEntityError).label).toBe('Receiver wallet for this currency is not available');
      expect(await client.payments.verify('TRXNOPE').catch((e: unknown) => e)).toBeInstanceOf(NotFoundError);

      const wrong = new PaymentsClient({
        environment: 'sandbox',
        ...mock.credentials.sandbox,
        apiSecret: 'test_wrong',
        baseUrl: server.url,
        maxRetries: 0,
      });
      const auth = await wrong.balance.retrieve().catch((e: unknown) => e);
      expect(auth).toBeInstanceOf(AuthenticationError);
      expect((auth as AuthenticationError).label).toBe('Invalid API credentials');

      mock.state.merchants[0]!.status = 'pending';
      const live = new PaymentsClient({ environment: 'production', ...mock.credentials.production, baseUrl: server.url, maxRetries: 0 });
      expect(await live.balance.retrieve().catch((e: unknown) => e)).toBeInstanceOf(MerchantPendingApprovalError);
    } finally {
      await mock.close();
    }
  });
});
