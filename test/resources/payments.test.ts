// payments.create / initiate / retrieve / push / verify / waitForOutcome against the fake API.
// (payments.list is covered in pagination.test.ts.)
// Time is virtual (the harness runs fake timers from START, Math.random is 0.5): waits pass
// inside settle()/rejection(), and gaps(api.seen) gives the ms between requests.
import { delay, http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, test } from 'vitest';
import {
  APIError,
  APITimeoutError,
  APIUserAbortError,
  InvalidParamsError,
  PaymentsClient,
  InternalServerError,
  RateLimitError,
  ResponseValidationError,
} from '../../src/index.js';
import { expectPlainJson, gaps, invalidParams, rejection, settle, UUID } from '../support/assertions.js';
import { BASE_URL, START, fixtures } from '../support/fake-api.js';
import { liveRoute, productionClient, useFakeApi } from '../support/harness.js';

// The fake server reads the same virtual clock as the client, so long polls stay "fresh".
const { api, setup } = useFakeApi();
// First backoff wait with Math.random() = 0.5: 500 * (1 - 0.25 * 0.5) = 437.5 ms, which
// setTimeout waits as 437 whole milliseconds.
const FIRST_BACKOFF = 437;
const VERIFY_PATH = '/api/v1/verify-payment/TRX123456';

const base = { payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1001' };
const createBody = { status: 'success', data: fixtures.payment, payment_url: fixtures.payment.checkout_url, trx_id: 'TRX123456' };
const sessionBody = { payment_url: 'https://checkout.payments.test/s/abc?sig=1', info: fixtures.sessionInfo };
const legacy = {
  ...base,
  success_redirect: 'https://shop.example.com/thanks',
  cancel_redirect: 'https://shop.example.com/cancel',
  ipn_url: 'https://shop.example.com/ipn',
};

describe('payments.create', () => {
  test('POSTs the validated params as JSON to /api/v1/payments, signed, and returns data as plain JSON', async () => {
    api.on('post', '/api/v1/payments', { body: createBody });
    const { client } = setup();
    const payment = await client.payments.create(base);

    expect(api.seen).toHaveLength(1);
    const req = api.seen[0]!;
    expect(req.method).toBe('POST');
    expect(req.pathWithQuery).toBe('/api/v1/payments');
    expect(req.signatureValid).toBe(true);
    expect(req.rawBody).toBe('{"payment_amount":25,"currency_code":"USD","ref_trx":"order-1001"}');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['accept']).toBe('application/json');
    expect(req.headers['x-environment']).toBe('sandbox');
    expect(req.headers['x-merchant-key']).toBe('test_merchant_001');
    expect(req.headers['x-api-key']).toBe('test_key_001');
    expect(req.headers['x-timestamp']).toBe(String(START / 1000));
    expect(req.headers['idempotency-key']).toMatch(UUID);

    expect(payment).toStrictEqual(fixtures.payment);
    expectPlainJson(payment);
  });

  test('sends every optional field as given (body is exactly the validated params)', async () => {
    api.on('post', '/api/v1/payments', { body: createBody });
    const { client } = setup();
    const params = {
      payment_amount: 1500.5,
      currency_code: 'TZS',
      ref_trx: 'order-2002',
      success_redirect: 'https://shop.example.com/thanks',
      cancel_redirect: 'http://localhost:3000/cancel',
      ipn_url: 'https://shop.example.com/ipn',
      webhook_url: 'https://shop.example.com/ipn',
      description: 'Two mangoes',
      customer_name: 'Asha Mussa',
      customer_email: 'asha@example.com',
      customer_phone: '255712345678',
      payment_mode: 'push' as const,
      allow_payment_methods: ['mpesa', 'tigopesa'],
    };
    await client.payments.create(params);
    expect(api.seen[0]!.json).toStrictEqual(params);
    expect(api.seen[0]!.signatureValid).toBe(true);
  });

  test('drops keys whose value is undefined instead of sending null', async () => {
    api.on('post', '/api/v1/payments', { body: createBody });
    const { client } = setup();
    await client.payments.create({ ...base, description: undefined, customer_name: undefined });
    expect(api.seen[0]!.json).toStrictEqual(base);
  });

  test('.withResponse() gives { data, response } with the HTTP status', async () => {
    api.on('post', '/api/v1/payments', { status: 201, body: createBody, headers: { 'x-request-id': 'req_1' } });
    const { client } = setup();
    const { data, response } = await client.payments.create(base).withResponse();
    expect(data).toStrictEqual(fixtures.payment);
    expect(response.status).toBe(201);
    expect(response.headers.get('x-request-id')).toBe('req_1');
  });

  test('generates a fresh Idempotency-Key per call', async () => {
    api.on('post', '/api/v1/payments', { body: createBody });
    const { client } = setup();
    await client.payments.create(base);
    await client.payments.create(base);
    const [a, b] = api.seen.map((r) => r.headers['idempotency-key']);
    expect(a).toMatch(UUID);
    expect(b).toMatch(UUID);
    expect(a).not.toBe(b);
  });

  test("sends the caller's idempotencyKey; 64 characters is the longest accepted", async () => {
    api.on('post', '/api/v1/payments', { body: createBody });
    const { client } = setup();
    await client.payments.create(base, { idempotencyKey: 'order-1001-attempt-1' });
    const key64 = 'k'.repeat(64);
    await client.payments.create(base, { idempotencyKey: key64 });
    expect(api.seen.map((r) => r.headers['idempotency-key'])).toEqual(['order-1001-attempt-1', key64]);
  });

  test('an Idempotency-Key of 65 characters is refused before sending', async () => {
    api.on('post', '/api/v1/payments', { body: createBody });
    const { client } = setup();
    const error = await invalidParams(client.payments.create(base, { idempotencyKey: 'k'.repeat(65) }));
    expect(Object.keys(error.errors)).toEqual(['idempotencyKey']);
    expect(api.seen).toHaveLength(0);
  });

  test('a retry (503, then 200) reuses the same Idempotency-Key', async () => {
    api.sequence('post', '/api/v1/payments', [{ status: 503, body: { error: 'Unavailable' } }, { body: createBody }]);
    const { client } = setup();
    const payment = await settle(client.payments.create(base));
    expect(payment.trx_id).toBe('TRX123456');
    expect(api.seen).toHaveLength(2);
    expect(api.seen[0]!.headers['idempotency-key']).toMatch(UUID);
    expect(api.seen[1]!.headers['idempotency-key']).toBe(api.seen[0]!.headers['idempotency-key']);
    expect(api.seen.every((r) => r.signatureValid)).toBe(true);
    expect(gaps(api.seen)).toEqual([FIRST_BACKOFF]);
  });

  test('unknown extra response fields are accepted and kept', async () => {
    const data = { ...fixtures.payment, gateway: { code: 'mpesa' }, risk_score: 3 };
    api.on('post', '/api/v1/payments', { body: { ...createBody, data, request_id: 'r1' } });
    const { client } = setup();
    const payment = await client.payments.create(base);
    expect(payment).toStrictEqual(data);
    expectPlainJson(payment);
  });

  test('a push payment without checkout_url/expires_at is accepted', async () => {
    const { checkout_url: _c, expires_at: _e, ...data } = fixtures.payment;
    api.on('post', '/api/v1/payments', { body: { status: 'success', data, trx_id: 'TRX123456' } });
    const { client } = setup();
    expect(await client.payments.create({ ...base, payment_mode: 'push', customer_phone: '255712345678' })).toStrictEqual(data);
  });

  // Forward compatibility (deliberate change): a status or environment newer than this SDK
  // passes through as it came. It used to fail the call with ResponseValidationError after
  // the server had already created the payment.
  test.each([
    ['data.status unknown', { ...fixtures.payment, status: 'completed' }],
    ['data.environment unknown', { ...fixtures.payment, environment: 'live' }],
  ])('%s → resolves, the value kept as it came', async (_name, data) => {
    api.on('post', '/api/v1/payments', { body: { ...createBody, data } });
    const { client } = setup();
    expect(await client.payments.create(base)).toStrictEqual(data);
    expect(api.seen).toHaveLength(1);
  });

  // Shown shape, tolerant where nothing is acted on: each resolves, values kept
  // or read as the spec's type.
  test.each([
    ['amount as a decimal string', { ...createBody, data: { ...fixtures.payment, amount: '25.00' } }, { amount: 25 }],
    ['merchant_ref null', { ...createBody, data: { ...fixtures.payment, merchant_ref: null } }, { merchant_ref: null }],
    ['top-level trx_id missing', { status: 'success', data: fixtures.payment }, { trx_id: 'TRX123456' }],
    [
      'data.trx_id missing, top-level trx_id given',
      { ...createBody, data: { ...fixtures.payment, trx_id: undefined } },
      { trx_id: 'TRX123456' },
    ],
    [
      'data.checkout_url missing, payment_url given',
      { ...createBody, data: { ...fixtures.payment, checkout_url: undefined } },
      { checkout_url: fixtures.payment.checkout_url },
    ],
    ['trx_id as a whole number', { ...createBody, data: { ...fixtures.payment, trx_id: 123456 } }, { trx_id: '123456' }],
  ])('%s → resolves', async (_name, body, expected) => {
    api.on('post', '/api/v1/payments', { body });
    const { client } = setup();
    expect(await client.payments.create(base)).toMatchObject(expected);
  });

  // What the merchant acts on: trx_id, status, amount, currency.
  const broken: Array<[string, Record<string, unknown>, string]> = [
    ['trx_id missing everywhere', { status: 'success', data: { ...fixtures.payment, trx_id: undefined } }, 'trx_id'],
    ['data.amount not a number', { ...createBody, data: { ...fixtures.payment, amount: 'abc' } }, 'amount'],
    // The top-level status is the envelope's "success", never the payment's.
    ['data missing', { status: 'success', trx_id: 'TRX123456' }, 'status'],
    ['data.currency missing', { ...createBody, data: { ...fixtures.payment, currency: undefined } }, 'currency'],
  ];
  test.each(broken)('%s → ResponseValidationError keeping the raw body', async (_name, body, field) => {
    api.on('post', '/api/v1/payments', { body, headers: { 'x-request-id': 'req_9' } });
    const { client } = setup();
    const error = await rejection(client.payments.create(base));
    expect(error).toBeInstanceOf(ResponseValidationError);
    const rve = error as ResponseValidationError;
    expect(rve.body).toBe(JSON.stringify(body));
    expect(rve.status).toBe(200);
    expect(rve.headers.get('x-request-id')).toBe('req_9');
    expect(Object.keys(rve.errors ?? {})).toContain(field);
    // A create: the payment may exist; the key to look it up or retry with is on the error.
    expect(rve.serverMayHaveActed).toBe(true);
    expect(error.attempts).toBe(1);
    expect(error.idempotencyKey).toBe(api.seen[0]!.headers['idempotency-key']);
    expect(api.seen).toHaveLength(1); // not retried
  });

  test('a non-JSON 200 body → ResponseValidationError with the text', async () => {
    api.on('post', '/api/v1/payments', { body: '<html>maintenance</html>' });
    const { client } = setup();
    const error = await rejection(client.payments.create(base));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as ResponseValidationError).body).toBe('<html>maintenance</html>');
    expect((error as ResponseValidationError).serverMayHaveActed).toBe(true);
  });
});

