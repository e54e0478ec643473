// A store that lost its attempt counts (the `attempts:<order>` keys: a key evicted, a row
// deleted), on the memory store and on postgresStore over PGlite: newAttempt never hands out a
// ref_trx (and key) it handed out before, and reconcile settles the paid attempts of such an
// order through the once-only path (the order's one-payment rule with them) instead of listing
// them as unknown for ever. An attempt this store never made stays unknown.
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { PaymentRecord, VerifiedTransaction } from '../../src/index.js';
import { createFulfillment, memoryStore, type FulfilledTransaction, type FulfillmentStore } from '../../src/fulfillment.js';
import { postgresStore } from '../../src/fulfillment-postgres.js';
import { fakeClient } from '../support/fulfillment-client.js';

const tx = (trx_id: string, status: string): VerifiedTransaction =>
  ({ trx_id, status, amount: 25, currency: 'USD', fee: 0, net_amount: 25 }) as VerifiedTransaction;

let started: Promise<PGlite> | undefined;
const pglite = () => (started ??= PGlite.create());
beforeAll(async () => void (await pglite()), 60_000);
afterAll(async () => void (await (await started)?.close()), 30_000);

/** A store, and how it loses its attempt counts (and nothing else). */
type Lossy = { store: FulfillmentStore<unknown>; loseCounts(): Promise<void> };

const STORES: Array<[string, () => Promise<Lossy>]> = [
  [
    'memory',
    async () => {
      const store: FulfillmentStore<unknown> = memoryStore();
      const kept = store.outcome;
      return {
        store,
        // From now on the counts live in a store that never had any: `attempts:*` is gone.
        async loseCounts() {
          const fresh = memoryStore();
          store.attempt = fresh.attempt;
          store.outcome = (key) => (key.startsWith('attempts:') ? fresh.outcome(key) : kept(key));
        },
      };
    },
  ],
  [
    'postgres (PGlite)',
    async () => {
      const db = await pglite();
      const table = `bp_lost_${crypto.randomUUID().replaceAll('-', '')}`;
      return {
        store: postgresStore(db, { table }),
        loseCounts: async () => void (await db.query(`DELETE FROM ${table} WHERE key LIKE 'attempts:%'`)),
      };
    },
  ],
];

function kit(store: FulfillmentStore<unknown>, answers: Record<string, VerifiedTransaction>, payments: PaymentRecord[] = []) {
  const { client, verify } = fakeClient((trxId) => answers[trxId] ?? tx(trxId, 'pending'), payments);
  const paid: FulfilledTransaction[] = [];
  const duplicates: string[] = [];
  const fulfillment = createFulfillment<unknown>({
    environment: 'sandbox',
    secret: 'whsec_test_attempts_lost',
    client,
    store,
    inbox: false,
    onPaid: (t) => void paid.push(t),
    onDuplicatePayment: (t) => void duplicates.push(t.trx_id),
  });
  return { fulfillment, verify, paid, duplicates };
}

describe.each(STORES)('a lost attempt count: %s', (_, make) => {
  test('newAttempt never hands out a ref_trx or key it handed out before, one at a time or at once', async () => {
    const { store, loseCounts } = await make();
    const { fulfillment } = kit(store, {});
    const before = [await fulfillment.newAttempt('order-L1'), await fulfillment.newAttempt('order-L1')];
    expect(before.map((a) => a.ref_trx)).toEqual(['order-L1~a1', 'order-L1~a2']);
    await loseCounts();
    expect(await store.outcome('attempts:order-L1')).toBeUndefined();
    const next = await fulfillment.newAttempt('order-L1');
    expect(next).toEqual({ ref_trx: 'order-L1~a3', idempotencyKey: 'order-L1~a3', attempt: 3 });
    // Lost again, then three at once: three new references, none used before.
    await loseCounts();
    const racing = await Promise.all([1, 2, 3].map(() => fulfillment.newAttempt('order-L1')));
    const used = [...before, next].flatMap((a) => [a.ref_trx, a.idempotencyKey]);
    const refs = racing.map((a) => a.ref_trx);
    expect(new Set(refs).size).toBe(3);
    for (const attempt of racing) {
      expect(used).not.toContain(attempt.ref_trx);
      expect(used).not.toContain(attempt.idempotencyKey);
    }
    // Another order's count is its own.
    expect((await fulfillment.newAttempt('order-L2')).ref_trx).toBe('order-L2~a1');
  });

  test("reconcile settles a paid attempt whose count was lost through the once-only path, the order's one-payment rule with it; an attempt never made stays unknown", async () => {
    const { store, loseCounts } = await make();
    const now = Date.now();
    const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000).toISOString();
    const answers = {
      P1: tx('P1', 'failed'),
      P2: tx('P2', 'success'),
      Q1: tx('Q1', 'success'),
      Q2: tx('Q2', 'success'),
      N1: tx('N1', 'success'),
    };
    const list = [
      // order-P: its first attempt failed, its second was paid and the webhook never came.
      { trx_id: 'P2', merchant_ref: 'order-P~a2', created_at: at(30) },
      { trx_id: 'P1', merchant_ref: 'order-P~a1', created_at: at(40) },
      // order-Q: paid by its first attempt (settled), then paid again by its second.
      { trx_id: 'Q2', merchant_ref: 'order-Q~a2', created_at: at(50) },
      { trx_id: 'Q1', merchant_ref: 'order-Q~a1', created_at: at(60) },
      // An attempt this store never made (another app on the account).
      { trx_id: 'N1', merchant_ref: 'order-N~a1', created_at: at(70) },
    ] as PaymentRecord[];
    const { fulfillment, paid, duplicates, verify } = kit(store, answers, list);
    for (const order of ['order-P', 'order-P', 'order-Q', 'order-Q']) await fulfillment.newAttempt(order);
    expect(await fulfillment.handleVerified(answers.P1, { merchantRef: 'order-P~a1' })).toBe('ran');
    expect(await fulfillment.handleVerified(answers.Q1, { merchantRef: 'order-Q~a1' })).toBe('ran');
    await loseCounts();

    const report = await fulfillment.reconcile({ since: now - 24 * 3_600_000 });
    expect(report).toMatchObject({ checked: 2, paid: 1, unknown: ['N1'], review: ['Q2'], errors: [] });
    expect(paid.map((t) => [t.trx_id, t.order_ref])).toEqual([
      ['Q1', 'order-Q'],
      ['P2', 'order-P'],
    ]);
    expect(duplicates).toEqual(['Q2']);
    expect(verify).not.toHaveBeenCalledWith('N1');
    // Settled once: the next run has nothing left to do but the unknown one.
    expect(await fulfillment.reconcile({ since: now - 24 * 3_600_000 })).toMatchObject({ checked: 0, unknown: ['N1'] });
  });
});
