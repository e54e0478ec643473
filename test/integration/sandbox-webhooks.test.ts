// The webhook verifier against the simulated service's real deliveries: a node:http
// receiver on 127.0.0.1:0 verifies every POST with verifyWebhook and the merchant's webhook
// secret; the mock runs on a real socket (`mock.listen()`, no msw).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TEST_PHONE_NUMBERS } from '../../src/testing.js';
import { verifyWebhookSignature, type WebhookEvent } from '../../src/webhooks.js';
import { startReceiver, startSandbox, waitFor, type ReceivedDelivery, type Receiver, type Sandbox } from '../support/sandbox.js';

const MIN = 60_000;

let sandbox: Sandbox;
let receiver: Receiver;

afterEach(async () => {
  await sandbox?.close();
  await receiver?.close();
});

async function start(options: Parameters<typeof startSandbox>[0] = { timeScale: 0.001 }): Promise<void> {
  sandbox = await startSandbox(options);
  receiver = await startReceiver(sandbox.mock.credentials.webhookSecret);
}

/** Waits for the receiver to have processed (verified) an event of `type` matching `match`. */
function processed(type: string, match: (event: WebhookEvent) => boolean = () => true): Promise<WebhookEvent> {
  return waitFor(`a verified ${type}`, () => [...receiver.processed.values()].find((e) => e.type === type && match(e)));
}

const dataOf = (event: WebhookEvent) => event.data as Record<string, unknown>;

async function pushPayment(phone: string): Promise<string> {
  const payment = await sandbox.client.payments.create({
    payment_amount: 5_000,
    currency_code: 'TZS',
    ref_trx: 'order-push',
    ipn_url: receiver.url,
    payment_mode: 'push',
    customer_phone: phone,
  });
  return payment.trx_id;
}

describe('payment events, verified by the receiver', () => {
  beforeEach(() => start());

  it('a push payment with ipn_url = the receiver → a verified payment.completed for that trx_id', async () => {
    const trxId = await pushPayment(TEST_PHONE_NUMBERS.success);
    const event = await processed('payment.completed');
    expect(event).toMatchObject({ id: expect.stringMatching(/^evt_/), type: 'payment.completed' });
    expect(dataOf(event)).toMatchObject({
      trx_id: trxId,
      merchant_ref: 'order-push',
      status: 'completed',
      amount: { value: 5_000, currency: 'TZS' },
      settlement: { fees: { value: 150, currency: 'TZS' }, net: { value: 4_850, currency: 'TZS' } },
      environment: 'sandbox',
    });
    expect(receiver.rejected()).toEqual([]);
    await waitFor('the mock to mark it delivered', () => sandbox.mock.state.events.find((e) => e.id === event.id)?.status === 'delivered');
  });

  it('a declined push → a verified payment.failed', async () => {
    const trxId = await pushPayment(TEST_PHONE_NUMBERS.declined);
    const event = await processed('payment.failed');
    expect(dataOf(event)).toMatchObject({ trx_id: trxId, status: 'failed', settlement: { net: { value: 0 } } });
    expect(receiver.ofType('payment.completed')).toEqual([]);
  });

  it('a hosted checkout completed with mock.completeCheckout → a verified payment.completed', async () => {
    const payment = await sandbox.client.payments.create({
      payment_amount: 25,
      currency_code: 'USD',
      ref_trx: 'order-hosted',
      ipn_url: receiver.url,
    });
    // With autoRun it resolves after the first webhook attempt.
    await sandbox.mock.completeCheckout(payment.trx_id, 'success');
    const event = await processed('payment.completed');
    expect(dataOf(event)).toMatchObject({ trx_id: payment.trx_id, merchant_ref: 'order-hosted', amount: { value: 25, currency: 'USD' } });
  });

  it('a subscription with webhook_url = the receiver → verified subscription.created, invoice.created, invoice.paid', async () => {
    const plan = await sandbox.client.billing.plans.create({ name: 'Gold', amount: 10_000, currency: 'TZS' });
    const sub = await sandbox.client.billing.subscriptions.create({
      plan_code: plan.plan_code!,
      customer_phone: TEST_PHONE_NUMBERS.success,
      terms_shown: 'TZS 10,000 monthly until cancelled.',
      webhook_url: receiver.url,
    });
    const created = await processed('subscription.created');
    const invoice = await processed('invoice.created');
    const paid = await processed('invoice.paid');
    expect(dataOf(created)).toMatchObject({ id: sub.id, plan_code: plan.plan_code });
    expect(dataOf(invoice)).toMatchObject({ subscription: sub.id, status: 'open' });
    expect(dataOf(paid)).toMatchObject({ id: dataOf(invoice).id, subscription: sub.id, status: 'paid', fee: 300, net_amount: 9_700 });
    expect(receiver.rejected()).toEqual([]);
    expect(
      receiver
        .verified()
        .map((d) => d.event!.type)
        .sort(),
    ).toEqual(['invoice.created', 'invoice.paid', 'subscription.created']);
  });

  it('verifyWebhookSignature also accepts the deliveries (options form and Request form)', async () => {
    await pushPayment(TEST_PHONE_NUMBERS.success);
    await processed('payment.completed');
    const delivery = receiver.ofType('payment.completed')[0]!;
    const secret = sandbox.mock.credentials.webhookSecret;
    const timestamp = String(delivery.headers['x-service-timestamp']);
    const expected = { timestamp: Number(timestamp), signed: { timestamp }, unsignedEventHeader: 'payment.completed' };
    const fromOptions = await verifyWebhookSignature({ payload: delivery.body, headers: delivery.headers, secret });
    expect(fromOptions).toMatchObject(expected);
    expect(fromOptions.signed.body).toBe(delivery.body);
    const request = new Request(receiver.url, { method: 'POST', headers: webhookHeaders(delivery), body: delivery.body });
    const fromRequest = await verifyWebhookSignature(request, secret);
    expect(fromRequest).toMatchObject(expected);
    expect(Buffer.from(fromRequest.signed.body as Uint8Array).equals(delivery.body)).toBe(true);
  });

  it('a delivery replayed to the receiver 10 minutes later is refused with timestamp_too_old', async () => {
    await pushPayment(TEST_PHONE_NUMBERS.success);
    const event = await processed('payment.completed');
    const original = receiver.ofType('payment.completed')[0]!;
    receiver.now = () => Date.now() + 10 * MIN;
    const reply = await fetch(receiver.url, { method: 'POST', headers: webhookHeaders(original), body: original.body });
    expect(reply.status).toBe(400);
    expect(receiver.deliveries.at(-1)).toMatchObject({ reason: 'timestamp_too_old', status: 400 });
    expect(receiver.deliveries.at(-1)!.body.equals(original.body)).toBe(true);
    expect([...receiver.processed.keys()]).toEqual([event.id]);
  });
});

