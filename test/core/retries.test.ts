// Retries, backoff, Retry-After, idempotency keys, push safety, payout outcomes, timeouts, abort.
import net from 'node:net';
import { delay, http, HttpResponse, passthrough } from 'msw';
import { beforeEach, describe, expect, test, vi } from 'vitest';
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  InternalServerError,
  NotFoundError,
  PaymentsClient,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
  type ClientOptions,
} from '../../src/index.js';
import { rejection, UUID } from '../support/assertions.js';
import { BASE_URL, fixtures } from '../support/fake-api.js';
import { useFakeApi } from '../support/harness.js';

// Every client shares the harness clock (fresh each test), so the server follows it too.
const { api, setup, clock } = useFakeApi();
beforeEach(() => vi.stubEnv('BUSINESS_PAYMENTS_LOG', ''));

function client(options: ClientOptions = {}): PaymentsClient {
  return setup({ clock, ...options }).client;
}

/** A fetch that counts its calls and hands them to the global (msw-patched) fetch. */
function countingFetch() {
  const calls: string[] = [];
  const wrapped: typeof fetch = (input, init) => {
    calls.push(input instanceof Request ? `${input.method} ${input.url}` : String(input));
    return fetch(input, init);
  };
  return { calls, fetch: wrapped };
}

/** A loopback port with nothing listening on it: connecting gets ECONNREFUSED. */
async function refusedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve())));
  return port;
}

function causeCodes(error: unknown): string[] {
  const codes: string[] = [];
  for (let e: any = error, i = 0; e && i < 8; e = e.cause, i++) if (typeof e.code === 'string') codes.push(e.code);
  return codes;
}

const header = (name: string) => api.seen.map((r) => r.headers[name.toLowerCase()]);
const createBody = { status: 'success', data: fixtures.payment, payment_url: fixtures.payment.checkout_url, trx_id: 'TRX123456' };
const createParams = { payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1001' };
// Backoff with the fake clock's random() = 0.5: base * (1 - 0.25 * 0.5).
const BACKOFF = [500 * 0.875, 1000 * 0.875, 2000 * 0.875, 4000 * 0.875, 8000 * 0.875, 8000 * 0.875];

describe('GET (safe) retries', () => {
  test.each([408, 429, 500, 502, 503, 504])('retried on %i: maxRetries 2 by default → 3 attempts', async (status) => {
    api.on('get', '/api/v1/balance', { status, body: { error: 'Try later', message: 'transient' } });
    const error = await rejection(client().balance.retrieve());
    expect(error).toBeInstanceOf(APIError);
    expect(error.status).toBe(status);
    expect(api.seen).toHaveLength(3);
    expect(clock.sleeps).toEqual([BACKOFF[0], BACKOFF[1]]);
  });

  test('a retry that succeeds returns the data', async () => {
    api.sequence('get', '/api/v1/site-info', [{ status: 503 }, { status: 502 }, { body: fixtures.siteInfo }]);
    const info = await client().siteInfo.retrieve();
    expect(info.site_name).toBe('Business Payments');
    expect(api.seen).toHaveLength(3);
    expect(clock.sleeps).toEqual([BACKOFF[0], BACKOFF[1]]);
  });

  test('retried on a network error: 3 attempts, then APIConnectionError', async () => {
    let attempts = 0;
    api.use(http.get(`${BASE_URL}/api/v1/balance`, () => {
      attempts++;
      return HttpResponse.error();
    }));
    const error = await rejection(client().balance.retrieve());
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error).not.toBeInstanceOf(APITimeoutError);
    expect(error.message).toContain('balance.retrieve');
    expect(attempts).toBe(3);
    expect(clock.sleeps).toEqual([BACKOFF[0], BACKOFF[1]]);
  });

  test('client-level maxRetries: exponential backoff, capped at 8 s before jitter', async () => {
    api.on('get', '/api/v1/balance', { status: 500 });
    await rejection(client({ maxRetries: 6 }).balance.retrieve());
    expect(api.seen).toHaveLength(7);
    expect(clock.sleeps).toEqual(BACKOFF);
  });

  test('client-level maxRetries 0 → exactly 1 attempt', async () => {
    api.on('get', '/api/v1/balance', { status: 503 });
    await rejection(client({ maxRetries: 0 }).balance.retrieve());
    expect(api.seen).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
  });

  test('per-call maxRetries overrides the client (up and down)', async () => {
    api.on('get', '/api/v1/balance', { status: 503 });
    await rejection(client({ maxRetries: 0 }).balance.retrieve({ maxRetries: 3 }));
    expect(api.seen).toHaveLength(4);

    api.seen.length = 0;
    await rejection(client({ maxRetries: 5 }).balance.retrieve({ maxRetries: 1 }));
    expect(api.seen).toHaveLength(2);

    api.seen.length = 0;
    await rejection(client().balance.retrieve({ maxRetries: 0 }));
    expect(api.seen).toHaveLength(1);
  });

  test.each([
    [400, UnprocessableEntityError],
    [401, AuthenticationError],
    [403, PermissionDeniedError],
    [404, NotFoundError],
    [422, UnprocessableEntityError],
  ] as const)('NOT retried on %i', async (status, ErrorClass) => {
    api.on('get', '/api/v1/balance', { status, body: { error: 'No', message: 'final' } });
    const error = await rejection(client({ maxRetries: 5 }).balance.retrieve());
    expect(error).toBeInstanceOf(ErrorClass);
    expect(api.seen).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
  });

  test('a GET carries no Idempotency-Key', async () => {
    api.on('get', '/api/v1/balance', { body: {} });
    await client().balance.retrieve();
    expect(api.seen[0]!.headers['idempotency-key']).toBeUndefined();
  });
});

