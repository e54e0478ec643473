// The per-file test harness: one fake API with its vitest lifecycle, and test clients whose
// fake clock the fake server follows (so retries and long polls stay inside the 300 s window).
import { http, HttpResponse } from 'msw';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { PaymentsClient, type ClientOptions } from '../../src/index.js';
import { testClient } from './client.js';
import { BASE_URL, START, createFakeApi, expectedSignature, fakeClock } from './fake-api.js';

export type FakeApi = ReturnType<typeof createFakeApi>;

/**
 * Starts the fake API for this test file (listen before all, reset handlers and `seen`
 * after each, close after all). The server's clock is START until a client made by
 * `setup()` takes over (or `followClock` points it elsewhere); after each test it goes
 * back to START.
 */
export function useFakeApi() {
  let serverNow: () => number = () => START;
  const api = createFakeApi({ now: () => serverNow() });
  // One fake clock for files whose clients all share it: back to START, no sleeps and its
  // own now/random/sleep before each test (a test may swap those out).
  const clock = fakeClock();
  const pristine = { ...clock };
  beforeAll(() => api.server.listen({ onUnhandledFrame: 'error' }));
  beforeEach(() => {
    Object.assign(clock, pristine, { sleeps: [] });
  });
  afterEach(() => {
    api.server.resetHandlers();
    api.seen.length = 0;
    serverNow = () => START;
  });
  afterAll(() => api.server.close());

  /** From now on (in this test) the fake server reads its time from `now`. */
  const followClock = (now: () => number) => {
    serverNow = now;
  };

  return {
    api,
    /** A fake clock reset before each test; pass it as `setup({ clock })` to share it. */
    clock,
    followClock,
    /**
     * A sandbox client on the fake API (see testClient). The fake server's clock follows
     * this client's clock — `options.clock` when given, else the fresh fake clock — until
     * the next `setup()` or the end of the test.
     */
    setup(options: ClientOptions = {}) {
      const made = testClient(options);
      const clock = options.clock ?? made.clock;
      followClock(() => (clock.now ? clock.now() : Date.now()));
      return made;
    },
  };
}

// Production: live credentials (not test_), https base. The fake API only knows the sandbox
// set, so production calls go to a route of our own that checks the live signature.
export const LIVE = { merchantKey: 'live_merchant_001', apiKey: 'live_key_001', apiSecret: 'live_secret_001' } as const;

/** A production client with the LIVE credentials, aimed at the fake API's base URL. */
export function productionClient() {
  return new PaymentsClient({ environment: 'production', ...LIVE, baseUrl: BASE_URL, clock: fakeClock(START) });
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
        signatureValid: request.headers.get('x-signature') === expectedSignature(LIVE.apiSecret, ts, request.method, url.pathname + url.search, raw),
        json: raw ? JSON.parse(raw) : undefined,
      });
      return HttpResponse.json(body);
    }),
  );
  return seen;
}
