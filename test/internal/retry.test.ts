// Retries, backoff, Retry-After, idempotency keys, push safety, payout outcomes, timeouts, abort,
// redirects, and what every error of a call carries (attempts, idempotencyKey).
// Time is virtual (the harness runs fake timers from START, Math.random is 0.5): waits pass
// inside settle()/rejection(), and gaps(api.seen) gives the ms between attempts.
import { createServer } from 'node:http';
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
  InvalidParamsError,
  NotFoundError,
  PaymentsClient,
  PermissionDeniedError,
  RateLimitError,
  ResponseValidationError,
  UnprocessableEntityError,
  type ClientOptions,
} from '../../src/index.js';
import { gaps, rejection, settle, UUID } from '../support/assertions.js';
import { BASE_URL, fixtures, START } from '../support/fake-api.js';
import { useFakeApi } from '../support/harness.js';

const { api, setup } = useFakeApi();
beforeEach(() => vi.stubEnv('BUSINESS_PAYMENTS_LOG', ''));

function client(options: ClientOptions = {}): PaymentsClient {
  return setup(options).client;
}

/** A fetch that counts its calls (and when they were made) and hands them to the global (msw-patched) fetch. */
function countingFetch() {
  const calls: string[] = [];
  const times: { at: number }[] = [];
  const wrapped: typeof fetch = (input, init) => {
    calls.push(input instanceof Request ? `${input.method} ${input.url}` : String(input));
    times.push({ at: Date.now() });
    return fetch(input, init);
  };
  return { calls, times, fetch: wrapped };
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
// Backoff with Math.random() = 0.5: min(500 * 2^(n-1), 8000) * (1 - 0.25 * 0.5), that is
// 437.5, 875, 1750, 3500, 7000, 7000 ms. setTimeout (Node's and the fake one alike) waits
// whole milliseconds, so the first wait shows as a 437 ms gap between attempts.
const BACKOFF = [500 * 0.875, 1000 * 0.875, 2000 * 0.875, 4000 * 0.875, 8000 * 0.875, 8000 * 0.875].map(Math.trunc);

describe('GET (safe) retries', () => {
  test.each([408, 429, 500, 502, 503, 504])('retried on %i: maxRetries 2 by default → 3 attempts', async (status) => {
    api.on('get', '/api/v1/balance', { status, body: { error: 'Try later', message: 'transient' } });
    const error = await rejection(client().balance.retrieve());
    expect(error).toBeInstanceOf(APIError);
    expect(error.status).toBe(status);
    expect(error.attempts).toBe(3);
    expect(api.seen).toHaveLength(3);
    expect(gaps(api.seen)).toEqual([BACKOFF[0], BACKOFF[1]]);
  });

  test('a retry that succeeds returns the data', async () => {
    api.sequence('get', '/api/v1/site-info', [{ status: 503 }, { status: 502 }, { body: fixtures.siteInfo }]);
    const info = await settle(client().siteInfo.retrieve());
    expect(info.site_name).toBe('Business Payments');
    expect(api.seen).toHaveLength(3);
    expect(gaps(api.seen)).toEqual([BACKOFF[0], BACKOFF[1]]);
  });

  test('retried on a network error: 3 attempts, then APIConnectionError', async () => {
    const attempts: { at: number }[] = [];
    api.use(
      http.get(`${BASE_URL}/api/v1/balance`, () => {
        attempts.push({ at: Date.now() });
        return HttpResponse.error();
      }),
    );
    const error = await rejection(client().balance.retrieve());
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error).not.toBeInstanceOf(APITimeoutError);
    expect(error.message).toContain('balance.retrieve');
    expect(attempts).toHaveLength(3);
    expect(error.attempts).toBe(3);
    expect(gaps(attempts)).toEqual([BACKOFF[0], BACKOFF[1]]);
  });

  test('client-level maxRetries: exponential backoff up to the 8 s cap', async () => {
    api.on('get', '/api/v1/balance', { status: 500 });
    const error = await rejection(client({ maxRetries: 6 }).balance.retrieve());
    expect(api.seen).toHaveLength(7);
    expect(error.attempts).toBe(7);
    expect(gaps(api.seen).slice(0, 5)).toEqual(BACKOFF.slice(0, 5));
  });

  // Regression: ky applies `backoffLimit` after the jitter, so an uncapped `delay` gave
  // min(8000, 16000 * 0.875) = 8000 ms from the 6th retry on, with no jitter at all (every
  // client retrying in lockstep). Capped before the jitter it is 7000.
  test('the cap applies before the jitter (6th wait 7000 ms, not 8000)', async () => {
    api.on('get', '/api/v1/balance', { status: 500 });
    await rejection(client({ maxRetries: 6 }).balance.retrieve());
    expect(api.seen).toHaveLength(7);
    expect(gaps(api.seen)).toEqual(BACKOFF);
  });

  test('client-level maxRetries 0 → exactly 1 attempt', async () => {
    api.on('get', '/api/v1/balance', { status: 503 });
    const error = await rejection(client({ maxRetries: 0 }).balance.retrieve());
    expect(api.seen).toHaveLength(1);
    expect(error.attempts).toBe(1);
    expect(Date.now()).toBe(START);
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
    expect(error.attempts).toBe(1);
    // No wait happened: the call ended where it began on the virtual clock.
    expect(Date.now()).toBe(START);
  });

  test('a GET carries no Idempotency-Key', async () => {
    api.on('get', '/api/v1/balance', { body: [] });
    await settle(client().balance.retrieve());
    expect(api.seen[0]!.headers['idempotency-key']).toBeUndefined();
  });
});

