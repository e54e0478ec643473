// The kit under real conditions, on the memory
// store and on postgresStore over PGlite: the inbox (ack at once, process after, drain, work,
// backoff, dead, replay), leases renewed while a slow handler runs, attempts and one payment
// per order, the price check, and a reconcile that stops past `since`.
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { PaymentRecord, VerifiedTransaction } from '../../src/index.js';
import { PaymentsError } from '../../src/index.js';
import {
  createFulfillment,
  memoryStore,
  type FulfillmentOptions,
  type FulfilledTransaction,
  type FulfillmentStore,
} from '../../src/fulfillment.js';
import { postgresStore } from '../../src/fulfillment-postgres.js';
import { signWebhook } from '../../src/testing.js';
import { fakeClient as fakeVerifier } from '../support/fulfillment-client.js';

const SECRET = 'whsec_test_real_conditions';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A verified transaction as the service answers it (no merchant_ref: verify has none). */
const tx = (trx_id: string, status: string, extra: Partial<VerifiedTransaction> = {}): VerifiedTransaction =>
  ({ trx_id, status, amount: 25, currency: 'USD', fee: 0, net_amount: 25, ...extra }) as VerifiedTransaction;

/** A client whose verify answers from `answers` (pending for any other trx_id). */
const fakeClient = (answers: Record<string, VerifiedTransaction>, payments: Iterable<PaymentRecord> = []) =>
  fakeVerifier((trxId) => answers[trxId] ?? tx(trxId, 'pending'), payments);

const event = (trx_id: string, merchant_ref: string, id = `evt_${trx_id}`) => ({
  id,
  type: 'payment.completed',
  api_version: '2024-06-01',
  created_at: new Date().toISOString(),
  data: { trx_id, merchant_ref, status: 'completed', amount: { value: 25, currency: 'USD' } },
});

async function delivery(payload: Record<string, unknown>) {
  const { body, headers } = await signWebhook({ secret: SECRET, payload, environment: 'sandbox' });
  return { payload: body, headers };
}

/** Waits (real time, in short steps) until `check` holds: background work finishing. */
async function until(check: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await sleep(5);
  }
}

let started: Promise<PGlite> | undefined;
const pglite = () => (started ??= PGlite.create());
// Started once, before the cases (it takes seconds), and closed after them.
beforeAll(async () => void (await pglite()), 60_000);
afterAll(async () => void (await (await started)?.close()), 30_000);

// Each case gets a store of its own: the memory store made durable (so the inbox is on by
// default, as with a database), or postgresStore on a fresh table of the one PGlite.
const STORES: Array<[string, () => Promise<FulfillmentStore<unknown>>]> = [
  ['memory', async () => ({ ...memoryStore(), durable: true })],
  ['postgres (PGlite)', async () => postgresStore(await pglite(), { table: `bp_real_${crypto.randomUUID().replaceAll('-', '')}` })],
];

function kit(
  store: FulfillmentStore<unknown>,
  answers: Record<string, VerifiedTransaction>,
  overrides: Partial<FulfillmentOptions<unknown>> = {},
  payments: Iterable<PaymentRecord> = [],
) {
  const { client, verify } = fakeClient(answers, payments);
  const paid: FulfilledTransaction[] = [];
  const fulfillment = createFulfillment<unknown>({
    environment: 'sandbox',
    secret: SECRET,
    client,
    store,
    retryDelay: () => 0,
    onPaid: (t) => void paid.push(t),
    ...overrides,
  });
  return { fulfillment, verify, paid };
}