describe('Retry-After', () => {
  test('seconds are honoured instead of the backoff', async () => {
    api.sequence('get', '/api/v1/balance', [
      { status: 429, body: { error: 'Too Many Requests' }, headers: { 'Retry-After': '3' } },
      { status: 503, headers: { 'Retry-After': '7' } },
      { body: {} },
    ]);
    await client().balance.retrieve();
    expect(api.seen).toHaveLength(3);
    expect(clock.sleeps).toEqual([3000, 7000]);
  });

  test('an HTTP-date is honoured (measured on the client clock)', async () => {
    const at = new Date(clock.time + 5000).toUTCString();
    api.sequence('get', '/api/v1/balance', [
      { status: 429, body: { error: 'Too Many Requests' }, headers: { 'Retry-After': at } },
      { body: {} },
    ]);
    await client().balance.retrieve();
    expect(clock.sleeps).toEqual([5000]);
  });

  test('exactly 60 s is still waited out', async () => {
    api.sequence('get', '/api/v1/balance', [{ status: 429, headers: { 'Retry-After': '60' } }, { body: {} }]);
    await client().balance.retrieve();
    expect(clock.sleeps).toEqual([60_000]);
  });

  test('more than 60 s (seconds) is not waited out: RateLimitError at once with retryAfter', async () => {
    api.on('get', '/api/v1/balance', { status: 429, body: { error: 'Too Many Requests' }, headers: { 'Retry-After': '120' } });
    const error = await rejection(client().balance.retrieve());
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.retryAfter).toBe(120);
    expect(api.seen).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
  });

  test('more than 60 s (HTTP-date) is not waited out either', async () => {
    const at = new Date(clock.time + 3_600_000).toUTCString();
    api.on('get', '/api/v1/balance', { status: 429, body: { error: 'Too Many Requests' }, headers: { 'Retry-After': at } });
    const error = await rejection(client().balance.retrieve());
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.retryAfter).toBe(3600);
    expect(api.seen).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
  });

  test('Retry-After on a status that is not retried changes nothing', async () => {
    api.on('get', '/api/v1/balance', { status: 404, headers: { 'Retry-After': '1' } });
    await rejection(client().balance.retrieve());
    expect(api.seen).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
  });
});

