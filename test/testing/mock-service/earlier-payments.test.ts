// The earlier generation's initiate-payment, verify-payment and site-info, from the facts
// sheet (spec/deployed-generation.md): Laravel validation bodies, business errors, the server
// bug, no idempotency, no trx_id in the answer, verify's three shapes with the net amount.
import { describe, expect, it } from 'vitest';
import { defaultMerchant } from '../../../src/testing/mock-service/defaults.js';
import { setup, T0 } from '../../support/mock-service.js';

const earlier = (options: Parameters<typeof setup>[0] = {}) => setup({ generation: 'earlier', ...options });

/** A valid initiate-payment body. */
const initiate = (extra: Record<string, unknown> = {}) => ({
  ref_trx: 'order-1001',
  currency_code: 'USD',
  payment_amount: 100,
  ipn_url: 'https://shop.example.com/ipn',
  success_redirect: 'https://shop.example.com/thanks',
  cancel_redirect: 'https://shop.example.com/cart',
  description: 'Coffee beans, 1 kg',
  customer_name: 'Asha Mwinyi',
  customer_email: 'asha@example.com',
  ...extra,
});

/** The trx_id of the payment just created (the answer does not carry it). */
const newest = (mock: ReturnType<typeof setup>['mock']) => [...mock.state.payments.keys()].at(-1)!;

