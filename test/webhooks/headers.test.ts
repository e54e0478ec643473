// Brand header detection at scale: a request may carry any number of header names, and the
// scan for X-<Brand>-Signature by suffix must stay linear in them. 100,000 names took 47 s
// when each new brand was searched for in a growing list (quadratic); linear code takes
// tens of milliseconds. The bound below is ten times that, for slow CI machines, and still
// hundreds of times under what quadratic code needs.
import { describe, expect, test } from 'vitest';
import { verifyWebhook, verifyWebhookSignature } from '../../src/webhooks.js';
import { delivery, expectReason, fetchHeaders, NOW, paymentEvent, SECRET, signatureResult } from './suite.js';

const NAMES = 100_000;
const BOUND_MS = 500;

/** `count` header names made by `name(i)`, all with the value 'v'. */
function manyHeaders(count: number, name: (i: number) => string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i < count; i++) headers[name(i)] = 'v';
  return headers;
}

/** Runs `call` once and returns how long it took to settle, with its outcome. */
async function timed<T>(call: () => Promise<T>): Promise<{ ms: number; outcome: T | unknown }> {
  const start = performance.now();
  const outcome = await call().catch((error: unknown) => error);
  return { ms: performance.now() - start, outcome };
}

describe(`${NAMES.toLocaleString('en')} header names: verification stays under ${BOUND_MS} ms`, () => {
  test('signature headers of as many brands (the quadratic case): refused as ambiguous, naming two', { timeout: 30_000 }, async () => {
    const d = await delivery();
    const headers = { ...d.headers, ...manyHeaders(NAMES, (i) => `x-brand${i}-signature`) };
    const { ms, outcome } = await timed(() => verifyWebhookSignature({ payload: d.body, headers, secret: SECRET, now: NOW }));
    expect(ms).toBeLessThan(BOUND_MS);
    const error = await expectReason(Promise.reject(outcome), 'missing_header', /brand/);
    // The message names two of them, not 100,000.
    expect(error.message.match(/-signature/g)).toHaveLength(2);
    expect(error.message.length).toBeLessThan(200);
  });

  test('the same in a Fetch Headers', { timeout: 30_000 }, async () => {
    const d = await delivery();
    const headers = fetchHeaders({ ...d.headers, ...manyHeaders(NAMES, (i) => `x-brand${i}-signature`) });
    const { ms, outcome } = await timed(() => verifyWebhookSignature({ payload: d.body, headers, secret: SECRET, now: NOW }));
    expect(ms).toBeLessThan(BOUND_MS);
    await expectReason(Promise.reject(outcome), 'missing_header', /brand/);
  });

  test('unrelated names around a valid delivery: accepted, in a Node object and in a Fetch Headers', { timeout: 30_000 }, async () => {
    const d = await delivery();
    const node = { ...manyHeaders(NAMES, (i) => `x-custom-${i}-header`), ...d.headers };
    for (const headers of [node, fetchHeaders(node)]) {
      const { ms, outcome } = await timed(() =>
        verifyWebhook({ payload: d.body, headers, secret: SECRET, now: NOW, environment: 'sandbox' }),
      );
      expect(ms).toBeLessThan(BOUND_MS);
      expect(outcome).toEqual(paymentEvent());
    }
  });

  test('mixed-case names (no direct lower-case hit, so every lookup scans): accepted', { timeout: 30_000 }, async () => {
    const d = await delivery();
    const headers = {
      ...manyHeaders(NAMES, (i) => `X-Custom-${i}-Signature-Not`),
      'X-Service-Signature': d.headers['x-service-signature'],
      'X-Service-Timestamp': d.headers['x-service-timestamp'],
      'X-Service-Event': d.headers['x-service-event'],
      'X-Environment': 'sandbox',
    };
    const { ms, outcome } = await timed(() =>
      verifyWebhookSignature({ payload: d.body, headers, secret: SECRET, now: NOW, environment: 'sandbox' }),
    );
    expect(ms).toBeLessThan(BOUND_MS);
    expect(outcome).toEqual(signatureResult(d.body));
  });

  test('with `brand` pinned, the same signature headers of many brands are no obstacle', { timeout: 30_000 }, async () => {
    const d = await delivery();
    const headers = { ...manyHeaders(NAMES, (i) => `x-brand${i}-signature`), ...d.headers };
    const { ms, outcome } = await timed(() => verifyWebhook({ payload: d.body, headers, secret: SECRET, now: NOW, brand: 'Service' }));
    expect(ms).toBeLessThan(BOUND_MS);
    expect(outcome).toEqual(paymentEvent());
  });
});

describe('ambiguity is decided by the first two brands found', () => {
  test('the same brand in several casings is one brand', async () => {
    const d = await delivery();
    const signature = d.headers['x-service-signature']!;
    const headers = { ...d.headers, 'X-Service-Signature': signature, 'X-SERVICE-SIGNATURE': signature };
    await expect(verifyWebhook({ payload: d.body, headers, secret: SECRET, now: NOW })).resolves.toEqual(paymentEvent());
  });

  test('three brands: refused, naming the first two', async () => {
    const d = await delivery();
    const headers = { ...d.headers, 'x-acme-signature': 'a', 'x-other-signature': 'b' };
    await expectReason(
      verifyWebhook({ payload: d.body, headers, secret: SECRET, now: NOW }),
      'missing_header',
      /^Signature headers of more than one brand \(x-service-signature, x-acme-signature\): pass brand\.$/,
    );
  });
});