describe('create calls: one Idempotency-Key per call, fresh signature per attempt', () => {
  type CreateCase = [name: string, path: string, call: (c: PaymentsClient) => PromiseLike<unknown>, body: object];
  const cases: CreateCase[] = [
    ['payments.create', '/api/v1/payments', (c) => c.payments.create(createParams), createBody],
    [
      'payments.initiate',
      '/api/v1/initiate-payment',
      (c) =>
        c.payments.initiate({
          ...createParams,
          success_redirect: 'https://shop.example.com/thanks',
          cancel_redirect: 'https://shop.example.com/cancel',
          ipn_url: 'https://shop.example.com/ipn',
        }),
      { payment_url: 'https://checkout.payments.test/s/abc', info: fixtures.sessionInfo },
    ],
    ['payouts.create', '/api/v1/payouts', (c) => c.payouts.create({ amount: 100 }), { id: '123e4567-e89b-12d3-a456-426614174000', status: 'SUCCESS' }],
    ['billing.plans.create', '/api/v1/billing/plans', (c) => c.billing.plans.create({ plan_code: 'gold' }), { plan_code: 'gold' }],
    [
      'billing.subscriptions.create',
      '/api/v1/billing/subscriptions',
      (c) => c.billing.subscriptions.create({ plan_code: 'gold', customer_phone: '255712345678', terms_shown: 'TZS 10,000 monthly' }),
      { id: 'sub_1', status: 'active' },
    ],
  ];

  test.each(cases)('%s: same key on every attempt, every attempt signed afresh and valid', async (_name, path, call, body) => {
    let n = 0;
    api.on('post', path, () => {
      // Let time pass on the server side so each attempt needs a new X-Timestamp.
      clock.time += 5_000;
      return ++n < 3 ? { status: 503, body: { error: 'Service Unavailable' } } : { body: body as never };
    });
    await call(client());

    expect(api.seen).toHaveLength(3);
    const keys = header('Idempotency-Key');
    expect(keys[0]).toMatch(UUID);
    expect(new Set(keys).size).toBe(1);

    const stamps = header('X-Timestamp').map(Number);
    expect(stamps[0]).toBe(Math.floor(Date.UTC(2026, 10, 22, 12, 0, 0) / 1000));
    expect(stamps[1]).toBeGreaterThan(stamps[0]!);
    expect(stamps[2]).toBeGreaterThan(stamps[1]!);
    expect(new Set(header('X-Signature')).size).toBe(3);
    expect(api.seen.every((r) => r.signatureValid)).toBe(true);
    // The body is byte for byte the same on every attempt.
    expect(new Set(api.seen.map((r) => r.rawBody)).size).toBe(1);
  });

  test('the same key survives network errors and timeouts too', async () => {
    const keys: Array<string | null> = [];
    let n = 0;
    api.use(http.post(`${BASE_URL}/api/v1/payments`, async ({ request }) => {
      keys.push(request.headers.get('idempotency-key'));
      n++;
      if (n === 1) return HttpResponse.error();
      if (n === 2) await delay('infinite');
      return HttpResponse.json(createBody);
    }));
    const payment = await client({ timeout: 50 }).payments.create(createParams);
    expect(payment.trx_id).toBe('TRX123456');
    expect(keys).toHaveLength(3);
    expect(keys[0]).toMatch(UUID);
    expect(new Set(keys).size).toBe(1);
  });

  test("the caller's idempotencyKey is used on every attempt", async () => {
    api.sequence('post', '/api/v1/payments', [{ status: 500 }, { body: createBody }]);
    await client().payments.create(createParams, { idempotencyKey: 'order-1001-attempt' });
    expect(header('Idempotency-Key')).toEqual(['order-1001-attempt', 'order-1001-attempt']);
  });

  test('two separate create calls get different keys', async () => {
    api.on('post', '/api/v1/payments', { body: createBody });
    const c = client();
    await c.payments.create(createParams);
    await c.payments.create(createParams);
    const [a, b] = header('Idempotency-Key');
    expect(a).toMatch(UUID);
    expect(b).toMatch(UUID);
    expect(a).not.toBe(b);
  });

  test('create is not retried on a 4xx', async () => {
    api.on('post', '/api/v1/payments', { status: 422, body: { error: 'Currency is not enabled for this merchant' } });
    await rejection(client().payments.create(createParams));
    expect(api.seen).toHaveLength(1);
  });
});

