// Hostile-server cases an adversarial review found on the client side: a phone rung twice,
// messages that say nothing was done when something may have been, customer data in logs and
// errors, a wait hint read two ways, a list walk without a memory bound. Each test fails on
// the code before these fixes (the name says what broke).
import fc from 'fast-check';
import { http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, test, vi } from 'vitest';
import {
  APIConnectionError,
  APIError,
  ConfigurationError,
  InternalServerError,
  PaginationError,
  PaymentsClient,
  RateLimitError,
  ResponseValidationError,
  type ClientOptions,
  type Logger,
} from '../../src/index.js';
import { rejection, settle } from '../support/assertions.js';
import { BASE_URL, CREDENTIALS, fixtures } from '../support/fake-api.js';
import { useFakeApi } from '../support/harness.js';

const { api, setup } = useFakeApi();
beforeEach(() => vi.stubEnv('BUSINESS_PAYMENTS_LOG', ''));

const client = (options: ClientOptions = {}): PaymentsClient => setup(options).client;
const createBody = { status: 'success', data: fixtures.payment, trx_id: 'TRX123456' };
const pushCreate = {
  payment_amount: 25,
  currency_code: 'TZS',
  ref_trx: 'order-1001~a1',
  payment_mode: 'push' as const,
  customer_phone: '255712345678',
};
const subscription = { plan_code: 'gold', customer_phone: '255712345678', terms_shown: 'TZS 10,000 monthly' };

/** A fetch that hands the request to the (msw) server, then loses the answer: the connection resets after the server acted. */
function resetAfterSending(): typeof fetch {
  return async (input, init) => {
    await fetch(input, init);
    throw new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });
  };
}

