// The polling budget against the sandbox, in process (mock.handle) on fake timers:
// the client, its pacer and the sandbox's own rate limit (120 a minute per merchant) run on one
// virtual clock, so minutes pass in milliseconds. What the SDK sends on its own (waitForOutcome's
// polls) keeps within the budget and never meets a 429; the merchant's own calls never wait;
// concurrent waits on one payment share one poll, each keeping its own deadline and signal.
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { APITimeoutError, APIUserAbortError, PaymentsClient, type ClientOptions, type PaymentCreateParams } from '../../src/index.js';
import { createMockService, TEST_PHONE_NUMBERS, type MockRequestLogEntry, type MockServiceOptions } from '../../src/testing.js';
import { gaps, rejection, settle } from '../support/assertions.js';
import { START } from '../support/fake-api.js';

beforeEach(() => {
  vi.useFakeTimers({ now: START, toFake: ['Date', 'performance', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
  vi.spyOn(Math, 'random').mockReturnValue(0.5);
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const BASE_URL = 'https://sandbox.business-payments.test';

/** The sandbox in process, every answer logged; `client()` is a client of it (its own pacer each). */
function sandbox(options: MockServiceOptions = {}) {
  const log: MockRequestLogEntry[] = [];
  const mock = createMockService({
    onRequest: (entry) => log.push(entry),
    fetch: async () => Response.json({ received: true }),
    ...options,
  });
  const client = (extra: ClientOptions = {}) =>
    new PaymentsClient({
      environment: 'sandbox',
      ...mock.credentials.sandbox,
      baseUrl: BASE_URL,
      fetch: (input, init) => mock.handle(new Request(input, init)),
      ...extra,
    });
  const limited = () => log.filter((entry) => entry.status === 429);
  const verifies = (trxId: string) => log.filter((entry) => entry.path === `/api/v1/verify-payment/${trxId}`);
  return { mock, log, client, limited, verifies };
}

let refs = 0;
/** A push payment to `phone`: its outcome comes 5 s after creation (60 s for `timeout`). */
const push = (phone: string): PaymentCreateParams => ({
  payment_amount: 5_000,
  currency_code: 'TZS',
  ref_trx: `budget-${++refs}`,
  ipn_url: 'https://shop.example.test/ipn',
  payment_mode: 'push',
  customer_phone: phone,
});

/** What the sandbox decides for each test number. */
const DECIDED = [
  [TEST_PHONE_NUMBERS.success, { status: 'success' }],
  [TEST_PHONE_NUMBERS.insufficientFunds, { status: 'failed', failure_reason: 'INSUFFICIENT_FUNDS' }],
  [TEST_PHONE_NUMBERS.declined, { status: 'failed', failure_reason: 'PAYMENT_DECLINED' }],
  [TEST_PHONE_NUMBERS.timeout, { status: 'failed', failure_reason: 'TIMEOUT' }],
] as const;

describe('waits within the budget', () => {
  test('50 concurrent waitForOutcome calls against the sandbox: 0 429s, and the same outcomes', async () => {
    const { client, mock, limited, log } = sandbox();
    const c = client();
    const payments = [];
    for (let i = 0; i < 50; i++) payments.push(await c.payments.create(push(DECIDED[i % 4]![0])));
    const outcomes = await settle(Promise.all(payments.map((p) => c.payments.waitForOutcome(p.trx_id, { timeout: 600_000 }))));
    expect(limited()).toEqual([]);
    for (const [i, outcome] of outcomes.entries()) {
      const { trx_id } = payments[i]!;
      expect(outcome).toMatchObject({ trx_id, ...DECIDED[i % 4]![1] });
      // The outcome the sandbox holds for that payment.
      expect(outcome.status).toBe(mock.state.payments.get(trx_id)!.status);
    }
    // Each payment was polled, and more than once where its outcome took a while.
    expect(log.filter((entry) => entry.path.startsWith('/api/v1/verify-payment/')).length).toBeGreaterThan(50);
  });

  test.each([10, 50])(
    '%i concurrent waits: 0 429s, while a stream of creates goes through at once (each create’s latency unaffected)',
    async (count) => {
      const { client, limited, log } = sandbox();
      const c = client();
      // Outcomes 60 s away: the waits poll for a minute or more.
      const payments = [];
      for (let i = 0; i < count; i++) payments.push(await c.payments.create(push(TEST_PHONE_NUMBERS.timeout)));
      const waits = payments.map((p) => c.payments.waitForOutcome(p.trx_id, { timeout: 600_000 }));
      // The merchant's checkout: a create every 6 s for three minutes (10 a minute, within the last
      // tenth of the budget the SDK leaves them), each timed on the virtual clock.
      const latencies: number[] = [];
      const stream = (async () => {
        for (let i = 0; i < 30; i++) {
          const started = Date.now();
          await c.payments.create(push(TEST_PHONE_NUMBERS.success));
          latencies.push(Date.now() - started);
          await new Promise((resolve) => setTimeout(resolve, 6_000));
        }
      })();
      const [outcomes] = await settle(Promise.all([Promise.all(waits), stream]));
      expect(limited()).toEqual([]);
      expect(latencies).toEqual(Array.from({ length: 30 }, () => 0));
      // Every create was answered at its first attempt.
      expect(log.filter((entry) => entry.method === 'POST' && entry.path === '/api/v1/payments')).toHaveLength(count + 30);
      expect(outcomes.map((outcome) => outcome.failure_reason)).toEqual(payments.map(() => 'TIMEOUT'));
    },
  );

  test("a merchant's calls go out at once while the SDK's polls wait for the budget", async () => {
    const { client, verifies, log } = sandbox();
    const c = client({ pollingBudget: 4 }); // 3 polls a minute
    const payment = await c.payments.create(push(TEST_PHONE_NUMBERS.timeout));
    const wait = c.payments.waitForOutcome(payment.trx_id, { timeout: 600_000 });
    await vi.advanceTimersByTimeAsync(10_000);
    // The create and two polls fill the SDK's 3 (0 s, 3 s); the third poll waits for the create to turn 60 s old.
    expect(verifies(payment.trx_id).map((entry) => entry.at - START)).toEqual([0, 3_000]);
    const sentBefore = log.length;
    const retrieved = await Promise.all(Array.from({ length: 20 }, () => c.payments.retrieve(payment.trx_id)));
    expect(retrieved).toHaveLength(20);
    expect(log.slice(sentBefore).map((entry) => [entry.status, entry.at - START])).toEqual(Array.from({ length: 20 }, () => [200, 10_000]));
    expect(verifies(payment.trx_id)).toHaveLength(2);
    await settle(wait);
  });

  test('a 429 pauses the polls until its Retry-After passes; the merchant’s own calls carry on', async () => {
    const { client, mock, verifies } = sandbox();
    let refused = false;
    // The service refuses one balance call with a 429 and Retry-After: 30 (another app on the same account, say).
    const c = client({
      maxRetries: 0,
      fetch: (input, init) => {
        const request = new Request(input, init);
        if (!refused && new URL(request.url).pathname === '/api/v1/balance') {
          refused = true;
          return Promise.resolve(
            Response.json({ status: 'error', message: 'Too Many Requests' }, { status: 429, headers: { 'Retry-After': '30' } }),
          );
        }
        return mock.handle(request);
      },
    });
    const payment = await c.payments.create(push(TEST_PHONE_NUMBERS.timeout));
    const wait = c.payments.waitForOutcome(payment.trx_id, { timeout: 600_000 });
    await vi.advanceTimersByTimeAsync(7_000); // polls at 0, 3 and 6 s
    await expect(c.balance.retrieve()).rejects.toMatchObject({ status: 429 });
    await expect(c.balance.retrieve()).resolves.toBeDefined(); // never held
    await settle(wait);
    const at = verifies(payment.trx_id).map((entry) => entry.at - START);
    expect(at.slice(0, 4)).toEqual([0, 3_000, 6_000, 37_000]);
  });
});

describe('concurrent waits on one payment share one poll', () => {
  test('5 waits on one payment: one verify per interval, and the same outcome for each', async () => {
    const { client, verifies } = sandbox();
    const c = client();
    const payment = await c.payments.create(push(TEST_PHONE_NUMBERS.timeout));
    const outcomes = await settle(Promise.all(Array.from({ length: 5 }, () => c.payments.waitForOutcome(payment.trx_id))));
    const polls = verifies(payment.trx_id);
    expect(gaps(polls).every((gap) => gap === 3_000)).toBe(true);
    expect(polls.length).toBeGreaterThanOrEqual(20); // 60 s of polling, every 3 s
    expect(polls.length).toBeLessThanOrEqual(22);
    expect(new Set(outcomes.map((outcome) => JSON.stringify(outcome))).size).toBe(1);
    expect(outcomes[0]).toMatchObject({ status: 'failed', failure_reason: 'TIMEOUT' });
  });

  test('the loop polls at the shortest interval of the waits there now; each wait keeps its own deadline and signal', async () => {
    const { client, verifies } = sandbox();
    const c = client();
    const payment = await c.payments.create(push(TEST_PHONE_NUMBERS.timeout));
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('customer left')), 7_000);
    const slow = c.payments.waitForOutcome(payment.trx_id, { interval: 5_000, timeout: 600_000 });
    const fast = c.payments.waitForOutcome(payment.trx_id, { interval: 2_000, timeout: 9_000 });
    const left = c.payments.waitForOutcome(payment.trx_id, { interval: 5_000, signal: controller.signal });
    const [fastError, leftError, outcome] = await settle(Promise.all([rejection(fast), rejection(left), slow]));
    // Each wait's own end: the deadline of the fast one (with the last status), the signal of another.
    expect(fastError).toBeInstanceOf(APITimeoutError);
    expect(fastError).toMatchObject({ lastStatus: 'pending' });
    expect(leftError).toBeInstanceOf(APIUserAbortError);
    expect(leftError.cause).toEqual(new Error('customer left'));
    expect(outcome).toMatchObject({ status: 'failed', failure_reason: 'TIMEOUT' });
    // Every 2 s while the fast wait was there (0–8 s), then every 5 s.
    const at = verifies(payment.trx_id).map((entry) => entry.at - START);
    expect(at.slice(0, 8)).toEqual([0, 2_000, 4_000, 6_000, 8_000, 10_000, 15_000, 20_000]);
    expect(
      gaps(verifies(payment.trx_id))
        .slice(5)
        .every((gap) => gap === 5_000),
    ).toBe(true);
  });

  test('when the last wait leaves, the loop stops', async () => {
    const { client, verifies } = sandbox();
    const c = client();
    const payment = await c.payments.create(push(TEST_PHONE_NUMBERS.timeout));
    const waits = [
      c.payments.waitForOutcome(payment.trx_id, { timeout: 7_000 }),
      c.payments.waitForOutcome(payment.trx_id, { timeout: 10_000 }),
    ];
    const errors = await settle(Promise.all(waits.map((wait) => rejection(wait))));
    expect(errors.map((error) => [error.constructor, error.lastStatus])).toEqual([
      [APITimeoutError, 'pending'],
      [APITimeoutError, 'pending'],
    ]);
    expect(Date.now() - START).toBe(10_000);
    const polled = verifies(payment.trx_id).length;
    expect(polled).toBe(4); // 0, 3, 6, 9 s
    await vi.advanceTimersByTimeAsync(120_000);
    expect(verifies(payment.trx_id)).toHaveLength(polled);
    // A new wait starts a new loop, at once.
    const again = c.payments.waitForOutcome(payment.trx_id, { timeout: 600_000 });
    await vi.advanceTimersByTimeAsync(0);
    expect(verifies(payment.trx_id)).toHaveLength(polled + 1);
    await settle(again);
  });
});
