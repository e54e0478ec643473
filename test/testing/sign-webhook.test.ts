// signWebhook (business-payments/testing): the shape of a signed delivery, and that it
// round-trips through verifyWebhook. Signatures are checked against an HMAC computed here
// with node:crypto directly (and against openssl in test/webhooks/openssl-fixtures.test.ts).
import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, test, vi } from 'vitest';
import * as testing from '../../src/testing.js';
import { signWebhook } from '../../src/testing.js';
import { verifyWebhook, verifyWebhookSignature } from '../../src/webhooks.js';
import { expectReason, paymentEvent } from '../webhooks/suite.js';

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
      await expect(verifyWebhook({ payload: body, headers, secret: SECRET, now, environment: 'sandbox' })).resolves.toEqual(event);
      await expect(verifyWebhook({ payload: Buffer.from(body), headers: new Headers(headers), secret: SECRET, now })).resolves.toEqual(
        event,
      );
    });

    test('as a Fetch Request, with the real clock', async () => {
      const event = paymentEvent({ type: 'subscription.created', data: { subscription_id: 'sub_1' } });
      const { body, headers } = await signWebhook({ payload: event, secret: SECRET });
      const request = new Request('http://localhost:3000/webhooks', { method: 'POST', body, headers });
      await expect(verifyWebhook(request, SECRET)).resolves.toEqual(event);
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
      ).resolves.toEqual(event);
      await expect(verifyWebhook({ payload: body, headers, secret: SECRET, now: () => T * 1000, brand: 'acme' })).resolves.toEqual(event);
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
        event,
      );
    });

    test('a mismatched type option makes an event_mismatch delivery (for negative tests)', async () => {
      const { body, headers } = await signWebhook({ payload: paymentEvent(), secret: SECRET, timestamp: T, type: 'payment.failed' });
      await expectReason(verifyWebhook({ payload: body, headers, secret: SECRET, now: () => T * 1000 }), 'event_mismatch');
      await expect(verifyWebhookSignature({ payload: body, headers, secret: SECRET, now: () => T * 1000 })).resolves.toEqual({
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
});