describe.each(STORES)('the inbox: %s', (_, makeStore) => {
  test('a delivery is recorded and answered 200 at once, whatever onPaid costs; processed after, once, across duplicates', async () => {
    let finish!: () => void;
    const slow = new Promise<void>((resolve) => (finish = resolve));
    const store = await makeStore();
    let entered = 0;
    const { fulfillment, paid } = kit(
      store,
      { TRX1: tx('TRX1', 'success') },
      { onPaid: async (t) => (entered++, await slow, void paid.push(t)) },
    );
    const first = await fulfillment.handleWebhook(await delivery(event('TRX1', 'order-1~a1')));
    expect(first).toEqual({ status: 200, body: JSON.stringify({ received: true, result: 'queued' }) });
    // Answered; onPaid then starts in the background and is still running.
    await until(() => entered === 1);
    expect(paid).toEqual([]);
    // Two more deliveries of the same event while onPaid runs: recorded once. (A store on one
    // connection, as PGlite is, answers them once that connection is free: give it a Pool.)
    const duplicates = [0, 1].map(async () => (await fulfillment.handleWebhook(await delivery(event('TRX1', 'order-1~a1')))).status);
    finish();
    expect(await Promise.all(duplicates)).toEqual([200, 200]);
    await until(async () => (await fulfillment.inbox({ state: 'done' })).length === 1);
    expect(paid).toEqual([expect.objectContaining({ trx_id: 'TRX1', merchant_ref: 'order-1~a1', order_ref: 'order-1' })]);
    expect(await fulfillment.inbox({ state: 'done' })).toEqual([expect.objectContaining({ id: 'evt_TRX1', state: 'done', attempts: 0 })]);
    expect(await fulfillment.drain()).toEqual({ processed: 0, done: 0, retried: 0, dead: 0 });
    // The kit's object carries its documented methods only.
    expect(Object.keys(fulfillment).sort()).toEqual(
      [
        'drain',
        'handleVerified',
        'handleWebhook',
        'inbox',
        'newAttempt',
        'outcome',
        'process',
        'reconcile',
        'replay',
        'store',
        'work',
      ].sort(),
    );
  });

  test('a handler that fails is retried with backoff by drain(), dead after maxAttempts, listed, and replay(id) runs it again', async () => {
    const store = await makeStore();
    let erpUp = false;
    const delays: number[] = [];
    const { fulfillment, paid } = kit(
      store,
      { TRX2: tx('TRX2', 'success') },
      {
        maxAttempts: 3,
        retryDelay: (attempts) => (delays.push(attempts), 0),
        onPaid: (t) => {
          if (!erpUp) throw new Error('ERP down');
          paid.push(t);
        },
      },
    );
    expect((await fulfillment.handleWebhook(await delivery(event('TRX2', 'order-2~a1')))).status).toBe(200);
    await until(async () => (await fulfillment.inbox({ state: 'pending' }))[0]?.attempts === 1);
    expect(await fulfillment.drain()).toEqual({ processed: 2, done: 0, retried: 1, dead: 1 });
    expect(delays).toEqual([1, 2]);
    const [dead] = await fulfillment.inbox({ state: 'dead' });
    expect(dead).toMatchObject({ id: 'evt_TRX2', state: 'dead', attempts: 3, error: 'ERP down' });
    expect(JSON.parse(dead!.event)).toMatchObject({ type: 'payment.completed', data: { trx_id: 'TRX2' } });
    erpUp = true;
    expect(await fulfillment.replay('evt_TRX2')).toBe(true);
    expect(paid.map((t) => t.trx_id)).toEqual(['TRX2']);
    expect(await fulfillment.inbox({ state: 'dead' })).toEqual([]);
    expect(await fulfillment.replay('evt_never')).toBe(false);
  });

  test('killed after the 2xx, before processing: work() in another process picks it up; a verify that is slow or fails never holds the answer', async () => {
    const store = await makeStore();
    // This process records the delivery, then dies: its take never happens.
    const dying = { ...store, inbox: { ...store.inbox!, take: () => new Promise<never>(() => {}) } } as FulfillmentStore<unknown>;
    const verifySlow = kit(dying, { TRX3: tx('TRX3', 'success') });
    verifySlow.verify.mockImplementation(() => new Promise(() => {}));
    const answered = await verifySlow.fulfillment.handleWebhook(await delivery(event('TRX3', 'order-3~a1')));
    expect(answered.status).toBe(200);
    const worker = kit(store, { TRX3: tx('TRX3', 'success') });
    const controller = new AbortController();
    const working = worker.fulfillment.work({ signal: controller.signal, idleMs: 10 });
    await until(() => worker.paid.length === 1);
    controller.abort();
    await working;
    expect(worker.paid.map((t) => t.trx_id)).toEqual(['TRX3']);
  });

  test('the Fetch API route hands the processing to waitUntil; inbox: false processes inside the request', async () => {
    const store = await makeStore();
    const waited: Array<Promise<unknown>> = [];
    const { fulfillment, paid } = kit(
      store,
      { TRX4: tx('TRX4', 'success'), TRX5: tx('TRX5', 'success') },
      { waitUntil: (p) => void waited.push(p) },
    );
    const { payload, headers } = await delivery(event('TRX4', 'order-4~a1'));
    const response = await fulfillment.handleWebhook(
      new Request('https://shop.example/hook', { method: 'POST', body: payload as string, headers: headers as Record<string, string> }),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true, result: 'queued' });
    await Promise.all(waited);
    expect(paid.map((t) => t.trx_id)).toEqual(['TRX4']);

    const inline = kit(store, { TRX5: tx('TRX5', 'success') }, { inbox: false });
    const answer = await inline.fulfillment.handleWebhook(await delivery(event('TRX5', 'order-5~a1')));
    expect(JSON.parse(answer.body)).toEqual({ received: true, result: 'ran' });
    expect(inline.paid.map((t) => t.trx_id)).toEqual(['TRX5']);
  });
});