describe('Retry-After', () => {
  test('seconds are honoured instead of the backoff', async () => {
    api.sequence('get', '/api/v1/balance', [
      { status: 429, body: { error: 'Too Many Requests' }, headers: { 'Retry-After': '3' } },
      { status: 503, headers: { 'Retry-After': '7' } },
      { body: [] },
    ]);
    await settle(client().balance.retrieve());
    expect(api.seen).toHaveLength(3);
    expect(gaps(api.seen)).toEqual([3000, 7000]);
  });

  test('an HTTP-date is honoured (measured on the client clock)', async () => {
    const at = new Date(Date.now() + 5000).toUTCString();
    api.sequence('get', '/api/v1/balance', [
      { status: 429, body: { error: 'Too Many Requests' }, headers: { 'Retry-After': at } },
      { body: [] },
    ]);
    await settle(client().balance.retrieve());
    expect(gaps(api.seen)).toEqual([5000]);
  });

  test('exactly 60 s is still waited out', async () => {
    api.sequence('get', '/api/v1/balance', [{ status: 429, headers: { 'Retry-After': '60' } }, { body: [] }]);
    await settle(client().balance.retrieve());
    expect(gaps(api.seen)).toEqual([60_000]);
  });

  test('more than 60 s (seconds) is not waited out: RateLimitError at once with retryAfter', async () => {
    api.on('get', '/api/v1/balance', { status: 429, body: { error: 'Too Many Requests' }, headers: { 'Retry-After': '120' } });
    const error = await rejection(client().balance.retrieve());
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.retryAfter).toBe(120);
    expect(error.attempts).toBe(1);
    expect(api.seen).toHaveLength(1);
    expect(Date.now()).toBe(START);
  });

  test('more than 60 s (HTTP-date) is not waited out either', async () => {
    const at = new Date(Date.now() + 3_600_000).toUTCString();
    api.on('get', '/api/v1/balance', { status: 429, body: { error: 'Too Many Requests' }, headers: { 'Retry-After': at } });
    const error = await rejection(client().balance.retrieve());
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.retryAfter).toBe(3600);
    expect(api.seen).toHaveLength(1);
    expect(Date.now()).toBe(START);
  });

  // Regression: ky also honours the obsolete HTTP-date forms (asctime, RFC 850) and the
  // rate-limit reset headers; the SDK's reading must match, or shouldRetry cannot veto a long
  // wait (ky would cut it to 60 s, wait that out and retry).
  test.each([
    ['an asctime HTTP-date', { 'Retry-After': 'Sun Nov 22 13:00:00 2026' }, 3600],
    ['an RFC 850 HTTP-date', { 'Retry-After': 'Sunday, 22-Nov-26 13:00:00 GMT' }, 3600],
    ['X-RateLimit-Reset seconds', { 'X-RateLimit-Reset': '120' }, 120],
    ['RateLimit-Reset seconds', { 'RateLimit-Reset': '120' }, 120],
    ['X-RateLimit-Reset as an epoch time', { 'X-RateLimit-Reset': String(START / 1000 + 90) }, 90],
  ])('more than 60 s as %s is not waited out either', async (_, headers, seconds) => {
    api.sequence('get', '/api/v1/balance', [{ status: 429, body: { error: 'Too Many Requests' }, headers }, { body: [] }]);
    const error = await rejection(client().balance.retrieve());
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.retryAfter).toBe(seconds);
    expect(api.seen).toHaveLength(1);
    expect(Date.now()).toBe(START);
  });

  test('Retry-After on a status that is not retried changes nothing', async () => {
    api.on('get', '/api/v1/balance', { status: 404, headers: { 'Retry-After': '1' } });
    await rejection(client().balance.retrieve());
    expect(api.seen).toHaveLength(1);
    expect(Date.now()).toBe(START);
  });

  // Regression: these used to go through Date.parse, which reads "-5" as May 2001 (a past
  // date), so the retry came at once (0 ms). They are no hint: the normal backoff applies.
  test.each(['-5', '-1', '1,2'])('a Retry-After of %j on a 503 is no hint: normal backoff (437.5 ms), not ~0', async (value) => {
    api.sequence('get', '/api/v1/balance', [{ status: 503, headers: { 'Retry-After': value } }, { body: [] }]);
    await settle(client().balance.retrieve());
    expect(api.seen).toHaveLength(2);
    expect(gaps(api.seen)).toEqual([BACKOFF[0]]);
  });

  test('garbage ("soon") is no hint either: normal backoff, and no retryAfter on the error', async () => {
    api.on('get', '/api/v1/balance', { status: 429, body: { error: 'Too Many Requests' }, headers: { 'Retry-After': 'soon' } });
    const error = await rejection(client().balance.retrieve());
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.retryAfter).toBeUndefined();
    expect(api.seen).toHaveLength(3);
    expect(gaps(api.seen)).toEqual([BACKOFF[0], BACKOFF[1]]);
  });

  // Regression: retry-after-ms used to win over the backoff; it is no longer read.
  test('retry-after-ms is not read: normal backoff', async () => {
    api.sequence('get', '/api/v1/balance', [{ status: 503, headers: { 'retry-after-ms': '10' } }, { body: [] }]);
    await settle(client().balance.retrieve());
    expect(gaps(api.seen)).toEqual([BACKOFF[0]]);
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
    [
      'billing.plans.create',
      '/api/v1/billing/plans',
      (c) => c.billing.plans.create({ plan_code: 'gold', name: 'Gold', amount: 10 }),
      { plan_code: 'gold', amount: 10, currency: 'TZS', interval: 'month' },
    ],
    [
      'billing.subscriptions.create',
      '/api/v1/billing/subscriptions',
      (c) => c.billing.subscriptions.create({ plan_code: 'gold', customer_phone: '255712345678', terms_shown: 'TZS 10,000 monthly' }),
      { id: 'sub_1', plan_code: 'gold', status: 'active' },
    ],
  ];

  test.each(cases)('%s: same key on every attempt, every attempt signed afresh and valid', async (_name, path, call, body) => {
    let n = 0;
    api.on('post', path, () => {
      // Let time pass on the server side so each attempt needs a new X-Timestamp (the
      // backoff alone may stay inside one second). Pending timers keep their delays.
      vi.setSystemTime(Date.now() + 5_000);
      // A subscription rings a phone: retried only after a 429 (a 503 may have rung it).
      const refused = path.includes('subscriptions')
        ? { status: 429, body: { error: 'Too Many Requests' } }
        : { status: 503, body: { error: 'Service Unavailable' } };
      return ++n < 3 ? refused : { body: body as never };
    });
    await settle(call(client()));

    expect(api.seen).toHaveLength(3);
    const keys = header('Idempotency-Key');
    expect(keys[0]).toMatch(UUID);
    expect(new Set(keys).size).toBe(1);

    const stamps = header('X-Timestamp').map(Number);
    expect(stamps[0]).toBe(Math.floor(START / 1000));
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
    api.use(
      http.post(`${BASE_URL}/api/v1/payments`, async ({ request }) => {
        keys.push(request.headers.get('idempotency-key'));
        n++;
        if (n === 1) return HttpResponse.error();
        if (n === 2) await delay('infinite');
        return HttpResponse.json(createBody);
      }),
    );
    const payment = await settle(client({ timeout: 50 }).payments.create(createParams));
    expect(payment.trx_id).toBe('TRX123456');
    expect(keys).toHaveLength(3);
    expect(keys[0]).toMatch(UUID);
    expect(new Set(keys).size).toBe(1);
  });

  test("the caller's idempotencyKey is used on every attempt", async () => {
    api.sequence('post', '/api/v1/payments', [{ status: 500 }, { body: createBody }]);
    await settle(client().payments.create(createParams, { idempotencyKey: 'order-1001-attempt' }));
    expect(header('Idempotency-Key')).toEqual(['order-1001-attempt', 'order-1001-attempt']);
  });

  test('two separate create calls get different keys', async () => {
    api.on('post', '/api/v1/payments', { body: createBody });
    const c = client();
    await settle(c.payments.create(createParams));
    await settle(c.payments.create(createParams));
    const [a, b] = header('Idempotency-Key');
    expect(a).toMatch(UUID);
    expect(b).toMatch(UUID);
    expect(a).not.toBe(b);
  });

  test('create is not retried on a 4xx', async () => {
    api.on('post', '/api/v1/payments', { status: 422, body: { error: 'Currency is not enabled for this merchant' } });
    const error = await rejection(client().payments.create(createParams));
    expect(error).toBeInstanceOf(UnprocessableEntityError);
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
    expect(error.attempts).toBe(1);
    expect(api.seen).toHaveLength(1);
    expect(Date.now()).toBe(START);
  });

  test('NOT retried on a generic network error (the server may have rung the phone)', async () => {
    let attempts = 0;
    api.use(
      http.post(`${BASE_URL}/api/v1/payments/:id/push`, () => {
        attempts++;
        return HttpResponse.error();
      }),
    );
    const error = await rejection(push(client()));
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(attempts).toBe(1);
    expect(error.attempts).toBe(1);
  });

  test('NOT retried on a timeout', async () => {
    api.on('post', '/api/v1/payments/:id/push', async () => {
      await delay('infinite');
      return {};
    });
    const error = await rejection(push(client({ timeout: 50 })));
    expect(error).toBeInstanceOf(APITimeoutError);
    expect(api.seen).toHaveLength(1);
    expect(error.attempts).toBe(1);
  });

  test('retried on 429', async () => {
    api.sequence('post', '/api/v1/payments/:id/push', [
      { status: 429, body: { error: 'Too Many Requests' } },
      { status: 429, body: { error: 'Too Many Requests' }, headers: { 'Retry-After': '2' } },
      { body: { trx_id: 'TRX123456', status: 'pending' } },
    ]);
    const result = await settle(push(client()));
    expect(result.trx_id).toBe('TRX123456');
    expect(api.seen).toHaveLength(3);
    expect(gaps(api.seen)).toEqual([BACKOFF[0], 2000]);
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
    expect(error.attempts).toBe(3);
    expect(gaps(counted.times)).toEqual([BACKOFF[0], BACKOFF[1]]);
  });

  test('connection refused with maxRetries 0 → 1 attempt', async () => {
    const port = await refusedPort();
    api.use(http.all(`http://127.0.0.1:${port}/*`, () => passthrough()));
    const counted = countingFetch();
    const c = client({ baseUrl: `http://127.0.0.1:${port}`, fetch: counted.fetch, maxRetries: 0 });
    const error = await rejection(push(c));
    expect(counted.calls).toHaveLength(1);
    expect(error.attempts).toBe(1);
  });
});