describe('payments.create params (checked before anything is sent)', () => {
  beforeEach(() => api.on('post', '/api/v1/payments', { body: createBody }));

  const accepted: Array<[string, Record<string, unknown>]> = [
    ['payment_amount 1 (the minimum)', { ...base, payment_amount: 1 }],
    ['payment_amount 1.00 as 1.0', { ...base, payment_amount: 1.0 }],
    ['ref_trx of 60 characters', { ...base, ref_trx: 'r'.repeat(60) }],
    ['customer_name of 100 characters', { ...base, customer_name: 'n'.repeat(100) }],
    ['customer_email of 100 characters', { ...base, customer_email: `asha@${'e'.repeat(91)}.com` }],
    ['payment_mode hosted', { ...base, payment_mode: 'hosted' }],
    ['payment_mode push with customer_phone', { ...base, payment_mode: 'push', customer_phone: '255712345678' }],
    ['allow_payment_methods as a comma-separated string', { ...base, allow_payment_methods: 'mpesa,card' }],
    ['allow_payment_methods as an array', { ...base, allow_payment_methods: ['MPESA', 'card'] }],
    ['http URLs in sandbox', { ...base, ipn_url: 'http://shop.example.com/ipn', success_redirect: 'http://localhost:3000/ok' }],
    ['webhook_url alone', { ...base, webhook_url: 'https://shop.example.com/hook' }],
  ];
  test.each(accepted)('accepts %s', async (_name, params) => {
    const { client } = setup();
    await client.payments.create(params as never);
    expect(api.seen).toHaveLength(1);
    expect(api.seen[0]!.json).toStrictEqual(params);
    expect(api.seen[0]!.signatureValid).toBe(true);
  });

  const refused: Array<[string, Record<string, unknown>, string]> = [
    ['payment_amount 0.99', { ...base, payment_amount: 0.99 }, 'payment_amount'],
    ['payment_amount 0', { ...base, payment_amount: 0 }, 'payment_amount'],
    ['payment_amount negative', { ...base, payment_amount: -5 }, 'payment_amount'],
    ['payment_amount as a string that is no decimal', { ...base, payment_amount: '25 USD' }, 'payment_amount'],
    ['payment_amount with 3 decimal places in USD', { ...base, payment_amount: 10.005 }, 'payment_amount'],
    ['payment_amount with decimals in UGX', { ...base, currency_code: 'UGX', payment_amount: 12.5 }, 'payment_amount'],
    ['payment_amount NaN', { ...base, payment_amount: Number.NaN }, 'payment_amount'],
    ['payment_amount Infinity', { ...base, payment_amount: Number.POSITIVE_INFINITY }, 'payment_amount'],
    ['payment_amount missing', { currency_code: 'USD', ref_trx: 'order-1001' }, 'payment_amount'],
    ['currency_code lower case', { ...base, currency_code: 'usd' }, 'currency_code'],
    ['currency_code of 2 letters', { ...base, currency_code: 'US' }, 'currency_code'],
    ['currency_code of 4 letters', { ...base, currency_code: 'USDT' }, 'currency_code'],
    ['currency_code with digits', { ...base, currency_code: 'U5D' }, 'currency_code'],
    ['currency_code missing', { payment_amount: 25, ref_trx: 'order-1001' }, 'currency_code'],
    ['ref_trx missing', { payment_amount: 25, currency_code: 'USD' }, 'ref_trx'],
    ['ref_trx empty', { ...base, ref_trx: '' }, 'ref_trx'],
    ['ref_trx of 61 characters', { ...base, ref_trx: 'r'.repeat(61) }, 'ref_trx'],
    ['customer_name of 101 characters', { ...base, customer_name: 'n'.repeat(101) }, 'customer_name'],
    ['customer_email invalid', { ...base, customer_email: 'asha-at-example.com' }, 'customer_email'],
    ['customer_email of 101 characters', { ...base, customer_email: `asha@${'e'.repeat(92)}.com` }, 'customer_email'],
    ['success_redirect not a URL', { ...base, success_redirect: 'thanks-page' }, 'success_redirect'],
    ['cancel_redirect not a URL', { ...base, cancel_redirect: '/cancel' }, 'cancel_redirect'],
    ['ipn_url not a URL', { ...base, ipn_url: 'shop.example.com/ipn' }, 'ipn_url'],
    ['ipn_url not http(s)', { ...base, ipn_url: 'ftp://shop.example.com/ipn' }, 'ipn_url'],
    ['webhook_url not a URL', { ...base, webhook_url: 'not a url' }, 'webhook_url'],
    ['success_redirect javascript:', { ...base, success_redirect: 'javascript:alert(1)' }, 'success_redirect'],
    [
      'webhook_url different from ipn_url',
      { ...base, ipn_url: 'https://a.example.com/ipn', webhook_url: 'https://b.example.com/ipn' },
      'webhook_url',
    ],
    ['payment_mode push without customer_phone', { ...base, payment_mode: 'push' }, 'customer_phone'],
    ['customer_phone a landline', { ...base, customer_phone: '022 211 0678' }, 'customer_phone'],
    ['customer_phone of another country', { ...base, customer_phone: '+254 722 000 678' }, 'customer_phone'],
    ['payment_mode other than hosted|push', { ...base, payment_mode: 'card' }, 'payment_mode'],
    ['allow_payment_methods as a number', { ...base, allow_payment_methods: 5 }, 'allow_payment_methods'],
    ['allow_payment_methods as an empty array', { ...base, allow_payment_methods: [] }, 'allow_payment_methods'],
    ['allow_payment_methods as an empty string', { ...base, allow_payment_methods: '' }, 'allow_payment_methods'],
    ['description not a string', { ...base, description: 42 }, 'description'],
  ];
  test.each(refused)('refuses %s (InvalidParamsError, nothing sent)', async (_name, params, field) => {
    const { client } = setup();
    const error = await invalidParams(client.payments.create(params as never));
    expect(Object.keys(error.errors)).toEqual([field]);
    expect(error.errors[field]!.length).toBeGreaterThan(0);
    expect(error.message).toContain(field);
    expect(api.seen).toHaveLength(0);
  });

  test('refuses unknown keys (a misspelt field is never dropped silently)', async () => {
    const { client } = setup();
    const error = await invalidParams(client.payments.create({ ...base, amout: 25 } as never));
    expect(JSON.stringify(error.errors)).toContain('amout');
    expect(api.seen).toHaveLength(0);
  });

  test('refuses a params value that is not an object', async () => {
    const { client } = setup();
    await invalidParams(client.payments.create(null as never));
    await invalidParams(client.payments.create('order-1001' as never));
    expect(api.seen).toHaveLength(0);
  });

  test('lists every failing field at once', async () => {
    const { client } = setup();
    const error = await invalidParams(
      client.payments.create({
        payment_amount: 0.5,
        currency_code: 'usd',
        ref_trx: 'r'.repeat(61),
        customer_name: 'n'.repeat(101),
        customer_email: 'nope',
        success_redirect: 'nope',
        cancel_redirect: 'nope',
        ipn_url: 'nope',
        payment_mode: 'push',
      }),
    );
    expect(Object.keys(error.errors).sort()).toEqual(
      [
        'cancel_redirect',
        'currency_code',
        'customer_email',
        'customer_name',
        'customer_phone',
        'ipn_url',
        'payment_amount',
        'ref_trx',
        'success_redirect',
      ].sort(),
    );
    expect(api.seen).toHaveLength(0);
  });

  test('lists the push phone rule even when another field has a type error', async () => {
    const { client } = setup();
    const error = await invalidParams(
      client.payments.create({ payment_amount: true, currency_code: 'USD', ref_trx: 'order-1001', payment_mode: 'push' } as never),
    );
    expect(Object.keys(error.errors).sort()).toEqual(['customer_phone', 'payment_amount']);
    expect(api.seen).toHaveLength(0);
  });

  test('bad params and a bad Idempotency-Key are reported together', async () => {
    const { client } = setup();
    const error = await invalidParams(client.payments.create({ ...base, payment_amount: 0.99 }, { idempotencyKey: 'k'.repeat(65) }));
    expect(Object.keys(error.errors).sort()).toEqual(['idempotencyKey', 'payment_amount']);
    expect(api.seen).toHaveLength(0);
  });
});

