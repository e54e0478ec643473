// The "Hardening" review's faults, on the memory store (the SIGSTOP cases, on real servers, are
// in stores-real.check.ts): a handler that never returns (handlerTimeout: retried, then dead,
// never run twice beside itself), a holder whose lease was lost while its handler ran (its
// answer is not `ran`, and says so), the effectKey its handlers share, and the signals of
// drain() and work() (no listener left per idle pause, an abort that ends a wait for a slot).
import { afterEach, describe, expect, test, vi } from 'vitest';
import type { VerifiedTransaction } from '../../src/index.js';
import { PaymentsError } from '../../src/index.js';
import { createFulfillment, memoryStore, type FulfillmentContext, type FulfillmentOptions } from '../../src/fulfillment.js';
import { pace } from '../../src/internal/pace.js';
import { signWebhook } from '../../src/testing.js';
import { fakeClient } from '../support/fulfillment-client.js';

const SECRET = 'whsec_test_hardening';

const tx = (trx_id: string, status = 'success'): VerifiedTransaction =>
  ({ trx_id, status, amount: 25, currency: 'USD', fee: 0, net_amount: 25 }) as VerifiedTransaction;

const event = (trxId = 'TRX1', id = `evt_${trxId}`) => ({
  id,
  type: 'payment.completed',
  api_version: '2024-06-01',
  created_at: new Date().toISOString(),
  data: { trx_id: trxId, merchant_ref: 'order-1~a1', status: 'completed', amount: { value: 25, currency: 'USD' } },
});

async function delivery(trxId = 'TRX1') {
  const { body, headers } = await signWebhook({ secret: SECRET, payload: event(trxId), environment: 'sandbox' });
  return { payload: body, headers };
}

// setImmediate stays real under the fake timers: background work (promises) settles between its turns.
const settled = async () => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
};

const never = () => new Promise<never>(() => {});

/** A kit on a memory store with an inbox, timed on the (faked) Date. */
function kit(overrides: Partial<FulfillmentOptions> = {}, client = fakeClient(tx).client) {
  const store = memoryStore({ now: () => Date.now() });
  const fulfillment = createFulfillment({
    environment: 'sandbox',
    secret: SECRET,
    client,
    store,
    inbox: true,
    onPaid: () => {},
    ...overrides,
  });
  const record = async (id = 'evt_TRX1') =>
    (await Promise.all((['pending', 'done', 'dead'] as const).map((state) => store.inbox!.list(state, 10))))
      .flat()
      .find((r) => r.id === id);
  return { fulfillment, store, record };
}

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

