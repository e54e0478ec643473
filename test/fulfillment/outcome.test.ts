// One verify per payment outcome: duplicate deliveries (one after another, or at once), return
// pages (`fulfillment.outcome`) and waits share the kit's one verify, made inside the payment's
// claim, and the store answers every later report of it. On the memory store and on
// postgresStore over PGlite (one connection: the claim holds it while verify runs).
import { PGlite } from '@electric-sql/pglite';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import type { VerifiedTransaction } from '../../src/index.js';
import { PaymentsError } from '../../src/index.js';
import { createFulfillment, memoryStore, type FulfilledTransaction, type FulfillmentStore } from '../../src/fulfillment.js';
import { postgresStore } from '../../src/fulfillment-postgres.js';
import { signWebhook } from '../../src/testing.js';
import { fakeClient } from '../support/fulfillment-client.js';

const SECRET = 'whsec_test_outcome';
const tx = (trx_id: string, status: string): VerifiedTransaction =>
  ({ trx_id, status, amount: 25, currency: 'USD', fee: 0, net_amount: 25 }) as VerifiedTransaction;

let started: Promise<PGlite> | undefined;
const pglite = () => (started ??= PGlite.create());
beforeAll(async () => void (await pglite()), 60_000);
afterAll(async () => void (await (await started)?.close()), 30_000);
afterEach(() => void vi.useRealTimers());

const STORES: Array<[string, () => Promise<FulfillmentStore<unknown>>]> = [
  ['memory', async () => memoryStore()],
  ['postgres (PGlite)', async () => postgresStore(await pglite(), { table: `bp_outcome_${crypto.randomUUID().replaceAll('-', '')}` })],
];

// The kit with verify answering `answers` (pending for any other trx_id), processing in the request.
function kit(
  store: FulfillmentStore<unknown>,
  answers: Record<string, VerifiedTransaction>,
  onPaid: (t: FulfilledTransaction) => unknown = () => {},
) {
  const { client, verify } = fakeClient((trxId) => answers[trxId] ?? tx(trxId, 'pending'));
  const paid: FulfilledTransaction[] = [];
  const failed: string[] = [];
  const fulfillment = createFulfillment<unknown>({
    environment: 'sandbox',
    secret: SECRET,
    client,
    store,
    inbox: false,
    onPaid: async (t) => void (paid.push(t), await onPaid(t)),
    onFailed: (t) => void failed.push(t.trx_id),
  });
  return { fulfillment, verify, paid, failed };
}

const delivery = (trx_id: string, ref: string, type = 'payment.completed') =>
  signWebhook({
    secret: SECRET,
    environment: 'sandbox',
    payload: { id: `evt_${trx_id}_${type}`, type, created_at: new Date().toISOString(), data: { trx_id, merchant_ref: ref } },
  }).then(({ body, headers }) => ({ payload: body, headers }));

