// Amounts and phone numbers against the sandbox over a real socket: what reaches the service is
// the exact decimal and the international digits, whatever form the merchant's code or the
// customer wrote; what cannot be sent exactly is refused before a byte leaves (no request, no
// payout intent); and an order whose cart total carried float noise is fulfilled, not reviewed.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFulfillment, memoryStore, type FulfilledTransaction } from '../../src/fulfillment.js';
import { InvalidParamsError, type PaymentsClient } from '../../src/index.js';
import { createPayouts, memoryStore as payoutStore, PayoutIntentError } from '../../src/payouts.js';
import { TEST_PHONE_NUMBERS } from '../../src/testing.js';
import { startSandbox, type Sandbox } from '../support/sandbox.js';

let sandbox: Sandbox;
// Every request body the client sent, in order.
const sent: Array<{ path: string; body: Record<string, unknown> }> = [];
let client: PaymentsClient;

// The global fetch, with each request's body noted first.
const recording: typeof fetch = async (input, init) => {
  const request = new Request(input, init);
  const text = request.method === 'POST' ? await request.clone().text() : '';
  sent.push({ path: new URL(request.url).pathname, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} });
  return fetch(request);
};

beforeAll(async () => {
  sandbox = await startSandbox({ timeScale: 0.001 });
  client = sandbox.clientWith({ maxRetries: 0, fetch: recording });
});
afterAll(() => sandbox.close());

let refs = 0;
const hosted = (payment_amount: number | string, currency_code = 'USD') => ({
  payment_amount,
  currency_code,
  ref_trx: `money-${++refs}`,
  ipn_url: 'http://127.0.0.1:9/unused',
});

/** The rejection of `promise`, failing the test when it resolves. */
const failure = (promise: PromiseLike<unknown>) =>
  Promise.resolve(promise).then(
    (value) => expect.fail(`expected a rejection, got ${JSON.stringify(value)}`),
    (error: unknown) => error,
  );

describe('amounts', () => {
  it.each([
    [1.1 + 2.2, 'USD', 3.3],
    [0.07 * 100_000, 'TZS', 7000],
    ['19.99', 'USD', 19.99],
    ['3.30', 'TZS', 3.3],
  ])('%s %s reaches the service as %s', async (amount, currency, wire) => {
    const payment = await client.payments.create(hosted(amount, currency));
    expect(sent.at(-1)!.body.payment_amount).toBe(wire);
    expect(JSON.stringify(sent.at(-1)!.body)).toContain(`"payment_amount":${wire}`);
    expect(payment.amount).toBe(wire);
  });

  it.each([
    [10.005, 'USD', '10.00 or 10.01'],
    [12.5, 'UGX', '12 or 13'],
  ])('%s %s is refused before sending, naming the nearest amounts', async (amount, currency, nearest) => {
    const before = sent.length;
    const error = await failure(client.payments.create(hosted(amount, currency)));
    expect(error).toBeInstanceOf(InvalidParamsError);
    expect((error as InvalidParamsError).errors.payment_amount![0]).toContain(`send ${nearest}`);
    expect(sent.length).toBe(before);
  });

  it('a payout of 1000.123 is refused by the client and by the kit, and no intent is recorded', async () => {
    const before = sent.length;
    const error = await failure(client.payouts.create({ amount: 1000.123 }));
    expect((error as InvalidParamsError).errors.amount![0]).toContain('send 1000.12 or 1000.13');
    const payouts = createPayouts({ client, store: payoutStore() });
    const refused = await failure(payouts.send({ key: 'payout-1000.123', amount: 1000.123 }));
    expect(refused).toBeInstanceOf(PayoutIntentError);
    expect((refused as PayoutIntentError).reason).toBe('invalid_params');
    expect((refused as Error).message).toContain('1000.12 or 1000.13');
    expect(await payouts.get('payout-1000.123')).toBeUndefined();
    expect(sent.length).toBe(before);
  });

  it('every total of a random cart reaches the service exact, and its order is fulfilled, not reviewed', async () => {
    const paid: string[] = [];
    const reviewed: string[] = [];
    const prices = new Map<string, string>();
    const fulfillment = createFulfillment({
      environment: 'sandbox',
      secret: sandbox.mock.credentials.webhookSecret,
      client,
      store: memoryStore(),
      // The order table's numeric(12,2), as pg returns it: a string.
      expect: (tx) => ({ amount: prices.get(tx.merchant_ref!)!, currency: 'USD' }),
      onPaid: (tx: FulfilledTransaction) => void paid.push(tx.merchant_ref!),
      onMismatch: (tx: FulfilledTransaction) => void reviewed.push(tx.merchant_ref!),
    });
    const cart = fc.array(fc.record({ cents: fc.integer({ min: 1, max: 99_999 }), quantity: fc.integer({ min: 1, max: 5 }) }), {
      minLength: 1,
      maxLength: 12,
    });
    await fc.assert(
      fc.asyncProperty(cart, async (lines) => {
        const cents = lines.reduce((sum, line) => sum + line.cents * line.quantity, 0);
        if (cents < 100) return; // under the service's 1.00
        const total = lines.reduce((sum, line) => sum + (line.cents / 100) * line.quantity, 0);
        const params = hosted(total);
        prices.set(params.ref_trx, (cents / 100).toFixed(2));
        const payment = await client.payments.create(params);
        expect(sent.at(-1)!.body.payment_amount).toBe(cents / 100);
        await sandbox.mock.completeCheckout(payment.trx_id, 'success');
        await fulfillment.handleVerified(await client.payments.verify(payment.trx_id), { merchantRef: params.ref_trx });
      }),
      { numRuns: 25 },
    );
    expect(reviewed).toEqual([]);
    expect(paid.length).toBe(prices.size);
  });
});

