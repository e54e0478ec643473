// Brand header detection: a brand is an X-<Brand>-Signature and an X-<Brand>-Timestamp
// header of the same brand, so another service's stray x-…-signature does not count; two
// complete brands are ambiguous without `brand`.
//
// At scale: a request may carry any number of header names, and the scan for them by
// suffix must stay linear. 100,000 names took 47 s when each new brand was searched for in
// a growing list (quadratic), so 50,000 take about 12 s that way; linear code takes tens of
// milliseconds, and at worst 1.4 s on a 2-core CI machine loaded by other test runs (25,000
// took 677 ms there). The bound sits between, about three times from each.
import { describe, expect, test } from 'vitest';
import { verifyWebhook, verifyWebhookSignature } from '../../src/webhooks.js';
import { delivery, expectReason, fetchHeaders, NOW, current, paymentEvent, SECRET, signatureResult, T, without } from './suite.js';

const NAMES = 50_000;
const BOUND_MS = 4_000;

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
  // Half as many brands, a signature and a timestamp each: signatures first, so the second
  // complete brand comes last.
  const brands = () => ({
    ...manyHeaders(NAMES / 2, (i) => `x-brand${i}-signature`),
    ...manyHeaders(NAMES / 2, (i) => `x-brand${i}-timestamp`),
  });

  test('complete brands (signature and timestamp), as many: refused as ambiguous, naming two', { timeout: 30_000 }, async () => {
    const d = await delivery();
    const headers = { ...d.headers, ...brands() };
    const { ms, outcome } = await timed(() => verifyWebhookSignature({ payload: d.body, headers, secret: SECRET, now: NOW }));
    expect(ms).toBeLessThan(BOUND_MS);
    const error = await expectReason(Promise.reject(outcome), 'missing_header', /brand/);
    // The message names two of them, not 50,000.
    expect(error.message.match(/-signature/g)).toHaveLength(2);
    expect(error.message.length).toBeLessThan(200);
  });

  test('the same in a Fetch Headers', { timeout: 30_000 }, async () => {
    const d = await delivery();
    const headers = fetchHeaders({ ...d.headers, ...brands() });
    const { ms, outcome } = await timed(() => verifyWebhookSignature({ payload: d.body, headers, secret: SECRET, now: NOW }));
    expect(ms).toBeLessThan(BOUND_MS);
    await expectReason(Promise.reject(outcome), 'missing_header', /brand/);
  });

  // Every stray signature lacks its timestamp, so none is a brand: each must be paired (or
  // not) in constant time, not by a lookup that scans all the names.
  test.each([
    ['lower case, before the delivery', (i: number) => `x-brand${i}-signature`, true],
    ['lower case, after the delivery', (i: number) => `x-brand${i}-signature`, false],
    ['mixed case, before the delivery', (i: number) => `X-Brand${i}-Signature`, true],
    ['mixed case, with timestamps of yet other brands', (i: number) => (i % 2 ? `X-Brand${i}-Signature` : `x-other${i}-timestamp`), true],
  ])('stray signature headers, %s: not brands, the delivery is accepted', { timeout: 30_000 }, async (_label, name, first) => {
    const d = await delivery();
    const strays = manyHeaders(NAMES, name);
    const node = first ? { ...strays, ...d.headers } : { ...d.headers, ...strays };
    for (const headers of [node, fetchHeaders(node)]) {
      const { ms, outcome } = await timed(() => verifyWebhook({ payload: d.body, headers, secret: SECRET, now: NOW }));
      expect(ms).toBeLessThan(BOUND_MS);
      expect(outcome).toEqual(current(paymentEvent()));
    }
  });

  test('unrelated names around a valid delivery: accepted, in a Node object and in a Fetch Headers', { timeout: 30_000 }, async () => {
    const d = await delivery();
    const node = { ...manyHeaders(NAMES, (i) => `x-custom-${i}-header`), ...d.headers };
    for (const headers of [node, fetchHeaders(node)]) {
      const { ms, outcome } = await timed(() =>
        verifyWebhook({ payload: d.body, headers, secret: SECRET, now: NOW, environment: 'sandbox' }),
      );
      expect(ms).toBeLessThan(BOUND_MS);
      expect(outcome).toEqual(current(paymentEvent()));
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
    expect(outcome).toEqual(current(paymentEvent()));
  });
});

