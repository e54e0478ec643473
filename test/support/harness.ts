// The per-file test harness: one fake API with its vitest lifecycle, on fake timers.
import { http, HttpResponse } from 'msw';
import { afterAll, afterEach, beforeAll, beforeEach, vi } from 'vitest';
import { PaymentsClient, type ClientOptions } from '../../src/index.js';
import { testClient } from './client.js';
import { BASE_URL, START, createFakeApi, expectedSignature } from './fake-api.js';

export type FakeApi = ReturnType<typeof createFakeApi>;

/**
 * Starts the fake API for this test file (listen before all, reset handlers and `seen`
 * after each, close after all), and runs each test on fake timers from START: the client's
 * `Date.now` (signing), ky's backoff and timeouts and the fake server's clock are one
 * virtual clock. `Math.random` is 0.5, so the jitter is fixed. Let waits pass with
 * `settle(promise)` / `rejection(promise)` (they run the timers) or `vi.advanceTimersByTimeAsync`.
 */
export function useFakeApi() {
  const api = createFakeApi();
  beforeAll(() => api.server.listen({ onUnhandledFrame: 'error' }));
  beforeEach(() => {
    vi.useFakeTimers({ now: START, toFake: ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
  });
  afterEach(() => {
    vi.useRealTimers();
    api.server.resetHandlers();
    api.seen.length = 0;
  });
  afterAll(() => api.server.close());

  return {
    api,
    /** A sandbox client on the fake API (see testClient). */
    setup(options: ClientOptions = {}) {
      return testClient(options);
    },
  };
}

// Production: live credentials (not test_), https base. The fake API only knows the sandbox
// set, so production calls go to a route of our own that checks the live signature.
const LIVE = { merchantKey: 'live_merchant_001', apiKey: 'live_key_001', apiSecret: 'live_secret_001' } as const;

/** A production client with the LIVE credentials, aimed at the fake API's base URL. */
export function productionClient() {
  return new PaymentsClient({ environment: 'production', ...LIVE, baseUrl: BASE_URL });
}

export interface LiveSeen {
  method: string;
  path: string;
  env: string | null;
  signatureValid: boolean;
  json: unknown;
}

/** Answers `method path` with `body` for a production client, recording what it saw and whether the LIVE signature held. */
export function liveRoute(api: FakeApi, method: 'get' | 'post', path: string, body: Record<string, unknown>): LiveSeen[] {
  const seen: LiveSeen[] = [];
  api.use(
    http[method](`${BASE_URL}${path}`, async ({ request }) => {
      const url = new URL(request.url);
      const raw = method === 'get' ? '' : await request.text();
      const ts = request.headers.get('x-timestamp') ?? '';
      seen.push({
        method: request.method,
        path: url.pathname + url.search,
        env: request.headers.get('x-environment'),
        signatureValid:
          request.headers.get('x-signature') === expectedSignature(LIVE.apiSecret, ts, request.method, url.pathname + url.search, raw),
        json: raw ? JSON.parse(raw) : undefined,
      });
      return HttpResponse.json(body);
    }),
  );
  return seen;
}