describe.each(STORES)('one verify per outcome: %s', (_, makeStore) => {
  test('a delivery made 3 times, one after another: one verify, onPaid once; the later ones answered from the store', async () => {
    const { fulfillment, verify, paid } = kit(await makeStore(), { T1: tx('T1', 'success') });
    const d = await delivery('T1', 'order-1~a1');
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(JSON.parse((await fulfillment.handleWebhook(d)).body).result);
    expect(answers).toEqual(['ran', 'done', 'done']);
    expect(verify).toHaveBeenCalledTimes(1);
    expect(paid.map((t) => t.order_ref)).toEqual(['order-1']);
  });

  test('3 deliveries at once: one verify (inside the claim), the others busy (409) without one', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { fulfillment, verify, paid } = kit(await makeStore(), { T2: tx('T2', 'success') }, () => gate);
    const d = await delivery('T2', 'order-2~a1');
    const first = fulfillment.handleWebhook(d);
    await vi.waitFor(() => expect(paid).toHaveLength(1));
    const others = await Promise.all([fulfillment.handleWebhook(d), fulfillment.handleWebhook(d)]);
    expect(others.map((a) => a.status)).toEqual([409, 409]);
    release();
    expect((await first).status).toBe(200);
    expect(verify).toHaveBeenCalledTimes(1);
    expect((await fulfillment.handleWebhook(d)).status).toBe(200);
    expect(verify).toHaveBeenCalledTimes(1);
    expect(paid).toHaveLength(1);
  });

  test('outcome() after the delivery: answered from the store, no call', async () => {
    const { fulfillment, verify } = kit(await makeStore(), { T3: tx('T3', 'success'), F3: tx('F3', 'failed') });
    await fulfillment.handleWebhook(await delivery('T3', 'order-3~a1'));
    await fulfillment.handleWebhook(await delivery('F3', 'order-3~a2', 'payment.failed'));
    expect(verify).toHaveBeenCalledTimes(2);
    expect(await fulfillment.outcome('T3')).toBe('paid');
    expect(await fulfillment.outcome('F3', { wait: 60_000 })).toBe('failed');
    expect(verify).toHaveBeenCalledTimes(2);
  });

  test('outcome() before any delivery: one verify, onPaid once; the late delivery then costs no verify and runs nothing', async () => {
    const { fulfillment, verify, paid } = kit(await makeStore(), { T4: tx('T4', 'success') });
    expect(await fulfillment.outcome('T4', { merchantRef: 'order-4~a1' })).toBe('paid');
    expect(verify).toHaveBeenCalledTimes(1);
    expect(paid.map((t) => [t.merchant_ref, t.order_ref])).toEqual([['order-4~a1', 'order-4']]);
    const answer = await fulfillment.handleWebhook(await delivery('T4', 'order-4~a1'));
    expect([answer.status, JSON.parse(answer.body).result]).toEqual([200, 'done']);
    expect(await fulfillment.outcome('T4')).toBe('paid');
    expect(verify).toHaveBeenCalledTimes(1);
    expect(paid).toHaveLength(1);
  });

  test('outcome(): pending is kept for reconcile; failed runs onFailed once; a second paid attempt of the order is review', async () => {
    const store = await makeStore();
    const answers = { P5: tx('P5', 'pending'), F5: tx('F5', 'failed'), A5: tx('A5', 'success'), B5: tx('B5', 'success') };
    const { fulfillment, verify, paid, failed } = kit(store, answers);
    expect(await fulfillment.outcome('P5', { merchantRef: 'order-5~a1' })).toBe('pending');
    expect(await store.unsettled!(10)).toEqual(['payment:P5']);
    expect(await store.outcome('ref:P5')).toBe('order-5~a1');
    expect(await fulfillment.outcome('F5', { merchantRef: 'order-5~a2' })).toBe('failed');
    expect(await fulfillment.outcome('F5')).toBe('failed');
    expect(failed).toEqual(['F5']);
    expect(await fulfillment.outcome('A5', { merchantRef: 'order-5~a3' })).toBe('paid');
    expect(await fulfillment.outcome('B5', { merchantRef: 'order-5~a4' })).toBe('review');
    expect(await fulfillment.outcome('B5')).toBe('review');
    expect(paid.map((t) => t.trx_id)).toEqual(['A5']);
    expect(verify).toHaveBeenCalledTimes(4);
    // The reference recorded for a payment (the pending page's) wins over a later caller's.
    answers.P5 = tx('P5', 'success');
    expect(await fulfillment.outcome('P5', { merchantRef: 'order-9~a1' })).toBe('review');
    expect(await store.outcome('order:order-5')).toBe('A5');
  });

  test('the earlier generation: its IPN delivered twice and the return page cost one verify', async () => {
    const { fulfillment, verify, paid } = kit(await makeStore(), { L6: tx('L6', 'success') });
    const ipn = await signWebhook({
      format: 'legacy',
      secret: SECRET,
      payload: { data: { ref_trx: 'order-6~a1', environment: 'sandbox', trx_id: 'L6' }, message: 'Payment Completed', status: 'completed' },
    });
    for (let i = 0; i < 2; i++) expect((await fulfillment.handleWebhook({ payload: ipn.body, headers: ipn.headers })).status).toBe(200);
    expect(await fulfillment.outcome('L6', { merchantRef: 'order-6~a1' })).toBe('paid');
    expect(verify).toHaveBeenCalledTimes(1);
    expect(paid.map((t) => t.order_ref)).toEqual(['order-6']);
  });
});

describe('outcome({ wait })', () => {
  test('callers waiting on one payment share one loop: one claim and verify every 3 s, onPaid once, all answered paid', async () => {
    vi.useFakeTimers();
    const answers: Record<string, VerifiedTransaction> = {};
    const store = memoryStore();
    const claim = vi.spyOn(store, 'claim');
    const { fulfillment, verify, paid } = kit(store, answers);
    const waits = [1, 2, 3].map(() => fulfillment.outcome('W1', { merchantRef: 'order-w~a1', wait: 60_000 }));
    await vi.advanceTimersByTimeAsync(0);
    expect(verify).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(6_000);
    expect(verify).toHaveBeenCalledTimes(3);
    // One loop: one claim of the payment a round (three loops would claim three times, two of them busy).
    expect(claim.mock.calls.filter(([key]) => key === 'payment:W1')).toHaveLength(3);
    answers.W1 = tx('W1', 'success');
    await vi.advanceTimersByTimeAsync(3_000);
    expect(await Promise.all(waits)).toEqual(['paid', 'paid', 'paid']);
    expect(verify).toHaveBeenCalledTimes(4);
    expect(paid).toHaveLength(1);
    // Settled: a new caller is answered from the store.
    expect(await fulfillment.outcome('W1', { wait: 60_000 })).toBe('paid');
    expect(verify).toHaveBeenCalledTimes(4);
  });

  test('the wait ends: pending, no error; an aborted caller rejects with its reason; the last to leave stops the loop', async () => {
    vi.useFakeTimers();
    const { fulfillment, verify } = kit(memoryStore(), {});
    const stop = new AbortController();
    const aborted = fulfillment.outcome('W2', { wait: 60_000, signal: stop.signal });
    const short = fulfillment.outcome('W2', { wait: 5_000 });
    const rejection = expect(aborted).rejects.toThrow('page closed');
    await vi.advanceTimersByTimeAsync(1_000);
    stop.abort(new Error('page closed'));
    await rejection;
    await vi.advanceTimersByTimeAsync(4_000);
    expect(await short).toBe('pending');
    expect(verify).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(verify).toHaveBeenCalledTimes(2);
    expect(vi.getTimerCount()).toBe(0);
  });

  test('bad input is a PaymentsError; an aborted signal rejects before any call', async () => {
    const { fulfillment, verify } = kit(memoryStore(), {});
    await expect(fulfillment.outcome('')).rejects.toBeInstanceOf(PaymentsError);
    await expect(fulfillment.outcome('T', { wait: -1 })).rejects.toBeInstanceOf(PaymentsError);
    await expect(fulfillment.outcome('T', { signal: AbortSignal.abort(new Error('gone')) })).rejects.toThrow('gone');
    expect(verify).not.toHaveBeenCalled();
  });
});