describe.each(STORES)('leases that hold: %s', (_, makeStore) => {
  test('a handler slower than its lease is renewed: duplicates meanwhile are busy, onPaid runs once, never concurrently', async () => {
    const store = await makeStore();
    let running = 0;
    let most = 0;
    const { fulfillment, paid } = kit(
      store,
      { TRX6: tx('TRX6', 'success') },
      {
        inbox: false,
        lease: 150,
        onPaid: async (t) => {
          most = Math.max(most, ++running);
          await sleep(600);
          running--;
          paid.push(t);
        },
      },
    );
    const first = fulfillment.handleWebhook(await delivery(event('TRX6', 'order-6~a1')));
    const answers: number[] = [];
    for (let i = 0; i < 4; i++) {
      await sleep(120);
      answers.push((await fulfillment.handleWebhook(await delivery(event('TRX6', 'order-6~a1')))).status);
    }
    expect((await first).status).toBe(200);
    expect(answers).toEqual([409, 409, 409, 409]);
    expect(most).toBe(1);
    expect(paid).toHaveLength(1);
    expect(JSON.parse((await fulfillment.handleWebhook(await delivery(event('TRX6', 'order-6~a1')))).body).result).toBe('done');
  });
});

describe.each(STORES)('attempts and orders: %s', (_, makeStore) => {
  test('newAttempt counts attempts per order; a second successful attempt goes to onDuplicatePayment, never onPaid', async () => {
    const store = await makeStore();
    const duplicates: FulfilledTransaction[] = [];
    const { fulfillment, paid } = kit(
      store,
      { A1: tx('A1', 'failed'), A2: tx('A2', 'success'), A3: tx('A3', 'success') },
      { inbox: false, onDuplicatePayment: (t) => void duplicates.push(t) },
    );
    expect(await fulfillment.newAttempt('order-7')).toEqual({ ref_trx: 'order-7~a1', idempotencyKey: 'order-7~a1', attempt: 1 });
    expect((await fulfillment.newAttempt('order-7')).ref_trx).toBe('order-7~a2');
    expect((await fulfillment.newAttempt('order-7')).ref_trx).toBe('order-7~a3');
    expect(await fulfillment.handleVerified(tx('A1', 'failed'), { merchantRef: 'order-7~a1' })).toBe('ran');
    expect(await fulfillment.handleVerified(tx('A2', 'success'), { merchantRef: 'order-7~a2' })).toBe('ran');
    expect(await fulfillment.handleVerified(tx('A3', 'success'), { merchantRef: 'order-7~a3' })).toBe('review');
    expect(paid.map((t) => [t.trx_id, t.order_ref])).toEqual([['A2', 'order-7']]);
    expect(duplicates.map((t) => t.trx_id)).toEqual(['A3']);
    // Either payment reported again, by any path: done, nothing runs.
    expect(await fulfillment.handleVerified(tx('A2', 'success'))).toBe('done');
    expect(await fulfillment.handleVerified(tx('A3', 'success'), { merchantRef: 'order-7~a3' })).toBe('done');
    expect(JSON.parse((await fulfillment.handleWebhook(await delivery(event('A3', 'order-7~a3')))).body).result).toBe('done');
    expect(paid).toHaveLength(1);
    expect(duplicates).toHaveLength(1);
  });

  test('two attempts of one order paid at once: one onPaid, the other is a duplicate on the review list', async () => {
    const store = await makeStore();
    const { fulfillment, paid } = kit(
      store,
      { B1: tx('B1', 'success'), B2: tx('B2', 'success') },
      { inbox: false, onPaid: async (t) => (await sleep(50), void paid.push(t)) },
    );
    const results = await Promise.all([
      fulfillment.handleVerified(tx('B1', 'success'), { merchantRef: 'order-8~a1' }),
      fulfillment.handleVerified(tx('B2', 'success'), { merchantRef: 'order-8~a2' }),
    ]);
    // The loser is busy while the winner holds the order; reported again, it is a duplicate.
    const settled = await Promise.all(
      ['B1', 'B2'].map((id, i) =>
        results[i] === 'busy' ? fulfillment.handleVerified(tx(id, 'success'), { merchantRef: `order-8~a${i + 1}` }) : results[i],
      ),
    );
    expect([...settled].sort()).toEqual(['ran', 'review']);
    expect(paid).toHaveLength(1);
    const listed = await fulfillment.inbox({ state: 'review' });
    expect(listed).toHaveLength(1);
    const loser = paid[0]!.trx_id === 'B1' ? 'B2' : 'B1';
    expect(listed[0]).toMatchObject({ id: `review:${loser}`, state: 'review' });
    expect(JSON.parse(listed[0]!.event)).toMatchObject({
      type: 'payment.review',
      reason: 'duplicate',
      data: { trx_id: loser, order_ref: 'order-8' },
    });
  });

  test('newAttempt refuses what cannot be a reference, with a PaymentsError that says what to pass', async () => {
    const { fulfillment } = kit(await makeStore(), {});
    await expect(fulfillment.newAttempt('')).rejects.toThrow(PaymentsError);
    await expect(fulfillment.newAttempt(42 as unknown as string)).rejects.toThrow(/order reference/);
    await expect(fulfillment.newAttempt('x'.repeat(58))).rejects.toThrow(/60 characters/);
  });
});