describe('production: ipn_url / webhook_url must be HTTPS', () => {
  test('an https ipn_url passes, signed with the live secret and X-Environment production', async () => {
    const seen = liveRoute(api, 'post', '/api/v1/payments', { ...createBody, data: { ...fixtures.payment, environment: 'production' } });
    const client = productionClient();
    const params = { ...base, ipn_url: 'https://shop.example.com/ipn', success_redirect: 'http://shop.example.com/thanks' };
    const payment = await client.payments.create(params);
    expect(payment.environment).toBe('production');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'POST', path: '/api/v1/payments', env: 'production', signatureValid: true, json: params });
  });

  test.each([
    ['ipn_url', { ipn_url: 'http://shop.example.com/ipn' }],
    ['webhook_url', { webhook_url: 'http://shop.example.com/hook' }],
  ])('an http %s is refused before sending', async (field, extra) => {
    const seen = liveRoute(api, 'post', '/api/v1/payments', createBody);
    const client = productionClient();
    const error = await invalidParams(client.payments.create({ ...base, ...extra }));
    expect(Object.keys(error.errors)).toEqual([field]);
    expect(error.errors[field]!.join(' ')).toMatch(/https/);
    expect(seen).toHaveLength(0);
    expect(api.seen).toHaveLength(0);
  });

  test('http ipn_url and webhook_url are both listed', async () => {
    const seen = liveRoute(api, 'post', '/api/v1/payments', createBody);
    const client = productionClient();
    const error = await invalidParams(
      client.payments.create({ ...base, ipn_url: 'http://shop.example.com/ipn', webhook_url: 'http://shop.example.com/ipn' }),
    );
    expect(Object.keys(error.errors).sort()).toEqual(['ipn_url', 'webhook_url']);
    expect(seen).toHaveLength(0);
  });

  test('legacy initiate: http ipn_url refused in production, https accepted', async () => {
    const seen = liveRoute(api, 'post', '/api/v1/initiate-payment', {
      ...sessionBody,
      info: { ...fixtures.sessionInfo, environment: 'production', is_sandbox: false },
    });
    const client = productionClient();
    const error = await invalidParams(client.payments.initiate({ ...legacy, ipn_url: 'http://shop.example.com/ipn' }));
    expect(Object.keys(error.errors)).toEqual(['ipn_url']);
    expect(seen).toHaveLength(0);
    const session = await client.payments.initiate(legacy);
    expect(session.info?.is_sandbox).toBe(false);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ path: '/api/v1/initiate-payment', env: 'production', signatureValid: true, json: legacy });
  });
});

