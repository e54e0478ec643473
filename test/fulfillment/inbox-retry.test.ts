// The inbox on a long-running process, on an injected clock (fake timers, and the memory store
// timed on the faked Date): a delivery whose processing failed is retried by the process
// itself on its backoff, with no drain() or work(); it stops at dead, its timer never holds the
// process open, and the store's take stays the authority when a drain() takes the record first.
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import type { VerifiedTransaction } from '../../src/index.js';
import { createFulfillment, memoryStore, type FulfillmentOptions } from '../../src/fulfillment.js';
import { signWebhook } from '../../src/testing.js';
import { fakeClient } from '../support/fulfillment-client.js';

const SECRET = 'whsec_test_inbox_retry';
const ID = 'evt_TRX1';

const tx = (trx_id: string): VerifiedTransaction =>
  ({ trx_id, status: 'success', amount: 25, currency: 'USD', fee: 0, net_amount: 25 }) as VerifiedTransaction;

async function delivery(id = ID) {
  const payload = {
    id,
    type: 'payment.completed',
    api_version: '2024-06-01',
    created_at: new Date().toISOString(),
    data: { trx_id: 'TRX1', merchant_ref: 'order-1~a1', status: 'completed', amount: { value: 25, currency: 'USD' } },
  };
  const { body, headers } = await signWebhook({ secret: SECRET, payload, environment: 'sandbox' });
  return { payload: body, headers };
}

// setImmediate stays real: background work (promises) settles between its turns.
const settled = async () => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** A kit on a memory store with an inbox, timed on the faked Date; `onPaid` fails `failures` times first. */
function kit(failures: number, overrides: Partial<FulfillmentOptions> = {}) {
  const store = memoryStore({ now: () => Date.now() });
  const { client } = fakeClient(tx);
  const paid: string[] = [];
  let calls = 0;
  const fulfillment = createFulfillment({
    environment: 'sandbox',
    secret: SECRET,
    client,
    store,
    inbox: true,
    onPaid: (t) => {
      if (++calls <= failures) throw new Error(`ERP down (${calls})`);
      paid.push(t.trx_id);
    },
    ...overrides,
  });
  const record = async () => (await store.inbox!.list('pending', 10))[0] ?? (await store.inbox!.list('done', 10))[0];
  return { fulfillment, store, paid, calls: () => calls, record };
}

beforeEach(() => void vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] }));
// The setTimeout spies first: restored after the clock, they would put its fake setTimeout back.
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

