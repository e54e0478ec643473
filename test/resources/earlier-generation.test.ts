// What the earlier generation of the service sends (spec/deployed-generation.md), read by the
// client against the fake API: verify's three shapes, waitForOutcome, the other error bodies,
// Merchant Unavailable, the framework's route-not-found 404, client.generation() and
// paidAmount(). The same against the earlier-generation sandbox over a socket is in
// test/integration/earlier-generation.test.ts.
import { http, HttpResponse } from 'msw';
import { describe, expect, test } from 'vitest';
import {
  AuthenticationError,
  MerchantPendingApprovalError,
  MerchantUnavailableError,
  NotFoundError,
  paidAmount,
  PermissionDeniedError,
  ResponseValidationError,
  RouteNotSupportedError,
  UnprocessableEntityError,
} from '../../src/index.js';
import { rejection, settle } from '../support/assertions.js';
import { BASE_URL } from '../support/fake-api.js';
import { useFakeApi } from '../support/harness.js';

const { api, setup: setupApi } = useFakeApi();
const setup = (...args: Parameters<typeof setupApi>) => setupApi(...args).client;
const VERIFY = '/api/v1/verify-payment/:trx';

const completed = {
  status: 'success',
  trx_id: 'TRXABC',
  amount: 97.5,
  fee: 2.5,
  currency: 'USD',
  net_amount: 97.5,
  customer: { name: null, email: 'ada@example.com' },
  description: 'Payment via Card',
  created_at: '2025-08-01T12:00:00.000000Z',
  updated_at: '2025-08-01T12:01:00.000000Z',
};
const pending = { status: 'pending', trx_id: 'TRXABC', message: 'Payment is still pending.' };
const failed = { status: 'failed', trx_id: 'TRXABC', message: 'Payment failed or canceled.' };

// Laravel's answer for a path it has no route for, before any authentication (debug mode).
const routeNotFound = (path: string) =>
  HttpResponse.json(
    {
      message: `The route ${path} could not be found.`,
      exception: 'Symfony\\Component\\HttpKernel\\Exception\\NotFoundHttpException',
      file: '/var/www/vendor/laravel/framework/src/Illuminate/Routing/AbstractRouteCollection.php',
      line: 45,
      trace: [{ file: '/var/www/vendor/laravel/framework/src/Illuminate/Routing/RouteCollection.php', line: 162 }],
    },
    { status: 404 },
  );
/** Every route but the earlier generation's three is the framework's 404. */
const earlierServer = () => {
  const missed: string[] = [];
  api.use(
    http.all(`${BASE_URL}/api/v1/*`, ({ request }) => {
      const path = new URL(request.url).pathname.slice(1);
      if (/^api\/v1\/(initiate-payment|verify-payment\/[^/]+|site-info)$/.test(path)) return undefined;
      missed.push(`${request.method} /${path}`);
      return routeNotFound(path);
    }),
  );
  return missed;
};

