// handleWebhook reads what it must and no more: the headers are checked before a
// byte of the body is read (an unsigned or stale delivery is 401 unread), a declared
// content-length over maxBodyBytes is 413 unread, and a body that streams past it is 413 with
// at most one chunk read beyond the bound, its source let go (a Fetch stream cancelled, a
// Node request's iteration ended). The bodies here count what is pulled from them: a stream
// with highWaterMark 0 makes a chunk only when read, an async iterable only when asked.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { VerifiedTransaction } from '../../src/index.js';
import { ConfigurationError } from '../../src/core/base-error.js';
import { createFulfillment, type FulfillmentOptions, type NodeWebhookRequest } from '../../src/fulfillment.js';
import { signWebhook } from '../../src/testing.js';
import { fakeClient } from '../support/fulfillment-client.js';

const SECRET = 'whsec_test_bound';
const MiB = 1024 * 1024;
const URL_ = 'https://shop.example/hooks';

function kit(overrides: Partial<FulfillmentOptions> = {}) {
  const { client, verify } = fakeClient((trx_id) => ({ trx_id, status: 'success', amount: 25, currency: 'USD' }) as VerifiedTransaction);
  const paid: string[] = [];
  const fulfillment = createFulfillment({
    environment: 'sandbox',
    secret: SECRET,
    client,
    onPaid: (tx) => void paid.push(tx.trx_id),
    ...overrides,
  });
  return { fulfillment, verify, paid };
}

/** `size` bytes in chunks of `chunk` (the last one shorter), made only when asked for. */
const chunked = (size: number, chunk: number) => (i: number) =>
  i * chunk < size ? new Uint8Array(Math.min(chunk, size - i * chunk)).fill(0x20) : undefined;

/** A Fetch body that makes chunk `i` only when read, counting what it made and whether it was cancelled. */
function countingStream(make: (i: number) => Uint8Array | undefined) {
  const seen = { pulled: 0, last: 0, cancelled: false };
  let i = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const chunk = make(i++);
        if (!chunk) return controller.close();
        seen.pulled += seen.last = chunk.byteLength;
        controller.enqueue(chunk);
      },
      cancel() {
        seen.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, seen };
}

const fetchRequest = (headers: Record<string, string>, body: ReadableStream<Uint8Array>) =>
  new Request(URL_, { method: 'POST', headers, body, duplex: 'half' } as RequestInit);

/** A Node request (headers, an async-iterable body) that makes chunk `i` only when asked, counting what it gave and whether the iteration ended early. */
function nodeRequest(headers: Record<string, string>, make: (i: number) => Uint8Array | undefined) {
  const seen = { pulled: 0, last: 0, ended: false, done: false };
  const req: NodeWebhookRequest = {
    headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value])),
    async *[Symbol.asyncIterator]() {
      try {
        for (let i = 0, chunk; (chunk = make(i)); i++) {
          seen.pulled += seen.last = chunk.byteLength;
          yield chunk;
        }
        seen.done = true;
      } finally {
        seen.ended = !seen.done;
      }
    },
  };
  return { req, seen };
}

/** Signed headers of the current form (a body other than the one sent is fine: they are checked first). */
async function signedHeaders(options: { timestamp?: number } = {}) {
  const { headers } = await signWebhook({ secret: SECRET, payload: { id: 'evt_1', type: 'invoice.paid', data: {} }, ...options });
  return headers;
}

const now = () => Math.floor(Date.now() / 1000);
const unsignedCases: [string, () => Promise<Record<string, string>>, string][] = [
  ['no signature header', async () => ({ 'content-type': 'application/json' }), 'missing_header'],
  [
    'no timestamp header',
    async () => ({ 'x-service-signature': 'a'.repeat(64), 'x-service-event': 'payment.completed' }),
    'missing_header',
  ],
  ['a timestamp that is not digits', async () => ({ ...(await signedHeaders()), 'X-Service-Timestamp': '17e8' }), 'invalid_timestamp'],
  ['a stale timestamp (301 s old)', () => signedHeaders({ timestamp: now() - 301 }), 'timestamp_too_old'],
  ['a timestamp 301 s ahead', () => signedHeaders({ timestamp: now() + 301 }), 'timestamp_in_future'],
];