describe('handlerTimeout: an onPaid that never returns', () => {
  const fake = () => vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });

  test('the kit stops waiting at handlerTimeout: retried on its backoff, never run again beside itself, dead after maxAttempts', async () => {
    fake();
    const calls: FulfillmentContext[] = [];
    const { fulfillment, record } = kit({
      handlerTimeout: 60_000,
      maxAttempts: 3,
      retryDelay: () => 10_000,
      onPaid: (_tx, ctx) => (calls.push(ctx), never()),
    });
    expect((await fulfillment.handleWebhook(await delivery())).status).toBe(200);
    await settled();
    expect(calls).toHaveLength(1);
    expect(calls[0]!.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(59_000);
    expect(await record()).toMatchObject({ state: 'pending', attempts: 0 });
    await vi.advanceTimersByTimeAsync(1_000);
    await settled();
    // The wait ended, the handler was told (ctx.signal), and the failure is counted.
    expect(calls[0]!.signal.aborted).toBe(true);
    expect(await record()).toMatchObject({
      state: 'pending',
      attempts: 1,
      error: expect.stringMatching(/payment:TRX1 outlived handlerTimeout \(60000 ms\); its claim is held/),
    });
    // Its retries (the process's own, at the backoff and a second) fail the same way while it may
    // still run: its claim is held, and no second run starts beside it.
    await vi.advanceTimersByTimeAsync(11_000);
    await settled();
    expect(await record()).toMatchObject({ state: 'pending', attempts: 2 });
    await vi.advanceTimersByTimeAsync(11_000);
    await settled();
    expect(await record()).toMatchObject({ state: 'dead', attempts: 3, error: expect.stringMatching(/outlived handlerTimeout/) });
    expect(calls).toHaveLength(1);
    // drain() finds nothing due, and ends.
    expect(await fulfillment.drain()).toEqual({ processed: 0, done: 0, retried: 0, dead: 0 });
  });

  test('one that returns after its timeout records its outcome then: the next attempt finds it done, one run in all', async () => {
    fake();
    let runs = 0;
    const { fulfillment, store, record } = kit({
      handlerTimeout: 60_000,
      retryDelay: () => 30_000,
      onPaid: async () => {
        runs++;
        await new Promise((resolve) => setTimeout(resolve, 90_000));
      },
    });
    await fulfillment.handleWebhook(await delivery());
    await vi.advanceTimersByTimeAsync(60_000);
    await settled();
    expect(await record()).toMatchObject({ state: 'pending', attempts: 1 });
    await vi.advanceTimersByTimeAsync(30_000);
    await settled();
    expect(await store.outcome('payment:TRX1')).toBe('paid');
    await vi.advanceTimersByTimeAsync(1_000);
    await settled();
    expect(await record()).toMatchObject({ state: 'done', attempts: 1 });
    expect(runs).toBe(1);
  });

  test('in the request (inbox: false): a 500 at handlerTimeout, and a delivery meanwhile neither runs nor waits', async () => {
    fake();
    let runs = 0;
    const { fulfillment } = kit({ inbox: false, handlerTimeout: 1_000, onPaid: () => (runs++, never()) });
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const first = fulfillment.handleWebhook(await delivery());
    await vi.advanceTimersByTimeAsync(1_000);
    const answer = await first;
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.body).message).toMatch(/handlerTimeout/);
    const again = await fulfillment.handleWebhook(await delivery());
    expect(again.status).toBe(500);
    expect(runs).toBe(1);
  });
});

describe('a lease lost while the handler ran (the holder paused past it)', () => {
  test('the stale holder does not answer `ran`: it warns and fails, the delivery is answered 500; both runs had one effectKey', async () => {
    // Two kits on one memory store, its clock moved by hand: the first one's onPaid "pauses"
    // past the lease while the second claims the payment and runs it.
    let now = 0;
    const store = memoryStore({ now: () => now });
    const keys: string[] = [];
    const effects = new Set<string>();
    const make = (onPaid: FulfillmentOptions['onPaid']) =>
      createFulfillment({
        environment: 'sandbox',
        secret: SECRET,
        client: fakeClient(tx).client,
        store,
        inbox: false,
        lease: 1_000,
        onPaid,
      });
    const other = make((_tx, { effectKey }) => void (keys.push(effectKey), effects.add(effectKey)));
    const paused = make(async (_tx, { effectKey }) => {
      keys.push(effectKey);
      effects.add(effectKey);
      now += 5_000; // frozen past the lease
      expect(await other.handleVerified(tx('TRX1'))).toBe('ran');
    });
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const failed = paused.handleVerified(tx('TRX1'));
    await expect(failed).rejects.toThrow(PaymentsError);
    await expect(failed).rejects.toThrow(/lease lost on payment:TRX1/);
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/^\[business-payments\] .*lease lost on payment:TRX1/));
    expect(keys).toEqual(['payment:TRX1:paid', 'payment:TRX1:paid']);
    expect(effects.size).toBe(1);
    expect(await store.outcome('payment:TRX1')).toBe('paid');
  });

  test('a webhook handled by the stale holder is answered 500 with the reason (the service delivers again, and finds it done)', async () => {
    let now = 0;
    const store = memoryStore({ now: () => now });
    const make = (onPaid: FulfillmentOptions['onPaid']) =>
      createFulfillment({
        environment: 'sandbox',
        secret: SECRET,
        client: fakeClient(tx).client,
        store,
        inbox: false,
        lease: 1_000,
        onPaid,
      });
    const other = make(() => {});
    const paused = make(async () => {
      now += 5_000;
      await other.handleVerified(tx('TRX1'));
    });
    vi.spyOn(console, 'warn').mockImplementation(() => {});
    const answer = await paused.handleWebhook(await delivery());
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'handler_failed', message: expect.stringMatching(/lease lost/) });
    const again = await paused.handleWebhook(await delivery());
    expect([again.status, JSON.parse(again.body).result]).toEqual([200, 'done']);
  });

  test('effectKey: stable per trx_id and outcome, for each handler', async () => {
    const seen: string[] = [];
    const note = (_value: unknown, { effectKey }: FulfillmentContext) => void seen.push(effectKey);
    const { fulfillment } = kit({ inbox: false, onPaid: note, onFailed: note, onEvent: note });
    await fulfillment.handleVerified(tx('TRX1'));
    await fulfillment.handleVerified(tx('TRX2', 'failed'));
    expect(seen).toEqual(['payment:TRX1:paid', 'payment:TRX2:failed']);
  });
});