describe('verify on the earlier generation', () => {
  test('completed: every field kept; amount is the net, paidAmount gives the gross', async () => {
    api.on('get', VERIFY, { body: completed });
    const tx = await settle(setup().payments.verify('TRXABC'));
    expect(tx).toStrictEqual(completed);
    expect(tx.status === 'success' && paidAmount(tx)).toBe(100);
  });

  test('pending: { status, trx_id, message } is a valid answer, nothing required beside them', async () => {
    api.on('get', VERIFY, { body: pending });
    const tx = await settle(setup().payments.verify('TRXABC'));
    expect(tx).toStrictEqual(pending);
    expect(paidAmount(tx)).toBeUndefined();
  });

  test('failed: the same, so a failed payment can be read', async () => {
    api.on('get', VERIFY, { body: failed });
    expect(await settle(setup().payments.verify('TRXABC'))).toStrictEqual(failed);
  });

  test('success without amount or currency is still refused (what a merchant acts on)', async () => {
    api.on('get', VERIFY, { body: { status: 'success', trx_id: 'TRXABC' } });
    const error = await rejection(setup().payments.verify('TRXABC'));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(Object.keys(error.errors).sort()).toEqual(['amount', 'currency']);
    expect(error.message).toMatch(/amount: is required \(a number\) when status is success/);
  });

  test('a status newer than the SDK passes without an amount', async () => {
    api.on('get', VERIFY, { body: { status: 'processing', trx_id: 'TRXABC' } });
    expect((await settle(setup().payments.verify('TRXABC'))).status).toBe('processing');
  });

  test('404 {"error":"Transaction not found."} is a NotFoundError with the sentence, not a missing route', async () => {
    api.on('get', VERIFY, { status: 404, body: { error: 'Transaction not found.' } });
    const error = await rejection(setup().payments.verify('TRXNOPE'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).not.toBeInstanceOf(RouteNotSupportedError);
    expect(error.label).toBe('Transaction not found.');
    expect(error.message).toBe('404 Transaction not found.');
  });
});

describe('waitForOutcome on the earlier generation', () => {
  test('polls through the pending shape to success', async () => {
    api.sequence('get', VERIFY, [{ body: pending }, { body: pending }, { body: completed }]);
    const outcome = await settle(setup().payments.waitForOutcome('TRXABC', { interval: 1_000 }));
    expect(outcome.status).toBe('success');
    expect(api.seen).toHaveLength(3);
  });

  test("to failure: resolves with the service's words, and asks for no payment record (that route is missing there)", async () => {
    earlierServer();
    api.sequence('get', VERIFY, [{ body: pending }, { body: failed }]);
    const outcome = await settle(setup().payments.waitForOutcome('TRXABC', { interval: 1_000 }));
    expect(outcome).toMatchObject({ status: 'failed', trx_id: 'TRXABC', failure_message: 'Payment failed or canceled.' });
    expect(api.seen.map((seen) => seen.pathWithQuery)).toEqual(['/api/v1/verify-payment/TRXABC', '/api/v1/verify-payment/TRXABC']);
  });
});

describe('error bodies of the earlier generation', () => {
  const session = {
    payment_amount: 25,
    currency_code: 'USD',
    ref_trx: 'order-1',
    ipn_url: 'https://shop.example.com/ipn',
    success_redirect: 'https://shop.example.com/ok',
    cancel_redirect: 'https://shop.example.com/cancel',
  };

  test('422 {"status":"error","errors":{...}}: the field map, and the fields in the message', async () => {
    api.on('post', '/api/v1/initiate-payment', {
      status: 422,
      body: {
        status: 'error',
        errors: {
          ipn_url: ['The ipn url field must be a valid URL.'],
          customer_email: ['The customer email field must be a valid email address.'],
        },
      },
    });
    const error = await rejection(setup().payments.initiate(session));
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(error.errors).toEqual({
      ipn_url: ['The ipn url field must be a valid URL.'],
      customer_email: ['The customer email field must be a valid email address.'],
    });
    expect(error.message).toContain('ipn_url: The ipn url field must be a valid URL.');
  });

  test.each([
    'Invalid currency code.',
    'Currency is not enabled for this merchant.',
    'Receiver wallet for this currency is not available.',
    'Undefined array key "customer_name"',
  ])('422 {"error": %j}: the sentence is the label and the message', async (sentence) => {
    api.on('post', '/api/v1/initiate-payment', { status: 422, body: { error: sentence } });
    const error = await rejection(setup().payments.initiate(session));
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(error.label).toBe(sentence);
    expect(error.message).toBe(`422 ${sentence}`);
  });

  test('403 Merchant Unavailable has its own class, a PermissionDeniedError', async () => {
    api.on('get', '/api/v1/site-info', {
      status: 403,
      body: { error: 'Merchant Unavailable', message: 'This merchant is currently disabled or rejected.' },
    });
    const error = await rejection(setup().siteInfo.retrieve());
    expect(error).toBeInstanceOf(MerchantUnavailableError);
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect(error).not.toBeInstanceOf(MerchantPendingApprovalError);
    expect(error.name).toBe('MerchantUnavailableError');
    expect(error.message).toBe('403 Merchant Unavailable: This merchant is currently disabled or rejected.');
  });

  test('401 {"error":"Unauthorized","message":...}: the message says which check failed', async () => {
    api.on('get', '/api/v1/site-info', {
      status: 401,
      body: { error: 'Unauthorized', message: 'API request timestamp is invalid or expired.' },
    });
    const error = await rejection(setup().siteInfo.retrieve());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error.message).toBe('401 Unauthorized: API request timestamp is invalid or expired.');
  });
});