describe('phone numbers', () => {
  const push = (customer_phone: string) => ({
    payment_amount: 5000,
    currency_code: 'TZS',
    ref_trx: `phone-${++refs}`,
    ipn_url: 'http://127.0.0.1:9/unused',
    payment_mode: 'push' as const,
    customer_phone,
  });

  it.each(['0712 345 678', '+255 712-345-678', '00255712345678', '(0712) 345.678'])('%s rings 255712345678', async (phone) => {
    await client.payments.create(push(phone));
    expect(sent.at(-1)!.body.customer_phone).toBe('255712345678');
  });

  it.each(['0700 000 001', '+255 700-000-001', '00255700000001'])('the test phone written as %s rings and is paid', async (phone) => {
    const payment = await client.payments.create(push(phone));
    expect(sent.at(-1)!.body.customer_phone).toBe(TEST_PHONE_NUMBERS.success);
    const outcome = await client.payments.waitForOutcome(payment.trx_id, { timeout: 5_000, interval: 20 });
    expect(outcome.status).toBe('success');
  });

  it.each([
    ['a landline', '022 211 0678'],
    ['a Kenyan number', '+254 722 000 678'],
    ['too short', '0712 678'],
  ])('%s is refused before sending, with a usable example and the last three digits only', async (_, phone) => {
    const before = sent.length;
    const error = await failure(client.payments.create(push(phone)));
    expect(error).toBeInstanceOf(InvalidParamsError);
    const [message] = (error as InvalidParamsError).errors.customer_phone!;
    expect(message).toMatch(/\d{3} \d{3} \d{3}/); // an example a person can copy
    expect(message).not.toContain('[redacted]');
    expect(message).toContain('678');
    expect((error as Error).message).not.toContain(phone.replace(/\D/g, ''));
    expect(sent.length).toBe(before);
  });

  it('phoneCountry reads local forms in another country, and refuses a number of any other', async () => {
    const kenya = sandbox.clientWith({ phoneCountry: 'KE', maxRetries: 0, fetch: recording });
    await kenya.payouts.preview({ amount: '10.50' });
    expect(sent.at(-1)!.body).toEqual({ amount: 10.5 });
    await kenya.payments.create(push('0712 345 678'));
    expect(sent.at(-1)!.body.customer_phone).toBe('254712345678');
    await kenya.payments.create(push('+254 712 345 678'));
    expect(sent.at(-1)!.body.customer_phone).toBe('254712345678');
    const error = await failure(kenya.payments.create(push('+255 712 345 678')));
    expect((error as InvalidParamsError).errors.customer_phone![0]).toContain(
      "this looks like a Tanzanian number (+255): pass { country: 'TZ' }",
    );
    expect(kenya.withOptions({ timeout: 5_000 }).phoneCountry).toBe('KE');
  });

  it('a payout to a refused number records nothing; the same key then sends once with the corrected number', async () => {
    const payouts = createPayouts({ client, store: payoutStore(), settleAfter: 0 });
    const refused = await failure(payouts.send({ key: 'settle-fix', amount: 500, destination: '022 211 0678' }));
    expect((refused as PayoutIntentError).reason).toBe('invalid_params');
    expect(await payouts.get('settle-fix')).toBeUndefined();
    const before = sandbox.mock.state.payouts.size;
    const intent = await payouts.send({ key: 'settle-fix', amount: '500.00', destination: '0712 345 678' });
    expect(intent).toMatchObject({ state: 'sent', amount: 500, destination: '255712345678' });
    // The same payout written another way is the same intent: nothing sent again.
    expect((await payouts.send({ key: 'settle-fix', amount: 500, destination: '+255 712 345 678' })).state).toBe('sent');
    expect(sandbox.mock.state.payouts.size).toBe(before + 1);
  });
});
