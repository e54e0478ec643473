// What an operator sees of the SDK in production. Tracing on the
// diagnostics_channel TracingChannel `business-payments:request` (and the retry channel),
// User-Agent, request ids on results and errors, fetchOptions and withOptions, and timeout
// errors that say which budget ran out. Each "regression" test failed on the landed main.
import diagnostics from 'node:diagnostics_channel';
import { delay, http, HttpResponse } from 'msw';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import {
  APIError,
  APITimeoutError,
  APIUserAbortError,
  ConfigurationError,
  NotFoundError,
  PaymentsClient,
  ResponseValidationError,
  type ClientOptions,
} from '../../src/index.js';
import { VERSION } from '../../src/version.js';
import { rejection, settle, UUID } from '../support/assertions.js';
import { BASE_URL, CREDENTIALS, fixtures } from '../support/fake-api.js';
import { useFakeApi } from '../support/harness.js';

const { api, setup } = useFakeApi();
beforeEach(() => vi.stubEnv('BUSINESS_PAYMENTS_LOG', ''));

function client(options: ClientOptions = {}): PaymentsClient {
  return setup(options).client;
}

const createParams = { payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1001', customer_phone: '255712345678' };
const createBody = { status: 'success', data: fixtures.payment, payment_url: fixtures.payment.checkout_url, trx_id: 'TRX123456' };

/** Every event on the request TracingChannel and the retry channel, as [event, snapshot of the context]. */
function listen() {
  const events: [string, Record<string, unknown>][] = [];
  const contexts = new Set<object>();
  const record = (name: string) => (message: unknown) => {
    contexts.add(message as object);
    events.push([name, { ...(message as Record<string, unknown>) }]);
  };
  const handlers = {
    start: record('start'),
    end: record('end'),
    asyncStart: record('asyncStart'),
    asyncEnd: record('asyncEnd'),
    error: record('error'),
  };
  const retry = record('retry');
  const tracing = diagnostics.tracingChannel('business-payments:request');
  tracing.subscribe(handlers);
  diagnostics.subscribe('business-payments:request:retry', retry);
  const stop = () => {
    tracing.unsubscribe(handlers);
    diagnostics.unsubscribe('business-payments:request:retry', retry);
  };
  return { events, contexts, stop, names: () => events.map(([name]) => name) };
}

let listener: ReturnType<typeof listen> | undefined;
afterEach(() => listener?.stop());

describe('tracing: business-payments:request', () => {
  test('regression: a call publishes start, end, asyncStart, asyncEnd with what an operator needs', async () => {
    listener = listen();
    api.on('get', '/api/v1/payments/:trx', { body: fixtures.payment, headers: { 'x-request-id': 'req_abc' } });
    await settle(client().payments.retrieve('TRX123456'));
    expect(listener.names()).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
    expect(listener.contexts.size).toBe(1);
    expect(listener.events[0]![1]).toEqual({
      operation: 'payments.retrieve',
      method: 'GET',
      route: '/api/v1/payments/{trx_id}',
      environment: 'sandbox',
      idempotencyKey: undefined,
      attempt: 0,
    });
    expect(listener.events.at(-1)![1]).toEqual({
      operation: 'payments.retrieve',
      method: 'GET',
      route: '/api/v1/payments/{trx_id}',
      environment: 'sandbox',
      idempotencyKey: undefined,
      attempt: 1,
      status: 200,
      requestId: 'req_abc',
    });
  });

  test('a create retried twice: one trace, one retry event per retry, the key of every attempt', async () => {
    listener = listen();
    api.sequence('post', '/api/v1/payments', [
      { status: 503, body: { error: 'Service Unavailable' }, headers: { 'x-request-id': 'req_1' } },
      { status: 500, body: { error: 'Server Error' }, headers: { 'x-request-id': 'req_2' } },
      { body: createBody, headers: { 'x-request-id': 'req_3' } },
    ]);
    await settle(client().payments.create(createParams));
    expect(listener.names()).toEqual(['start', 'end', 'retry', 'retry', 'asyncStart', 'asyncEnd']);
    const retries = listener.events.filter(([name]) => name === 'retry').map(([, c]) => c);
    expect(retries.map((c) => [c.attempt, c.status, c.errorClass, c.requestId])).toEqual([
      [2, 503, 'InternalServerError', 'req_1'],
      [3, 500, 'InternalServerError', 'req_2'],
    ]);
    const last = listener.events.at(-1)![1];
    expect(last).toMatchObject({ operation: 'payments.create', method: 'POST', route: '/api/v1/payments', attempt: 3, status: 200 });
    expect(last.requestId).toBe('req_3');
    expect(last.idempotencyKey).toMatch(UUID);
    expect(api.seen.map((r) => r.headers['idempotency-key'])).toEqual([last.idempotencyKey, last.idempotencyKey, last.idempotencyKey]);
  });

  test('a failed call publishes error with the error class, status and request id', async () => {
    listener = listen();
    api.on('get', '/api/v1/payments/:trx', { status: 404, body: { error: 'Not Found' }, headers: { 'request-id': 'req_404' } });
    const error = await rejection(client().payments.retrieve('TRX404'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(listener.names()).toEqual(['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
    expect(listener.events.at(-1)![1]).toMatchObject({ errorClass: 'NotFoundError', status: 404, requestId: 'req_404', attempt: 1 });
  });

  test('a 2xx the SDK cannot use is traced as a ResponseValidationError when the data is awaited', async () => {
    listener = listen();
    api.on('get', '/api/v1/payments/:trx', { body: 'not json' });
    const error = await rejection(client().payments.retrieve('TRX123456'));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(listener.names()).toEqual(['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
    expect(listener.events.at(-1)![1]).toMatchObject({ errorClass: 'ResponseValidationError', status: 200 });
  });

  test('asResponse(): the trace ends with the response, whose body stays unread for the caller', async () => {
    listener = listen();
    api.on('get', '/api/v1/balance', { body: { ok: true } });
    const response = await settle(client().balance.retrieve().asResponse());
    expect(listener.names()).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
    expect(await response.json()).toEqual({ ok: true });
  });

  test('input errors and aborts are traced too, before anything is sent', async () => {
    listener = listen();
    const controller = new AbortController();
    controller.abort();
    const aborted = await rejection(client().balance.retrieve({ signal: controller.signal }));
    expect(aborted).toBeInstanceOf(APIUserAbortError);
    expect(listener.events.at(-1)![1]).toMatchObject({ errorClass: 'APIUserAbortError', attempt: 0 });
    expect(api.seen).toHaveLength(0);
  });

  test('list pages are traced one trace per page', async () => {
    listener = listen();
    api.on('get', '/api/v1/payments', { body: { data: [fixtures.payment], total: 1, per_page: 1, current_page: 1 } });
    await settle(client().payments.list());
    expect(listener.names().filter((n) => n === 'start')).toHaveLength(1);
    expect(listener.events.at(-1)![1]).toMatchObject({ operation: 'payments.list', route: '/api/v1/payments', status: 200 });
  });

  test('with no subscriber nothing is published (and a subscriber added later is seen)', async () => {
    const seen: unknown[] = [];
    const spy = (message: unknown) => seen.push(message);
    api.on('get', '/api/v1/balance', { body: { ok: true } });
    await settle(client().balance.retrieve());
    diagnostics.subscribe('tracing:business-payments:request:start', spy);
    try {
      await settle(client().balance.retrieve());
    } finally {
      diagnostics.unsubscribe('tracing:business-payments:request:start', spy);
    }
    await settle(client().balance.retrieve());
    expect(seen).toHaveLength(1);
  });
});

describe('User-Agent and request ids', () => {
  test('regression: every request says who sent it: business-payments/<version> node/<version>', async () => {
    api.on('get', '/api/v1/balance', { body: {} });
    await settle(client().balance.retrieve());
    expect(api.seen[0]!.headers['user-agent']).toBe(`business-payments/${VERSION} node/${process.versions.node}`);
  });

  test('defaultHeaders may replace the User-Agent (an app that names itself)', async () => {
    api.on('get', '/api/v1/balance', { body: {} });
    await settle(client({ defaultHeaders: { 'User-Agent': 'shop/2.0' } }).balance.retrieve());
    expect(api.seen[0]!.headers['user-agent']).toBe('shop/2.0');
  });

  test.each([
    [{ 'x-request-id': 'req_x' }, 'req_x'],
    [{ 'request-id': 'req_r' }, 'req_r'],
    [{ 'x-correlation-id': 'corr_1' }, 'corr_1'],
    [{ 'x-request-id': '  ', 'request-id': 'req_r' }, 'req_r'],
    [{}, undefined],
  ])('regression: withResponse().requestId from %j', async (headers, requestId) => {
    api.on('get', '/api/v1/balance', { body: {}, headers });
    const result = await settle(client().balance.retrieve().withResponse());
    expect(result.requestId).toBe(requestId);
  });

  test('regression: every APIError carries requestId', async () => {
    api.on('post', '/api/v1/payments', { status: 422, body: { error: 'Validation failed' }, headers: { 'x-request-id': 'req_422' } });
    const error = await rejection(client().payments.create(createParams));
    expect(error).toBeInstanceOf(APIError);
    expect(error.requestId).toBe('req_422');
    const none = new APIError({ status: 500, body: '', headers: new Headers() });
    expect(none.requestId).toBeUndefined();
  });

  test('a ResponseValidationError carries the requestId too', async () => {
    api.on('get', '/api/v1/balance', { body: 'oops', headers: { 'x-request-id': 'req_bad' } });
    const error = await rejection(client().balance.retrieve());
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.requestId).toBe('req_bad');
  });

  test('list pages: withResponse().requestId', async () => {
    api.on('get', '/api/v1/payments', { body: { data: [] }, headers: { 'x-request-id': 'req_list' } });
    const { requestId } = await settle(client().payments.list().withResponse());
    expect(requestId).toBe('req_list');
  });
});

describe('fetchOptions and withOptions', () => {
  /** A fetch that records the init it was called with, then hands the call to the (msw-patched) global fetch. */
  function recordingFetch() {
    const inits: (RequestInit & Record<string, unknown>)[] = [];
    const wrapped: typeof fetch = (input, init) => {
      inits.push({ ...(init as RequestInit & Record<string, unknown>) });
      // The Request holds method, headers and body; the test's fake dispatcher stays here.
      return fetch(input);
    };
    return { inits, fetch: wrapped };
  }

  test('regression: client fetchOptions reach every fetch call; per-call ones are merged over them', async () => {
    const dispatcher = { name: 'a dispatcher' };
    const recorder = recordingFetch();
    api.on('get', '/api/v1/balance', { body: {} });
    const c = client({ fetch: recorder.fetch, fetchOptions: { dispatcher, priority: 'low' } });
    await settle(c.balance.retrieve());
    await settle(c.balance.retrieve({ fetchOptions: { priority: 'high', keepalive: true } }));
    expect(recorder.inits[0]).toMatchObject({ dispatcher, priority: 'low' });
    expect(recorder.inits[1]).toMatchObject({ dispatcher, priority: 'high', keepalive: true });
    expect(api.seen.every((r) => r.signatureValid)).toBe(true);
  });

  test('fetchOptions go to every retry as well', async () => {
    const recorder = recordingFetch();
    api.sequence('get', '/api/v1/balance', [{ status: 503, body: {} }, { body: {} }]);
    await settle(client({ fetch: recorder.fetch, fetchOptions: { dispatcher: 'd' } }).balance.retrieve());
    expect(recorder.inits.map((init) => init.dispatcher)).toEqual(['d', 'd']);
  });

  test.each(['method', 'headers', 'body', 'signal', 'redirect'])('fetchOptions.%s is refused: the SDK owns it', async (key) => {
    expect(() => client({ fetchOptions: { [key]: 'x' } })).toThrow(ConfigurationError);
    expect(() => client({ fetchOptions: { [key]: 'x' } })).toThrow(`fetchOptions.${key} cannot be set`);
    const error = await rejection(client().balance.retrieve({ fetchOptions: { [key]: 'x' } }));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).toContain(`options.fetchOptions.${key} cannot be set`);
    expect(api.seen).toHaveLength(0);
  });

  test('regression: withOptions() gives a client with the same credentials and some options changed', async () => {
    api.on('get', '/api/v1/balance', async () => {
      await delay(100);
      return { body: {} };
    });
    const base = client({ timeout: 5_000 });
    const fast = base.withOptions({ timeout: 50, maxRetries: 0, logLevel: undefined });
    expect(fast).toBeInstanceOf(PaymentsClient);
    expect(fast.toJSON()).toEqual({ environment: 'sandbox', baseUrl: BASE_URL, maxRetries: 0, timeout: 50 });
    expect(base.toJSON()).toMatchObject({ maxRetries: 2, timeout: 5_000 });
    const error = await rejection(fast.balance.retrieve());
    expect(error).toBeInstanceOf(APITimeoutError);
    await settle(base.balance.retrieve());
    // Both signed with the same credentials, which no serialisation shows.
    expect(api.seen.every((r) => r.signatureValid)).toBe(true);
    expect(JSON.stringify(fast)).not.toContain(CREDENTIALS.apiSecret);
  });

  test('withOptions() is checked as a new client is: another environment needs its own credentials', () => {
    expect(() => client().withOptions({ environment: 'production', baseUrl: 'https://api.payments.test' })).toThrow(ConfigurationError);
  });
});

describe('timeouts: which budget ran out', () => {
  test('regression: timeout is per attempt, and the error says so with the attempts and the time in all', async () => {
    api.on('get', '/api/v1/balance', async () => {
      await delay('infinite');
      return {};
    });
    const error = await rejection(client({ timeout: 1000 }).balance.retrieve());
    expect(error).toBeInstanceOf(APITimeoutError);
    expect(error.attempts).toBe(3);
    // 3 × 1000 ms, plus the two backoffs (437 + 875 ms with the harness's fixed jitter).
    expect(error.message).toBe(
      'balance.retrieve timed out: an attempt ran past the per-attempt timeout of 1000 ms (3 attempts, 4.3 s in all). ' +
        'For an overall limit, pass signal: AbortSignal.timeout(ms).',
    );
  });

  test('regression: signal: AbortSignal.timeout(ms) is an overall budget, and the error names it', async () => {
    vi.useRealTimers();
    api.use(http.get(`${BASE_URL}/api/v1/balance`, async () => (await delay('infinite'), HttpResponse.json({}))));
    const error = await rejection(client({ timeout: 30_000 }).balance.retrieve({ signal: AbortSignal.timeout(50) }));
    expect(error).toBeInstanceOf(APITimeoutError);
    expect(error.message).toMatch(/^balance\.retrieve ran out of the overall time budget of its signal \(1 attempt, 0\.\d s in all\)\.$/);
    expect(error.cause).toMatchObject({ name: 'TimeoutError' });
  });

  test('an abort that is not a timeout stays APIUserAbortError', async () => {
    vi.useRealTimers();
    api.use(http.get(`${BASE_URL}/api/v1/balance`, async () => (await delay('infinite'), HttpResponse.json({}))));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const error = await rejection(client().balance.retrieve({ signal: controller.signal }));
    expect(error).toBeInstanceOf(APIUserAbortError);
    expect(error).not.toBeInstanceOf(APITimeoutError);
  });
});