describe('payments.initiate (deprecated legacy route)', () => {
  test('POSTs to /api/v1/initiate-payment with an Idempotency-Key and returns the session as plain JSON', async () => {
    api.on('post', '/api/v1/initiate-payment', { body: sessionBody });
    const { client } = setup();
    const session = await client.payments.initiate(legacy);
    const req = api.seen[0]!;
    expect(api.seen).toHaveLength(1);
    expect(req.method).toBe('POST');
    expect(req.pathWithQuery).toBe('/api/v1/initiate-payment');
    expect(req.signatureValid).toBe(true);
    expect(req.json).toStrictEqual(legacy);
    expect(req.headers['idempotency-key']).toMatch(UUID);
    expect(session).toStrictEqual(sessionBody);
    expectPlainJson(session);
  });

  test("uses the caller's idempotencyKey and .withResponse() gives the status", async () => {
    api.on('post', '/api/v1/initiate-payment', { status: 201, body: sessionBody });
    const { client } = setup();
    const { data, response } = await client.payments.initiate(legacy, { idempotencyKey: 'legacy-1' }).withResponse();
    expect(response.status).toBe(201);
    expect(data.payment_url).toBe(sessionBody.payment_url);
    expect(api.seen[0]!.headers['idempotency-key']).toBe('legacy-1');
  });

  test('keeps the alias data (trx_id, checkout_url) and unknown extra fields', async () => {
    const body = {
      ...sessionBody,
      info: { ...fixtures.sessionInfo, gateway_hint: 'mpesa' },
      data: { trx_id: 'TRX9', checkout_url: 'https://checkout.payments.test/c/TRX9' },
      trx_id: 'TRX9',
    };
    api.on('post', '/api/v1/initiate-payment', { body });
    const { client } = setup();
    expect(await client.payments.initiate(legacy)).toStrictEqual(body);
  });

  test.each([['success_redirect'], ['cancel_redirect'], ['ipn_url']])('requires %s', async (field) => {
    api.on('post', '/api/v1/initiate-payment', { body: sessionBody });
    const { client } = setup();
    const params: Record<string, unknown> = { ...legacy };
    delete params[field];
    const error = await invalidParams(client.payments.initiate(params as never));
    expect(Object.keys(error.errors)).toEqual([field]);
    expect(api.seen).toHaveLength(0);
  });

  test('applies the same field rules as create, listing every failing field', async () => {
    api.on('post', '/api/v1/initiate-payment', { body: sessionBody });
    const { client } = setup();
    const error = await invalidParams(
      client.payments.initiate({
        payment_amount: 0.99,
        currency_code: 'US',
        ref_trx: 'r'.repeat(61),
        success_redirect: 'nope',
        cancel_redirect: 'https://shop.example.com/cancel',
        ipn_url: 'https://shop.example.com/ipn',
        customer_email: 'x'.repeat(101),
        customer_phone: '022 211 0678',
        allow_payment_methods: 7 as never,
      }),
    );
    expect(Object.keys(error.errors).sort()).toEqual(
      [
        'allow_payment_methods',
        'currency_code',
        'customer_email',
        'customer_phone',
        'payment_amount',
        'ref_trx',
        'success_redirect',
      ].sort(),
    );
    expect(api.seen).toHaveLength(0);
  });

  test('push is refused before sending: the earlier generation would silently open a checkout link', async () => {
    api.on('post', '/api/v1/initiate-payment', { body: sessionBody });
    const { client } = setup();
    const error = await invalidParams(
      client.payments.initiate({ ...legacy, payment_mode: 'push' as never, customer_phone: '0712 345 678' }),
    );
    expect(Object.keys(error.errors)).toEqual(['payment_mode']);
    expect(error.errors.payment_mode![0]).toContain('cannot ring a phone');
    expect(error.errors.payment_mode![0]).toContain("payments.create({ payment_mode: 'push'");
    expect(api.seen).toHaveLength(0);
  });

  test('webhook_url is not a field of the legacy route (unknown key refused)', async () => {
    api.on('post', '/api/v1/initiate-payment', { body: sessionBody });
    const { client } = setup();
    const error = await invalidParams(client.payments.initiate({ ...legacy, webhook_url: 'https://shop.example.com/ipn' } as never));
    expect(JSON.stringify(error.errors)).toContain('webhook_url');
    expect(api.seen).toHaveLength(0);
  });

  test('an Idempotency-Key of 65 characters is refused', async () => {
    api.on('post', '/api/v1/initiate-payment', { body: sessionBody });
    const { client } = setup();
    const error = await invalidParams(client.payments.initiate(legacy, { idempotencyKey: 'k'.repeat(65) }));
    expect(Object.keys(error.errors)).toEqual(['idempotencyKey']);
    expect(api.seen).toHaveLength(0);
  });

  // Nothing in `info` is acted on: every field is kept as sent, read as the spec's type where it can be.
  const info = (fields: Record<string, unknown>) => ({ ...sessionBody, info: { ...fixtures.sessionInfo, ...fields } });
  test.each([
    ['info missing', { payment_url: sessionBody.payment_url }, {}],
    ['info.merchant_id missing', info({ merchant_id: undefined }), { info: { merchant_name: fixtures.sessionInfo.merchant_name } }],
    ['info.merchant_id as a string', info({ merchant_id: '42' }), { info: { merchant_id: 42 } }],
    ['info.is_sandbox as PHP 1', info({ is_sandbox: 1 }), { info: { is_sandbox: true } }],
    ['info.is_sandbox as "0"', info({ is_sandbox: '0' }), { info: { is_sandbox: false } }],
    ['info.is_sandbox unreadable, kept', info({ is_sandbox: 'yes' }), { info: { is_sandbox: 'yes' } }],
    ['info.amount as a decimal string', info({ amount: '25' }), { info: { amount: 25 } }],
    ['info.merchant_payment_method_codes missing', info({ merchant_payment_method_codes: undefined }), {}],
    [
      'info.merchant_payment_methods_restricted as 1',
      info({ merchant_payment_methods_restricted: 1 }),
      { info: { merchant_payment_methods_restricted: true } },
    ],
  ])('%s → resolves', async (_name, body, expected) => {
    api.on('post', '/api/v1/initiate-payment', { body });
    const { client } = setup();
    expect(await client.payments.initiate(legacy)).toMatchObject({ payment_url: sessionBody.payment_url, ...expected });
  });

  const broken: Array<[string, Record<string, unknown>, string]> = [
    ['payment_url missing', { info: fixtures.sessionInfo }, 'payment_url'],
    ['payment_url not a string', { ...sessionBody, payment_url: 5 }, 'payment_url'],
  ];
  test.each(broken)('%s → ResponseValidationError keeping the raw body', async (_name, body, field) => {
    api.on('post', '/api/v1/initiate-payment', { body });
    const { client } = setup();
    const error = await rejection(client.payments.initiate(legacy));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as ResponseValidationError).body).toBe(JSON.stringify(body));
    expect(Object.keys((error as ResponseValidationError).errors ?? {})).toContain(field);
  });
});

