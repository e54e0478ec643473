// `fetch` is called as a plain function, with no network at all (so no socket library adds
// timers of its own): workerd and Chromium throw "Illegal invocation" for any other `this`.
import { afterEach, describe, expect, test, vi } from 'vitest';
import { APIConnectionError, PaymentsClient, type ClientOptions } from '../../src/index.js';
import { rejection } from '../support/assertions.js';
import { fixtures } from '../support/fake-api.js';

afterEach(() => vi.useRealTimers());

function client(options: ClientOptions = {}) {
  return new PaymentsClient({
    environment: 'sandbox',
    merchantKey: 'test_m',
    apiKey: 'test_k',
    apiSecret: 'test_s',
    baseUrl: 'https://api.payments.test',
    ...options,
  });
}

describe('fetch is called as a plain function (workerd and browsers refuse any other `this`)', () => {
  // Throws like workerd and Chromium do when `this` is not undefined or the global object.
  const strictFetch = vi.fn(function (this: unknown, _input: Request | string | URL, _init?: RequestInit) {
    if (this !== undefined && this !== globalThis) throw new TypeError('Illegal invocation');
    return Promise.resolve(Response.json(fixtures.verified));
  });

  test('a user-supplied fetch', async () => {
    const result = await client({ fetch: strictFetch as typeof fetch }).payments.verify('TRX123456');
    expect(result.status).toBe('success');
  });

  test('the default fetch, looked up at call time (a polyfill installed after the client is used)', async () => {
    const made = client();
    vi.stubGlobal('fetch', strictFetch);
    strictFetch.mockClear();
    const result = await made.payments.verify('TRX123456');
    expect(result.status).toBe('success');
    expect(strictFetch).toHaveBeenCalledTimes(1);
  });

  test('a fetch that throws synchronously → APIConnectionError, and no timer is left behind', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const throwing = () => {
      throw new TypeError('Illegal invocation');
    };
    const error = await rejection(client({ fetch: throwing as unknown as typeof fetch }).balance.retrieve());
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error.message).toContain('Illegal invocation');
    expect(error.attempts).toBe(1);
    // ky's attempt timer (30 s) would keep a serverless function alive until it fired.
    await new Promise((resolve) => setImmediate(resolve));
    expect(vi.getTimerCount()).toBe(0);
  });
});
