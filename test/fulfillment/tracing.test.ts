// The fulfillment kit on the TracingChannel `business-payments:fulfillment`: one trace per
// webhook delivery, per handleVerified and per payment reconcile settles, with what an
// operator needs (operation, trx_id, event, result, HTTP answer, error class) and nothing
// of the delivery's secret, signature or body.
import diagnostics from 'node:diagnostics_channel';
import { afterEach, describe, expect, test } from 'vitest';
import type { PaymentRecord, VerifiedTransaction } from '../../src/index.js';
import { createFulfillment, memoryStore, type FulfillmentClient, type FulfillmentTrace } from '../../src/fulfillment.js';
import { signWebhook } from '../../src/testing.js';

const SECRET = 'whsec_test_tracing';
const tx = (trx_id: string, status: string): VerifiedTransaction =>
  ({ trx_id, status, amount: 25, currency: 'USD', fee: 0.75, net_amount: 24.25 }) as VerifiedTransaction;

function kit(onPaid: () => unknown = () => {}, payments: PaymentRecord[] = [], inbox = false) {
  const client: FulfillmentClient = {
    environment: 'sandbox',
    payments: {
      verify: async (trxId) => tx(trxId, trxId.startsWith('PAID') ? 'success' : 'pending'),
      list: async function* () {
        yield* payments;
      },
    },
  };
  return createFulfillment({ environment: 'sandbox', secret: SECRET, client, onPaid, store: { ...memoryStore(), durable: inbox } });
}

const event = (trx_id: string) => ({
  id: `evt_${trx_id}`,
  type: 'payment.completed',
  created_at: new Date().toISOString(),
  data: { trx_id, status: 'completed', customer: { phone: '255712345678' } },
});

const seen: [string, FulfillmentTrace][] = [];
const record = (name: string) => (message: unknown) => seen.push([name, { ...(message as FulfillmentTrace) }]);
const handlers = {
  start: record('start'),
  end: record('end'),
  asyncStart: record('asyncStart'),
  asyncEnd: record('asyncEnd'),
  error: record('error'),
};
const channel = diagnostics.tracingChannel('business-payments:fulfillment');
function listen() {
  seen.length = 0;
  channel.subscribe(handlers);
}
afterEach(() => channel.unsubscribe(handlers));
const finals = () => seen.filter(([name]) => name === 'asyncEnd').map(([, context]) => context);

describe('tracing: business-payments:fulfillment', () => {
  test('a delivery: one trace with the event, the trx_id, the result and the answer; a duplicate says done', async () => {
    listen();
    const fulfillment = kit();
    const signed = await signWebhook({ secret: SECRET, payload: event('PAID1'), environment: 'sandbox' });
    await fulfillment.handleWebhook({ payload: signed.body, headers: signed.headers });
    await fulfillment.handleWebhook({ payload: signed.body, headers: signed.headers });
    expect(seen.slice(0, 4).map(([name]) => name)).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
    expect(finals()).toEqual([
      {
        operation: 'handleWebhook',
        environment: 'sandbox',
        eventType: 'payment.completed',
        eventId: 'evt_PAID1',
        trxId: 'PAID1',
        result: 'ran',
        status: 200,
      },
      {
        operation: 'handleWebhook',
        environment: 'sandbox',
        eventType: 'payment.completed',
        eventId: 'evt_PAID1',
        trxId: 'PAID1',
        result: 'done',
        status: 200,
      },
    ]);
    const text = JSON.stringify(seen);
    for (const value of [
      SECRET,
      ...Object.values(signed.headers)
        .map(String)
        .filter((v) => v.length > 20),
      '255712345678',
    ]) {
      expect(text).not.toContain(value);
    }
  });

  test('a forged delivery: 401, no event read', async () => {
    listen();
    const signed = await signWebhook({ secret: 'whsec_someone_else', payload: event('PAID2'), environment: 'sandbox' });
    await kit().handleWebhook({ payload: signed.body, headers: signed.headers });
    expect(finals()).toEqual([{ operation: 'handleWebhook', environment: 'sandbox', status: 401 }]);
  });

  test('a handler that throws: answered 500, the error class in the trace', async () => {
    listen();
    const fulfillment = kit(() => {
      throw new RangeError('warehouse down');
    });
    const signed = await signWebhook({ secret: SECRET, payload: event('PAID3'), environment: 'sandbox' });
    const answer = await fulfillment.handleWebhook({ payload: signed.body, headers: signed.headers });
    expect(answer.status).toBe(500);
    expect(finals()[0]).toMatchObject({ trxId: 'PAID3', status: 500, errorClass: 'RangeError' });
  });

  test('handleVerified that throws: the error event, then asyncEnd; the caller gets the error', async () => {
    listen();
    const fulfillment = kit(() => {
      throw new TypeError('bad order');
    });
    await expect(fulfillment.handleVerified(tx('PAID4', 'success'))).rejects.toThrow('bad order');
    expect(seen.map(([name]) => name)).toEqual(['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
    expect(finals()[0]).toEqual({ operation: 'handleVerified', environment: 'sandbox', trxId: 'PAID4', errorClass: 'TypeError' });
  });

  test('reconcile: one trace per payment it settles', async () => {
    listen();
    const old = new Date(Date.now() - 3_600_000).toISOString();
    const payments = [
      { trx_id: 'PAID5', created_at: old },
      { trx_id: 'WAIT6', created_at: old },
    ] as PaymentRecord[];
    await kit(() => {}, payments).reconcile({ since: 0 });
    expect(finals()).toEqual([
      { operation: 'reconcile', environment: 'sandbox', trxId: 'PAID5', result: 'ran' },
      { operation: 'reconcile', environment: 'sandbox', trxId: 'WAIT6', result: 'pending' },
    ]);
  });

  test('with the inbox: the delivery is traced as answered (200), its processing as an `inbox` trace with the result', async () => {
    listen();
    const fulfillment = kit(() => {}, [], true);
    const signed = await signWebhook({ secret: SECRET, payload: event('PAID7'), environment: 'sandbox' });
    expect((await fulfillment.handleWebhook({ payload: signed.body, headers: signed.headers })).status).toBe(200);
    for (let i = 0; i < 100 && finals().length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(finals()).toEqual([
      { operation: 'handleWebhook', environment: 'sandbox', eventType: 'payment.completed', eventId: 'evt_PAID7', status: 200 },
      { operation: 'inbox', environment: 'sandbox', eventType: 'payment.completed', eventId: 'evt_PAID7', trxId: 'PAID7', result: 'ran' },
    ]);
  });
});