describe('payout outcomes INPROGRESS / AMBIGUOUS', () => {
  test.each(['INPROGRESS', 'AMBIGUOUS'])('a 200 with %s is returned as is, 1 attempt', async (status) => {
    const body = { id: '123e4567-e89b-12d3-a456-426614174000', amount: 100, status };
    api.on('post', '/api/v1/payouts', { body });
    const payout = await settle(client().payouts.create({ amount: 100 }));
    expect(payout).toEqual(body);
    expect(api.seen).toHaveLength(1);
  });

  test.each([
    [500, { status: 'AMBIGUOUS', message: 'Upstream outcome unknown' }],
    [503, { error: 'Service Unavailable', status: 'AMBIGUOUS' }],
    [502, { error: 'Bad Gateway', data: { status: 'INPROGRESS' } }],
    [504, { error: 'Gateway Timeout', outcome: 'ambiguous' }],
    // Regression: the outcome nested one wrapper deeper (`payout`, or `data.payout`) used to
    // be missed, and the payout was sent again.
    [503, { payout: { status: 'INPROGRESS' } }],
    [503, { data: { payout: { outcome: 'ambiguous' } } }],
  ])('a %i whose body says the outcome is unsettled (%j) is thrown after exactly 1 attempt', async (status, body) => {
    api.on('post', '/api/v1/payouts', { status, body });
    const error = await rejection(client({ maxRetries: 5 }).payouts.create({ amount: 100 }));
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error.status).toBe(status);
    expect(error.body).toEqual(body);
    expect(error.attempts).toBe(1);
    expect(error.idempotencyKey).toBe(api.seen[0]!.headers['idempotency-key']);
    expect(api.seen).toHaveLength(1);
    expect(Date.now()).toBe(START);
  });

  // A payout 5xx used to be retried unless its body held exactly INPROGRESS or
  // AMBIGUOUS: against a server that stores only 2xx answers per key, 3 attempts made 3
  // transfers. Money out is now retried only when it provably never left, or on 429.
  test.each([
    [500, { error: 'Payout Ambiguous', message: 'network did not confirm' }],
    [500, { status: 'IN_PROGRESS' }],
    [500, { code: 'TRANSACTION_AMBIGUOUS' }],
    [503, { error: 'Service Unavailable' }],
    [502, '<html>Bad Gateway</html>'],
  ])('a payout %i (%j) is thrown after exactly 1 attempt, with the key and how to look it up', async (status, body) => {
    api.on('post', '/api/v1/payouts', { status, body: body as never });
    const error = await rejection(client({ maxRetries: 5 }).payouts.create({ amount: 100 }));
    expect(error).toBeInstanceOf(InternalServerError);
    expect(api.seen).toHaveLength(1);
    expect(error.attempts).toBe(1);
    expect(error.idempotencyKey).toBe(api.seen[0]!.headers['idempotency-key']);
    expect(error.message).toContain('client.payouts.list()');
    expect(error.message).toContain(error.idempotencyKey);
    const unsettled = typeof body === 'object' && /ambiguous|in_progress/i.test(JSON.stringify(body));
    expect(error.message).toContain(unsettled ? 'Its outcome is' : 'a payout may have been made');
  });

  test('a payout timeout is not retried: the payout may have been made', async () => {
    api.on('post', '/api/v1/payouts', async () => {
      await delay('infinite');
      return {};
    });
    const error = await rejection(client({ timeout: 50 }).payouts.create({ amount: 100 }));
    expect(error).toBeInstanceOf(APITimeoutError);
    expect(api.seen).toHaveLength(1);
    expect(error.message).toContain('a payout may have been made');
  });

  test('a payout refused with 422 gets no look-it-up hint (nothing moved)', async () => {
    api.on('post', '/api/v1/payouts', { status: 422, body: { error: 'Payout Rejected', message: 'KYB approval required' } });
    const error = await rejection(client().payouts.create({ amount: 100 }));
    expect(error.message).not.toContain('payouts.list');
    expect(api.seen).toHaveLength(1);
  });

  test('a payout 429 is retried with the same key (the server refused it unprocessed)', async () => {
    api.sequence('post', '/api/v1/payouts', [
      { status: 429, body: { error: 'Too Many Requests' }, headers: { 'retry-after': '1' } },
      { body: { id: '123e4567-e89b-12d3-a456-426614174000', amount: 100, status: 'SUCCESS' } },
    ]);
    const payout = await settle(client().payouts.create({ amount: 100 }));
    expect(payout.status).toBe('SUCCESS');
    expect(api.seen).toHaveLength(2);
    expect(new Set(header('Idempotency-Key')).size).toBe(1);
  });

  test('a payout 429 whose body names an unsettled outcome is not retried', async () => {
    api.on('post', '/api/v1/payouts', { status: 429, body: { error: 'Too Many Requests', payout: { status: 'IN-PROGRESS' } } });
    const error = await rejection(client().payouts.create({ amount: 100 }));
    expect(error).toBeInstanceOf(RateLimitError);
    expect(api.seen).toHaveLength(1);
    expect(error.message).toContain('Its outcome is INPROGRESS');
  });

  test.each([
    [{ status: 'success', payout_status: 'AMBIGUOUS', amount: 100 }, 'AMBIGUOUS'],
    [{ status: 'success', data: { payout_id: '123e4567-e89b-12d3-a456-426614174000', amount: 100, status: 'IN_PROGRESS' } }, 'INPROGRESS'],
    [{ status: 'success', data: { id: 'p1', status: 'SUCCESSFUL' } }, 'SUCCESS'],
    [{ id: 'p1', state: 'processing' }, 'INPROGRESS'],
    [{ id: 'p1', status: 'FAILED', message: 'ambiguous upstream' }, 'AMBIGUOUS'],
  ])("a 2xx payout %j reads as %s (the envelope status is never the payout's)", async (body, status) => {
    api.on('post', '/api/v1/payouts', { body });
    const payout = await settle(client().payouts.create({ amount: 100 }));
    expect(payout.status).toBe(status);
    expect(api.seen).toHaveLength(1);
  });

  test('a 200 that says the payout failed is an APIError, not a payout', async () => {
    api.on('post', '/api/v1/payouts', { body: { status: 'error', message: 'Insufficient balance' } });
    const error = await rejection(client().payouts.create({ amount: 100 }));
    expect(error.constructor).toBe(APIError);
    expect(error.status).toBe(200);
    expect(error.message).toContain('Insufficient balance');
    expect(error.message).not.toContain('payouts.list');
  });
});

