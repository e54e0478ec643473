// The kit's own sends within the client's polling budget: `reconcile` and the
// inbox's background processing verify each payment after a slot of the client's polling budget
// (its declared `pollSlot`); a client without one (a test's fake) is not paced.
// End to end: a reconcile of 45 payments against the sandbox at 20 requests a minute, on fake
// timers, meets no 429.
import { afterEach, describe, expect, test, vi } from 'vitest';
import { PaymentsClient, type PaymentRecord, type VerifiedTransaction } from '../../src/index.js';
import { createFulfillment, memoryStore, type FulfillmentClient } from '../../src/fulfillment.js';
import { createMockService, signWebhook, type MockRequestLogEntry } from '../../src/testing.js';
import { settle } from '../support/assertions.js';
import { START } from '../support/fake-api.js';
import { fakeClient } from '../support/fulfillment-client.js';

const SECRET = 'whsec_test_polling_budget';

afterEach(() => vi.useRealTimers());

const tx = (trx_id: string, status = 'success') => ({ trx_id, status, amount: 25, currency: 'USD' }) as VerifiedTransaction;

/** A fake client whose pacer records each slot, in order with the verifies. */
function pacedClient(payments: PaymentRecord[] = []) {
  const order: string[] = [];
  const { client } = fakeClient((trxId) => (order.push(`verify ${trxId}`), tx(trxId)), payments);
  Object.assign(client, { pollSlot: async () => void order.push('slot') });
  return { client, order };
}

describe('the kit asks the client’s pacer before each verify it sends on its own', () => {
  test('reconcile', async () => {
    const old = new Date(Date.now() - 3_600_000).toISOString();
    const payments = ['TRX1', 'TRX2'].map((trx_id) => ({ trx_id, status: 'success', amount: 25, currency: 'USD', created_at: old }));
    const { client, order } = pacedClient(payments as PaymentRecord[]);
    const kit = createFulfillment({ environment: 'sandbox', secret: SECRET, client, onPaid: () => {} });
    expect(await kit.reconcile({ since: 0 })).toMatchObject({ checked: 2, paid: 2 });
    expect(order).toEqual(['slot', 'verify TRX1', 'slot', 'verify TRX2']);
  });

  test('the inbox, processing a recorded delivery after the answer', async () => {
    const { client, order } = pacedClient();
    const store = { ...memoryStore(), durable: true };
    const kit = createFulfillment({ environment: 'sandbox', secret: SECRET, client, store, onPaid: () => {}, waitUntil: () => {} });
    const payload = { id: 'evt_1', type: 'payment.completed', data: { trx_id: 'TRX1', status: 'completed' } };
    const { body, headers } = await signWebhook({ secret: SECRET, payload, environment: 'sandbox' });
    expect(await kit.handleWebhook({ payload: body, headers })).toMatchObject({ status: 200 });
    await vi.waitFor(async () => expect(await kit.inbox({ state: 'done' })).toHaveLength(1));
    expect(order).toEqual(['slot', 'verify TRX1']);
  });

  test('a client without a pacer (a fake) is not paced', async () => {
    const { client, verify } = fakeClient((trxId) => tx(trxId));
    const kit = createFulfillment({ environment: 'sandbox', secret: SECRET, client: client satisfies FulfillmentClient, onPaid: () => {} });
    expect(await kit.handleVerified(tx('TRX9'))).toBe('ran');
    const payload = { id: 'evt_9', type: 'payment.completed', data: { trx_id: 'TRX8', status: 'completed' } };
    const { body, headers } = await signWebhook({ secret: SECRET, payload, environment: 'sandbox' });
    expect(await kit.handleWebhook({ payload: body, headers })).toMatchObject({ status: 200 });
    expect(verify).toHaveBeenCalledTimes(1);
  });
});

test('reconcile of 45 payments against the sandbox at 20 requests a minute (pollingBudget 20): 0 429s, every payment settled', async () => {
  vi.useFakeTimers({ now: START, toFake: ['Date', 'performance', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
  const log: MockRequestLogEntry[] = [];
  const mock = createMockService({
    rateLimitPerMinute: 20,
    onRequest: (entry) => log.push(entry),
    fetch: async () => Response.json({ received: true }),
  });
  const client = new PaymentsClient({
    environment: 'sandbox',
    ...mock.credentials.sandbox,
    baseUrl: 'https://sandbox.business-payments.test',
    fetch: (input, init) => mock.handle(new Request(input, init)),
    pollingBudget: 20,
  });
  // 45 checkouts, 15 a minute; every third one paid (its webhook lost: reconcile finds it).
  const paid = new Set<string>();
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 15; i++) {
      const payment = await client.payments.create({
        payment_amount: 25,
        currency_code: 'USD',
        ref_trx: `order-${round}-${i}`,
        ipn_url: 'https://shop.example.test/ipn',
      });
      if (i % 3 === 0) {
        await mock.completeCheckout(payment.trx_id, 'success');
        paid.add(payment.trx_id);
      }
    }
    await vi.advanceTimersByTimeAsync(61_000);
  }
  await vi.advanceTimersByTimeAsync(11 * 60_000); // past reconcile's 10 minutes of grace
  const settled: string[] = [];
  const kit = createFulfillment({
    environment: 'sandbox',
    secret: mock.credentials.sandbox.webhookSecret,
    client,
    onPaid: (transaction) => void settled.push(transaction.trx_id),
  });
  const from = log.length;
  const report = await settle(kit.reconcile({ since: START }));
  expect(report).toMatchObject({ seen: 45, checked: 45, paid: 15, pending: 30, errors: [] });
  expect(new Set(settled)).toEqual(paid);
  expect(log.filter((entry) => entry.status === 429)).toEqual([]);
  // The verifies, 18 a minute at most (9/10 of the budget).
  const verifies = log.slice(from).filter((entry) => entry.path.startsWith('/api/v1/verify-payment/'));
  expect(verifies).toHaveLength(45);
  for (const { at } of verifies)
    expect(verifies.filter((other) => other.at > at - 60_000 && other.at <= at).length).toBeLessThanOrEqual(18);
  await mock.close();
});
