// signWebhook (business-payments/testing): the shape of a signed delivery, and that it
// round-trips through verifyWebhook. Signatures are checked against an HMAC computed here
// with node:crypto directly (and against openssl in test/webhooks/openssl-fixtures.test.ts).
import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, test, vi } from 'vitest';
import * as testing from '../../src/testing.js';
import { signWebhook } from '../../src/testing.js';
import { verifyWebhook, verifyWebhookSignature } from '../../src/webhooks.js';
import { current, expectReason, paymentEvent } from '../webhooks/suite.js';

const SECRET = 'whsec_test_sign';
const T = 1_700_000_000;
const hmac = (secret: string, message: string) => createHmac('sha256', secret).update(message).digest('hex');

afterEach(() => {
  vi.useRealTimers();
});

describe('signWebhook', () => {
  test('the testing entry exports signWebhook', () => {
    expect(testing.signWebhook).toBe(signWebhook);
    expect(typeof signWebhook).toBe('function');
  });

  test('output shape with an event object: JSON body, default brand Service, the five headers', async () => {
    const event = paymentEvent();
    const signed = await signWebhook({ payload: event, secret: SECRET, timestamp: T });
    expect(Object.keys(signed).sort()).toEqual(['body', 'headers']);
    expect(signed.body).toBe(JSON.stringify(event));
    expect(signed.headers).toEqual({
      'Content-Type': 'application/json',
      'X-Service-Signature': hmac(SECRET, `${T}.${JSON.stringify(event)}`),
      'X-Service-Timestamp': String(T),
      'X-Service-Event': 'payment.completed',
      'X-Environment': 'sandbox',
    });
    expect(signed.headers['X-Service-Signature']).toMatch(/^[0-9a-f]{64}$/);
  });

  test('a string payload is signed byte for byte, and its type read from the JSON', async () => {
    const body =
      '{ "type": "invoice.paid",\n  "id": "evt_1", "api_version": "2024-06-01", "created_at": "2023-11-14T22:13:20Z", "data": {} }\n';
    const signed = await signWebhook({ payload: body, secret: SECRET, timestamp: T });
    expect(signed.body).toBe(body);
    expect(signed.headers['X-Service-Event']).toBe('invoice.paid');
    expect(signed.headers['X-Service-Signature']).toBe(hmac(SECRET, `${T}.${body}`));
  });

  test('custom brand, environment and type option', async () => {
    const signed = await signWebhook({
      payload: paymentEvent(),
      secret: SECRET,
      timestamp: T,
      brand: 'Acme',
      environment: 'production',
      type: 'payment.failed',
    });
    expect(Object.keys(signed.headers).sort()).toEqual([
      'Content-Type',
      'X-Acme-Event',
      'X-Acme-Signature',
      'X-Acme-Timestamp',
      'X-Environment',
    ]);
    expect(signed.headers['X-Acme-Event']).toBe('payment.failed');
    expect(signed.headers['X-Environment']).toBe('production');
  });

  test('the type option wins over the payload type; no type anywhere leaves the event header out', async () => {
    const overridden = await signWebhook({
      payload: '{"type":"payment.completed"}',
      secret: SECRET,
      timestamp: T,
      type: 'invoice.created',
    });
    expect(overridden.headers['X-Service-Event']).toBe('invoice.created');
    for (const payload of ['not json', '{"id":"evt_1"}', '[1]', 'null', { id: 'evt_1' }]) {
      const signed = await signWebhook({ payload, secret: SECRET, timestamp: T });
      expect(signed.headers, JSON.stringify(payload)).not.toHaveProperty('X-Service-Event');
    }
  });

  test('the timestamp defaults to now, in whole unix seconds', async () => {
    vi.useFakeTimers({ now: T * 1000 + 999, toFake: ['Date'] });
    const signed = await signWebhook({ payload: paymentEvent(), secret: SECRET });
    expect(signed.headers['X-Service-Timestamp']).toBe(String(T));
  });

  describe('round trip through verifyWebhook', () => {
    test('default options, as a Node headers object and as Fetch Headers', async () => {
      const event = paymentEvent();
      const { body, headers } = await signWebhook({ payload: event, secret: SECRET, timestamp: T });
      const now = () => T * 1000;
      await expect(verifyWebhook({ payload: body, headers, secret: SECRET, now, environment: 'sandbox' })).resolves.toEqual(current(event));
      await expect(verifyWebhook({ payload: Buffer.from(body), headers: new Headers(headers), secret: SECRET, now })).resolves.toEqual(
        current(event),
      );
    });

    test('as a Fetch Request, with the real clock', async () => {
      const event = paymentEvent({ type: 'subscription.created', data: { subscription_id: 'sub_1' } });
      const { body, headers } = await signWebhook({ payload: event, secret: SECRET });
      const request = new Request('http://localhost:3000/webhooks', { method: 'POST', body, headers });
      await expect(verifyWebhook(request, SECRET)).resolves.toEqual(current(event));
    });

    test('custom brand and production environment', async () => {
      const event = paymentEvent();
      const { body, headers } = await signWebhook({
        payload: event,
        secret: SECRET,
        timestamp: T,
        brand: 'Acme',
        environment: 'production',
      });
      await expect(
        verifyWebhook({ payload: body, headers, secret: SECRET, now: () => T * 1000, environment: 'production' }),
      ).resolves.toEqual(current(event));
      await expect(verifyWebhook({ payload: body, headers, secret: SECRET, now: () => T * 1000, brand: 'acme' })).resolves.toEqual(
        current(event),
      );
      await expectReason(
        verifyWebhook({ payload: body, headers, secret: SECRET, now: () => T * 1000, environment: 'sandbox' }),
        'environment_mismatch',
      );
    });

    test('a unicode payload and a unicode secret', async () => {
      const event = paymentEvent({ id: 'evt_ü' });
      (event.data as Record<string, unknown>).merchant_ref = 'Zoë 東京 🎉';
      const secret = 'sécret-🔑';
      const { body, headers } = await signWebhook({ payload: event, secret, timestamp: T });
      expect(headers['X-Service-Signature']).toBe(hmac(secret, `${T}.${body}`));
      await expect(verifyWebhook({ payload: new TextEncoder().encode(body), headers, secret, now: () => T * 1000 })).resolves.toEqual(
        current(event),
      );
    });

    test('a mismatched type option makes an event_mismatch delivery (for negative tests)', async () => {
      const { body, headers } = await signWebhook({ payload: paymentEvent(), secret: SECRET, timestamp: T, type: 'payment.failed' });
      await expectReason(verifyWebhook({ payload: body, headers, secret: SECRET, now: () => T * 1000 }), 'event_mismatch');
      await expect(verifyWebhookSignature({ payload: body, headers, secret: SECRET, now: () => T * 1000 })).resolves.toEqual({
        format: 'current',
        timestamp: T,
        signed: { timestamp: String(T), body },
        unsignedEventHeader: 'payment.failed',
      });
    });

    test('a wrong secret or an old timestamp is refused', async () => {
      const { body, headers } = await signWebhook({ payload: paymentEvent(), secret: SECRET, timestamp: T - 301 });
      await expectReason(verifyWebhook({ payload: body, headers, secret: SECRET, now: () => T * 1000 }), 'timestamp_too_old');
      const fresh = await signWebhook({ payload: paymentEvent(), secret: 'whsec_other', timestamp: T });
      await expectReason(
        verifyWebhook({ payload: fresh.body, headers: fresh.headers, secret: SECRET, now: () => T * 1000 }),
        'invalid_signature',
      );
    });
  });

  describe("format: 'legacy' (the earlier generation's IPN)", () => {
    const API_SECRET = 'test_secret_sign_legacy';
    const ipn = (data: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
      data: { ref_trx: 'order-7', amount: 100, currency_code: 'USD', environment: 'sandbox', is_sandbox: true, ...data, trx_id: 'TRX7' },
      message: 'Payment Completed',
      status: 'completed',
      ...extra,
    });

    test('headers as it sends them: X-Signature over the body alone, X-Environment, Content-Type, User-Agent; no timestamp or event header', async () => {
      const signed = await signWebhook({ format: 'legacy', payload: ipn(), secret: API_SECRET, timestamp: T });
      expect(signed.body).toBe(
        '{"data":{"ref_trx":"order-7","amount":100,"currency_code":"USD","environment":"sandbox","is_sandbox":true,"trx_id":"TRX7"},' +
          `"message":"Payment Completed","status":"completed","timestamp":${T}}`,
      );
      expect(signed.headers).toEqual({
        'Content-Type': 'application/json',
        'User-Agent': 'GuzzleHttp/7',
        'X-Signature': hmac(API_SECRET, signed.body),
        'X-Environment': 'sandbox',
      });
      expect(signed.headers['X-Signature']).toMatch(/^[0-9a-f]{64}$/);
    });

    test('serialised as PHP does: compact, slashes and Unicode unescaped, but U+2028 and U+2029 escaped', async () => {
      const { body } = await signWebhook({
        format: 'legacy',
        payload: ipn({ ipn_url: 'https://shop.example/ipn', customer_name: 'Zoë 東京 🎉', description: 'a\u2028b\u2029c' }),
        secret: API_SECRET,
        timestamp: T,
      });
      expect(body).toContain('"ipn_url":"https://shop.example/ipn"');
      expect(body).toContain('"customer_name":"Zoë 東京 🎉"');
      expect(body).toContain('"description":"a\\u2028b\\u2029c"');
      expect(body).not.toMatch(/[\u2028\u2029]/);
      expect(JSON.parse(body)).toMatchObject({ data: { description: 'a\u2028b\u2029c' } });
    });

    test("the timestamp: the option, else the payload's own, else now; a string payload is signed as given", async () => {
      expect(
        JSON.parse((await signWebhook({ format: 'legacy', payload: ipn({}, { timestamp: 5 }), secret: API_SECRET })).body),
      ).toMatchObject({ timestamp: 5 });
      expect(
        JSON.parse((await signWebhook({ format: 'legacy', payload: ipn({}, { timestamp: 5 }), secret: API_SECRET, timestamp: T })).body),
      ).toMatchObject({ timestamp: T });
      vi.useFakeTimers({ now: T * 1000 + 999, toFake: ['Date'] });
      expect(JSON.parse((await signWebhook({ format: 'legacy', payload: ipn(), secret: API_SECRET })).body)).toMatchObject({
        timestamp: T,
      });
      vi.useRealTimers();
      const text = '{"data":{"trx_id":"X"},"status":"failed","timestamp":1}\n';
      const signed = await signWebhook({ format: 'legacy', payload: text, secret: API_SECRET });
      expect(signed.body).toBe(text);
      expect(signed.headers['X-Signature']).toBe(hmac(API_SECRET, text));
    });

    test("X-Environment: the option, else the body's data.environment, else sandbox", async () => {
      const env = async (payload: Record<string, unknown> | string, environment?: 'sandbox' | 'production') =>
        (await signWebhook({ format: 'legacy', payload, secret: API_SECRET, environment })).headers['X-Environment'];
      expect(await env(ipn({ environment: 'production' }))).toBe('production');
      expect(await env(JSON.stringify(ipn({ environment: 'production' })))).toBe('production');
      expect(await env(ipn({ environment: 'production' }), 'sandbox')).toBe('sandbox');
      expect(await env({ data: null, status: 'completed' })).toBe('sandbox');
      expect(await env('not json')).toBe('sandbox');
    });

    test('round trip through verifyWebhook: the legacy payment event; refused with the webhook secret', async () => {
      const { body, headers } = await signWebhook({
        format: 'legacy',
        payload: ipn({ environment: 'production', is_sandbox: false }),
        secret: API_SECRET,
        timestamp: T,
      });
      const now = () => T * 1000;
      await expect(verifyWebhook({ payload: body, headers, secret: API_SECRET, now, environment: 'production' })).resolves.toMatchObject({
        type: 'payment.completed',
        format: 'legacy',
        data: {
          trx_id: 'TRX7',
          merchant_ref: 'order-7',
          amount: { value: 100, currency: 'USD' },
          status: 'completed',
          environment: 'production',
        },
      });
      await expect(verifyWebhookSignature({ payload: body, headers, secret: API_SECRET, now })).resolves.toEqual({
        format: 'legacy',
        timestamp: T,
        signed: { timestamp: String(T), body },
        unsignedEventHeader: '',
      });
      await expectReason(verifyWebhook({ payload: body, headers, secret: SECRET, now }), 'invalid_signature');
    });
  });
});
