// Signing as a real server sees it: a node:http server on 127.0.0.1 reads the request-target
// exactly as it came over the socket (`req.url`) and the raw body bytes, and checks
// X-Signature with its own crypto.createHmac (never the SDK's signer) and the 300 s window.
// msw or a mocked fetch would hand us a re-parsed URL; this catches any difference between
// what the client signs and what actually goes on the wire.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { AuthenticationError, InternalServerError, InvalidParamsError, PaymentsClient, type ClientOptions } from '../../src/index.js';
import { fixtures } from '../support/fake-api.js';

const SECRET = 'test_s';
const TOLERANCE_S = 300;

interface Seen {
  method: string;
  /** The request-target as received: path and query, byte for byte. */
  target: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  rawBody: string;
  bodyBytes: Buffer;
  signatureValid: boolean;
  fresh: boolean;
}

type Reply = { status?: number; body?: unknown; headers?: Record<string, string> };
type Route = (req: Seen, route: string) => Reply | undefined;

let server: Server;
let origin: string;
const seen: Seen[] = [];
let serverNow: () => number = () => Date.now();
let routes: Route[] = [];

function header(req: IncomingMessage, name: string): string {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(',') : (value ?? '');
}

function verify(req: IncomingMessage, target: string, rawBody: string): { signatureValid: boolean; fresh: boolean } {
  const ts = header(req, 'x-timestamp');
  const given = header(req, 'x-signature');
  const want = 'sha256=' + createHmac('sha256', SECRET).update(`${ts}.${req.method}.${target}.${rawBody}`, 'utf8').digest('hex');
  const signatureValid = given.length === want.length && timingSafeEqual(Buffer.from(given), Buffer.from(want));
  const fresh = /^\d+$/.test(ts) && Math.abs(Number(ts) - Math.floor(serverNow() / 1000)) <= TOLERANCE_S;
  return { signatureValid, fresh };
}

/** Documented shapes for the routes under test; `route` is the path without any base prefix. */
function defaultReply(req: Seen, route: string): Reply {
  if (req.method === 'GET' && route === '/api/v1/payments') {
    // Echo the filters as the server parsed them, so the test sees them round-trip.
    const item = {
      trx_id: 'TRX123456',
      merchant_ref: req.query.get('merchant_ref') ?? 'order-1001',
      amount: 25,
      currency: 'USD',
      status: req.query.get('status') ?? 'pending',
    };
    return { body: { data: [item], total: 1 } };
  }
  const one = /^\/api\/v1\/payments\/([^/]+)$/.exec(route);
  if (req.method === 'GET' && one) {
    return { body: { status: 'success', data: { ...fixtures.payment, trx_id: decodeURIComponent(one[1]!) } } };
  }
  if (req.method === 'POST' && route === '/api/v1/payments') {
    return {
      body: { status: 'success', data: fixtures.payment, payment_url: fixtures.payment.checkout_url, trx_id: fixtures.payment.trx_id },
    };
  }
  if (req.method === 'POST' && route === '/api/v1/payouts/preview') {
    const amount = (JSON.parse(req.rawBody) as { amount: number }).amount;
    return { body: { amount, fee: 1.5, payable_amount: amount - 1.5 } };
  }
  return { status: 404, body: { error: 'Not Found', message: `no route ${req.method} ${route}` } };
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const target = req.url ?? '';
    const bodyBytes = Buffer.concat(chunks);
    const rawBody = bodyBytes.toString('utf8');
    const q = target.indexOf('?');
    const path = q === -1 ? target : target.slice(0, q);
    const query = new URLSearchParams(q === -1 ? '' : target.slice(q + 1));
    const seenReq: Seen = {
      method: req.method ?? '',
      target,
      path,
      query,
      headers: req.headers,
      rawBody,
      bodyBytes,
      ...verify(req, target, rawBody),
    };
    seen.push(seenReq);

    let reply: Reply | undefined;
    if (!seenReq.signatureValid || !seenReq.fresh) {
      reply = { status: 401, body: { error: 'Invalid API credentials', message: 'Invalid API credentials' } };
    } else {
      const route = path.replace(/^\/gateway(?=\/)/, '');
      for (const r of routes) reply ??= r(seenReq, route);
      reply ??= defaultReply(seenReq, route);
    }
    res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
    res.end(JSON.stringify(reply.body ?? {}));
  });
}