describe('earlier generation: initiate-payment', () => {
  it('200 {payment_url, info}: no trx_id anywhere, the fields echoed, amount exactly as sent', async () => {
    const { mock, call } = earlier();
    const reply = await call('POST', '/api/v1/initiate-payment', initiate({ payment_amount: '100.50', customer_email: '' }));
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body)).toEqual(['payment_url', 'info']);
    expect(reply.text).not.toContain('trx_id');
    const trx = newest(mock);
    const expires = Math.floor(T0 / 1000) + 900 * 60;
    expect(reply.body.payment_url).toMatch(new RegExp(`/checkout/${trx}\\?expires=${expires}&signature=[0-9a-f]{64}$`));
    expect(reply.body.info).toEqual({
      ref_trx: 'order-1001',
      description: 'Coffee beans, 1 kg',
      ipn_url: 'https://shop.example.com/ipn',
      cancel_redirect: 'https://shop.example.com/cart',
      success_redirect: 'https://shop.example.com/thanks',
      customer_name: 'Asha Mwinyi',
      customer_email: null, // empty is null
      merchant_id: 1001,
      merchant_name: 'Demo Shop',
      amount: '100.50', // a string stays a string
      currency_code: 'USD',
      environment: 'sandbox',
      is_sandbox: true,
      allow_payment_methods: [],
      merchant_payment_methods_restricted: false,
      merchant_payment_method_ids: [1, 2],
      merchant_payment_method_codes: ['card', 'paypal'],
    });
  });

  it('absent optional fields are absent; allow_payment_methods as a list; a number stays a number', async () => {
    const { call } = earlier();
    const { customer_email: _e, customer_name: _n, ...body } = initiate({ allow_payment_methods: 'pay, x' });
    const reply = await call('POST', '/api/v1/initiate-payment', body);
    expect(reply.body.info).not.toHaveProperty('customer_email');
    expect(reply.body.info).not.toHaveProperty('customer_name');
    expect(reply.body.info).toMatchObject({ amount: 100, allow_payment_methods: ['pay', 'x'], merchant_payment_method_codes: ['paypal'] });
  });

  it('ignores webhook_url, payment_mode, customer_phone and Idempotency-Key; no duplicate check', async () => {
    const { mock, call } = earlier();
    const body = initiate({ webhook_url: 'https://x.test/h', payment_mode: 'push', customer_phone: '255700000001' });
    const first = await call('POST', '/api/v1/initiate-payment', body, { idempotencyKey: 'k-1' });
    const second = await call('POST', '/api/v1/initiate-payment', body, { idempotencyKey: 'k-1' });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(first.body.payment_url).not.toBe(second.body.payment_url);
    expect(mock.state.payments.size).toBe(2); // every call creates a transaction, same ref_trx
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(Object.keys(first.body.info)).not.toEqual(expect.arrayContaining(['webhook_url', 'payment_mode', 'customer_phone']));
  });

  it('422 {"status":"error","errors":{…}} with Laravel messages, fields in the rules order', async () => {
    const { call } = earlier();
    const empty = await call('POST', '/api/v1/initiate-payment', {});
    expect(empty.status).toBe(422);
    expect(empty.body).toEqual({
      status: 'error',
      errors: {
        ref_trx: ['The ref trx field is required.'],
        currency_code: ['The currency code field is required.'],
        payment_amount: ['The payment amount field is required.'],
        ipn_url: ['The ipn url field is required.'],
        success_redirect: ['The success redirect field is required.'],
        cancel_redirect: ['The cancel redirect field is required.'],
      },
    });
    const bad = await call(
      'POST',
      '/api/v1/initiate-payment',
      initiate({ ipn_url: 'not a url', ref_trx: 'r'.repeat(61), payment_amount: 0.5, customer_email: 'asha' }),
    );
    expect(bad.body).toEqual({
      status: 'error',
      errors: {
        ref_trx: ['The ref trx field must not be greater than 60 characters.'],
        payment_amount: ['The payment amount field must be at least 1.'],
        ipn_url: ['The ipn url field must be a valid URL.'],
        customer_email: ['The customer email field must be a valid email address.'],
      },
    });
    const word = await call('POST', '/api/v1/initiate-payment', initiate({ payment_amount: 'ten' }));
    expect(word.body.errors).toEqual({ payment_amount: ['The payment amount field must be a number.'] });
  });

  it('reads the body only when Content-Type contains /json; http:// is accepted in production', async () => {
    const { call, creds } = earlier();
    const plain = await call('POST', '/api/v1/initiate-payment', initiate(), { headers: { 'Content-Type': 'text/plain' } });
    expect(plain.status).toBe(422);
    expect(Object.keys(plain.body.errors)).toContain('ref_trx');
    const textJson = await call('POST', '/api/v1/initiate-payment', initiate(), { headers: { 'Content-Type': 'text/json' } });
    expect(textJson.status).toBe(200);
    const garbled = await call('POST', '/api/v1/initiate-payment', undefined, { rawBody: '{"ref_trx":' });
    expect(garbled.status).toBe(422);
    const http = initiate({ ipn_url: 'http://shop.example.com/ipn', success_redirect: 'http://shop.example.com/ok' });
    const prod = await call('POST', '/api/v1/initiate-payment', http, { env: 'production', creds: creds.production });
    expect([prod.status, prod.body.info.environment, prod.body.info.is_sandbox]).toEqual([200, 'production', false]);
  });

  it('business errors: {"error":"<sentence>"} with the trailing periods, and no message', async () => {
    const usdOnly = { ...defaultMerchant(), id: 2002, currencies: { USD: { wallet: true, balance: 0 } } };
    const { call, creds, mock } = earlier();
    mock.state.merchants.push(usdOnly);
    const unknown = await call('POST', '/api/v1/initiate-payment', initiate({ currency_code: 'XYZ' }));
    expect([unknown.status, unknown.text]).toEqual([422, '{"error":"Invalid currency code."}']);
    const noWallet = await call('POST', '/api/v1/initiate-payment', initiate({ currency_code: 'EUR' }));
    expect(noWallet.text).toBe('{"error":"Receiver wallet for this currency is not available."}');
    mock.state.merchants.shift(); // the USD-only merchant answers with the same keys now
    mock.state.merchants[0]!.credentials = { sandbox: { ...creds.sandbox }, production: { ...creds.production } };
    const notEnabled = await call('POST', '/api/v1/initiate-payment', initiate({ currency_code: 'TZS' }));
    expect(notEnabled.text).toBe('{"error":"Currency is not enabled for this merchant."}');
  });

  it('the server bug: neither description nor customer_name is 422 Undefined array key', async () => {
    const { call, mock } = earlier();
    const { description: _d, customer_name: _n, ...body } = initiate();
    const reply = await call('POST', '/api/v1/initiate-payment', body);
    expect([reply.status, reply.text]).toEqual([422, '{"error":"Undefined array key \\"customer_name\\""}']);
    expect(mock.state.payments.size).toBe(0);
    expect((await call('POST', '/api/v1/initiate-payment', { ...body, customer_name: 'Asha' })).status).toBe(200);
    expect((await call('POST', '/api/v1/initiate-payment', { ...body, description: 'Beans' })).status).toBe(200);
  });
});

