// What the SDK sends on its own, and what verify returns, against hostile servers (issue
// "Hardening", faults 1, 3 and 4): a 429 with a wait hint of a year pauses the polls for
// maxRetryAfter at most; the polls send once per slot (no ky retries under it) and wait
// through a 429 for their next slot until the caller's deadline; an answer for another
// payment is refused by verify and waitForOutcome. Each test fails on the code before.
// Fake timers move Date, performance.now (the pacer's clock) and setTimeout together.
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { APITimeoutError, PaymentsClient, RateLimitError, ResponseValidationError, type ClientOptions } from '../../src/index.js';
import { rejection, settle } from '../support/assertions.js';
import { BASE_URL, CREDENTIALS, fixtures, START } from '../support/fake-api.js';

beforeEach(() => {
  vi.useFakeTimers({ now: START, toFake: ['Date', 'performance', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
  vi.spyOn(Math, 'random').mockReturnValue(0.5);
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

interface Seen {
  path: string;
  at: number;
  status: number;
}

/**
 * A client whose fetch is `answer` (a path and the ms since START → a Response), every
 * request logged with the status it got.
 */
function serve(answer: (path: string, elapsed: number) => Response, options: ClientOptions = {}) {
  const seen: Seen[] = [];
  const client = new PaymentsClient({
    environment: 'sandbox',
    ...CREDENTIALS,
    baseUrl: BASE_URL,
    fetch: async (input) => {
      const path = new URL((input as Request).url).pathname;
      const response = answer(path, Date.now() - START);
      seen.push({ path, at: Date.now() - START, status: response.status });
      return response;
    },
    ...options,
  });
  return { client, seen };
}

const VERIFY = /^\/api\/v1\/verify-payment\/([^/]+)$/;
/** verify's answer: `status` for the payment in the path (or for `trxId`). */
const verified = (path: string, status = 'success', trxId = VERIFY.exec(path)![1]!) =>
  Response.json({ ...fixtures.verified, status, trx_id: trxId });
const tooMany = (retryAfter: string) =>
  Response.json({ error: 'Too Many Requests' }, { status: 429, headers: { 'Retry-After': retryAfter } });

describe('fault 1: a 429 with a wait hint of a year', () => {
  test("on the merchant's own call: the SDK's polls go out again after maxRetryAfter (60 s), not a year", async () => {
    const { client, seen } = serve((path) => (path === '/api/v1/balance' ? tooMany('31536000') : verified(path)));
    const error = await rejection(client.balance.retrieve());
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.retryAfter).toBe(31_536_000);
    const outcome = await settle(client.payments.waitForOutcome('TRX123456', { timeout: 120_000 }));
    expect(outcome.status).toBe('success');
    expect(seen.filter((s) => VERIFY.test(s.path)).map((s) => s.at)).toEqual([60_000]);
  });

  test('a client with maxRetryAfter: 5000 pauses its polls for 5 s', async () => {
    const { client, seen } = serve((path) => (path === '/api/v1/balance' ? tooMany('31536000') : verified(path)), {
      maxRetryAfter: 5_000,
    });
    await rejection(client.balance.retrieve());
    await settle(client.payments.waitForOutcome('TRX123456'));
    expect(seen.filter((s) => VERIFY.test(s.path)).map((s) => s.at)).toEqual([5_000]);
  });
});

describe('fault 3: one send per slot; a 429 waits for the next slot', () => {
  test('50 concurrent waits against a server that answers 429 for 5 s, then success: 50 requests in the first 3 s, all resolve', async () => {
    const { client, seen } = serve((path, elapsed) => (elapsed < 5_000 ? tooMany('1') : verified(path)));
    const ids = Array.from({ length: 50 }, (_, i) => `TRX${1_000 + i}`);
    const outcomes = await settle(Promise.all(ids.map((id) => client.payments.waitForOutcome(id, { timeout: 600_000 }))));
    expect(outcomes.map((outcome) => [outcome.trx_id, outcome.status])).toEqual(ids.map((id) => [id, 'success']));
    expect(seen.filter((s) => s.at < 3_000)).toHaveLength(50);
    // Every wait sent until its outcome came, within the budget: 108 of 120 a minute at most.
    for (const s of seen) expect(seen.filter((t) => t.at > s.at - 60_000 && t.at <= s.at).length).toBeLessThanOrEqual(108);
    expect(seen.filter((s) => s.status === 200)).toHaveLength(50);
  });

  test('a server that always answers 429: APITimeoutError at the deadline (not RateLimitError), the 429 as its cause', async () => {
    const { client, seen } = serve(() => tooMany('1'));
    const error = await rejection(client.payments.waitForOutcome('TRX123456', { timeout: 10_000 }));
    expect(error).toBeInstanceOf(APITimeoutError);
    expect(error.lastStatus).toBeUndefined();
    expect(error.message).toMatch(/TRX123456 is not verified yet after 10000 ms/);
    expect(error.cause).toBeInstanceOf(RateLimitError);
    expect(Date.now() - START).toBe(10_000);
    // One send every interval (3 s), none under it.
    expect(seen.map((s) => s.at)).toEqual([0, 3_000, 6_000, 9_000]);
  });

  test('pending, then 429s until the deadline: APITimeoutError with the last status verify returned', async () => {
    const { client } = serve((path, elapsed) => (elapsed < 1_000 ? verified(path, 'pending') : tooMany('1')));
    const error = await rejection(client.payments.waitForOutcome('TRX123456', { timeout: 10_000 }));
    expect(error).toBeInstanceOf(APITimeoutError);
    expect(error.lastStatus).toBe('pending');
  });

  test('a 503 is not retried under the slot: the poll sends again at its next interval', async () => {
    let failed = false;
    const { client, seen } = serve((path) => {
      if (failed) return verified(path);
      failed = true;
      return Response.json({ error: 'Service Unavailable' }, { status: 503 });
    });
    expect((await settle(client.payments.waitForOutcome('TRX123456'))).status).toBe('success');
    expect(seen.map((s) => [s.status, s.at])).toEqual([
      [503, 0],
      [200, 3_000],
    ]);
  });
});

describe('fault 4: an answer for another payment', () => {
  const other = (path: string) => verified(path, 'success', 'TRX999999');

  test('payments.verify(A) answered for B: ResponseValidationError, nothing to fulfil, serverMayHaveActed false', async () => {
    const { client } = serve(other);
    const error = await rejection(client.payments.verify('TRX123456'));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error).toMatchObject({ status: 200, serverMayHaveActed: false });
    expect(error.message).toBe(
      'payments.verify: the server answered 200 with the trx_id of another payment (TRX999999, not TRX123456): nothing should be fulfilled from it.',
    );
    expect(JSON.parse(error.body)).toMatchObject({ trx_id: 'TRX999999', status: 'success' });
  });

  test('withResponse() refuses it too; asResponse() is the raw response, as for every call', async () => {
    const { client } = serve(other);
    expect(await rejection(client.payments.verify('TRX123456').withResponse())).toBeInstanceOf(ResponseValidationError);
    const raw = await client.payments.verify('TRX123456').asResponse();
    expect(((await raw.json()) as { trx_id: string }).trx_id).toBe('TRX999999');
  });

  test('ids are compared case-insensitively, as the earlier generation matches them', async () => {
    const { client } = serve((path) => verified(path, 'success', 'TRX123ABC'));
    expect(await client.payments.verify('trx123abc')).toMatchObject({ trx_id: 'TRX123ABC', status: 'success' });
    const { data } = await client.payments.verify('Trx123Abc').withResponse();
    expect(data.trx_id).toBe('TRX123ABC');
  });

  test('waitForOutcome(A) answered success for B: rejects with ResponseValidationError, never resolves with it', async () => {
    const { client, seen } = serve(other);
    const error = await rejection(client.payments.waitForOutcome('TRX123456'));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.message).toMatch(/another payment/);
    expect(seen).toHaveLength(1);
  });
});