describe('the signals of drain() and work()', () => {
  /** An AbortSignal whose listeners are counted as they are added and removed. */
  function counted() {
    const controller = new AbortController();
    const { signal } = controller;
    let live = 0;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    vi.spyOn(signal, 'addEventListener').mockImplementation(
      (...args: Parameters<AbortSignal['addEventListener']>) => (live++, add(...args)),
    );
    vi.spyOn(signal, 'removeEventListener').mockImplementation(
      (...args: Parameters<AbortSignal['removeEventListener']>) => (live--, remove(...args)),
    );
    return { controller, signal, live: () => live };
  }

  test('work() leaves no abort listener behind its idle pauses (1,000 of them), and ends on abort', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const { fulfillment } = kit();
    const { controller, signal, live } = counted();
    let ended = false;
    const working = fulfillment.work({ signal, idleMs: 1_000 }).then(() => (ended = true));
    for (let i = 0; i < 1_000; i++) await vi.advanceTimersByTimeAsync(1_000);
    // At most the pause now running holds one.
    expect(live()).toBeLessThanOrEqual(1);
    controller.abort();
    await settled();
    await working;
    expect(ended).toBe(true);
    expect(live()).toBe(0);
  });

  // A client whose polling budget is paused (a 429 asked for an hour): a verify waits for a slot.
  const paused = () => {
    const pacer = pace(120);
    pacer.limited(3_600);
    const { client, verify } = fakeClient(tx);
    Object.assign(client, { pollSlot: (signal?: AbortSignal) => pacer.slot(signal) });
    return { client, verify };
  };
  const within = <T>(work: Promise<T>, ms: number) =>
    Promise.race([work, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms))]);

  test('drain({ signal }): an abort while a verify waits for a slot ends it at once; the record is not counted as a failure', async () => {
    const { client, verify } = paused();
    const { fulfillment, store, record } = kit({}, client);
    await store.inbox!.add('evt_TRX1', JSON.stringify(event()));
    const stop = new AbortController();
    const draining = fulfillment.drain({ signal: stop.signal });
    setTimeout(() => stop.abort(), 50);
    const started = performance.now();
    const report = await within(draining, 2_000);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(report).toMatchObject({ processed: 1, done: 0, dead: 0 });
    expect(verify).not.toHaveBeenCalled();
    // Pending, no attempt counted, due again at once: the next drain or worker takes it.
    expect(await record()).toMatchObject({ state: 'pending', attempts: 0 });
    expect(await store.inbox!.take(1_000)).toMatchObject({ id: 'evt_TRX1' });
  });

  test('work({ signal }): the same abort ends the worker at once', async () => {
    const { client } = paused();
    const { fulfillment, store } = kit({}, client);
    await store.inbox!.add('evt_TRX1', JSON.stringify(event()));
    const stop = new AbortController();
    const working = fulfillment.work({ signal: stop.signal });
    setTimeout(() => stop.abort(), 50);
    await within(working, 2_000);
  });
});