describe('payments.retrieve', () => {
  test('GETs /api/v1/payments/{trx_id}, signed, without body or Idempotency-Key', async () => {
    const record = { trx_id: 'TRX123456', status: 'success', amount: 25, currency: 'USD' };
    api.on('get', '/api/v1/payments/:id', { body: record });
    const { client } = setup();
    const payment = await client.payments.retrieve('TRX123456');
    const req = api.seen[0]!;
    expect(api.seen).toHaveLength(1);
    expect(req.method).toBe('GET');
    expect(req.pathWithQuery).toBe('/api/v1/payments/TRX123456');
    expect(req.rawBody).toBe('');
    expect(req.signatureValid).toBe(true);
    expect(req.headers['idempotency-key']).toBeUndefined();
    expect(payment).toStrictEqual(record);
    expectPlainJson(payment);
  });

  test('percent-encodes the id in the path and signs the encoded path', async () => {
    api.on('get', '/api/v1/payments/:id', { body: { trx_id: 'a/b c', amount: 25, currency: 'USD', status: 'pending' } });
    const { client } = setup();
    await client.payments.retrieve('a/b c?x');
    expect(api.seen[0]!.pathWithQuery).toBe('/api/v1/payments/a%2Fb%20c%3Fx');
    expect(api.seen[0]!.signatureValid).toBe(true);
  });

  test('unwraps a { status, data } envelope; extra fields kept', async () => {
    const record = { trx_id: 'TRX123456', merchant_ref: 'order-1001', amount: 25, currency: 'USD', status: 'failed', reason: 'declined' };
    api.on('get', '/api/v1/payments/:id', { body: { status: 'success', data: record } });
    const { client } = setup();
    const { data, response } = await client.payments.retrieve('TRX123456').withResponse();
    expect(response.status).toBe(200);
    expect(data).toStrictEqual(record);
  });

  // Provisional shape: nothing the server sends makes retrieve throw.
  test('a mistyped known field is kept as it came', async () => {
    const body = { trx_id: 'TRX123456', status: 3 };
    api.on('get', '/api/v1/payments/:id', { body });
    const { client } = setup();
    expect(await client.payments.retrieve('TRX123456')).toStrictEqual(body);
  });

  test.each([
    ['a state field', { trx_id: 'TRX1', state: 'success', amount: 5, currency: 'USD' }, { status: 'success', state: 'success' }],
    ['an integer trx_id', { trx_id: 42, status: 'pending', amount: 5, currency: 'USD' }, { trx_id: '42' }],
    ['a decimal-string amount', { trx_id: 'TRX1', status: 'pending', amount: '25.50', currency: 'USD' }, { amount: 25.5 }],
    [
      'a { success, data: { payment } } envelope',
      { success: true, data: { payment: { trx_id: 'TRX1', status: 'failed' } } },
      { trx_id: 'TRX1', status: 'failed' },
    ],
  ])('reads %s', async (_name, body, expected) => {
    api.on('get', '/api/v1/payments/:id', { body });
    const { client } = setup();
    expect(await client.payments.retrieve('TRX1')).toMatchObject(expected);
  });

  test.each([[''], ['   '], ['x'.repeat(201)]])('refuses the id %j before sending', async (id) => {
    api.on('get', '/api/v1/payments/:id', { body: {} });
    const { client } = setup();
    const error = await invalidParams(client.payments.retrieve(id));
    expect(Object.keys(error.errors)).toEqual(['trx_id']);
    expect(api.seen).toHaveLength(0);
  });

  test('does not send an idempotency key even when the id is invalid together with a bad key', async () => {
    const { client } = setup();
    const error = await invalidParams(client.payments.retrieve('', { idempotencyKey: 'k'.repeat(65) }));
    expect(Object.keys(error.errors).sort()).toEqual(['idempotencyKey', 'trx_id']);
    expect(api.seen).toHaveLength(0);
  });
});

describe('payments.push', () => {
  test('POSTs { customer_phone } to /api/v1/payments/{trx_id}/push without an Idempotency-Key', async () => {
    api.on('post', '/api/v1/payments/:id/push', {
      body: { status: 'success', data: { trx_id: 'TRX123456', status: 'pending', push: 'sent' } },
    });
    const { client } = setup();
    const result = await client.payments.push('TRX123456', { customer_phone: '255712345678' });
    const req = api.seen[0]!;
    expect(api.seen).toHaveLength(1);
    expect(req.method).toBe('POST');
    expect(req.pathWithQuery).toBe('/api/v1/payments/TRX123456/push');
    expect(req.rawBody).toBe('{"customer_phone":"255712345678"}');
    expect(req.signatureValid).toBe(true);
    expect(req.headers['idempotency-key']).toBeUndefined();
    expect(result).toStrictEqual({ trx_id: 'TRX123456', status: 'pending', push: 'sent' });
    expectPlainJson(result);
  });

  // The envelope's status was once read as the payment's (`success`: paid!), and a 200
  // saying the push failed resolved as if it went out.
  test.each([
    [
      { status: 'success', trx_id: 'TRX1', data: { status: 'pending' } },
      { trx_id: 'TRX1', status: 'pending' },
    ],
    [{ status: 'success', trx_id: 'TRX1' }, { trx_id: 'TRX1' }],
    [
      { success: true, data: { payment: { trx_id: 'TRX1', status: 'pending' } } },
      { trx_id: 'TRX1', status: 'pending' },
    ],
  ])('%j reads the payment status from the resource, never the envelope', async (body, expected) => {
    api.on('post', '/api/v1/payments/:id/push', { body });
    const { client } = setup();
    expect(await client.payments.push('TRX1')).toStrictEqual(expected);
  });

  test.each([
    [200, { status: 'error', message: 'Payment is not pending' }],
    [202, { success: false, error: 'PUSH_FAILED', message: 'Subscriber unreachable' }],
  ])('a %i whose body says the push failed is an APIError, not a result', async (status, body) => {
    api.on('post', '/api/v1/payments/:id/push', { status, body });
    const { client } = setup();
    const error = await rejection(client.payments.push('TRX1'));
    expect(error.constructor.name).toBe('APIError');
    expect((error as APIError).status).toBe(status);
    expect(error.message).toContain(body.message);
    expect(api.seen).toHaveLength(1);
  });

  test('without params it sends {} (the phone given at creation is used)', async () => {
    api.on('post', '/api/v1/payments/:id/push', { body: { trx_id: 'TRX123456', status: 'pending' } });
    const { client } = setup();
    const { data, response } = await client.payments.push('TRX123456').withResponse();
    expect(response.status).toBe(200);
    expect(data).toStrictEqual({ trx_id: 'TRX123456', status: 'pending' });
    expect(api.seen[0]!.rawBody).toBe('{}');
    expect(api.seen[0]!.signatureValid).toBe(true);
  });

  test("sends the caller's idempotencyKey when one is given", async () => {
    api.on('post', '/api/v1/payments/:id/push', { body: {} });
    const { client } = setup();
    await client.payments.push('TRX123456', {}, { idempotencyKey: 'push-1' });
    expect(api.seen[0]!.headers['idempotency-key']).toBe('push-1');
  });

  test('a 500 is not retried (the phone may already have rung)', async () => {
    api.on('post', '/api/v1/payments/:id/push', { status: 500, body: { error: 'Server Error' } });
    const { client } = setup();
    expect(await rejection(client.payments.push('TRX123456'))).toBeInstanceOf(InternalServerError);
    expect(api.seen).toHaveLength(1);
  });

  test('a 429 is retried', async () => {
    api.sequence('post', '/api/v1/payments/:id/push', [
      { status: 429, body: { error: 'Too Many Requests' }, headers: { 'retry-after': '2' } },
      { body: { trx_id: 'TRX123456', status: 'pending' } },
    ]);
    const { client } = setup();
    expect(await settle(client.payments.push('TRX123456'))).toStrictEqual({ trx_id: 'TRX123456', status: 'pending' });
    expect(api.seen).toHaveLength(2);
    expect(gaps(api.seen)).toEqual([2000]);
  });

  test('a persistent 429 surfaces as RateLimitError', async () => {
    api.on('post', '/api/v1/payments/:id/push', { status: 429, body: { error: 'Too Many Requests' }, headers: { 'retry-after': '1' } });
    const { client } = setup({ maxRetries: 1 });
    const error = await rejection(client.payments.push('TRX123456'));
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfter).toBe(1);
    expect(api.seen).toHaveLength(2);
  });

  test.each([
    ['customer_phone', { customer_phone: '12345' }],
    ['customer_phone', { customer_phone: 255712345678 }],
  ])('refuses a bad %s before sending', async (field, params) => {
    api.on('post', '/api/v1/payments/:id/push', { body: {} });
    const { client } = setup();
    const error = await invalidParams(client.payments.push('TRX123456', params as never));
    expect(Object.keys(error.errors)).toEqual([field]);
    expect(api.seen).toHaveLength(0);
  });

  test('refuses unknown keys and an empty id, listed together', async () => {
    api.on('post', '/api/v1/payments/:id/push', { body: {} });
    const { client } = setup();
    const error = await invalidParams(client.payments.push('', { phone: '255712345678' } as never));
    expect(Object.keys(error.errors)).toContain('trx_id');
    expect(JSON.stringify(error.errors)).toContain('phone');
    expect(api.seen).toHaveLength(0);
  });
});