describe('a route the server lacks', () => {
  test('payments.create: RouteNotSupportedError naming the route, the generation and payments.initiate', async () => {
    const missed = earlierServer();
    const error = await rejection(setup().payments.create({ payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1' }));
    expect(error).toBeInstanceOf(RouteNotSupportedError);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.name).toBe('RouteNotSupportedError');
    expect(error.status).toBe(404);
    expect(error.operation).toBe('payments.create');
    expect(error.route).toBe('POST /api/v1/payments');
    expect(error.message).toMatch(/no route POST \/api\/v1\/payments: it is of the service's earlier generation/);
    expect(error.message).toContain('payments.initiate, payments.verify, siteInfo.retrieve');
    expect(error.message).toContain('create the payment with payments.initiate');
    expect(error.message).toContain('Nothing was created');
    // A missing route is never retried: one request.
    expect(missed).toEqual(['POST /api/v1/payments']);
  });

  test.each([
    ['payments.list', (c: ReturnType<typeof setup>) => c.payments.list()],
    ['payments.retrieve', (c: ReturnType<typeof setup>) => c.payments.retrieve('TRX1')],
    ['payments.push', (c: ReturnType<typeof setup>) => c.payments.push('TRX1')],
    ['balance.retrieve', (c: ReturnType<typeof setup>) => c.balance.retrieve()],
    ['payouts.create', (c: ReturnType<typeof setup>) => c.payouts.create({ amount: 10 })],
    ['payouts.list', (c: ReturnType<typeof setup>) => c.payouts.list()],
    ['billing.invoices.list', (c: ReturnType<typeof setup>) => c.billing.invoices.list()],
    ['openapi', (c: ReturnType<typeof setup>) => c.openapi()],
  ] as const)('%s: RouteNotSupportedError naming payments.initiate', async (operation, call) => {
    earlierServer();
    const error = await rejection(call(setup()) as PromiseLike<unknown>);
    expect(error).toBeInstanceOf(RouteNotSupportedError);
    expect(error.operation).toBe(operation);
    expect(error.message).toContain('payments.initiate');
  });

  test('an HTML page with the same words (another Accept, a proxy rewriting it) reads the same', async () => {
    api.use(
      http.get(
        `${BASE_URL}/api/v1/balance`,
        () =>
          new HttpResponse('<!DOCTYPE html><title>Not Found</title><h1>The route api/v1/balance could not be found.</h1>', {
            status: 404,
            headers: { 'content-type': 'text/html; charset=UTF-8' },
          }),
      ),
    );
    const error = await rejection(setup().balance.retrieve());
    expect(error).toBeInstanceOf(RouteNotSupportedError);
  });

  test('a route every generation has, missing: baseUrl is probably wrong', async () => {
    api.use(http.get(`${BASE_URL}/api/v1/site-info`, () => routeNotFound('api/v1/site-info')));
    const error = await rejection(setup().siteInfo.retrieve());
    expect(error).toBeInstanceOf(RouteNotSupportedError);
    expect(error.message).toMatch(/which every generation of the service has: baseUrl is probably wrong/);
  });

  test("an API's own 404 (with an error label) stays a NotFoundError", async () => {
    api.on('get', '/api/v1/payments/:trx', {
      status: 404,
      body: { error: 'Not Found', message: 'The route to nowhere could not be found.' },
    });
    const error = await rejection(setup().payments.retrieve('TRX1'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).not.toBeInstanceOf(RouteNotSupportedError);
  });
});

describe('client.generation()', () => {
  test("'earlier' from the missing payment list and a present site-info; cached: asked once", async () => {
    earlierServer();
    api.on('get', '/api/v1/site-info', { body: { site_name: 'Pay', api_version: '1.0' } });
    const client = setup();
    expect(await settle(client.generation())).toBe('earlier');
    expect(await settle(client.generation())).toBe('earlier');
    expect(api.seen.map((seen) => seen.pathWithQuery)).toEqual(['/api/v1/site-info']);
  });

  test("'current' from any answer of the payment list itself (a 401 included), with limit=1", async () => {
    api.on('get', '/api/v1/payments', { status: 401, body: { error: 'Invalid API credentials' } });
    const client = setup();
    expect(await settle(client.generation())).toBe('current');
    expect(api.seen.map((seen) => seen.pathWithQuery)).toEqual(['/api/v1/payments?limit=1']);
    expect(await settle(client.generation())).toBe('current');
    expect(api.seen).toHaveLength(1);
  });

  test('a server with neither route: the error says baseUrl, and nothing is cached', async () => {
    api.use(http.all(`${BASE_URL}/api/v1/*`, ({ request }) => routeNotFound(new URL(request.url).pathname.slice(1))));
    const client = setup();
    const error = await rejection(client.generation());
    expect(error).toBeInstanceOf(RouteNotSupportedError);
    expect(error.message).toMatch(/baseUrl is probably wrong/);
    api.server.resetHandlers();
    api.on('get', '/api/v1/payments', { body: { data: [], has_more: false } });
    expect(await settle(client.generation())).toBe('current');
  });

  test('a redirect or a 5xx says nothing of the route: thrown, and nothing is cached', async () => {
    api.use(
      http.get(
        `${BASE_URL}/api/v1/payments`,
        () => new HttpResponse(null, { status: 302, headers: { location: 'https://elsewhere.test/' } }),
      ),
    );
    const client = setup({ maxRetries: 0 });
    const redirected = await rejection(client.generation());
    expect(redirected.status).toBe(302);
    api.server.resetHandlers();
    api.on('get', '/api/v1/payments', { status: 503, body: { error: 'Service Unavailable' } });
    expect((await rejection(client.generation())).status).toBe(503);
    api.server.resetHandlers();
    api.on('get', '/api/v1/payments', { body: { data: [], has_more: false } });
    expect(await settle(client.generation())).toBe('current');
  });

  test('a call that meets a missing route teaches the client: no probe afterwards', async () => {
    const missed = earlierServer();
    const client = setup();
    await rejection(client.balance.retrieve());
    expect(await settle(client.generation())).toBe('earlier');
    expect(missed).toEqual(['GET /api/v1/balance']);
    expect(api.seen).toHaveLength(0);
  });
});

describe('paidAmount', () => {
  test.each([
    [{ amount: 97.5, fee: 2.5, net_amount: 97.5 }, 100],
    [{ amount: 100, fee: 2.5, net_amount: 97.5 }, 100],
    [{ amount: 100, fee: 0, net_amount: 100 }, 100],
    [{ amount: 100 }, 100],
    [{ amount: 97.55, fee: 2.45, net_amount: 97.55 }, 100],
    [{ amount: 0.1, fee: 0.2, net_amount: 0.1 }, 0.3],
    [{ amount: 1000, fee: null, net_amount: 1000 }, 1000],
    [{ amount: undefined }, undefined],
    [{ amount: Number.NaN }, undefined],
  ])('%j → %s', (tx, want) => {
    expect(paidAmount(tx)).toBe(want);
  });
});