describe('payments.push (not idempotent)', () => {
  const push = (c: PaymentsClient) => c.payments.push('TRX123456', { customer_phone: '255712345678' });

  test.each([500, 502, 503, 504, 408])('NOT retried on %i', async (status) => {
    api.on('post', '/api/v1/payments/:id/push', { status, body: { error: 'Server Error' } });
    const error = await rejection(push(client()));
    expect(error).toBeInstanceOf(APIError);
    expect(error.status).toBe(status);
    expect(api.seen).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
  });

  test('NOT retried on a generic network error (the server may have rung the phone)', async () => {
    let attempts = 0;
    api.use(http.post(`${BASE_URL}/api/v1/payments/:id/push`, () => {
      attempts++;
      return HttpResponse.error();
    }));
    const error = await rejection(push(client()));
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(attempts).toBe(1);
  });

  test('NOT retried on a timeout', async () => {
    api.on('post', '/api/v1/payments/:id/push', async () => {
      await delay('infinite');
      return {};
    });
    const error = await rejection(push(client({ timeout: 50 })));
    expect(error).toBeInstanceOf(APITimeoutError);
    expect(api.seen).toHaveLength(1);
  });

  test('retried on 429', async () => {
    api.sequence('post', '/api/v1/payments/:id/push', [
      { status: 429, body: { error: 'Too Many Requests' } },
      { status: 429, body: { error: 'Too Many Requests' }, headers: { 'Retry-After': '2' } },
      { body: { trx_id: 'TRX123456', status: 'pending' } },
    ]);
    const result = await push(client());
    expect(result.trx_id).toBe('TRX123456');
    expect(api.seen).toHaveLength(3);
    expect(clock.sleeps).toEqual([BACKOFF[0], 2000]);
    expect(api.seen.every((r) => r.signatureValid)).toBe(true);
  });

  test('retried when the connection is refused (a real ECONNREFUSED)', async () => {
    const port = await refusedPort();
    api.use(http.all(`http://127.0.0.1:${port}/*`, () => passthrough()));
    const counted = countingFetch();
    const c = client({ baseUrl: `http://127.0.0.1:${port}`, fetch: counted.fetch });

    const error = await rejection(push(c));
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error).not.toBeInstanceOf(APITimeoutError);
    expect(causeCodes(error)).toContain('ECONNREFUSED');
    expect(counted.calls).toEqual(Array(3).fill(`POST http://127.0.0.1:${port}/api/v1/payments/TRX123456/push`));
    expect(clock.sleeps).toEqual([BACKOFF[0], BACKOFF[1]]);
  });

  test('connection refused with maxRetries 0 → 1 attempt', async () => {
    const port = await refusedPort();
    api.use(http.all(`http://127.0.0.1:${port}/*`, () => passthrough()));
    const counted = countingFetch();
    const c = client({ baseUrl: `http://127.0.0.1:${port}`, fetch: counted.fetch, maxRetries: 0 });
    await rejection(push(c));
    expect(counted.calls).toHaveLength(1);
  });
});