describe('payments.verify', () => {
  test('GETs /api/v1/verify-payment/{trxId} and returns the verified transaction as plain JSON', async () => {
    api.on('get', '/api/v1/verify-payment/:id', { body: fixtures.verified });
    const { client } = setup();
    const verified = await client.payments.verify('TRX123456');
    const req = api.seen[0]!;
    expect(api.seen).toHaveLength(1);
    expect(req.method).toBe('GET');
    expect(req.pathWithQuery).toBe('/api/v1/verify-payment/TRX123456');
    expect(req.rawBody).toBe('');
    expect(req.signatureValid).toBe(true);
    expect(req.headers['idempotency-key']).toBeUndefined();
    expect(req.headers['x-environment']).toBe('sandbox');
    expect(verified).toStrictEqual(fixtures.verified);
    expectPlainJson(verified);
  });

  test('.withResponse() gives { data, response }', async () => {
    api.on('get', '/api/v1/verify-payment/:id', { body: fixtures.verified });
    const { client } = setup();
    const { data, response } = await client.payments.verify('TRX123456').withResponse();
    expect(response.status).toBe(200);
    expect(data).toStrictEqual(fixtures.verified);
  });

  test('unknown extra fields are kept (top level and nested)', async () => {
    const body = { ...fixtures.verified, gateway: 'mpesa', customer: { ...fixtures.verified.customer, phone: '255712345678' } };
    api.on('get', '/api/v1/verify-payment/:id', { body });
    const { client } = setup();
    expect(await client.payments.verify('TRX123456')).toStrictEqual(body);
  });

  // Forward compatibility (deliberate change): it used to be a ResponseValidationError.
  test('a status other than pending/success/failed → resolves, the value kept as it came', async () => {
    const body = { ...fixtures.verified, status: 'completed' };
    api.on('get', '/api/v1/verify-payment/:id', { body });
    const { client } = setup();
    expect(await client.payments.verify('TRX123456')).toStrictEqual(body);
  });

  // Not acted on: kept as sent (verify with customer null, fee null while pending, or no
  // description used to throw, blocking fulfilment).
  test.each([
    ['fee null while pending', { ...fixtures.verified, status: 'pending', fee: null }, { fee: null }],
    ['fee missing', { ...fixtures.verified, fee: undefined }, {}],
    ['net_amount as a decimal string', { ...fixtures.verified, net_amount: '24.25' }, { net_amount: 24.25 }],
    ['amount as a decimal string', { ...fixtures.verified, amount: '25.00' }, { amount: 25 }],
    ['customer null', { ...fixtures.verified, customer: null }, { customer: null }],
    ['customer missing', { ...fixtures.verified, customer: undefined }, {}],
    ['customer.email unreadable, kept', { ...fixtures.verified, customer: { name: 'Asha', email: 5 } }, { customer: { email: 5 } }],
    ['description missing', { ...fixtures.verified, description: undefined }, {}],
    ['created_at missing', { ...fixtures.verified, created_at: undefined }, {}],
    ['trx_id as a whole number', { ...fixtures.verified, trx_id: 123456 }, { trx_id: '123456' }],
  ])('%s → resolves', async (_name, body, expected) => {
    api.on('get', '/api/v1/verify-payment/:id', { body });
    const { client } = setup();
    // The payment the answer is for (an answer for another one is refused: poll-hardening.test.ts).
    expect(await client.payments.verify(String(body.trx_id))).toMatchObject({ status: body.status, ...expected });
  });

  // What the merchant acts on: status, trx_id, amount, currency.
  const broken: Array<[string, Record<string, unknown>, string]> = [
    ['status missing', { ...fixtures.verified, status: undefined }, 'status'],
    ['trx_id missing', { ...fixtures.verified, trx_id: undefined }, 'trx_id'],
    ['amount not a number', { ...fixtures.verified, amount: 'twenty' }, 'amount'],
    ['currency missing', { ...fixtures.verified, currency: undefined }, 'currency'],
  ];
  test.each(broken)('%s → ResponseValidationError keeping the raw body', async (_name, body, field) => {
    api.on('get', '/api/v1/verify-payment/:id', { body });
    const { client } = setup();
    const error = await rejection(client.payments.verify('TRX123456'));
    expect(error).toBeInstanceOf(ResponseValidationError);
    const rve = error as ResponseValidationError;
    expect(rve.body).toBe(JSON.stringify(body));
    expect(Object.keys(rve.errors ?? {})).toContain(field);
    expect(rve.message).toContain(field);
    // A GET changes nothing on the server.
    expect(rve.serverMayHaveActed).toBe(false);
    expect(error.attempts).toBe(1);
  });

  test('refuses an empty trxId before sending', async () => {
    const { client } = setup();
    const error = await invalidParams(client.payments.verify(''));
    expect(Object.keys(error.errors)).toEqual(['trxId']);
    expect(api.seen).toHaveLength(0);
  });
});