describe('timeouts (virtual time)', () => {
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
    // Each attempt waits out its 50 ms timeout, then the backoff.
    expect(gaps(api.seen)).toEqual([50 + BACKOFF[0]!, 50 + BACKOFF[1]!]);
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

  // Changed: this used to be retried. ky's body-read timeout sits outside its retry loop, so
  // a body that stalls after the headers now fails that one attempt, and says so.
  test('a body that stalls after the headers times out, and is not retried', async () => {
    let attempts = 0;
    api.use(
      http.get(`${BASE_URL}/api/v1/balance`, () => {
        attempts++;
        const stalled = new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('{"wallets": ['));
          },
        });
        // A Content-Length the body never reaches. (Without one, msw's mock socket reports a
        // read-until-close body as complete after the client aborted, tripping an undici assert.)
        return new HttpResponse(stalled, { status: 200, headers: { 'content-type': 'application/json', 'content-length': '1000' } });
      }),
    );
    // maxRetries 1: a retry was allowed, and still not made.
    const error = await rejection(client({ timeout: 50, maxRetries: 1 }).balance.retrieve());
    expect(error).toBeInstanceOf(APITimeoutError);
    expect(error.message).toContain('timed out while reading the response body: an attempt ran past the per-attempt timeout of 50 ms');
    expect(attempts).toBe(1);
    expect(error.attempts).toBe(1);
  }, 2_000);

  test('a body reset after the headers (a real socket): APIConnectionError, not retried', async () => {
    let attempts = 0;
    const server = createServer((_req, res) => {
      attempts++;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"wallets": [', () => setImmediate(() => res.socket?.destroy()));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    api.use(http.all(`${origin}/*`, () => passthrough()));
    try {
      const error = await rejection(client({ baseUrl: origin, maxRetries: 1 }).balance.retrieve());
      expect(error).toBeInstanceOf(APIConnectionError);
      expect(error).not.toBeInstanceOf(APITimeoutError);
      expect(error.message).toContain('the connection broke while reading the response body');
      expect(attempts).toBe(1);
      expect(error.attempts).toBe(1);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }, 2_000);
});

describe('AbortSignal', () => {
  test('an already aborted signal: APIUserAbortError, nothing sent', async () => {
    api.on('get', '/api/v1/balance', { body: [] });
    const controller = new AbortController();
    controller.abort(new Error('user gave up'));
    const error = await rejection(client().balance.retrieve({ signal: controller.signal }));
    expect(error).toBeInstanceOf(APIUserAbortError);
    expect(api.seen).toHaveLength(0);
  });

  // Regression: ky calls fetch even with an already aborted signal (fetch then rejects
  // without sending); that is not an attempt.
  test('an already aborted signal reports attempts 0', async () => {
    api.on('get', '/api/v1/balance', { body: [] });
    const controller = new AbortController();
    controller.abort(new Error('user gave up'));
    const error = await rejection(client().balance.retrieve({ signal: controller.signal }));
    expect(error).toBeInstanceOf(APIUserAbortError);
    expect(api.seen).toHaveLength(0);
    expect(error.attempts).toBe(0);
  });

  test('aborted during the backoff wait: no further attempts', async () => {
    const controller = new AbortController();
    api.on('get', '/api/v1/balance', () => {
      // 100 ms into the 437.5 ms backoff wait.
      setTimeout(() => controller.abort(), 100);
      return { status: 503 };
    });
    const error = await rejection(client().balance.retrieve({ signal: controller.signal }));
    expect(error).toBeInstanceOf(APIUserAbortError);
    expect(error).not.toBeInstanceOf(APIConnectionError);
    expect(api.seen).toHaveLength(1);
    expect(error.attempts).toBe(1);
    // The wait was cut short by the abort, not waited out.
    expect(Date.now()).toBe(START + 100);
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
    expect(error.attempts).toBe(1);
  });
});

// Regression: errors used to carry neither; a merchant could not tell how many attempts
// were made, nor which key to retry with, without parsing logs.
describe('every error of a create carries idempotencyKey and attempts', () => {
  /** The key on the error is the one every attempt sent, and `attempts` counts them. */
  function expectKeyOfEveryAttempt(error: { attempts?: number; idempotencyKey?: string }, sent: Array<string | null | undefined>): void {
    expect(error.attempts).toBe(sent.length);
    expect(error.idempotencyKey).toMatch(UUID);
    expect(sent).toEqual(Array(sent.length).fill(error.idempotencyKey));
  }

  test('APIError after the retries', async () => {
    api.on('post', '/api/v1/payments', { status: 503, body: { error: 'Service Unavailable' } });
    const error = await rejection(client().payments.create(createParams));
    expect(error).toBeInstanceOf(InternalServerError);
    expect(api.seen).toHaveLength(3);
    expectKeyOfEveryAttempt(error, header('Idempotency-Key'));
  });

  test('APIConnectionError', async () => {
    const keys: Array<string | null> = [];
    api.use(
      http.post(`${BASE_URL}/api/v1/payments`, ({ request }) => {
        keys.push(request.headers.get('idempotency-key'));
        return HttpResponse.error();
      }),
    );
    const error = await rejection(client().payments.create(createParams));
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error).not.toBeInstanceOf(APITimeoutError);
    expect(keys).toHaveLength(3);
    expectKeyOfEveryAttempt(error, keys);
  });

  test('APITimeoutError', async () => {
    api.on('post', '/api/v1/payments', async () => {
      await delay('infinite');
      return {};
    });
    const error = await rejection(client({ timeout: 50 }).payments.create(createParams));
    expect(error).toBeInstanceOf(APITimeoutError);
    expect(api.seen).toHaveLength(3);
    expectKeyOfEveryAttempt(error, header('Idempotency-Key'));
  });

  test('InvalidParamsError: 0 attempts, and the key that would have been sent', async () => {
    api.on('post', '/api/v1/payments', { body: createBody });
    const error = await rejection(client().payments.create({ ...createParams, payment_amount: 0 }));
    expect(error).toBeInstanceOf(InvalidParamsError);
    expect(api.seen).toHaveLength(0);
    expect(error.attempts).toBe(0);
    expect(error.idempotencyKey).toMatch(UUID);

    const mine = await rejection(
      client().payments.create({ ...createParams, payment_amount: 0 }, { idempotencyKey: 'order-1001-attempt' }),
    );
    expect(mine).toBeInstanceOf(InvalidParamsError);
    expect(mine.attempts).toBe(0);
    expect(mine.idempotencyKey).toBe('order-1001-attempt');
  });

  test('ResponseValidationError: a 200 without any trx_id; the server may have acted', async () => {
    const { trx_id: _dropped, ...payment } = fixtures.payment;
    api.on('post', '/api/v1/payments', { body: { status: 'success', data: payment } });
    const error = await rejection(client().payments.create(createParams));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.errors).toHaveProperty(['trx_id']);
    expect(error.serverMayHaveActed).toBe(true);
    expect(api.seen).toHaveLength(1);
    expect(error.attempts).toBe(api.seen.length);
    expect(error.idempotencyKey).toBe(api.seen[0]!.headers['idempotency-key']);
    expect(error.idempotencyKey).toMatch(UUID);
  });

  test('ResponseValidationError on a GET (balance.retrieve answered non-JSON): the server did not act, no key', async () => {
    api.on('get', '/api/v1/balance', { body: '<html>maintenance</html>' });
    const error = await rejection(client().balance.retrieve());
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.serverMayHaveActed).toBe(false);
    expect(api.seen).toHaveLength(1);
    expect(error.attempts).toBe(1);
    expect(error.idempotencyKey).toBeUndefined();
  });
});

