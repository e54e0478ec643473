// Webhook signatures made by openssl (test/fixtures/webhooks/make-fixtures.sh), not by the
// SDK: verifyWebhook must accept them, in every payload form, and signWebhook must produce
// exactly the same signatures.
import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { signWebhook } from '../../src/testing.js';
import { verifyWebhook, verifyWebhookSignature } from '../../src/webhooks.js';
import fixture from '../fixtures/webhooks/openssl-vectors.json';
import { expectReason } from './suite.js';

interface Vector {
  name: string;
  note: string;
  secret: string;
  timestamp: number;
  environment: string;
  type: string;
  body: string;
  bodySha256: string;
  signature: string;
}

const vectors: Vector[] = fixture.vectors;
const headersOf = (v: Vector, type = v.type || 'payment.completed') => ({
  'X-Service-Signature': v.signature,
  'X-Service-Timestamp': String(v.timestamp),
  'X-Service-Event': type,
  'X-Environment': v.environment,
});
const clock =
  (v: Vector, offset = 0) =>
  () =>
    (v.timestamp + offset) * 1000;

describe('openssl vectors', () => {
  test('the fixture file is intact: 7 vectors, bodies byte-exact, unicode included', () => {
    expect(vectors.map((v) => v.name)).toEqual([
      'payment-completed',
      'payment-failed-pretty',
      'unicode-body',
      'escaped-unicode',
      'unicode-secret',
      'unknown-type',
      'not-json',
    ]);
    for (const v of vectors) {
      expect(createHash('sha256').update(v.body, 'utf8').digest('hex'), v.name).toBe(v.bodySha256);
      expect(v.signature, v.name).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(vectors.some((v) => /[^\x00-\x7f]/.test(v.body))).toBe(true);
    expect(vectors.some((v) => /[^\x00-\x7f]/.test(v.secret))).toBe(true);
    expect(vectors.find((v) => v.name === 'payment-failed-pretty')!.body.endsWith('}\n')).toBe(true);
  });

  describe.each(vectors.filter((v) => v.type !== ''))('$name', (v) => {
    test('verifyWebhook accepts it as string, Buffer, Uint8Array and ArrayBuffer', async () => {
      const expected = { ...JSON.parse(v.body), format: 'current' };
      const bytes = new TextEncoder().encode(v.body);
      for (const payload of [v.body, Buffer.from(v.body), bytes, bytes.buffer]) {
        await expect(
          verifyWebhook({ payload, headers: headersOf(v), secret: v.secret, now: clock(v), environment: v.environment as 'sandbox' }),
        ).resolves.toEqual(expected);
      }
      await expect(
        verifyWebhookSignature({ payload: v.body, headers: new Headers(headersOf(v)), secret: v.secret, now: clock(v) }),
      ).resolves.toEqual({
        format: 'current',
        timestamp: v.timestamp,
        signed: { timestamp: String(v.timestamp), body: v.body },
        unsignedEventHeader: v.type,
      });
    });

    test('verifyWebhook accepts it from a Fetch Request', async () => {
      const request = new Request('https://merchant.example/hook', { method: 'POST', body: v.body, headers: headersOf(v) });
      await expect(verifyWebhook(request, [v.secret], { now: clock(v, 299) })).resolves.toEqual({
        ...JSON.parse(v.body),
        format: 'current',
      });
    });

    test('refused with the wrong secret, a changed body, or too late', async () => {
      await expectReason(
        verifyWebhook({ payload: v.body, headers: headersOf(v), secret: `${v.secret}x`, now: clock(v) }),
        'invalid_signature',
      );
      await expectReason(
        verifyWebhook({ payload: v.body.replace('"', "'"), headers: headersOf(v), secret: v.secret, now: clock(v) }),
        'invalid_signature',
      );
      await expectReason(
        verifyWebhook({ payload: v.body, headers: headersOf(v), secret: v.secret, now: clock(v, 301) }),
        'timestamp_too_old',
      );
    });

    test('signWebhook produces the openssl signature', async () => {
      const { body, headers } = await signWebhook({
        payload: v.body,
        secret: v.secret,
        timestamp: v.timestamp,
        environment: v.environment as 'sandbox',
      });
      expect(body).toBe(v.body);
      expect(headers['X-Service-Signature']).toBe(v.signature);
      expect(headers['X-Service-Timestamp']).toBe(String(v.timestamp));
      expect(headers['X-Service-Event']).toBe(v.type);
    });
  });

  test('not-json: the signature holds, the body is not an event', async () => {
    const v = vectors.find((x) => x.name === 'not-json')!;
    await expect(verifyWebhookSignature({ payload: v.body, headers: headersOf(v), secret: v.secret, now: clock(v) })).resolves.toEqual({
      format: 'current',
      timestamp: v.timestamp,
      signed: { timestamp: String(v.timestamp), body: v.body },
      unsignedEventHeader: 'payment.completed',
    });
    await expectReason(verifyWebhook({ payload: v.body, headers: headersOf(v), secret: v.secret, now: clock(v) }), 'invalid_payload');
    const signed = await signWebhook({ payload: v.body, secret: v.secret, timestamp: v.timestamp });
    expect(signed.headers['X-Service-Signature']).toBe(v.signature);
  });

  test('the unknown event type passes through untyped', async () => {
    const v = vectors.find((x) => x.name === 'unknown-type')!;
    const event = await verifyWebhook({ payload: v.body, headers: headersOf(v), secret: v.secret, now: clock(v) });
    expect(event.type).toBe('payout.settled');
    expect(event.data).toEqual({ payout_id: 'po_9' });
  });

  test('the escaped-unicode body is signed as written, not as decoded', async () => {
    const v = vectors.find((x) => x.name === 'escaped-unicode')!;
    expect(v.body).toContain('\\u00e9');
    const decoded = JSON.stringify(JSON.parse(v.body));
    expect(decoded).not.toBe(v.body);
    await expectReason(verifyWebhook({ payload: decoded, headers: headersOf(v), secret: v.secret, now: clock(v) }), 'invalid_signature');
  });
});
