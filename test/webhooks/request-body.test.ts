// verifyWebhook(request, secret) on a Fetch Request: the headers are checked before a byte of
// the body is read, and at most maxBodyBytes of it is read (a stream cancelled at the bound).
// Each body here is a stream that counts the bytes pulled from it, so "not read" is measured.
import { createHmac } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { verifyWebhook, verifyWebhookSignature } from '../../src/webhooks.js';
import { configurationError, delivery, expectReason, fetchHeaders, NOW, current, paymentEvent, SECRET, T, without } from './suite.js';

const CHUNK = 64 * 1024;
const GIB = 1024 ** 3;
/** The test's own bound: a verifier that reads past it has already failed (the stream errors there). */
const TEST_BOUND = 16 * 1024 * 1024;

/** A body of `total` bytes, `fill` after the optional `head`, pulled one chunk at a time; `pulled` counts what was taken. */
function countingBody(total: number, head = new Uint8Array(0), fill = 0x20) {
  const counter = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (counter.pulled >= total) return controller.close();
        if (counter.pulled >= TEST_BOUND) return controller.error(new Error(`read past the test's bound (${counter.pulled} bytes)`));
        const chunk = new Uint8Array(Math.min(CHUNK, total - counter.pulled)).fill(fill);
        if (counter.pulled === 0) chunk.set(head.subarray(0, chunk.length));
        counter.pulled += chunk.length;
        controller.enqueue(chunk);
      },
      cancel() {
        counter.cancelled = true;
      },
    },
    // Nothing is pulled before a reader asks.
    { highWaterMark: 0 },
  );
  return { stream, counter };
}

const streamed = (body: ReadableStream<Uint8Array>, headers: Record<string, string>) =>
  new Request('https://merchant.example/webhooks', { method: 'POST', body, headers: fetchHeaders(headers), duplex: 'half' } as RequestInit);

/** The headers of a delivery whose body is `total` spaces (as countingBody streams it), signed over exactly those bytes. */
function signedHeaders(total: number, timestamp = T): Record<string, string> {
  const hmac = createHmac('sha256', SECRET).update(`${timestamp}.`);
  for (let sent = 0; sent < total; sent += CHUNK) hmac.update(new Uint8Array(Math.min(CHUNK, total - sent)).fill(0x20));
  return {
    'x-service-signature': hmac.digest('hex'),
    'x-service-timestamp': String(timestamp),
    'x-service-event': 'payment.completed',
    'x-environment': 'sandbox',
  };
}

describe('verifyWebhook(Request): the headers before the body', () => {
  test('an unsigned Request with a 1 GiB streamed body is refused without a byte read', async () => {
    const d = await delivery();
    const { stream, counter } = countingBody(GIB);
    await expectReason(verifyWebhook(streamed(stream, without(d.headers, 'x-service-signature')), SECRET, { now: NOW }), 'missing_header');
    expect(counter.pulled).toBe(0);
  });

  test('a stale, a malformed or a millisecond timestamp, and a signature that is not 64 hex: refused unread', async () => {
    const d = await delivery();
    const cases: Array<[Record<string, string>, Parameters<typeof expectReason>[1]]> = [
      [{ ...d.headers, 'x-service-timestamp': String(T - 301) }, 'timestamp_too_old'],
      [{ ...d.headers, 'x-service-timestamp': String(T + 301) }, 'timestamp_in_future'],
      [{ ...d.headers, 'x-service-timestamp': '17e8' }, 'invalid_timestamp'],
      [{ ...d.headers, 'x-service-signature': 'not-hex' }, 'invalid_signature'],
      [{ 'x-signature': 'zz', 'content-type': 'application/json' }, 'invalid_signature'], // the earlier form
    ];
    for (const [headers, reason] of cases) {
      const { stream, counter } = countingBody(GIB);
      await expectReason(verifyWebhook(streamed(stream, headers), SECRET, { now: NOW }), reason);
      expect(counter.pulled, reason).toBe(0);
    }
  });

  test('the configuration is checked first, before the headers and the body', async () => {
    const { stream, counter } = countingBody(GIB);
    await configurationError(verifyWebhook(streamed(stream, {}), ` ${SECRET}`, { now: NOW }), /whitespace/);
    for (const maxBodyBytes of [0, -1, 1.5, Number.NaN, '100']) {
      await configurationError(
        verifyWebhook(streamed(stream, {}), SECRET, { now: NOW, maxBodyBytes: maxBodyBytes as number }),
        /maxBodyBytes must be a whole number > 0/,
      );
    }
    expect(counter.pulled).toBe(0);
  });
});

describe('verifyWebhook(Request): at most maxBodyBytes of the body', () => {
  test('a signed delivery over the default 1 MiB stops at the cap: invalid_payload, body too large', async () => {
    const total = 2 * 1024 * 1024;
    const { stream, counter } = countingBody(total);
    const request = streamed(stream, signedHeaders(total));
    await expectReason(
      verifyWebhookSignature(request, SECRET, { now: NOW }),
      'invalid_payload',
      /too large.*maxBodyBytes \(1048576 bytes\)/,
    );
    // The bound, plus the chunk that crossed it and the one a stream branch may hold ahead.
    expect(counter.pulled).toBeGreaterThan(1024 * 1024);
    expect(counter.pulled).toBeLessThanOrEqual(1024 * 1024 + 2 * CHUNK);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(counter.pulled).toBeLessThanOrEqual(1024 * 1024 + 2 * CHUNK); // and nothing more afterwards
  });

  test('a smaller maxBodyBytes: a body of exactly that many bytes verifies; one more is refused', async () => {
    const d = await delivery();
    const size = new TextEncoder().encode(d.body as string).length;
    const request = (body: string) => new Request('https://merchant.example/webhooks', { method: 'POST', body, headers: d.headers });
    await expect(verifyWebhook(request(d.body as string), SECRET, { now: NOW, maxBodyBytes: size })).resolves.toEqual(
      current(paymentEvent()),
    );
    await expectReason(
      verifyWebhook(request(d.body as string), SECRET, { now: NOW, maxBodyBytes: size - 1 }),
      'invalid_payload',
      /too large/,
    );
  });

  test('a declared Content-Length over the bound is refused before a byte is read', async () => {
    const total = 10 * 1024 * 1024;
    const { stream, counter } = countingBody(total);
    const request = streamed(stream, { ...signedHeaders(total), 'content-length': String(total) });
    await expectReason(verifyWebhook(request, SECRET, { now: NOW }), 'invalid_payload', /too large/);
    expect(counter.pulled).toBe(0);
  });

  test('a streamed signed body under the bound verifies, and the request stays readable', async () => {
    const d = await delivery();
    const bytes = new TextEncoder().encode(d.body as string);
    const { stream } = countingBody(bytes.length, bytes);
    const request = streamed(stream, d.headers);
    await expect(verifyWebhook(request, SECRET, { now: NOW })).resolves.toEqual(current(paymentEvent()));
    await expect(request.text()).resolves.toBe(d.body);
  });
});