describe('payout outcomes INPROGRESS / AMBIGUOUS', () => {
  test.each(['INPROGRESS', 'AMBIGUOUS'])('a 200 with %s is returned as is, 1 attempt', async (status) => {
    const body = { id: '123e4567-e89b-12d3-a456-426614174000', amount: 100, status };
    api.on('post', '/api/v1/payouts', { body });
    const payout = await client().payouts.create({ amount: 100 });
    expect(payout).toEqual(body);
    expect(api.seen).toHaveLength(1);
  });

  test.each([
    [500, { status: 'AMBIGUOUS', message: 'Upstream outcome unknown' }],
    [503, { error: 'Service Unavailable', status: 'AMBIGUOUS' }],
    [502, { error: 'Bad Gateway', data: { status: 'INPROGRESS' } }],
    [504, { error: 'Gateway Timeout', outcome: 'ambiguous' }],
  ])('a %i whose body says the outcome is unsettled is thrown after exactly 1 attempt', async (status, body) => {
    api.on('post', '/api/v1/payouts', { status, body });
    const error = await rejection(client({ maxRetries: 5 }).payouts.create({ amount: 100 }));
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error.status).toBe(status);
    expect(error.body).toEqual(body);
    expect(api.seen).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
  });

  test('a plain payout 503 (no outcome) is retried with the same key', async () => {
    api.on('post', '/api/v1/payouts', { status: 503, body: { error: 'Service Unavailable' } });
    await rejection(client().payouts.create({ amount: 100 }));
    expect(api.seen).toHaveLength(3);
    expect(new Set(header('Idempotency-Key')).size).toBe(1);
  });
});

describe('timeouts (tiny real timeouts)', () => {
  test('a server that never answers → APITimeoutError after the retries', async () => {
    api.on('get', '/api/v1/balance', async () => {
      await delay('infinite');
      return {};
    });
    const error = await rejection(client({ timeout: 50 }).balance.retrieve());
    expect(error).toBeInstanceOf(APITimeoutError);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error.message).toContain('50 ms');
    expect(api.seen).toHaveLength(3);
    expect(clock.sleeps).toEqual([BACKOFF[0], BACKOFF[1]]);
  });

  test('per-call timeout', async () => {
    api.on('get', '/api/v1/balance', async () => {
      await delay('infinite');
      return {};
    });
    const error = await rejection(client().balance.retrieve({ timeout: 30, maxRetries: 0 }));
    expect(error).toBeInstanceOf(APITimeoutError);
    expect(error.message).toContain('30 ms');
    expect(api.seen).toHaveLength(1);
  });

  test('a body that stalls after the headers also times out (and is retried)', async () => {
    let attempts = 0;
    api.use(http.get(`${BASE_URL}/api/v1/balance`, () => {
      attempts++;
      const stalled = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"wallets": ['));
        },
      });
      // A Content-Length the body never reaches. (Without one, msw's mock socket reports a
      // read-until-close body as complete after the client aborted, tripping an undici assert.)
      return new HttpResponse(stalled, { status: 200, headers: { 'content-type': 'application/json', 'content-length': '1000' } });
    }));
    const error = await rejection(client({ timeout: 50, maxRetries: 1 }).balance.retrieve());
    expect(error).toBeInstanceOf(APITimeoutError);
    expect(attempts).toBe(2);
  }, 2_000);
});

describe('AbortSignal', () => {
  test('an already aborted signal: APIUserAbortError, nothing sent', async () => {
    api.on('get', '/api/v1/balance', { body: {} });
    const controller = new AbortController();
    controller.abort(new Error('user gave up'));
    const error = await rejection(client().balance.retrieve({ signal: controller.signal }));
    expect(error).toBeInstanceOf(APIUserAbortError);
    expect(api.seen).toHaveLength(0);
  });

  test('aborted during the backoff wait: no further attempts', async () => {
    const controller = new AbortController();
    clock.sleep = async (_ms: number, signal?: AbortSignal) => {
      controller.abort();
      if (signal?.aborted) throw signal.reason;
    };
    api.on('get', '/api/v1/balance', { status: 503 });
    const error = await rejection(client().balance.retrieve({ signal: controller.signal }));
    expect(error).toBeInstanceOf(APIUserAbortError);
    expect(error).not.toBeInstanceOf(APIConnectionError);
    expect(api.seen).toHaveLength(1);
  });

  test('aborted while the request is in flight: no further attempts', async () => {
    const controller = new AbortController();
    api.on('post', '/api/v1/payments', async () => {
      controller.abort();
      await delay('infinite');
      return {};
    });
    const error = await rejection(client().payments.create(createParams, { signal: controller.signal }));
    expect(error).toBeInstanceOf(APIUserAbortError);
    expect(api.seen).toHaveLength(1);
  });
});