describe('retries', () => {
  it('a receiver answering 500 to the first attempt gets a retry with the same event id, verified and deduplicated', async () => {
    let t = Date.now();
    await start({ now: () => t, autoRun: false });
    receiver.now = () => t; // the receiver shares the service clock
    receiver.answer = (_event, sightings) => (sightings === 1 ? 500 : 200);

    const payment = await sandbox.client.payments.create({
      payment_amount: 25,
      currency_code: 'USD',
      ref_trx: 'order-retry',
      ipn_url: receiver.url,
    });
    await sandbox.mock.completeCheckout(payment.trx_id, 'success');
    await sandbox.mock.runDue(); // attempt 1
    expect(receiver.deliveries.map((d) => d.status)).toEqual([500]);
    const event = sandbox.mock.state.events.at(-1)!;
    expect(event).toMatchObject({ type: 'payment.completed', status: 'pending', attempts: 1 });

    t += 3 * MIN - 1;
    await sandbox.mock.runDue();
    expect(receiver.deliveries).toHaveLength(1); // not yet due
    t += 1;
    await sandbox.mock.runDue(); // attempt 2, 3 minutes after the failure

    const [first, second] = receiver.deliveries as [ReceivedDelivery, ReceivedDelivery];
    expect(receiver.deliveries.map((d) => d.status)).toEqual([500, 200]);
    expect(first.event!.id).toBe(event.id);
    expect(second.event!.id).toBe(event.id);
    expect(second.body.equals(first.body)).toBe(true);
    expect(Number(second.headers['x-service-timestamp']) - Number(first.headers['x-service-timestamp'])).toBe(180);
    expect(receiver.processed.size).toBe(1);
    expect(sandbox.mock.state.deliveries.map((d) => [d.eventId, d.attempt, d.status])).toEqual([
      [event.id, 1, 500],
      [event.id, 2, 200],
    ]);
    expect(event).toMatchObject({ status: 'delivered', attempts: 2 });
  });

  it('a receiver with the wrong secret refuses every attempt with invalid_signature; the mock records the failures', async () => {
    await start({ timeScale: 0.0001 }); // 3 min → 18 ms; all five attempts within ~0.3 s
    receiver.secret = 'whsec_not_the_merchant_secret';
    const trxId = await pushPayment(TEST_PHONE_NUMBERS.success);
    const event = await waitFor('the event to be abandoned', () => {
      const found = sandbox.mock.state.events.find((e) => (e.payload.data as { trx_id?: string }).trx_id === trxId);
      return found?.status === 'abandoned' ? found : undefined;
    });
    expect(event.attempts).toBe(5);
    expect(receiver.deliveries.map((d) => [d.reason, d.status])).toEqual(Array(5).fill(['invalid_signature', 401]));
    expect(receiver.processed.size).toBe(0);
    const attempts = sandbox.mock.state.deliveries.filter((d) => d.eventId === event.id);
    expect(attempts.map((d) => [d.attempt, d.status, d.url])).toEqual([1, 2, 3, 4, 5].map((n) => [n, 401, receiver.url]));
  });
});

/** The headers of a recorded delivery that matter for a replay. */
function webhookHeaders(delivery: ReceivedDelivery): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(delivery.headers)) {
    if (/^(content-type|x-environment|x-service-.+)$/.test(name) && typeof value === 'string') out[name] = value;
  }
  return out;
}