describe.each(STORES)('the price check: %s', (_, makeStore) => {
  test('expect is compared with paidAmount and the currency, as decimals; a mismatch goes to onMismatch (with ctx.expected) or the review list, never onPaid', async () => {
    const store = await makeStore();
    const mismatched: Array<[string, unknown]> = [];
    const prices: Record<string, { amount: string; currency: string }> = {
      'order-9': { amount: '25.00', currency: 'usd' },
      'order-10': { amount: '30.00', currency: 'USD' },
    };
    // The earlier generation's verify: amount is the net (24.25 + fee 0.75 = 25 paid).
    const answers = { C1: tx('C1', 'success', { amount: 24.25, fee: 0.75, net_amount: 24.25 }), C2: tx('C2', 'success') };
    const { fulfillment, paid } = kit(store, answers, {
      inbox: false,
      expect: (t) => prices[t.order_ref!],
      onMismatch: (t, ctx) => void mismatched.push([t.trx_id, ctx.expected]),
    });
    expect(await fulfillment.handleVerified(answers.C1, { merchantRef: 'order-9~a1' })).toBe('ran');
    expect(await fulfillment.handleVerified(answers.C2, { merchantRef: 'order-10~a1' })).toBe('review');
    expect(await fulfillment.handleVerified(answers.C2, { merchantRef: 'order-10~a1' })).toBe('done');
    expect(paid.map((t) => t.trx_id)).toEqual(['C1']);
    expect(mismatched).toEqual([['C2', { amount: '30.00', currency: 'USD' }]]);

    const noHandler = kit(
      store,
      { C3: tx('C3', 'success', { currency: 'EUR' }) },
      { inbox: false, expect: () => ({ amount: 25, currency: 'USD' }) },
    );
    expect(await noHandler.fulfillment.handleVerified(tx('C3', 'success', { currency: 'EUR' }), { merchantRef: 'order-11~a1' })).toBe(
      'review',
    );
    expect(noHandler.paid).toEqual([]);
    expect(await noHandler.fulfillment.inbox({ state: 'review' })).toEqual([expect.objectContaining({ id: 'review:C3' })]);
  });
});