describe('a phone rings once: push-mode payments and subscriptions are sent again only when provably never sent, or after a 429', () => {
  // The server of the review: it keeps only 2xx answers per key, so every attempt that
  // reached it made a subscription and rang the phone.
  function storingOnly2xx(path: string, first: { status: number }) {
    let made = 0;
    api.on('post', path, () =>
      ++made === 1 ? { status: first.status, body: { error: 'Server Error' } } : { body: { id: `sub_${made}` } },
    );
    return () => made;
  }

  test.each([500, 502, 503, 504, 408])('billing.subscriptions.create answered %i: one attempt, one push', async (status) => {
    const made = storingOnly2xx('/api/v1/billing/subscriptions', { status });
    const error = await rejection(client({ maxRetries: 3 }).billing.subscriptions.create(subscription));
    expect(error).toBeInstanceOf(APIError);
    expect(made()).toBe(1);
    expect(error.attempts).toBe(1);
    expect(error.message).toContain("a subscription may have been created and the customer's phone may have rung");
    expect(error.message).toContain(`The SDK did not send it again; to retry, pass the same idempotencyKey (${error.idempotencyKey}).`);
    expect(error.idempotencyKey).toBeDefined();
  });

  test.each([500, 503, 408])('payments.create with payment_mode push answered %i: one attempt', async (status) => {
    const made = storingOnly2xx('/api/v1/payments', { status });
    const error = await rejection(client({ maxRetries: 3 }).payments.create(pushCreate));
    expect(made()).toBe(1);
    expect(error.message).toContain("the customer's phone may have rung: look it up with client.payments.list({ merchant_ref }) first");
    expect(error.message).not.toContain('Retry with the same idempotencyKey');
  });

  test('a reset after sending is not retried for a push-mode create or a subscription (it may have rung)', async () => {
    api.on('post', '/api/v1/payments', { body: createBody });
    api.on('post', '/api/v1/billing/subscriptions', { body: { id: 'sub_1' } });
    const c = client({ maxRetries: 3, fetch: resetAfterSending() });
    await rejection(c.payments.create(pushCreate));
    await rejection(c.billing.subscriptions.create(subscription));
    expect(api.seen.map((r) => r.pathWithQuery)).toEqual(['/api/v1/payments', '/api/v1/billing/subscriptions']);
  });

  test('a 429 is retried for both, with the same key (the service refused it: nothing rang)', async () => {
    api.sequence('post', '/api/v1/billing/subscriptions', [
      { status: 429, body: { error: 'Too Many Requests' } },
      { body: { id: 'sub_1' } },
    ]);
    const made = await settle(client().billing.subscriptions.create(subscription));
    expect(made).toMatchObject({ id: 'sub_1' });
    expect(api.seen).toHaveLength(2);
    expect(new Set(api.seen.map((r) => r.headers['idempotency-key'])).size).toBe(1);
  });

  test('a hosted payments.create is still retried on a 503 with its key (the key makes it safe)', async () => {
    api.sequence('post', '/api/v1/payments', [{ status: 503 }, { body: createBody }]);
    await settle(client().payments.create({ payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1001' }));
    expect(api.seen).toHaveLength(2);
  });
});

describe('messages say whether the server may have acted', () => {
  test('a push that reached the server and lost its connection does not say "could not reach"', async () => {
    api.on('post', '/api/v1/payments/:id/push', { body: { trx_id: 'TRX123456', status: 'pending' } });
    const error = await rejection(client({ fetch: resetAfterSending() }).payments.push('TRX123456'));
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error.message).not.toContain('could not reach');
    expect(error.message).toContain('failed before an answer came');
    expect(error.message).toContain('ECONNRESET');
    expect(error.message).toContain("the customer's phone may have rung: check client.payments.retrieve(trx_id) first");
  });

  test('a connection refused still says "could not reach", and nothing about having acted', async () => {
    const refused: typeof fetch = async () => {
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    };
    const error = await rejection(client({ fetch: refused, maxRetries: 0 }).payments.push('TRX123456'));
    expect(error.message).toContain(`could not reach ${BASE_URL}`);
    expect(error.message).not.toContain('may have');
  });

  test('a push answered with truncated JSON says the phone may have rung, not "retry with the same idempotencyKey"', async () => {
    api.use(
      http.post(
        `${BASE_URL}/api/v1/payments/:id/push`,
        () => new HttpResponse('{"trx_id":"TRX1', { headers: { 'content-type': 'application/json' } }),
      ),
    );
    const error = await rejection(client().payments.push('TRX123456'));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.serverMayHaveActed).toBe(true);
    expect(error.message).not.toMatch(/idempotencyKey/i);
    expect(error.message).toContain("the customer's phone may have rung");
  });

  test('a payout answered 303 says it may have been made', async () => {
    api.on('post', '/api/v1/payouts', { status: 303, headers: { Location: `${BASE_URL}/api/v1/payouts/p1` } });
    const error = await rejection(client().payouts.create({ amount: 100 }));
    expect(error.message).toContain('check baseUrl');
    expect(error.message).toContain('The server may have acted on it: a payout may have been made.');
    expect(error.message).toContain('client.payouts.list()');
  });

  test('a hosted create that timed out says to retry with its key', async () => {
    api.on('post', '/api/v1/payments', { status: 500, body: { error: 'Server Error' } });
    const error = await rejection(
      client({ maxRetries: 0 }).payments.create({ payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1001' }),
    );
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error.message).toContain(`a payment may have been created. Retry with the same idempotencyKey (${error.idempotencyKey})`);
  });

  test('a refusal (422, or a 200 that says it failed) says nothing about having acted', async () => {
    api.on('post', '/api/v1/billing/subscriptions', {
      status: 422,
      body: { error: 'Validation failed', errors: { plan_code: ['unknown'] } },
    });
    api.on('post', '/api/v1/payments', { body: { success: false, status: 'failed', message: 'Gateway declined' } });
    const c = client();
    expect((await rejection(c.billing.subscriptions.create(subscription))).message).not.toContain('may have');
    expect((await rejection(c.payments.create(pushCreate))).message).not.toContain('may have');
  });

  test('a logger that throws never changes the outcome: the created payment comes back', async () => {
    api.on('post', '/api/v1/payments', { body: createBody });
    const throwing: Logger = {
      error: () => {
        throw new Error('log sink down');
      },
      warn: () => {
        throw new Error('log sink down');
      },
      info: () => {
        throw new Error('log sink down');
      },
      debug: () => {
        throw new Error('log sink down');
      },
    };
    const payment = await settle(
      client({ logger: throwing, logLevel: 'debug' }).payments.create({ payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1001' }),
    );
    expect(payment.trx_id).toBe('TRX123456');
    expect(api.seen).toHaveLength(1);
  });

  test('a tracing subscriber that throws never changes the outcome', async () => {
    const dc = await import('node:diagnostics_channel');
    const channel = dc.tracingChannel('business-payments:request');
    const boom = () => {
      throw new Error('subscriber down');
    };
    const handlers = { start: boom, end: boom, asyncStart: boom, asyncEnd: boom, error: boom };
    // Node reports a subscriber's throw on the next tick as an uncaught exception: caught here.
    const uncaught: unknown[] = [];
    const listeners = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    process.on('uncaughtException', (error) => void uncaught.push(error));
    channel.subscribe(handlers);
    try {
      api.on('post', '/api/v1/payments', { body: createBody });
      const payment = await settle(client().payments.create({ payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1001' }));
      expect(payment.trx_id).toBe('TRX123456');
      expect(api.seen).toHaveLength(1);
    } finally {
      channel.unsubscribe(handlers);
      await new Promise((resolve) => setImmediate(resolve));
      process.removeAllListeners('uncaughtException');
      for (const listener of listeners) process.on('uncaughtException', listener);
    }
    expect(uncaught.length).toBeGreaterThan(0);
  });
});

describe('customer data stays out of logs and error messages', () => {
  const EMAIL = 'jane.doe+shop@example.com';

  function collect() {
    const lines: string[] = [];
    const push = (...args: unknown[]) => void lines.push(JSON.stringify(args));
    return { lines, logger: { error: push, warn: push, info: push, debug: push } satisfies Logger };
  }

  test('at debug, customer_email and the phone never reach the logger', async () => {
    api.on('post', '/api/v1/payments', { body: createBody });
    const log = collect();
    await settle(client({ logger: log.logger, logLevel: 'debug' }).payments.create({ ...pushCreate, customer_email: EMAIL }));
    const text = log.lines.join('\n');
    expect(text).toContain('customer_email');
    expect(text).not.toContain(EMAIL);
    expect(text).not.toContain('example.com');
    expect(text).not.toContain('712345678');
  });

  test.each([
    ['an e-mail in free text', `Customer ${EMAIL} is blocked`, EMAIL],
    ['a spaced phone number', 'Number +255 712 345 678 is not registered for mobile money', '712 345 678'],
    ['a bare phone number', 'Push to 255712345678 was refused', '255712345678'],
  ])('%s echoed in a server message is redacted in error.message and the warn line', async (_what, message, secretPart) => {
    api.on('post', '/api/v1/payments', { status: 403, body: { error: 'Forbidden', message } });
    const log = collect();
    const error = await rejection(client({ logger: log.logger, logLevel: 'warn' }).payments.create(pushCreate));
    expect(error.message).toContain('[redacted]');
    expect(error.message).not.toContain(secretPart);
    expect(log.lines.join('\n')).not.toContain(secretPart);
    // The body stays the server's, for the caller who needs it.
    expect(error.body.message).toBe(message);
  });

  test('a 200 that says it failed, echoing the phone, is redacted too', async () => {
    api.on('post', '/api/v1/payments', { body: { success: false, status: 'failed', message: 'Wallet 0712345678 is closed' } });
    const error = await rejection(client().payments.create(pushCreate));
    expect(error.message).toContain('Wallet [redacted] is closed');
  });

  test('a baseUrl that does not parse is not quoted in the error (it may be a pasted secret)', () => {
    const pasted = 'sk_live_0123456789abcdef';
    let error: unknown;
    try {
      new PaymentsClient({ ...CREDENTIALS, baseUrl: pasted });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).not.toContain(pasted);
    expect((error as Error).message).toContain('baseUrl is not an absolute URL');
  });
});

describe('one reading of the wait hint, shared with the retry, capped by maxRetryAfter', () => {
  test('X-RateLimit-Reset: 2 and X-RateLimit-Retry-After: 120: the SDK waits the 2 s it reports, not 120 s', async () => {
    const headers = { 'X-RateLimit-Reset': '2', 'X-RateLimit-Retry-After': '120' };
    api.sequence('get', '/api/v1/balance', [
      { status: 429, headers, body: { error: 'Too Many Requests' } },
      { status: 429, headers, body: { error: 'Too Many Requests' } },
      { status: 429, headers, body: { error: 'Too Many Requests' } },
    ]);
    const started = Date.now();
    const error = await rejection(client({ maxRetries: 2 }).balance.retrieve());
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.retryAfter).toBe(2);
    expect(api.seen).toHaveLength(3);
    expect(api.seen[1]!.at - api.seen[0]!.at).toBe(2_000);
    expect(Date.now() - started).toBe(4_000);
  });

  test('maxRetryAfter: a hint above it goes back at once, with what was read', async () => {
    api.on('get', '/api/v1/balance', { status: 429, headers: { 'Retry-After': '10' }, body: { error: 'Too Many Requests' } });
    const error = await rejection(client({ maxRetryAfter: 5_000 }).balance.retrieve());
    expect(error.retryAfter).toBe(10);
    expect(api.seen).toHaveLength(1);
  });

  test('maxRetryAfter is checked like the other counts', () => {
    expect(() => new PaymentsClient({ ...CREDENTIALS, baseUrl: BASE_URL, maxRetryAfter: -1 })).toThrow(
      /maxRetryAfter must be a whole number/,
    );
  });
});

describe('a list walk keeps a bounded window of ids and ends with PaginationError', () => {
  const ids = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ trx_id: `T${from + i}`, status: 'success' }));

  test('a server that ignores offset with a page larger than the window: PaginationError not_advancing, each item once', async () => {
    const page = ids(0, 10_200);
    api.on('get', '/api/v1/payments', { body: { data: page, has_more: true } });
    const seen = new Set<string>();
    let count = 0;
    const error = await rejection(
      (async () => {
        for await (const item of client().payments.list()) {
          seen.add(item.trx_id);
          count++;
        }
      })(),
    );
    expect(error).toBeInstanceOf(PaginationError);
    expect(error.reason).toBe('not_advancing');
    expect(count).toBe(10_200);
    expect(seen.size).toBe(10_200);
  });

  test('pages of new ids walk on, and rows that shift by a page are still skipped', async () => {
    // Each page repeats the last 5 rows of the one before (new rows arrived at the head).
    api.on('get', '/api/v1/payments', (req) => {
      const offset = Number(new URL(req.pathWithQuery, BASE_URL).searchParams.get('offset') ?? 0);
      const start = Math.max(0, offset - 5);
      return { body: { data: ids(start, 1_000), has_more: offset < 30_000 } };
    });
    const all = await settle(client().payments.list().toArray({ limit: 10_000 }));
    expect(all).toHaveLength(10_000);
    expect(new Set(all.map((p) => p.trx_id)).size).toBe(10_000);
  });

  test('property: over pages that overlap the one before (rows arriving at the head), each id is yielded exactly once; a server that ignores offset ends in PaginationError', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 1, max: 12 }),
        fc.boolean(),
        async (size, shift, pages, ignoresOffset) => {
          // Fewer rows shift in than a page holds, or the walk could never advance.
          const overlap = Math.min(shift, size - 1);
          const total = size * pages;
          const fetchPage: typeof fetch = async (input) => {
            const offset = ignoresOffset ? 0 : Number(new URL((input as Request).url).searchParams.get('offset') ?? 0);
            const start = Math.max(0, offset - overlap);
            const data = ids(start, Math.min(size, total - start));
            return Response.json({ data, has_more: ignoresOffset || start + size < total });
          };
          const yielded: string[] = [];
          let failure: unknown;
          try {
            for await (const item of client({ fetch: fetchPage }).payments.list({ limit: size })) yielded.push(item.trx_id);
          } catch (error) {
            failure = error;
          }
          if (ignoresOffset) {
            expect(failure).toBeInstanceOf(PaginationError);
            expect(yielded).toEqual(ids(0, Math.min(size, total)).map((p) => p.trx_id));
          } else {
            expect(failure).toBeUndefined();
            expect(new Set(yielded).size).toBe(yielded.length);
            expect(yielded).toHaveLength(total);
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