beforeAll(async () => {
  server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(() => {
  seen.length = 0;
  routes = [];
  serverNow = () => Date.now();
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
});

function client(options: ClientOptions = {}): PaymentsClient {
  return new PaymentsClient({
    environment: 'sandbox',
    merchantKey: 'test_m',
    apiKey: 'test_k',
    apiSecret: 'test_s',
    baseUrl: origin,
    ...options,
  });
}

// Real sockets need real time to answer, so fake timers here run accelerated: every real
// millisecond the virtual clock moves 100 ms (timers firing in order, with their microtasks).
// Backoff waits of seconds pass in a few real ms; a 30 s attempt timeout stays far away.
const realSetTimeout = globalThis.setTimeout;
async function accelerated<T>(start: number, run: () => Promise<T>): Promise<{ result: T | undefined; error: unknown }> {
  vi.useFakeTimers({ now: start, toFake: ['Date', 'setTimeout', 'clearTimeout'] });
  let done = false;
  const outcome = run().then(
    (result) => ({ result, error: undefined }),
    (error: unknown) => ({ result: undefined, error }),
  );
  void outcome.finally(() => (done = true));
  try {
    while (!done) {
      await new Promise((resolve) => realSetTimeout(resolve, 1));
      if (!done) await vi.advanceTimersByTimeAsync(100);
    }
    return await outcome;
  } finally {
    vi.useRealTimers();
  }
}

function expectVerified(requests: Seen[]): void {
  expect(requests.length).toBeGreaterThan(0);
  for (const r of requests) {
    expect({ target: r.target, signatureValid: r.signatureValid, fresh: r.fresh }).toEqual({
      target: r.target,
      signatureValid: true,
      fresh: true,
    });
    // Everything the client put on the wire is percent-encoded ASCII: nothing left to reinterpret.
    expect(r.target).toMatch(/^\/[\x21-\x7e]*$/);
    expect(r.headers['x-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(r.headers['x-environment']).toBe('sandbox');
    expect(r.headers['x-merchant-key']).toBe('test_m');
    expect(r.headers['x-api-key']).toBe('test_k');
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['accept']).toBe('application/json');
    // The secret is a signing key only: never in a header or the body.
    expect(JSON.stringify(r.headers)).not.toContain(SECRET);
    expect(r.rawBody).not.toContain(SECRET);
  }
}

const AWKWARD_REF = 'agizo/ä ö&x=1?y #z+';
const AWKWARD_TRX = 'TRX/2026 Zoë ☕?#%&+';

describe("every request verifies with the server's own HMAC over the raw request-target and body", () => {
  test('payments.list: query values with & / ? space = + # % and non-ASCII round-trip exactly', async () => {
    // status is a closed union now: the awkward characters ride in merchant_ref alone.
    const page = await client().payments.list({ merchant_ref: AWKWARD_REF, status: 'success', limit: 10, offset: 20 });
    expect(seen).toHaveLength(1);
    expectVerified(seen);
    const [req] = seen;
    expect(req!.method).toBe('GET');
    expect(req!.path).toBe('/api/v1/payments');
    expect(req!.rawBody).toBe('');
    expect(req!.query.get('merchant_ref')).toBe(AWKWARD_REF);
    expect(req!.query.get('status')).toBe('success');
    expect(req!.query.get('limit')).toBe('10');
    expect(req!.query.get('offset')).toBe('20');
    expect([...req!.query.keys()].sort()).toEqual(['limit', 'merchant_ref', 'offset', 'status']);
    // The values came back through the server's parse, so the client sent them intact.
    expect(page.data[0]).toMatchObject({ merchant_ref: AWKWARD_REF, status: 'success' });
  });

  test('payments.retrieve: a trx id with / space ? # % and non-ASCII is one encoded path segment', async () => {
    const payment = await client().payments.retrieve(AWKWARD_TRX);
    expectVerified(seen);
    const [req] = seen;
    const segments = req!.path.split('/');
    expect(segments.slice(0, -1).join('/')).toBe('/api/v1/payments');
    expect(decodeURIComponent(segments.at(-1)!)).toBe(AWKWARD_TRX);
    expect(req!.target).not.toContain('?');
    expect(payment.trx_id).toBe(AWKWARD_TRX);
  });

  test('payments.create: a unicode description and customer_name are signed as their UTF-8 bytes', async () => {
    const description = 'Malipo ya Agizo ☕ — café';
    const customer_name = 'Zoë Mwanaïsha 🇹🇿';
    const payment = await client().payments.create({
      payment_amount: 25,
      currency_code: 'TZS',
      ref_trx: 'agizo-1001',
      description,
      customer_name,
    });
    expect(payment.trx_id).toBe(fixtures.payment.trx_id);
    expectVerified(seen);
    const [req] = seen;
    expect(req!.method).toBe('POST');
    expect(req!.target).toBe('/api/v1/payments');
    // Sent as UTF-8, not \u-escaped, and the length on the wire is the UTF-8 byte length.
    expect(req!.rawBody).toContain(description);
    expect(Number(req!.headers['content-length'])).toBe(req!.bodyBytes.length);
    expect(req!.bodyBytes.length).toBe(Buffer.byteLength(req!.rawBody, 'utf8'));
    expect(req!.bodyBytes.length).toBeGreaterThan(req!.rawBody.length);
    expect(JSON.parse(req!.rawBody)).toEqual({
      payment_amount: 25,
      currency_code: 'TZS',
      ref_trx: 'agizo-1001',
      description,
      customer_name,
    });
    expect(req!.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('payouts.preview', async () => {
    const preview = await client().payouts.preview({ amount: 100 });
    expect(preview).toMatchObject({ amount: 100, fee: 1.5, payable_amount: 98.5 });
    expectVerified(seen);
    expect(seen[0]).toMatchObject({ method: 'POST', target: '/api/v1/payouts/preview', rawBody: '{"amount":100}' });
  });

  test('a baseUrl with a path prefix: the signed path is the path on the wire, prefix included', async () => {
    for (const baseUrl of [`${origin}/gateway`, `${origin}/gateway/`]) {
      const c = client({ baseUrl });
      await c.payments.list({ merchant_ref: AWKWARD_REF });
      await c.payments.retrieve(AWKWARD_TRX);
      await c.payments.create({
        payment_amount: 25,
        currency_code: 'TZS',
        ref_trx: 'agizo-1001',
        description: 'Malipo ya Agizo ☕ — café',
      });
      await c.payouts.preview({ amount: 100 });
    }
    expect(seen).toHaveLength(8);
    expectVerified(seen);
    for (const r of seen) expect(r.target.startsWith('/gateway/api/v1/')).toBe(true);
    expect(seen[0]!.query.get('merchant_ref')).toBe(AWKWARD_REF);
    expect(decodeURIComponent(seen[1]!.path.split('/').at(-1)!)).toBe(AWKWARD_TRX);
  });
});

describe('path ids the URL parser would rewrite', () => {
  test('"a/../b" stays one segment; "." and ".." (which a URL resolves away) and lone surrogates are refused before sending', async () => {
    const c = client();
    const payment = await c.payments.retrieve('a/../b');
    expect(payment.trx_id).toBe('a/../b');
    expect(seen[0]!.target).toBe('/api/v1/payments/a%2F..%2Fb');
    expectVerified(seen);
    for (const id of ['.', '..', 'TRX\uD800']) {
      await expect(c.payments.retrieve(id)).rejects.toBeInstanceOf(InvalidParamsError);
      await expect(c.payments.push(id)).rejects.toThrow(/trx_id/);
    }
    expect(seen).toHaveLength(1);
  });
});

describe('the server really checks: a wrong signature or a stale timestamp is refused', () => {
  test('a wrong secret gets 401 and AuthenticationError', async () => {
    const error = await client({ apiSecret: 'test_wrong' })
      .payments.list({ merchant_ref: AWKWARD_REF })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ signatureValid: false, fresh: true });
  });

  test('a request-target changed after signing is refused', async () => {
    // A fetch that appends a parameter: the signature no longer covers what arrives.
    const tampering: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      return fetch(new Request(`${request.url}&x=1`, request));
    };
    const error = await client({ fetch: tampering })
      .payments.list({ status: 'pending' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(seen[0]).toMatchObject({ target: '/api/v1/payments?status=pending&x=1', signatureValid: false });
  });

  test('a clock 10 minutes behind: valid signature, stale timestamp, the error names the clock skew', async () => {
    const realNow = Date.now;
    serverNow = () => realNow();
    vi.useFakeTimers({ toFake: ['Date'], now: realNow() - 600_000 });
    const error = await client()
      .payouts.preview({ amount: 100 })
      .catch((e: unknown) => e)
      .finally(() => vi.useRealTimers());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ signatureValid: true, fresh: false });
    // node:http sends a Date header; the client compares it with its own clock.
    expect((error as Error).message).toMatch(/Your clock is \d+ s behind the server's; signed requests are refused outside 300 s/);
  });
});

describe('every retry is signed afresh', () => {
  const start = Date.UTC(2026, 10, 22, 12, 0, 0);

  test('GET: 503 once, then 200: two requests, both valid, the second with a new X-Timestamp', async () => {
    let calls = 0;
    routes.push(() =>
      calls++ === 0
        ? { status: 503, body: { error: 'Service Unavailable', message: 'try again' }, headers: { 'retry-after': '2' } }
        : undefined,
    );
    const { result: page } = await accelerated(start, () => client().payments.list({ merchant_ref: AWKWARD_REF, status: 'pending' }));
    expect(page!.data).toHaveLength(1);
    expect(seen).toHaveLength(2);
    expectVerified(seen);
    const [first, second] = seen;
    expect(first!.headers['x-timestamp']).toBe(String(start / 1000));
    expect(second!.headers['x-timestamp']).toBe(String(start / 1000 + 2));
    expect(second!.headers['x-signature']).not.toBe(first!.headers['x-signature']);
    expect(second!.target).toBe(first!.target);
    expect(second!.query.get('merchant_ref')).toBe(AWKWARD_REF);
  });

  test('POST create: 503 once, then 200: same body and Idempotency-Key, fresh timestamp and signature', async () => {
    let calls = 0;
    routes.push(() => (calls++ === 0 ? { status: 503, body: { error: 'Service Unavailable', message: 'try again' } } : undefined));
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    await accelerated(start + 750, () =>
      client().payments.create({ payment_amount: 25, currency_code: 'TZS', ref_trx: 'agizo-1001', customer_name: 'Zoë Mwanaïsha 🇹🇿' }),
    );
    expect(seen).toHaveLength(2);
    expectVerified(seen);
    // Backoff without Retry-After: 500 ms less a quarter of jitter (random 0.5) = 437.5 ms,
    // which crosses into the next second from 12:00:00.750 (the second X-Timestamp shows it).
    const [first, second] = seen;
    expect(first!.headers['x-timestamp']).toBe(String(start / 1000));
    expect(second!.headers['x-timestamp']).toBe(String(start / 1000 + 1));
    expect(second!.headers['x-signature']).not.toBe(first!.headers['x-signature']);
    expect(second!.rawBody).toBe(first!.rawBody);
    expect(second!.headers['idempotency-key']).toBe(first!.headers['idempotency-key']);
  });

  test('503 on every attempt: each of the 1 + maxRetries attempts is signed with its own timestamp', async () => {
    routes.push(() => ({ status: 503, body: { error: 'Service Unavailable', message: 'down' }, headers: { 'retry-after': '5' } }));
    const { error } = await accelerated(start, () => client({ maxRetries: 2 }).payouts.preview({ amount: 100 }));
    expect(error).toBeInstanceOf(InternalServerError);
    expect(seen).toHaveLength(3);
    expectVerified(seen);
    expect(seen.map((r) => Number(r.headers['x-timestamp']) - start / 1000)).toEqual([0, 5, 10]);
    expect(new Set(seen.map((r) => r.headers['x-signature'])).size).toBe(3);
  });
});