describe.each(STORES)('reconcile that scales: %s', (_, makeStore) => {
  test('stops once a newest-first list is a page past `since`; unknown and review apart from errors', async () => {
    const store = await makeStore();
    const now = Date.now();
    const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000).toISOString();
    let yielded = 0;
    // 5 payments in the window, then an endless history from before `since`.
    function* history(): Generator<PaymentRecord> {
      const recent: Array<[string, string]> = [
        ['R1', 'order-20~a1'],
        ['R2', 'order-21~a5'],
        ['R3', 'order-22~a1'],
        ['R4', 'order-22~a2'],
        ['R5', 'order-23'],
      ];
      for (const [i, [trx_id, merchant_ref]] of recent.entries())
        yield (yielded++, { trx_id, merchant_ref, created_at: at(30 + i) }) as PaymentRecord;
      for (let i = 0; ; i++)
        yield (yielded++, { trx_id: `OLD${i}`, merchant_ref: `old-${i}`, created_at: at(24 * 60 + 10 + i) }) as PaymentRecord;
    }
    const answers = { R1: tx('R1', 'success'), R3: tx('R3', 'success'), R4: tx('R4', 'success'), R5: tx('R5', 'success') };
    const { fulfillment, paid, verify } = kit(store, answers, { inbox: false }, history());
    for (const order of ['order-20', 'order-22', 'order-22']) await fulfillment.newAttempt(order);
    const report = await fulfillment.reconcile({ since: now - 24 * 60 * 60_000 });
    expect(yielded).toBeLessThanOrEqual(5 + 101);
    // R2 is an attempt this store never made; R3 and R4 pay one order twice; R5 names a plain order id.
    expect(report).toMatchObject({ checked: 4, paid: 3, unknown: ['R2'], review: ['R4'], errors: [] });
    expect(paid.map((t) => t.trx_id)).toEqual(['R1', 'R3', 'R5']);
    expect(verify).not.toHaveBeenCalledWith('R2');
  });
});

describe.each(STORES)('the earlier generation, with no payment list: %s', (_, makeStore) => {
  test("a payment kept for reconcile keeps its reference: the store's walk finds its order (onPaid's order_ref, a second attempt a duplicate)", async () => {
    const store = await makeStore();
    const noList = Object.assign(new Error('no payment list'), { name: 'RouteNotSupportedError' });
    const answers: Record<string, VerifiedTransaction> = { E1: tx('E1', 'pending'), E2: tx('E2', 'pending') };
    const { fulfillment, paid } = kit(store, answers, { inbox: false });
    for (let i = 0; i < 2; i++) await fulfillment.newAttempt('order-30');
    // The return pages could not settle (pending): their trx_ids, with the attempts' refs, are kept.
    expect(await fulfillment.handleVerified(answers.E1!, { merchantRef: 'order-30~a1' })).toBe('pending');
    expect(await fulfillment.handleVerified(answers.E2!, { merchantRef: 'order-30~a2' })).toBe('pending');
    answers.E1 = tx('E1', 'success');
    answers.E2 = tx('E2', 'success');
    const { client: fake } = fakeClient(answers);
    fake.payments.list = () => ({
      [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(noList) }),
    });
    // The client tells its own RouteNotSupportedError through the kits' seam.
    const walkerClient = Object.assign(fake, { unsupported: (error: unknown) => error === noList });
    const walker = createFulfillment<unknown>({
      environment: 'sandbox',
      secret: SECRET,
      client: walkerClient,
      store,
      inbox: false,
      onPaid: (t) => void paid.push(t),
    });
    const report = await walker.reconcile({ since: 0 });
    expect(report).toMatchObject({ walked: 'store', paid: 1, review: ['E2'], errors: [] });
    expect(paid.map((t) => [t.trx_id, t.order_ref])).toEqual([['E1', 'order-30']]);
  });
});

test('processing right after the answer runs at most 4 at a time in one process; the rest follow as slots free', async () => {
  let running = 0;
  let most = 0;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const ids = [1, 2, 3, 4, 5, 6].map((i) => `Q${i}`);
  const { fulfillment, paid } = kit({ ...memoryStore(), durable: true }, Object.fromEntries(ids.map((id) => [id, tx(id, 'success')])), {
    onPaid: async (t) => {
      most = Math.max(most, ++running);
      await gate;
      running--;
      paid.push(t);
    },
  });
  for (const id of ids) expect((await fulfillment.handleWebhook(await delivery(event(id, `order-${id}~a1`)))).status).toBe(200);
  await until(() => running === 4);
  expect(most).toBe(4);
  release();
  await until(() => paid.length === 6);
  expect(most).toBe(4);
});