describe('payments.waitForOutcome', () => {
  const pending = { body: { ...fixtures.verified, status: 'pending' } };
  const success = { body: fixtures.verified };
  const failed = { body: { ...fixtures.verified, status: 'failed' } };
  const verifies = () => api.seen.filter((r) => r.pathWithQuery === VERIFY_PATH);

  test('pending, pending, success → success after 2 sleeps of `interval`', async () => {
    api.sequence('get', '/api/v1/verify-payment/:id', [pending, pending, success]);
    const { client } = setup();
    const outcome = await settle(client.payments.waitForOutcome('TRX123456', { interval: 2_500 }));
    expect(outcome).toStrictEqual(fixtures.verified);
    expect(gaps(api.seen)).toEqual([2_500, 2_500]);
    expect(api.seen).toHaveLength(3);
    expect(api.seen.every((r) => r.pathWithQuery === VERIFY_PATH && r.signatureValid)).toBe(true);
    // Each poll is signed afresh with the (advanced) clock.
    expect(api.seen.map((r) => Number(r.headers['x-timestamp']))).toEqual(
      [START / 1000, START / 1000 + 2.5, START / 1000 + 5].map(Math.floor),
    );
  });

  test('default interval is 3 s', async () => {
    api.sequence('get', '/api/v1/verify-payment/:id', [pending, success]);
    const { client } = setup();
    await settle(client.payments.waitForOutcome('TRX123456'));
    expect(gaps(api.seen)).toEqual([3_000]);
  });

  test('failed is returned (not thrown)', async () => {
    api.sequence('get', '/api/v1/verify-payment/:id', [pending, failed]);
    // The payment record is looked up once for a reason; this one gives none.
    api.on('get', '/api/v1/payments/:id', { body: { trx_id: 'TRX123456', status: 'failed' } });
    const { client } = setup();
    const outcome = await settle(client.payments.waitForOutcome('TRX123456', { interval: 1_000 }));
    expect(outcome).toStrictEqual(failed.body);
    expect(gaps(verifies())).toEqual([1_000]);
    expect(api.seen.map((r) => r.pathWithQuery)).toEqual([VERIFY_PATH, VERIFY_PATH, '/api/v1/payments/TRX123456']);
  });

  test('an immediate outcome returns without sleeping', async () => {
    api.on('get', '/api/v1/verify-payment/:id', success);
    const { client } = setup();
    expect((await settle(client.payments.waitForOutcome('TRX123456'))).status).toBe('success');
    expect(Date.now()).toBe(START);
    expect(api.seen).toHaveLength(1);
  });

  // The deadline now cuts the last sleep and ends the wait there: no extra verify is sent at
  // the deadline (the old loop sent a 5th one at 10 000 ms before giving up).
  test('still pending at the deadline → APITimeoutError, the last sleep cut to the deadline', async () => {
    api.on('get', '/api/v1/verify-payment/:id', pending);
    const { client } = setup();
    const error = await rejection(client.payments.waitForOutcome('TRX123456', { timeout: 10_000, interval: 3_000 }));
    expect(error).toBeInstanceOf(APITimeoutError);
    expect((error as Error).message).toContain('TRX123456');
    expect(Date.now() - START).toBe(10_000);
    expect(gaps(api.seen)).toEqual([3_000, 3_000, 3_000]);
    expect(api.seen).toHaveLength(4);
  });

  test('a long wait (default 120 s timeout) keeps every poll validly signed', async () => {
    api.on('get', '/api/v1/verify-payment/:id', pending);
    const { client } = setup();
    expect(await rejection(client.payments.waitForOutcome('TRX123456'))).toBeInstanceOf(APITimeoutError);
    expect(Date.now() - START).toBe(120_000);
    // Polls at 0, 3, …, 117 s; the sleep after the last one is cut at 120 s.
    expect(api.seen).toHaveLength(40);
    expect(api.seen.at(-1)!.at - START).toBe(117_000);
    expect(api.seen.every((r) => r.signatureValid)).toBe(true);
  });

  test.each([
    [{ timeout: 0 }, 'timeout'],
    [{ timeout: -1 }, 'timeout'],
    [{ timeout: Number.NaN }, 'timeout'],
    [{ timeout: Number.POSITIVE_INFINITY }, 'timeout'],
    [{ interval: 0 }, 'interval'],
    [{ interval: -500 }, 'interval'],
  ])('invalid %j → InvalidParamsError, nothing sent', async (options, field) => {
    api.on('get', '/api/v1/verify-payment/:id', success);
    const { client } = setup();
    const error = await invalidParams(client.payments.waitForOutcome('TRX123456', options));
    expect(Object.keys(error.errors)).toEqual([field]);
    expect(api.seen).toHaveLength(0);
  });

  test('invalid timeout and interval are listed together', async () => {
    const { client } = setup();
    const error = await invalidParams(client.payments.waitForOutcome('TRX123456', { timeout: -1, interval: 0 }));
    expect(Object.keys(error.errors).sort()).toEqual(['interval', 'timeout']);
    expect(api.seen).toHaveLength(0);
  });

  test('an already-aborted signal stops before any request', async () => {
    api.on('get', '/api/v1/verify-payment/:id', pending);
    const { client } = setup();
    const error = await rejection(client.payments.waitForOutcome('TRX123456', { signal: AbortSignal.abort() }));
    expect(error).toBeInstanceOf(APIUserAbortError);
    expect(api.seen).toHaveLength(0);
  });

  test('aborting while waiting between polls stops the wait', async () => {
    const controller = new AbortController();
    api.on('get', '/api/v1/verify-payment/:id', () => {
      // The caller gives up halfway through the second sleep (polls at 0 and 1000 ms).
      if (api.seen.length === 2) setTimeout(() => controller.abort(new Error('user left')), 500);
      return pending;
    });
    const { client } = setup();
    const error = await rejection(client.payments.waitForOutcome('TRX123456', { interval: 1_000, signal: controller.signal }));
    expect(error).toBeInstanceOf(APIUserAbortError);
    expect((error as APIUserAbortError).cause).toEqual(new Error('user left'));
    expect(gaps(api.seen)).toEqual([1_000]);
    // The sleep was cut short by the abort, not waited out.
    expect(Date.now() - START).toBe(1_500);
    expect(api.seen).toHaveLength(2);
  });

  test('aborting during a verify call stops the wait', async () => {
    const controller = new AbortController();
    api.on('get', '/api/v1/verify-payment/:id', () => {
      if (api.seen.length === 2) controller.abort();
      return pending;
    });
    const { client } = setup();
    const error = await rejection(client.payments.waitForOutcome('TRX123456', { interval: 1_000, signal: controller.signal }));
    expect(error).toBeInstanceOf(APIUserAbortError);
    expect(api.seen).toHaveLength(2);
  });

  test('a malformed verify body surfaces as ResponseValidationError', async () => {
    api.sequence('get', '/api/v1/verify-payment/:id', [pending, { body: { status: 'pending' } }]);
    const { client } = setup();
    expect(await rejection(client.payments.waitForOutcome('TRX123456', { interval: 10 }))).toBeInstanceOf(ResponseValidationError);
  });
});