// Regression: redirects used to be followed (with the credentials and the body).
describe('a 3xx is refused: never followed, never retried', () => {
  const calls = {
    'GET balance.retrieve': ['get', '/api/v1/balance', (c: PaymentsClient) => c.balance.retrieve()],
    'POST payments.create': ['post', '/api/v1/payments', (c: PaymentsClient) => c.payments.create(createParams)],
  } as const;
  const cases = [301, 302, 307, 308].flatMap((status) => Object.entries(calls).map(([name, route]) => [status, name, ...route] as const));

  test.each(cases)('%i on %s: one attempt, an APIError naming the Location origin', async (status, _name, method, path, call) => {
    const evil: string[] = [];
    api.use(
      http.all('https://evil.example/*', ({ request }) => {
        evil.push(`${request.method} ${request.url}`);
        return HttpResponse.json(createBody);
      }),
    );
    api.on(method, path, { status, body: {}, headers: { Location: 'https://evil.example/steal' } });
    const counted = countingFetch();

    const error = await rejection(call(client({ fetch: counted.fetch, maxRetries: 5 })));
    expect(error).toBeInstanceOf(APIError);
    expect(error.status).toBe(status);
    expect(error.message).toContain('https://evil.example');
    expect(api.seen).toHaveLength(1);
    expect(error.attempts).toBe(1);
    expect(counted.calls).toEqual([`${method.toUpperCase()} ${BASE_URL}${path}`]);
    expect(counted.calls.some((c) => c.includes('evil.example'))).toBe(false);
    expect(evil).toEqual([]);
    expect(Date.now()).toBe(START);
  });
});

