// Where handleVerified's order comes from. Verify answers no reference (on either generation),
// so the reference the kit recorded for the trx_id (an earlier-generation IPN's, recorded as it
// came) wins over the `merchantRef` a caller passes; the caller's decides only where the kit has
// none. On the memory store and on postgresStore over PGlite.
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { VerifiedTransaction } from '../../src/index.js';
import { createFulfillment, memoryStore, type FulfilledTransaction, type FulfillmentStore } from '../../src/fulfillment.js';
import { postgresStore } from '../../src/fulfillment-postgres.js';
import { signWebhook } from '../../src/testing.js';
import { fakeClient } from '../support/fulfillment-client.js';

const API_SECRET = 'test_secret_verified_ref';
const tx = (trx_id: string, status: string): VerifiedTransaction =>
  ({ trx_id, status, amount: 25, currency: 'USD', fee: 0, net_amount: 25 }) as VerifiedTransaction;

let started: Promise<PGlite> | undefined;
const pglite = () => (started ??= PGlite.create());
beforeAll(async () => void (await pglite()), 60_000);
afterAll(async () => void (await (await started)?.close()), 30_000);

const STORES: Array<[string, () => Promise<FulfillmentStore<unknown>>]> = [
  ['memory', async () => memoryStore()],
  ['postgres (PGlite)', async () => postgresStore(await pglite(), { table: `bp_ref_${crypto.randomUUID().replaceAll('-', '')}` })],
];

/** The earlier generation's IPN for `trxId`, paying `ref`, as it sends it (signed with the API secret). */
const ipn = (trxId: string, ref: string) =>
  signWebhook({
    format: 'legacy',
    secret: API_SECRET,
    payload: {
      data: { ref_trx: ref, amount: 25, currency_code: 'USD', environment: 'sandbox', trx_id: trxId },
      message: 'Payment Completed',
      status: 'completed',
    },
  }).then(({ body, headers }) => ({ payload: body, headers }));

describe.each(STORES)("handleVerified's reference: %s", (_, makeStore) => {
  test("the reference an earlier-generation IPN brought wins over the caller's merchantRef", async () => {
    const answers: Record<string, VerifiedTransaction> = { T1: tx('T1', 'pending') };
    const { client } = fakeClient((trxId) => answers[trxId] ?? tx(trxId, 'pending'));
    const paid: FulfilledTransaction[] = [];
    const fulfillment = createFulfillment<unknown>({
      environment: 'sandbox',
      secret: API_SECRET,
      client,
      store: await makeStore(),
      inbox: false,
      onPaid: (t) => void paid.push(t),
    });
    // The IPN came while verify still said pending: recorded (202), its reference with it.
    expect((await fulfillment.handleWebhook(await ipn('T1', 'order-A~a1'))).status).toBe(202);
    answers.T1 = tx('T1', 'success');
    // A return page passes another order's reference (read from a URL, say): the IPN's decides.
    expect(await fulfillment.handleVerified(answers.T1, { merchantRef: 'order-B~a1' })).toBe('ran');
    expect(paid.map((t) => [t.trx_id, t.merchant_ref, t.order_ref])).toEqual([['T1', 'order-A~a1', 'order-A']]);
  });

  test("with no reference from the service, the caller's decides, and the first one recorded stays the payment's", async () => {
    const answers: Record<string, VerifiedTransaction> = { T2: tx('T2', 'pending'), T3: tx('T3', 'success') };
    const { client } = fakeClient((trxId) => answers[trxId] ?? tx(trxId, 'pending'));
    const paid: FulfilledTransaction[] = [];
    const fulfillment = createFulfillment<unknown>({
      environment: 'sandbox',
      secret: API_SECRET,
      client,
      store: await makeStore(),
      inbox: false,
      onPaid: (t) => void paid.push(t),
    });
    expect(await fulfillment.handleVerified(answers.T3!, { merchantRef: 'order-C~a1' })).toBe('ran');
    // Pending: kept for reconcile with the reference it was reported with; a later report's other one does not move it.
    expect(await fulfillment.handleVerified(answers.T2!, { merchantRef: 'order-D~a1' })).toBe('pending');
    answers.T2 = tx('T2', 'success');
    expect(await fulfillment.handleVerified(answers.T2, { merchantRef: 'order-E~a1' })).toBe('ran');
    expect(paid.map((t) => [t.trx_id, t.order_ref])).toEqual([
      ['T3', 'order-C'],
      ['T2', 'order-D'],
    ]);
  });
});