// Regressions of the core rewrite: each of these failed on the previous client.
describe('answers servers gave in the field', () => {
  // 1. New enum values used to throw ResponseValidationError, after the payment was created.
  test('payments.create answered with data.status "processing" and an unknown field resolves, both kept', async () => {
    const data = { ...fixtures.payment, status: 'processing', settlement_window: 'T+1' };
    api.on('post', '/api/v1/payments', { body: { ...createBody, data } });
    const { client } = setup();
    const payment = await client.payments.create(base);
    expect(payment.status).toBe('processing');
    expect(payment).toStrictEqual(data);
    expect(api.seen).toHaveLength(1);
  });

  test.each(['refunded', 'expired'])('payments.verify answered status %j resolves with it', async (status) => {
    const body = { ...fixtures.verified, status };
    api.on('get', '/api/v1/verify-payment/:id', { body });
    const { client } = setup();
    const verified = await client.payments.verify('TRX123456');
    expect(verified.status).toBe(status);
    expect(verified).toStrictEqual(body);
  });

  // It used to resolve on any status but pending (`processing` included), and the
  // README says to treat that as not paid: a merchant cancelled an order still being paid.
  test.each(['processing', 'initiated', 'refunded'])('waitForOutcome keeps polling through %j until the deadline', async (status) => {
    const other = { ...fixtures.verified, status };
    api.sequence('get', '/api/v1/verify-payment/:id', [
      { body: { ...fixtures.verified, status: 'pending' } },
      { body: other },
      { body: other },
    ]);
    const { client } = setup();
    const error = await rejection(client.payments.waitForOutcome('TRX123456', { interval: 1_000, timeout: 2_500 }));
    expect(error).toBeInstanceOf(APITimeoutError);
    expect((error as APITimeoutError).lastStatus).toBe(status);
    expect(error.message).toContain(`still ${status}`);
    expect(api.seen).toHaveLength(3);
  });

  test('waitForOutcome goes on from processing to success', async () => {
    api.sequence('get', '/api/v1/verify-payment/:id', [
      { body: { ...fixtures.verified, status: 'processing' } },
      { body: fixtures.verified },
    ]);
    const { client } = setup();
    expect(await settle(client.payments.waitForOutcome('TRX123456', { interval: 1_000 }))).toStrictEqual(fixtures.verified);
  });

  // 2. The spec shows no body for push: an empty 2xx used to be "an empty body" error, inviting
  //    a retry that rings the customer's phone twice.
  test.each([200, 202, 204])('push answered %i with an empty body resolves to {}, in exactly 1 attempt', async (status) => {
    const attempts: string[] = [];
    api.use(
      http.post(`${BASE_URL}/api/v1/payments/:id/push`, async ({ request }) => {
        attempts.push(await request.text());
        return new HttpResponse(null, { status });
      }),
    );
    const { client } = setup();
    const { data, response } = await settle(client.payments.push('TRX123456', { customer_phone: '255712345678' }).withResponse());
    expect(response.status).toBe(status);
    expect(data).toStrictEqual({});
    expect(attempts).toEqual(['{"customer_phone":"255712345678"}']);
  });

  test('push answered 202 with a non-JSON body still throws ResponseValidationError (serverMayHaveActed)', async () => {
    api.on('post', '/api/v1/payments/:id/push', { status: 202, body: '<html>queued</html>' });
    const { client } = setup();
    const error = await rejection(client.payments.push('TRX123456'));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as ResponseValidationError).body).toBe('<html>queued</html>');
    expect((error as ResponseValidationError).serverMayHaveActed).toBe(true);
    expect(error.attempts).toBe(1);
    expect(api.seen).toHaveLength(1);
  });

  // 3. The deadline bounds everything: it used to send one more verify at the deadline, and
  //    a verify in flight ran to its own 30 s timeout (and its retries) before giving up.
  /** Runs waitForOutcome; expects APITimeoutError naming the payment at `deadline` ms (±50). */
  async function timesOutAt(deadline: number, options: { timeout: number; interval?: number }): Promise<void> {
    const { client } = setup();
    const error = await rejection(client.payments.waitForOutcome('TRX123456', options));
    const elapsed = Date.now() - START;
    expect(error).toBeInstanceOf(APITimeoutError);
    expect((error as APITimeoutError).message).toContain('TRX123456');
    expect(elapsed).toBeGreaterThanOrEqual(deadline - 50);
    expect(elapsed).toBeLessThanOrEqual(deadline + 50);
  }

  test('waitForOutcome({ timeout: 300 }), verify always pending → APITimeoutError at 300 ms, 1 verify', async () => {
    api.on('get', '/api/v1/verify-payment/:id', { body: { ...fixtures.verified, status: 'pending' } });
    await timesOutAt(300, { timeout: 300 });
    expect(api.seen).toHaveLength(1);
  });

  test('waitForOutcome({ timeout: 300 }) with a verify that takes 200 ms → APITimeoutError at 300 ms, not after another verify', async () => {
    api.on('get', '/api/v1/verify-payment/:id', async () => {
      await delay(200);
      return { body: { ...fixtures.verified, status: 'pending' } };
    });
    await timesOutAt(300, { timeout: 300, interval: 50 });
    // Polls at 0 and 250 ms; the second, still in flight at 300 ms, is cut by the deadline.
    expect(gaps(api.seen)).toEqual([250]);
  });

  test('waitForOutcome({ timeout: 1000 }) with a stalled verify → APITimeoutError at ~1000 ms, not after the 30 s per-attempt timeout', async () => {
    api.on('get', '/api/v1/verify-payment/:id', async () => {
      await delay('infinite');
      return {};
    });
    await timesOutAt(1_000, { timeout: 1_000 });
    expect(api.seen).toHaveLength(1);
  });

  // 4. verify's documented shape has no reason: the record's is now copied onto the result.
  test('waitForOutcome on a failed payment carries failure_reason and failure_message from the payment record', async () => {
    const failedBody = { ...fixtures.verified, status: 'failed' };
    api.on('get', '/api/v1/verify-payment/:id', { body: failedBody });
    api.on('get', '/api/v1/payments/:id', {
      body: {
        trx_id: 'TRX123456',
        amount: 25,
        currency: 'USD',
        status: 'failed',
        failure_reason: 'INSUFFICIENT_FUNDS',
        failure_message: 'The customer has insufficient funds.',
      },
    });
    const { client } = setup();
    const outcome = await settle(client.payments.waitForOutcome('TRX123456'));
    expect(outcome).toStrictEqual({
      ...failedBody,
      failure_reason: 'INSUFFICIENT_FUNDS',
      failure_message: 'The customer has insufficient funds.',
    });
    expect(api.seen.map((r) => r.pathWithQuery)).toEqual([VERIFY_PATH, '/api/v1/payments/TRX123456']);
    expect(api.seen.every((r) => r.signatureValid)).toBe(true);
  });

  test.each([{ timeout: 2 ** 31 }, { interval: 2 ** 31 }])(
    'waitForOutcome(%j) is refused: a timer cannot hold it (it would fire at once)',
    async (options) => {
      const { client } = setup();
      const error = await invalidParams(client.payments.waitForOutcome('TRX123456', options));
      expect(Object.keys(error.errors)).toEqual(Object.keys(options));
      expect(api.seen).toHaveLength(0);
    },
  );
});

describe('validation (found in review)', () => {
  test('an upper-case HTTPS scheme is HTTPS in production', async () => {
    const live = new PaymentsClient({
      environment: 'production',
      merchantKey: 'live_m',
      apiKey: 'live_k',
      apiSecret: 'live_s',
      baseUrl: BASE_URL,
      maxRetries: 0,
    });
    api.use(
      http.post(`${BASE_URL}/api/v1/payments`, () => HttpResponse.json({ status: 'success', data: fixtures.payment, trx_id: 'TRX123456' })),
    );
    await expect(
      live.payments.create({ payment_amount: 5, currency_code: 'USD', ref_trx: 'o-1', ipn_url: 'HTTPS://shop.example.com/ipn' }),
    ).resolves.toMatchObject({ trx_id: 'TRX123456' });
    await expect(
      live.payments.create({ payment_amount: 5, currency_code: 'USD', ref_trx: 'o-1', ipn_url: 'http://shop.example.com/ipn' }),
    ).rejects.toMatchObject({ errors: { ipn_url: [expect.stringContaining('https')] } });
  });

  test('an unknown key is reported under its own name', async () => {
    const { client } = setup();
    const error = await client.payments
      .create({ payment_amount: 5, currency_code: 'USD', ref_trx: 'o-1', amout: 5 } as never)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidParamsError);
    expect((error as InvalidParamsError).errors).toEqual({ amout: ['is not a known field (check the spelling)'] });
    expect(api.seen).toHaveLength(0);
  });
});

describe('allow_payment_methods', () => {
  test('a blank keyword is refused before sending (the service refuses it too)', async () => {
    const { client } = setup();
    for (const allow_payment_methods of ['  ', ['mpesa', ' ']]) {
      const error = await client.payments
        .create({ payment_amount: 5, currency_code: 'TZS', ref_trx: 'o-1', allow_payment_methods })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidParamsError);
      expect(Object.keys((error as InvalidParamsError).errors)[0]).toMatch(/^allow_payment_methods/);
    }
    expect(api.seen).toHaveLength(0);
  });
});