describe('headers first: an unsigned or stale delivery is 401 with not a byte of its body read', () => {
  test.each(unsignedCases)('Fetch Request: %s', async (_name, headers, reason) => {
    const { fulfillment, verify } = kit();
    const { stream, seen } = countingStream(chunked(1024 * MiB, 64 * 1024));
    const response = await fulfillment.handleWebhook(fetchRequest(await headers(), stream));
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: reason });
    expect(seen.pulled).toBe(0);
    expect(verify).not.toHaveBeenCalled();
  });

  test.each(unsignedCases)('Node request: %s', async (_name, headers, reason) => {
    const { fulfillment } = kit();
    const { req, seen } = nodeRequest(await headers(), chunked(1024 * MiB, 64 * 1024));
    const answer = await fulfillment.handleWebhook(req);
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toMatchObject({ error: reason });
    expect(seen.pulled).toBe(0);
  });

  test('{ payload, headers }: unsigned is 401 (no signature header), as a bad signature is', async () => {
    const { fulfillment } = kit();
    const answer = await fulfillment.handleWebhook({ payload: '{}', headers: { 'content-type': 'application/json' } });
    expect(answer).toMatchObject({ status: 401 });
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'missing_header' });
  });
});

describe('at most maxBodyBytes: 413, and the rest unread', () => {
  test('Fetch Request, signed, streaming past 1 MiB (no content-length): 413 with at most one chunk past the bound pulled, the stream cancelled', async () => {
    const { fulfillment, verify } = kit();
    const { stream, seen } = countingStream(chunked(1024 * MiB, 64 * 1024));
    const response = await fulfillment.handleWebhook(fetchRequest(await signedHeaders(), stream));
    expect(response.status).toBe(413);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toMatchObject({ error: 'payload_too_large' });
    expect(seen.pulled).toBeGreaterThan(MiB);
    expect(seen.pulled).toBeLessThanOrEqual(MiB + 64 * 1024);
    expect(seen.cancelled).toBe(true);
    expect(verify).not.toHaveBeenCalled();
  });

  test('Node request, signed, streaming past the bound: 413, at most one chunk past it pulled, the iteration ended', async () => {
    const { fulfillment } = kit({ maxBodyBytes: 10_000 });
    const { req, seen } = nodeRequest(await signedHeaders(), chunked(1024 * MiB, 4096));
    const answer = await fulfillment.handleWebhook(req);
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'payload_too_large' });
    expect(seen.pulled).toBe(12_288); // three chunks: the third crosses 10,000
    expect(seen.ended).toBe(true);
  });

  test('a declared content-length over the bound is 413 before a byte is read (Fetch and Node)', async () => {
    const { fulfillment } = kit();
    const headers = { ...(await signedHeaders()), 'content-length': String(MiB + 1) };
    const fetchBody = countingStream(chunked(MiB + 1, 64 * 1024));
    const response = await fulfillment.handleWebhook(fetchRequest(headers, fetchBody.stream));
    expect(response.status).toBe(413);
    expect(fetchBody.seen.pulled).toBe(0);
    const node = nodeRequest(headers, chunked(MiB + 1, 64 * 1024));
    expect((await fulfillment.handleWebhook(node.req)).status).toBe(413);
    expect(node.seen.pulled).toBe(0);
  });

  test('{ payload } longer than the bound is 413 unverified; a string is counted in UTF-8 bytes', async () => {
    const { fulfillment, paid } = kit({ maxBodyBytes: 2048 });
    const event = (pad: string) => ({ id: 'evt_1', type: 'payment.completed', data: { trx_id: 'TRX1', pad } });
    const long = await signWebhook({ secret: SECRET, payload: event('x'.repeat(2100)) });
    expect((await fulfillment.handleWebhook({ payload: long.body, headers: long.headers })).status).toBe(413);
    expect((await fulfillment.handleWebhook({ payload: Buffer.from(long.body), headers: long.headers })).status).toBe(413);
    expect((await fulfillment.handleWebhook({ payload: new TextEncoder().encode(long.body).buffer, headers: long.headers })).status).toBe(
      413,
    );
    // 1,400 characters, 2,800 bytes: its length is under the bound, its bytes over it.
    const wide = await signWebhook({ secret: SECRET, payload: event('é'.repeat(1400)) });
    expect(wide.body.length).toBeLessThan(2048);
    expect((await fulfillment.handleWebhook({ payload: wide.body, headers: wide.headers })).status).toBe(413);
    expect(paid).toEqual([]);
    const fits = await signWebhook({ secret: SECRET, payload: event('x'.repeat(100)) });
    expect((await fulfillment.handleWebhook({ payload: fits.body, headers: fits.headers })).status).toBe(200);
    expect(paid).toEqual(['TRX1']);
  });

  test('maxBodyBytes: a whole number more than 0, else ConfigurationError at construction', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, '1024']) {
      expect(() => kit({ maxBodyBytes: bad as number }), String(bad)).toThrow(ConfigurationError);
      expect(() => kit({ maxBodyBytes: bad as number }), String(bad)).toThrow(
        /^createFulfillment\(\{ maxBodyBytes \}\): .* is not a whole number more than 0$/,
      );
    }
    expect(() => kit({ maxBodyBytes: 1 })).not.toThrow();
    expect(() => kit({ maxBodyBytes: undefined })).not.toThrow();
  });
});