describe('a brand is a signature and a timestamp header of the same brand', () => {
  // These were refused with "Signature headers of more than one brand": a stray
  // x-amz-signature (an AWS-signed hop, a proxy) beside the delivery's three headers.
  test.each([
    ['x-amz-signature', 'a'.repeat(64)],
    ['X-Amz-Signature', 'junk'],
    ['x-acme-signature', ''],
    ['x-other-brand-signature', 'sha256=abc'],
  ])('a stray %s (no timestamp of its brand) does not count: accepted', async (name, value) => {
    const d = await delivery();
    for (const headers of [
      { [name]: value, ...d.headers },
      { ...d.headers, [name]: value },
      fetchHeaders({ [name]: value, ...d.headers }),
    ]) {
      await expect(verifyWebhook({ payload: d.body, headers, secret: SECRET, now: NOW })).resolves.toEqual(current(paymentEvent()));
      await expect(verifyWebhookSignature({ payload: d.body, headers, secret: SECRET, now: NOW })).resolves.toEqual(
        signatureResult(d.body),
      );
    }
  });

  test('several strays, and timestamps of other brands without a signature: accepted', async () => {
    const d = await delivery();
    const headers = {
      'x-amz-signature': 'a',
      'x-acme-timestamp': String(T),
      'X-Foo-Signature': 'b',
      ...d.headers,
      'x-bar-signature': 'c',
      'x-baz-timestamp': '1',
    };
    await expect(verifyWebhook({ payload: d.body, headers, secret: SECRET, now: NOW })).resolves.toEqual(current(paymentEvent()));
    await expect(verifyWebhook({ payload: d.body, headers: fetchHeaders(headers), secret: SECRET, now: NOW })).resolves.toEqual(
      current(paymentEvent()),
    );
  });

  test('mixed-case names of one brand pair up; the same brand in several casings is one brand', async () => {
    const d = await delivery();
    const signature = d.headers['x-service-signature']!;
    const headers = {
      'x-amz-signature': 'a',
      'X-Service-Signature': signature,
      'X-SERVICE-SIGNATURE': signature,
      'X-Service-Timestamp': String(T),
      'X-Service-Event': 'payment.completed',
    };
    await expect(verifyWebhook({ payload: d.body, headers, secret: SECRET, now: NOW })).resolves.toEqual(current(paymentEvent()));
  });

  test('two complete brands are still ambiguous (naming the first two), and `brand` still pins one', async () => {
    const d = await delivery();
    const headers = {
      'x-amz-signature': 'a',
      ...d.headers,
      'x-acme-signature': 'b',
      'x-acme-timestamp': String(T),
      'x-other-signature': 'c',
      'x-other-timestamp': '1',
    };
    await expectReason(
      verifyWebhook({ payload: d.body, headers, secret: SECRET, now: NOW }),
      'missing_header',
      /^Headers of more than one brand \(x-service-signature, x-acme-signature\): pass brand\.$/,
    );
    await expectReason(
      verifyWebhook({ payload: d.body, headers: fetchHeaders(headers), secret: SECRET, now: NOW }),
      'missing_header',
      /brand/,
    );
    await expect(verifyWebhook({ payload: d.body, headers, secret: SECRET, now: NOW, brand: 'Service' })).resolves.toEqual(
      current(paymentEvent()),
    );
  });

  test("no complete brand among several signatures: the first one's timestamp is named missing", async () => {
    const d = await delivery();
    const headers = { ...without(d.headers, 'x-service-timestamp'), 'x-amz-signature': 'a' };
    await expectReason(
      verifyWebhook({ payload: d.body, headers, secret: SECRET, now: NOW }),
      'missing_header',
      /^Missing the X-<Brand>-Timestamp header\.$/,
    );
    // One signature alone: the same.
    await expectReason(
      verifyWebhook({ payload: d.body, headers: without(d.headers, 'x-service-timestamp'), secret: SECRET, now: NOW }),
      'missing_header',
      /Timestamp/,
    );
  });

  test('the brand found depends on this delivery alone', async () => {
    const service = await delivery();
    const acme = await delivery({ brand: 'Acme' });
    await expect(
      verifyWebhook({ payload: acme.body, headers: { ...acme.headers, 'x-service-signature': 'a' }, secret: SECRET, now: NOW }),
    ).resolves.toEqual(current(paymentEvent()));
    await expect(
      verifyWebhook({ payload: service.body, headers: { ...service.headers, 'x-acme-signature': 'a' }, secret: SECRET, now: NOW }),
    ).resolves.toEqual(current(paymentEvent()));
  });
});