describe('earlier generation: verify-payment', () => {
  it('pending and failed: {status, trx_id, message} and nothing else', async () => {
    const { mock, call } = earlier();
    await call('POST', '/api/v1/initiate-payment', initiate());
    const trx = newest(mock);
    const pending = await call('GET', `/api/v1/verify-payment/${trx}`);
    expect(pending.text).toBe(`{"status":"pending","trx_id":"${trx}","message":"Payment is still pending."}`);
    await mock.completeCheckout(trx, 'failed');
    const failed = await call('GET', `/api/v1/verify-payment/${trx}`);
    expect(failed.text).toBe(`{"status":"failed","trx_id":"${trx}","message":"Payment failed or canceled."}`);
  });

  it('success: amount is the net (= net_amount), the fee, the service description, Laravel dates', async () => {
    const { mock, call, clock } = earlier();
    await call('POST', '/api/v1/initiate-payment', initiate());
    const trx = newest(mock);
    clock.advance(90_000);
    await mock.completeCheckout(trx, 'success');
    const reply = await call('GET', `/api/v1/verify-payment/${trx}`);
    expect(reply.body).toEqual({
      status: 'success',
      trx_id: trx,
      amount: 97.5,
      fee: 2.5,
      currency: 'USD',
      net_amount: 97.5,
      customer: { name: 'Asha Mwinyi', email: 'asha@example.com' },
      description: expect.not.stringMatching(/^Coffee beans/),
      created_at: '2025-01-15T12:00:00.000000Z',
      updated_at: '2025-01-15T12:01:30.000000Z',
    });
    expect(reply.text).toContain('"amount":97.5,"fee":2.5,');
  });

  it('merchantFeeRate: 0 gives amount 100 (no .0), customer values may be null', async () => {
    const { mock, call } = earlier({ merchantFeeRate: 0 });
    const { customer_email: _e, ...body } = initiate({ customer_name: '', description: 'x' });
    await call('POST', '/api/v1/initiate-payment', body);
    await mock.completeCheckout(newest(mock), 'success');
    const reply = await call('GET', `/api/v1/verify-payment/${newest(mock)}`);
    expect(reply.text).toContain('"amount":100,"fee":0,"currency":"USD","net_amount":100,"customer":{"name":null,"email":null}');
  });

  it('ids match case-insensitively; unknown, another merchant or the other environment: 404 Transaction not found.', async () => {
    const { mock, call, creds } = earlier();
    await call('POST', '/api/v1/initiate-payment', initiate());
    const trx = newest(mock);
    expect((await call('GET', `/api/v1/verify-payment/${trx.toLowerCase()}`)).body).toMatchObject({ trx_id: trx, status: 'pending' });
    const notFound = '{"error":"Transaction not found."}';
    expect((await call('GET', '/api/v1/verify-payment/TRXNOPE')).text).toBe(notFound);
    const prod = await call('GET', `/api/v1/verify-payment/${trx}`, undefined, { env: 'production', creds: creds.production });
    expect([prod.status, prod.text]).toEqual([404, notFound]);
    mock.state.payments.get(trx)!.merchant_id = 9999;
    expect((await call('GET', `/api/v1/verify-payment/${trx}`)).status).toBe(404);
  });

  it('sandbox payments move no balances; production ones credit the net', async () => {
    const { mock, call, creds } = earlier();
    const wallet = mock.state.merchants[0]!.currencies.USD!;
    await call('POST', '/api/v1/initiate-payment', initiate());
    await mock.completeCheckout(newest(mock), 'success');
    expect(wallet.balance).toBe(1_000);
    await call('POST', '/api/v1/initiate-payment', initiate(), { env: 'production', creds: creds.production });
    await mock.completeCheckout(newest(mock), 'success');
    expect(wallet.balance).toBe(1_097.5);
  });
});

describe('earlier generation: site-info', () => {
  it('the spec fields plus security_message and branding; api_version "1.0"', async () => {
    const { call } = earlier();
    const reply = await call('GET', '/api/v1/site-info');
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      site_name: expect.any(String),
      site_logo: expect.stringMatching(/^https:\/\//),
      features: expect.any(Object),
      environments: { production: expect.any(String), sandbox: expect.any(String) },
      api_version: '1.0',
      status: 'operational',
      security_message: expect.any(String),
      branding: expect.any(Object),
    });
    expect(reply.text).toContain('"site_logo":"https:\\/\\/');
  });
});