describe('the inbox retries its failures in process, on its backoff', () => {
  test('onPaid fails twice, then succeeds: fulfilled once, with no drain() or work(); the timer is unref()ed', async () => {
    // The default backoff, its jitter at the middle: 10 s, then 20 s.
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const timeouts = vi.spyOn(globalThis, 'setTimeout');
    const { fulfillment, paid, calls, record } = kit(2);
    expect((await fulfillment.handleWebhook(await delivery())).status).toBe(200);
    await settled();
    expect(calls()).toBe(1);
    expect(await record()).toMatchObject({ state: 'pending', attempts: 1, error: 'ERP down (1)' });
    // The retry's timer, at the backoff (and a second), does not keep the process alive.
    const retry = timeouts.mock.results.at(-1)?.value as { hasRef(): boolean };
    expect(timeouts.mock.calls.at(-1)?.[1]).toBeGreaterThanOrEqual(10_000);
    expect(retry.hasRef()).toBe(false);
    // Not before the backoff.
    await vi.advanceTimersByTimeAsync(9_000);
    await settled();
    expect(calls()).toBe(1);
    await vi.advanceTimersByTimeAsync(3_000);
    await settled();
    expect(calls()).toBe(2);
    expect(await record()).toMatchObject({ state: 'pending', attempts: 2, error: 'ERP down (2)' });
    await vi.advanceTimersByTimeAsync(22_000);
    await settled();
    expect(paid).toEqual(['TRX1']);
    expect(await record()).toMatchObject({ state: 'done' });
    // Nothing left waiting, and nothing more however long the process runs.
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(24 * 3_600_000);
    expect(calls()).toBe(3);
    expect(paid).toEqual(['TRX1']);
  });

  test('a handler that keeps failing is dead after maxAttempts, with no timer left', async () => {
    const { fulfillment, store, paid, calls } = kit(Infinity, { maxAttempts: 3, retryDelay: () => 5_000 });
    await fulfillment.handleWebhook(await delivery());
    await settled();
    for (let i = 0; i < 2; i++) {
      await vi.advanceTimersByTimeAsync(6_100);
      await settled();
    }
    expect(calls()).toBe(3);
    expect(await store.inbox!.list('dead', 10)).toEqual([
      expect.objectContaining({ id: ID, state: 'dead', attempts: 3, error: 'ERP down (3)' }),
    ]);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(calls()).toBe(3);
    expect(paid).toEqual([]);
  });

  test('a record a drain() took meanwhile is not processed twice: the store hands it to one taker', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let calls = 0;
    const paid: string[] = [];
    const { fulfillment, store, record } = kit(0, {
      retryDelay: () => 5_000,
      onPaid: async (t) => {
        if (++calls === 1) throw new Error('ERP down');
        await gate; // the drain's attempt is still running when the in-process retry falls due
        paid.push(t.trx_id);
      },
    });
    await fulfillment.handleWebhook(await delivery());
    await settled();
    expect(calls).toBe(1);
    // The record falls due (the clock alone, no timer fired): a cron's drain() takes it.
    vi.setSystemTime(Date.now() + 5_000);
    const draining = fulfillment.drain();
    await settled();
    expect(calls).toBe(2);
    // The in-process retry fires while the drain holds it: asked for, not taken, not run.
    const take = vi.spyOn(store.inbox!, 'take');
    await vi.advanceTimersByTimeAsync(6_100);
    await settled();
    expect(take).toHaveBeenCalledExactlyOnceWith(expect.any(Number), ID);
    await expect(take.mock.results[0]?.value).resolves.toBeUndefined();
    expect(calls).toBe(2);
    open();
    expect(await draining).toEqual({ processed: 1, done: 1, retried: 0, dead: 0 });
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(calls).toBe(2);
    expect(paid).toEqual(['TRX1']);
    expect(await record()).toMatchObject({ state: 'done', attempts: 1 });
  });

  test('a retry that finds the store down is tried again after a lease', async () => {
    const { fulfillment, store, paid, calls } = kit(1, { retryDelay: () => 5_000, lease: 60_000 });
    await fulfillment.handleWebhook(await delivery());
    await settled();
    const take = vi.spyOn(store.inbox!, 'take').mockRejectedValueOnce(new Error('connection refused'));
    await vi.advanceTimersByTimeAsync(6_100);
    await settled();
    expect(take).toHaveBeenCalledTimes(1);
    expect(calls()).toBe(1);
    await vi.advanceTimersByTimeAsync(61_100);
    await settled();
    expect(take).toHaveBeenCalledTimes(2);
    expect(paid).toEqual(['TRX1']);
  });

  test('at most 1,000 retries wait on a timer in a process; the rest wait for drain()', async () => {
    const timeouts = vi.spyOn(globalThis, 'setTimeout');
    const { fulfillment, store } = kit(Infinity, { retryDelay: () => 60_000 });
    for (let i = 0; i < 1_010; i++) await fulfillment.handleWebhook(await delivery(`evt_${i}`));
    await settled();
    const attempts = async () => (await store.inbox!.list('pending', 2_000)).map((record) => record.attempts);
    expect(await attempts()).toEqual(Array(1_010).fill(1));
    expect(timeouts.mock.calls.filter(([, ms]) => ms === 61_000)).toHaveLength(1_000);
    // The 1,000 are retried here; the other 10 are due too, and a drain() finds them.
    await vi.advanceTimersByTimeAsync(61_100);
    await settled();
    expect((await attempts()).filter((n) => n === 2)).toHaveLength(1_000);
    expect(await fulfillment.drain()).toEqual({ processed: 10, done: 0, retried: 10, dead: 0 });
  });
});