describe('the retry policy of a call', () => {
  test("each call has its own policy object (it carries that call's wait hint); a once-mode or push never retries a timeout", async () => {
    const { retryOptions } = await import('../../src/internal/retry.js');
    expect(retryOptions('create', 2)).not.toBe(retryOptions('create', 2));
    expect(retryOptions('create', 2).limit).toBe(2);
    // ky never reads a wait hint itself: the SDK's one reading reaches it as the delay.
    expect(retryOptions('create', 2).afterStatusCodes).toEqual([]);
    // A payout or a push never retries a timeout (it may have been acted on); a create does.
    expect([retryOptions('create', 2), retryOptions('once', 2), retryOptions('push', 2)].map((o) => o.retryOnTimeout)).toEqual([
      true,
      undefined,
      undefined,
    ]);
  });

  test('two routes with the same limit keep their own policies on one client (a 500 retries a create, never a payout)', async () => {
    api.on('post', '/api/v1/payments', { status: 500, body: { error: 'Server Error', message: 'boom' } });
    api.on('post', '/api/v1/payouts', { status: 500, body: { error: 'Server Error', message: 'boom' } });
    const { client } = setup({ maxRetries: 2 });
    await rejection(client.payments.create(createParams));
    const creates = api.seen.length;
    await rejection(client.payouts.create({ amount: 100 }));
    expect([creates, api.seen.length - creates]).toEqual([3, 1]);
  });
});
