// client.generation() against stray route-not-found 404s (issue "Hardening", fault 5): one
// 404 met by an ordinary call (a proxy, a deploy) no longer decides for the client's whole
// life. A learned or probed 'earlier' holds 10 minutes (monotonic clock) and is then asked
// again; a 2xx of a route only the current generation has makes it 'current' at once.
// Fake timers move Date and performance.now together.
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { PaymentsClient, RouteNotSupportedError } from '../../src/index.js';
import { rejection, settle } from '../support/assertions.js';
import { BASE_URL, CREDENTIALS, fixtures, START } from '../support/fake-api.js';

beforeEach(() => {
  vi.useFakeTimers({ now: START, toFake: ['Date', 'performance', 'setTimeout', 'clearTimeout'] });
});
afterEach(() => vi.useRealTimers());

// Laravel's answer for a path it has no route for (what a proxy in front of it, mid-deploy, may also give).
const routeNotFound = (path: string) =>
  Response.json(
    {
      message: `The route ${path.slice(1)} could not be found.`,
      exception: 'Symfony\\Component\\HttpKernel\\Exception\\NotFoundHttpException',
    },
    { status: 404 },
  );
const page = () => Response.json({ data: [], has_more: false });

/** A current-generation server whose answers `stray` may replace with a route-not-found 404; every request logged. */
function server(stray: (path: string) => boolean) {
  const seen: string[] = [];
  const client = new PaymentsClient({
    environment: 'sandbox',
    ...CREDENTIALS,
    baseUrl: BASE_URL,
    maxRetries: 0,
    fetch: async (input) => {
      const url = new URL((input as Request).url);
      seen.push(url.pathname + url.search);
      if (stray(url.pathname)) return routeNotFound(url.pathname);
      if (url.pathname === '/api/v1/balance') return Response.json({ status: 'success', data: { currency: 'TZS', balance: 10 } });
      if (url.pathname === '/api/v1/site-info') return Response.json(fixtures.siteInfo);
      return page();
    },
  });
  return { client, seen };
}

const MINUTE = 60_000;

describe('one stray 404 does not decide the generation for good', () => {
  test("a 404 met by an ordinary call, then a 2xx of a current-generation route: 'current'", async () => {
    let strays = 1;
    const { client, seen } = server((path) => path === '/api/v1/balance' && strays-- > 0);
    expect(await rejection(client.balance.retrieve())).toBeInstanceOf(RouteNotSupportedError);
    // Learnt for free, as before: no probe.
    expect(await settle(client.generation())).toBe('earlier');
    await client.balance.retrieve();
    expect(await settle(client.generation())).toBe('current');
    expect(seen).toEqual(['/api/v1/balance', '/api/v1/balance']);
  });

  test("a learnt 'earlier' is asked again after 10 minutes, by the probe", async () => {
    let strays = 1;
    const { client, seen } = server((path) => path === '/api/v1/balance' && strays-- > 0);
    await rejection(client.balance.retrieve());
    await vi.advanceTimersByTimeAsync(10 * MINUTE - 1);
    expect(await settle(client.generation())).toBe('earlier');
    expect(seen).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settle(client.generation())).toBe('current');
    expect(seen).toEqual(['/api/v1/balance', '/api/v1/payments?limit=1']);
  });

  test('the wall clock stepped forward does not end it early, nor back make it last (the clock is monotonic)', async () => {
    const { client, seen } = server((path) => path === '/api/v1/balance');
    await rejection(client.balance.retrieve());
    vi.setSystemTime(Date.now() + 86_400_000);
    expect(await settle(client.generation())).toBe('earlier');
    vi.setSystemTime(Date.now() - 2 * 86_400_000);
    await vi.advanceTimersByTimeAsync(10 * MINUTE);
    // The probe now: the payment list answers, so the server is of the current generation.
    expect(await settle(client.generation())).toBe('current');
    expect(seen).toEqual(['/api/v1/balance', '/api/v1/payments?limit=1']);
  });

  test("the probe's own stray 404 (site-info answering): 'earlier' for 10 minutes, then asked again", async () => {
    let strays = 1;
    const { client, seen } = server((path) => path === '/api/v1/payments' && strays-- > 0);
    expect(await settle(client.generation())).toBe('earlier');
    expect(await settle(client.generation())).toBe('earlier');
    expect(seen).toEqual(['/api/v1/payments?limit=1', '/api/v1/site-info']);
    await vi.advanceTimersByTimeAsync(10 * MINUTE);
    expect(await settle(client.generation())).toBe('current');
    expect(seen).toHaveLength(3);
  });

  test("a 404 after the client knows 'current' changes nothing; 'current' is kept for good", async () => {
    const { client, seen } = server((path) => path === '/api/v1/balance');
    expect(await settle(client.generation())).toBe('current');
    await rejection(client.balance.retrieve());
    await vi.advanceTimersByTimeAsync(24 * 60 * MINUTE);
    expect(await settle(client.generation())).toBe('current');
    expect(seen).toEqual(['/api/v1/payments?limit=1', '/api/v1/balance']);
  });

  test('a server with neither route: the error says baseUrl, and nothing is learnt from the probe’s own 404s', async () => {
    let broken = true;
    const { client } = server((path) => broken && (path === '/api/v1/payments' || path === '/api/v1/site-info'));
    expect((await rejection(client.generation())).message).toMatch(/baseUrl is probably wrong/);
    broken = false;
    expect(await settle(client.generation())).toBe('current');
  });
});
