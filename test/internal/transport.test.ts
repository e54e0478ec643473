// What the transport puts on every call: the User-Agent, request ids on results and errors,
// fetchOptions and withOptions, and timeout errors that say which budget ran out.
import { delay, http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, test, vi } from 'vitest';
import {
  APIError,
  APITimeoutError,
  APIUserAbortError,
  ConfigurationError,
  PaymentsClient,
  ResponseValidationError,
  type ClientOptions,
} from '../../src/index.js';
import { VERSION } from '../../src/version.js';
import { rejection, settle } from '../support/assertions.js';
import { BASE_URL, CREDENTIALS } from '../support/fake-api.js';
import { useFakeApi } from '../support/harness.js';

const { api, setup } = useFakeApi();
beforeEach(() => vi.stubEnv('BUSINESS_PAYMENTS_LOG', ''));

function client(options: ClientOptions = {}): PaymentsClient {
  return setup(options).client;
}

const createParams = { payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1001', customer_phone: '255712345678' };

describe('User-Agent and request ids', () => {
  test('every request says who sent it: business-payments/<version> node/<version>', async () => {
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
  ])('withResponse().requestId from %j', async (headers, requestId) => {
    api.on('get', '/api/v1/balance', { body: {}, headers });
    const result = await settle(client().balance.retrieve().withResponse());
    expect(result.requestId).toBe(requestId);
  });

  test('every APIError carries requestId', async () => {
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

  test('client fetchOptions reach every fetch call; per-call ones are merged over them', async () => {
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

  test('withOptions() gives a client with the same credentials and some options changed', async () => {
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
  test('timeout is per attempt, and the error says so with the attempts and the time in all', async () => {
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

  test('signal: AbortSignal.timeout(ms) is an overall budget, and the error names it', async () => {
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