describe('the Node request form', () => {
  test('a delivery in chunks (a UTF-8 character split across two) is verified from the bytes: 200, onPaid once', async () => {
    const { fulfillment, paid } = kit();
    const { body, headers } = await signWebhook({
      secret: SECRET,
      payload: { id: 'evt_1', type: 'payment.completed', data: { trx_id: 'TRX1', note: 'Zoë ☕' } },
    });
    const bytes = new TextEncoder().encode(body);
    const split = bytes.indexOf(0xe2) + 1; // inside the 3-byte ☕
    const parts = [bytes.subarray(0, split), bytes.subarray(split)];
    const { req, seen } = nodeRequest(headers, (i) => parts[i]);
    const answer = await fulfillment.handleWebhook(req);
    expect(answer).toEqual({ status: 200, body: JSON.stringify({ received: true, result: 'ran' }) });
    expect(seen).toMatchObject({ pulled: bytes.length, done: true, ended: false });
    expect(paid).toEqual(['TRX1']);
  });

  test('a body a framework has read (express.raw: a Buffer) is the payload; a parsed one (express.json) is refused with the raw-body advice', async () => {
    const { fulfillment, paid } = kit();
    const { body, headers } = await signWebhook({
      secret: SECRET,
      payload: { id: 'evt_1', type: 'payment.completed', data: { trx_id: 'TRX1' } },
    });
    const read = nodeRequest(headers, () => undefined);
    const raw = Object.assign(read.req, { body: Buffer.from(body) });
    expect((await fulfillment.handleWebhook(raw)).status).toBe(200);
    expect(paid).toEqual(['TRX1']);
    const parsed = Object.assign(nodeRequest(headers, () => undefined).req, { body: JSON.parse(body) as unknown });
    const refused = await fulfillment.handleWebhook(parsed);
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.body)).toMatchObject({ error: 'invalid_payload', message: expect.stringMatching(/parsed object/) });
  });
});

describe('property: for any size and chunking around the bound, accepted iff size ≤ maxBodyBytes, and at most one chunk past it is pulled', () => {
  const BASE = JSON.stringify({ id: 'evt_p', type: 'invoice.paid', data: {}, pad: '' });
  /** A signed event of exactly `size` bytes (ASCII padding). */
  const eventOfSize = (size: number) =>
    signWebhook({ secret: SECRET, payload: BASE.replace('"pad":""', `"pad":"${'x'.repeat(size - BASE.length)}"`) });

  const caseArb = fc
    .record({
      max: fc.integer({ min: BASE.length, max: 4096 }),
      offset: fc.oneof(fc.integer({ min: -64, max: 64 }), fc.constantFrom(-1, 0, 1)),
      chunks: fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 12 }),
      form: fc.constantFrom('fetch', 'node', 'payload'),
    })
    .filter(({ max, offset }) => max + offset >= BASE.length);

  test('Fetch Request, Node request and { payload }', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ max, offset, chunks, form }) => {
        const size = max + offset;
        const { body, headers } = await eventOfSize(size);
        const bytes = new TextEncoder().encode(body);
        expect(bytes.length).toBe(size);
        // The chunk sizes cycle until the body is cut up.
        const cuts: Uint8Array[] = [];
        for (let at = 0, i = 0; at < size; i++) cuts.push(bytes.subarray(at, (at += chunks[i % chunks.length]!)));
        const make = (i: number) => cuts[i];
        const { fulfillment } = kit({ maxBodyBytes: max });
        let status: number;
        let seen: { pulled: number; last: number } = { pulled: 0, last: 0 };
        if (form === 'fetch') {
          const counted = countingStream(make);
          seen = counted.seen;
          status = (await fulfillment.handleWebhook(fetchRequest(headers, counted.stream))).status;
        } else if (form === 'node') {
          const counted = nodeRequest(headers, make);
          seen = counted.seen;
          status = (await fulfillment.handleWebhook(counted.req)).status;
        } else {
          status = (await fulfillment.handleWebhook({ payload: bytes, headers })).status;
        }
        expect(status).toBe(size <= max ? 200 : 413);
        // Every chunk but the last one pulled lay within the bound.
        expect(seen.pulled - seen.last).toBeLessThanOrEqual(max);
      }),
      { seed: 0x27_b0d7, numRuns: 300 },
    );
  }, 60_000);
});
