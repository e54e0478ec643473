// The fulfilment kit's `now`: the freshness window of each delivery (before the body is read,
// and in verifyWebhook) and reconcile's `olderThan` are measured on the kit's clock, so a test
// clock far from the real time drives the kit as it drives the sandbox.
import { afterEach, describe, expect, test, vi } from 'vitest';
import type { PaymentRecord, VerifiedTransaction } from '../../src/index.js';
import { ConfigurationError, PaymentsClient } from '../../src/index.js';
import { createFulfillment, memoryStore, type FulfillmentClient } from '../../src/fulfillment.js';
import { createMockService, createTestClock, signWebhook, TEST_PHONE_NUMBERS, type TestClock } from '../../src/testing.js';
import type { WebhookEvent } from '../../src/webhooks.js';
import { fakeClient } from '../support/fulfillment-client.js';

const SECRET = 'whsec_test_kit_clock';
const MINUTE = 60_000;
const DAY = 86_400_000;
const tx = (trx_id: string) => ({ trx_id, status: 'success', amount: 25, currency: 'USD' }) as VerifiedTransaction;

const closing: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

function kit(now?: () => number, client: FulfillmentClient = fakeClient(tx).client) {
  const onPaid = vi.fn();
  const onEvent = vi.fn();
  const fulfillment = createFulfillment({ environment: 'sandbox', secret: SECRET, client, store: memoryStore(), onPaid, onEvent, now });
  return { fulfillment, onPaid, onEvent };
}

const paymentCompleted = (trx_id: string) => ({
  id: `evt_${trx_id}`,
  type: 'payment.completed',
  api_version: '2024-06-01',
  created_at: '2030-01-01T00:00:00+00:00',
  data: { trx_id, merchant_ref: `order-${trx_id}`, status: 'completed' },
});

async function signedOn(clock: TestClock, trxId: string) {
  return signWebhook({ payload: paymentCompleted(trxId), secret: SECRET, now: clock.now });
}

describe('createFulfillment({ now })', () => {
  test('a delivery fresh on the kit clock, a day ahead of the real time, is accepted; a kit on real time refuses it (401)', async () => {
    const clock = createTestClock();
    await clock.advance(DAY);
    const onClock = kit(clock.now);
    const { body, headers } = await signedOn(clock, 'TRX1');
    expect(await onClock.fulfillment.handleWebhook({ payload: body, headers })).toMatchObject({ status: 200 });
    // The Request form too (headers checked before the body is read, then verifyWebhook).
    const second = await signedOn(clock, 'TRX2');
    const request = new Request('https://shop.example.com/webhooks', { method: 'POST', ...second });
    expect((await onClock.fulfillment.handleWebhook(request)).status).toBe(200);
    expect(onClock.onPaid).toHaveBeenCalledTimes(2);

    const onRealTime = kit();
    const refused = await onRealTime.fulfillment.handleWebhook({ payload: body, headers });
    expect(refused).toMatchObject({ status: 401 });
    expect(JSON.parse(refused.body)).toMatchObject({ error: 'timestamp_in_future' });
    expect(onRealTime.onPaid).not.toHaveBeenCalled();
  });

  test('stale on the kit clock once it moves past the 300 s window', async () => {
    const clock = createTestClock(Date.UTC(2030, 0, 1));
    const { fulfillment, onPaid } = kit(clock.now);
    const { body, headers } = await signedOn(clock, 'TRX3');
    await clock.advance(5 * MINUTE + 1_000);
    const refused = await fulfillment.handleWebhook({ payload: body, headers });
    expect(refused).toMatchObject({ status: 401 });
    expect(JSON.parse(refused.body)).toMatchObject({ error: 'timestamp_too_old' });
    expect(onPaid).not.toHaveBeenCalled();
  });

  test("reconcile's olderThan is measured on the kit clock", async () => {
    const clock = createTestClock(Date.UTC(2030, 0, 1));
    const made = clock.now();
    const payments = [{ trx_id: 'TRX4', merchant_ref: 'order-4', created_at: new Date(made).toISOString() } as PaymentRecord];
    const { client, verify } = fakeClient(tx, payments);
    const { fulfillment, onPaid } = kit(clock.now, client);
    await clock.advance(MINUTE);
    expect(await fulfillment.reconcile({ since: made - DAY })).toMatchObject({ seen: 1, checked: 0 }); // 1 minute old: too young
    expect(verify).not.toHaveBeenCalled();
    await clock.advance(10 * MINUTE);
    expect(await fulfillment.reconcile({ since: made - DAY })).toMatchObject({ seen: 1, checked: 1, paid: 1 });
    expect(onPaid).toHaveBeenCalledTimes(1);
  });

  test('a now that is not a function is a ConfigurationError', () => {
    const { client } = fakeClient(tx);
    const create = () => createFulfillment({ environment: 'sandbox', secret: SECRET, client, onPaid: () => {}, now: 5 as never });
    expect(create).toThrow(ConfigurationError);
    expect(create).toThrow(/createFulfillment\(\{ now \}\)/);
  });

  test('the sandbox on a test clock delivers three months of billing events to a kit on the same clock', async () => {
    const clock = createTestClock();
    const app: { fulfillment?: ReturnType<typeof createFulfillment> } = {};
    // Deliveries go straight to the kit's handler, as Fetch requests.
    const mock = createMockService({ clock, fetch: async (url, init) => app.fulfillment!.handleWebhook(new Request(url, init)) });
    closing.push(() => mock.close());
    const server = await mock.listen({ port: 0 });
    const client = new PaymentsClient({ environment: 'sandbox', ...mock.credentials.sandbox, baseUrl: server.url, now: clock.now });
    const events: WebhookEvent[] = [];
    app.fulfillment = createFulfillment({
      environment: 'sandbox',
      secret: mock.credentials.sandbox.webhookSecret,
      client,
      onPaid: () => {},
      onEvent: (event) => void events.push(event),
      now: clock.now,
    });
    const plan = await client.billing.plans.create({ name: 'Monthly', amount: 10_000, currency: 'TZS', interval: 'month' });
    await client.billing.subscriptions.create({
      plan_code: plan.plan_code,
      customer_phone: TEST_PHONE_NUMBERS.success,
      terms_shown: 'TZS 10,000 a month until you cancel.',
      webhook_url: 'https://clinic.example.com/webhooks',
    });
    await clock.advance(90 * DAY + MINUTE);
    expect(mock.state.deliveries.map((d) => d.status)).toEqual(mock.state.deliveries.map(() => 200));
    expect(events.filter((e) => e.type === 'invoice.paid')).toHaveLength(4); // days 0, 30, 60 and 90
  });
});
