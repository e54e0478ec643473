// The client against the simulated service over a real socket (`mock.listen()`, no msw):
// one test per method of the client (the README's method table), idempotency on the wire,
// each spec error label mapped to its class, and clock-skew detection from the server's Date
// header.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  APIError,
  AuthenticationError,
  InvalidParamsError,
  MerchantPendingApprovalError,
  NotFoundError,
  PaymentsClient,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
  type PaymentCreateParams,
} from '../../src/index.js';
import { PAYOUT_TEST_AMOUNTS, TEST_PHONE_NUMBERS } from '../../src/testing.js';
import { startReceiver, startSandbox, waitFor, type Receiver, type Sandbox } from '../support/sandbox.js';

let sandbox: Sandbox;
let client: PaymentsClient;
// A local webhook sink, so the mock's deliveries never leave the machine.
let sink: Receiver;

beforeEach(async () => {
  sandbox = await startSandbox({ timeScale: 0.001 });
  client = sandbox.client;
  sink = await startReceiver(sandbox.mock.credentials.webhookSecret);
});

afterEach(async () => {
  await sandbox.close();
  await sink.close();
});

const hosted = (extra: Partial<PaymentCreateParams> = {}): PaymentCreateParams => ({
  payment_amount: 25,
  currency_code: 'USD',
  ref_trx: 'order-1001',
  ipn_url: sink.url,
  ...extra,
});

const push = (phone: string, extra: Partial<PaymentCreateParams> = {}): PaymentCreateParams => ({
  payment_amount: 5_000,
  currency_code: 'TZS',
  ref_trx: 'push-1',
  ipn_url: sink.url,
  payment_mode: 'push',
  customer_phone: phone,
  ...extra,
});

/** The error a promise rejects with (fails the test when it resolves). */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => expect.fail(`expected a rejection, got ${JSON.stringify(value)}`),
    (error: unknown) => error,
  );
}

const requestsTo = (method: string, path: string) => sandbox.mock.state.requests.filter((r) => r.method === method && r.path === path);

describe('payments', () => {
  it('create (hosted) returns a pending payment whose checkout_url is on the mock origin', async () => {
    const payment = await client.payments.create(hosted({ ref_trx: 'hosted-1' }));
    expect(payment).toMatchObject({ status: 'pending', merchant_ref: 'hosted-1', amount: 25, currency: 'USD', environment: 'sandbox' });
    expect(payment.trx_id).toMatch(/^TRX/);
    expect(payment.checkout_url?.startsWith(`${sandbox.server.url}/checkout/${payment.trx_id}?`)).toBe(true);
    const page = await fetch(payment.checkout_url!);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Demo Shop');
  });

  it.each([
    ['success', 'success', TEST_PHONE_NUMBERS.success, null],
    ['insufficientFunds', 'failed', TEST_PHONE_NUMBERS.insufficientFunds, 'INSUFFICIENT_FUNDS'],
    ['declined', 'failed', TEST_PHONE_NUMBERS.declined, 'PAYMENT_DECLINED'],
    ['timeout (no answer)', 'failed', TEST_PHONE_NUMBERS.timeout, 'TIMEOUT'],
  ] as const)('create (push) to the %s number + waitForOutcome → %s', async (_name, status, phone, reason) => {
    const payment = await client.payments.create(push(phone));
    expect(payment).toMatchObject({ status: 'pending', checkout_url: null });
    const outcome = await client.payments.waitForOutcome(payment.trx_id, { interval: 5, timeout: 5_000 });
    expect(outcome).toMatchObject({ trx_id: payment.trx_id, status });
    if (status === 'success') expect(outcome).toMatchObject({ fee: 150, net_amount: 4_850 });
    else expect(outcome).toMatchObject({ fee: 0, net_amount: 0 });
    expect(await client.payments.retrieve(payment.trx_id)).toMatchObject({ status, failure_reason: reason });
  });

  it('retrieve returns the payment record', async () => {
    const payment = await client.payments.create(hosted({ ref_trx: 'get-1', customer_name: 'Asha', customer_email: 'asha@example.com' }));
    const record = await client.payments.retrieve(payment.trx_id);
    expect(record).toMatchObject({
      trx_id: payment.trx_id,
      merchant_ref: 'get-1',
      amount: 25,
      currency: 'USD',
      status: 'pending',
      payment_mode: 'hosted',
      environment: 'sandbox',
      customer: { name: 'Asha', email: 'asha@example.com', phone: null },
      checkout_url: payment.checkout_url,
    });
  });

  it('push rings the phone for a pending hosted payment, which then settles', async () => {
    const payment = await client.payments.create(hosted({ currency_code: 'TZS', payment_amount: 1_000 }));
    const pushed = await client.payments.push(payment.trx_id, { customer_phone: TEST_PHONE_NUMBERS.success });
    expect(pushed).toMatchObject({ trx_id: payment.trx_id, status: 'pending', customer_phone: TEST_PHONE_NUMBERS.success, push_count: 1 });
    expect(requestsTo('POST', `/api/v1/payments/${payment.trx_id}/push`)).toHaveLength(1);
    expect(await client.payments.waitForOutcome(payment.trx_id, { interval: 5, timeout: 5_000 })).toMatchObject({ status: 'success' });
  });

  it('push on a payment that is no longer pending is 422 Payment is not pending', async () => {
    const payment = await client.payments.create(hosted());
    await sandbox.mock.completeCheckout(payment.trx_id, 'success');
    const error = await failure(client.payments.push(payment.trx_id, { customer_phone: TEST_PHONE_NUMBERS.success }));
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(error).toMatchObject({ status: 422, label: 'Payment is not pending' });
  });

  it('verify returns the verified transaction, pending then success after checkout', async () => {
    const payment = await client.payments.create(hosted({ description: 'Two mugs' }));
    expect(await client.payments.verify(payment.trx_id)).toMatchObject({
      trx_id: payment.trx_id,
      status: 'pending',
      fee: 0,
      net_amount: 0,
    });
    await sandbox.mock.completeCheckout(payment.trx_id, 'success');
    const verified = await client.payments.verify(payment.trx_id);
    expect(verified).toMatchObject({
      trx_id: payment.trx_id,
      status: 'success',
      amount: 25,
      fee: 0.75,
      net_amount: 24.25,
      currency: 'USD',
      description: 'Two mugs',
      customer: { name: null, email: null },
    });
  });

  it('initiate (legacy, deprecated) returns payment_url and the session info fields', async () => {
    const session = await client.payments.initiate({
      payment_amount: 12,
      currency_code: 'TZS',
      ref_trx: 'legacy-1',
      success_redirect: 'https://shop.example.com/ok',
      cancel_redirect: 'https://shop.example.com/no',
      ipn_url: sink.url,
      allow_payment_methods: 'mpesa',
    });
    expect(session.payment_url.startsWith(`${sandbox.server.url}/checkout/`)).toBe(true);
    expect(session.info).toEqual({
      ref_trx: 'legacy-1',
      description: null,
      ipn_url: sink.url,
      cancel_redirect: 'https://shop.example.com/no',
      success_redirect: 'https://shop.example.com/ok',
      customer_name: null,
      customer_email: null,
      merchant_id: 1001,
      merchant_name: 'Demo Shop',
      amount: 12,
      currency_code: 'TZS',
      environment: 'sandbox',
      is_sandbox: true,
      allow_payment_methods: ['mpesa'],
      merchant_payment_methods_restricted: false,
      merchant_payment_method_ids: [3, 4, 5],
      merchant_payment_method_codes: ['mpesa'],
    });
    expect(session.data?.trx_id).toMatch(/^TRX/);
    expect(sandbox.mock.state.payments.get(session.data!.trx_id!)).toMatchObject({ status: 'pending', merchant_ref: 'legacy-1' });
  });

  describe('list', () => {
    let created: string[];
    beforeEach(async () => {
      created = [];
      for (let i = 1; i <= 5; i++) created.push((await client.payments.create(hosted({ ref_trx: `list-${i}` }))).trx_id);
    });

    it('limit and offset give one page, newest first, with total and has_more', async () => {
      const first = await client.payments.list({ limit: 2 });
      expect(first).toMatchObject({ offset: 0, limit: 2, total: 5, has_more: true });
      expect(first.data.map((p) => p.trx_id)).toEqual([created[4], created[3]]);
      const last = await client.payments.list({ limit: 2, offset: 4 });
      expect(last).toMatchObject({ offset: 4, total: 5, has_more: false });
      expect(last.data.map((p) => p.trx_id)).toEqual([created[0]]);
    });

    it('status filters by status', async () => {
      await sandbox.mock.completeCheckout(created[1]!, 'success');
      await sandbox.mock.completeCheckout(created[2]!, 'failed');
      expect((await client.payments.list({ status: 'success' })).data.map((p) => p.trx_id)).toEqual([created[1]]);
      expect((await client.payments.list({ status: 'failed' })).data.map((p) => p.trx_id)).toEqual([created[2]]);
      expect((await client.payments.list({ status: 'pending' })).total).toBe(3);
    });

    it('merchant_ref filters by the merchant reference', async () => {
      const page = await client.payments.list({ merchant_ref: 'list-3' });
      expect(page.data.map((p) => p.trx_id)).toEqual([created[2]]);
      expect(page.total).toBe(1);
    });

    it('for await walks every page (limit 2) and yields each payment once', async () => {
      const seen: string[] = [];
      for await (const payment of client.payments.list({ limit: 2 })) seen.push(payment.trx_id!);
      expect(seen).toEqual([...created].reverse());
      expect(new Set(seen).size).toBe(5);
      const pages = sandbox.mock.state.requests
        .filter((r) => r.method === 'GET' && r.path.startsWith('/api/v1/payments?'))
        .map((r) => r.path);
      expect(pages).toEqual(['/api/v1/payments?limit=2', '/api/v1/payments?limit=2&offset=2', '/api/v1/payments?limit=2&offset=4']);
    });
  });
});

describe('account', () => {
  it('balance.retrieve lists the active wallets and moves with a settled payment', async () => {
    expect(await client.balance.retrieve()).toEqual([
      { currency: 'USD', balance: 1_000 },
      { currency: 'TZS', balance: 1_000_000 },
    ]);
    const payment = await client.payments.create(hosted({ payment_amount: 100 }));
    await sandbox.mock.completeCheckout(payment.trx_id, 'success');
    expect(await client.balance.retrieve()).toContainEqual({ currency: 'USD', balance: 1_097 });
  });

  it('siteInfo.retrieve returns every documented field', async () => {
    const info = await client.siteInfo.retrieve();
    expect(info).toMatchObject({ api_version: 'v1', status: 'operational', site_url: sandbox.server.url });
    expect(Object.keys(info.features!).sort()).toEqual(['global_support', 'instant_processing', 'mobile_ready', 'ssl_secured']);
  });

  it('openapi returns the OpenAPI 3.1 document served for this origin', async () => {
    const doc = await client.openapi();
    expect(doc).toMatchObject({ openapi: '3.1.0', servers: [{ url: sandbox.server.url }] });
    expect(Object.keys(doc.paths as object)).toContain('/api/v1/payments');
  });
});

describe('payouts', () => {
  const payoutPosts = () => requestsTo('POST', '/api/v1/payouts');

  it('preview quotes the 1 % fee without creating anything', async () => {
    expect(await client.payouts.preview({ amount: 100 })).toMatchObject({ amount: 100, fee: 1, payable_amount: 99, currency: 'TZS' });
    expect(sandbox.mock.state.payouts.size).toBe(0);
  });

  it('create pays out to the settlement number (SUCCESS) and debits the TZS wallet', async () => {
    const payout = await client.payouts.create({ amount: 500 });
    expect(payout).toMatchObject({ status: 'SUCCESS', amount: 500, fee: 5, payable_amount: 495, destination: '255712345678' });
    expect(payout.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await client.balance.retrieve()).toContainEqual({ currency: 'TZS', balance: 999_500 });
  });

  it('create with the INPROGRESS amount returns INPROGRESS as is, after exactly one request', async () => {
    const payout = await client.payouts.create({ amount: PAYOUT_TEST_AMOUNTS.inProgress });
    expect(payout.status).toBe('INPROGRESS');
    expect(payoutPosts()).toHaveLength(1);
    // It settles 60 s (× timeScale) later; still one payout.
    await waitFor('the INPROGRESS payout to settle', async () => (await client.payouts.retrieve(payout.id!)).status === 'SUCCESS');
    expect(sandbox.mock.state.payouts.size).toBe(1);
  });

  it('create with the AMBIGUOUS amount returns AMBIGUOUS as is, after exactly one request', async () => {
    const payout = await client.payouts.create({ amount: PAYOUT_TEST_AMOUNTS.ambiguous });
    expect(payout.status).toBe('AMBIGUOUS');
    expect(payoutPosts()).toHaveLength(1);
    expect(sandbox.mock.state.payouts.size).toBe(1);
  });

  it('retrieve returns one payout by id; an unknown UUID is NotFoundError', async () => {
    const payout = await client.payouts.create({ amount: PAYOUT_TEST_AMOUNTS.ambiguous });
    expect(await client.payouts.retrieve(payout.id!)).toEqual(payout);
    const error = await failure(client.payouts.retrieve('123e4567-e89b-12d3-a456-426614174000'));
    expect(error).toBeInstanceOf(NotFoundError);
  });

  it('list pages payouts, newest first, and for await yields each once', async () => {
    const ids: string[] = [];
    for (const amount of [10, 20, 30]) ids.push((await client.payouts.create({ amount })).id!);
    const page = await client.payouts.list({ limit: 2 });
    expect(page).toMatchObject({ total: 3, has_more: true });
    expect(page.data.map((p) => p.id)).toEqual([ids[2], ids[1]]);
    const all: string[] = [];
    for await (const payout of client.payouts.list({ limit: 2 })) all.push(payout.id!);
    expect(all).toEqual([...ids].reverse());
  });
});

describe('billing', () => {
  it('plans.create creates a plan with a generated plan_code and defaults', async () => {
    const plan = await client.billing.plans.create({ name: 'Gold', amount: 10_000, currency: 'TZS' });
    expect(plan).toMatchObject({ name: 'Gold', amount: 10_000, currency: 'TZS', interval: 'month', interval_count: 1, status: 'active' });
    expect(plan.plan_code).toMatch(/^plan_/);
  });

  it('subscriptions.create records consent exactly and returns a pending sub_ subscription', async () => {
    const plan = await client.billing.plans.create({ name: 'Gold', amount: 10_000, currency: 'TZS', plan_code: 'gold-monthly' });
    const terms = 'TZS 10,000 monthly until cancelled.  ';
    const sub = await client.billing.subscriptions.create({
      plan_code: plan.plan_code!,
      customer_phone: TEST_PHONE_NUMBERS.success,
      terms_shown: terms,
    });
    expect(sub.id).toMatch(/^sub_/);
    expect(sub).toMatchObject({
      plan_code: 'gold-monthly',
      status: 'pending',
      customer_phone: TEST_PHONE_NUMBERS.success,
      amount: 10_000,
      currency: 'TZS',
    });
    expect((sub as { consent: { terms_shown: string } }).consent.terms_shown).toBe(terms);
  });

  it('invoices.list filtered by a sub_ id returns only that subscription’s invoices', async () => {
    const plan = await client.billing.plans.create({ name: 'Silver', amount: 5_000 });
    const subscribe = () =>
      client.billing.subscriptions.create({
        plan_code: plan.plan_code!,
        customer_phone: TEST_PHONE_NUMBERS.success,
        terms_shown: 'TZS 5,000 monthly.',
      });
    const first = await subscribe();
    const second = await subscribe();
    expect((await client.billing.invoices.list()).total).toBe(2);
    const mine = await client.billing.invoices.list({ subscription: first.id! });
    expect(mine.data).toHaveLength(1);
    expect(mine.data[0]).toMatchObject({ subscription: first.id, plan_code: plan.plan_code, amount: 5_000 });
    expect(mine.data[0]!.subscription).not.toBe(second.id);
    // The first charge is a USSD push to the success number: the invoice gets paid.
    await waitFor(
      'the first invoice to be paid',
      async () => (await client.billing.invoices.list({ subscription: first.id! })).data[0]?.status === 'paid',
    );
  });
});

describe('idempotency over the wire', () => {
  it('the same idempotencyKey on two payments.create calls returns the same trx_id; the mock holds one payment', async () => {
    const first = await client.payments.create(hosted({ ref_trx: 'idem-1' }), { idempotencyKey: 'order-1001-attempt' });
    const { data: second, response } = await client.payments
      .create(hosted({ ref_trx: 'idem-1' }), { idempotencyKey: 'order-1001-attempt' })
      .withResponse();
    expect(second.trx_id).toBe(first.trx_id);
    expect(response.headers.get('idempotent-replayed')).toBe('true');
    expect(sandbox.mock.state.payments.size).toBe(1);
    expect(requestsTo('POST', '/api/v1/payments')).toHaveLength(2);
  });

  it('different keys (and references) create two payments', async () => {
    const first = await client.payments.create(hosted({ ref_trx: 'idem-2' }), { idempotencyKey: 'key-a' });
    const second = await client.payments.create(hosted({ ref_trx: 'idem-3' }), { idempotencyKey: 'key-b' });
    expect(second.trx_id).not.toBe(first.trx_id);
    expect(sandbox.mock.state.payments.size).toBe(2);
  });

  it('another key with a used ref_trx: 409 DUPLICATE_REFERENCE reaches the caller, not retried, nothing created', async () => {
    await client.payments.create(hosted({ ref_trx: 'idem-4' }), { idempotencyKey: 'key-c' });
    const error = await failure(client.payments.create(hosted({ ref_trx: 'idem-4' }), { idempotencyKey: 'key-d' }));
    expect(error).toMatchObject({
      status: 409,
      label: 'DUPLICATE_REFERENCE',
      message: expect.stringContaining('Transaction reference already exists'),
    });
    expect(sandbox.mock.state.payments.size).toBe(1);
    expect(requestsTo('POST', '/api/v1/payments')).toHaveLength(2);
  });
});

describe('errors: each spec label reaches its class', () => {
  it('Currency is not enabled for this merchant → UnprocessableEntityError with .label', async () => {
    const error = await failure(client.payments.create(hosted({ currency_code: 'GBP' })));
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(error).toMatchObject({ status: 422, label: 'Currency is not enabled for this merchant' });
  });

  it('Receiver wallet for this currency is not available → UnprocessableEntityError with .label', async () => {
    const error = await failure(client.payments.create(hosted({ currency_code: 'EUR' })));
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(error).toMatchObject({ status: 422, label: 'Receiver wallet for this currency is not available' });
  });

  it('Invalid API credentials (wrong secret) → AuthenticationError', async () => {
    const wrong = sandbox.clientWith({ apiSecret: 'test_not_the_secret', maxRetries: 0 });
    const error = await failure(wrong.balance.retrieve());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ status: 401, label: 'Invalid API credentials' });
    expect((error as AuthenticationError).message).toMatch(/Bad signature/);
    expect((error as AuthenticationError).message).not.toContain('test_not_the_secret');
  });

  it('Invalid API credentials (sandbox keys sent with X-Environment: production) → AuthenticationError', async () => {
    // The client refuses test_ credentials in production at construction, so a fetch
    // wrapper rewrites the header on the wire (it is not covered by the signature).
    const asProduction: typeof fetch = (input, init) => {
      const request = new Request(input, init);
      const headers = new Headers(request.headers);
      headers.set('X-Environment', 'production');
      return fetch(new Request(request, { headers }));
    };
    const mixed = sandbox.clientWith({ fetch: asProduction, maxRetries: 0 });
    const error = await failure(mixed.balance.retrieve());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ status: 401, label: 'Invalid API credentials' });
    expect((error as AuthenticationError).message).toMatch(/other environment/);
    expect(sandbox.mock.state.requests.at(-1)).toMatchObject({ path: '/api/v1/balance', status: 401 });
  });

  it('Merchant Pending Approval → MerchantPendingApprovalError (production over loopback http)', async () => {
    sandbox.mock.state.merchants[0]!.status = 'pending';
    const live = new PaymentsClient({
      environment: 'production',
      ...sandbox.mock.credentials.production,
      baseUrl: sandbox.server.url,
      maxRetries: 0,
    });
    expect(sandbox.server.url).toMatch(/^http:\/\/127\.0\.0\.1:/);
    const error = await failure(live.balance.retrieve());
    expect(error).toBeInstanceOf(MerchantPendingApprovalError);
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect(error).toMatchObject({ status: 403, label: 'Merchant Pending Approval' });
    // A pending merchant still works in sandbox.
    await expect(client.balance.retrieve()).resolves.toBeTruthy();
  });

  it('Validation failed: params the client refuses throw InvalidParamsError and nothing is sent', async () => {
    const before = sandbox.mock.state.requests.length;
    const error = await failure(client.payments.create({ payment_amount: 0, currency_code: 'usd', ref_trx: 'x' }));
    expect(error).toBeInstanceOf(InvalidParamsError);
    expect(Object.keys((error as InvalidParamsError).errors).sort()).toEqual(['currency_code', 'payment_amount']);
    expect(sandbox.mock.state.requests).toHaveLength(before);
  });

  it('Validation failed: the server’s 422 map reaches UnprocessableEntityError.errors, and the message names the field', async () => {
    // Well-formed for the client; only the service knows the plan does not exist.
    const error = await failure(
      client.billing.subscriptions.create({ plan_code: 'no-such-plan', customer_phone: '255712345678', terms_shown: 'TZS 10,000 monthly' }),
    );
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(error).toMatchObject({ status: 422, label: 'Validation failed' });
    expect((error as UnprocessableEntityError).errors).toEqual({ plan_code: [expect.stringMatching(/plan code is invalid/)] });
    expect((error as Error).message).toMatch(/Validation failed: plan_code: The selected plan code is invalid\./);
  });

  it('a list status the service does not know is refused before sending (the type is a union)', async () => {
    const before = sandbox.mock.state.requests.length;
    const error = await failure(client.payments.list({ status: 'refunded' as never }));
    expect(error).toBeInstanceOf(InvalidParamsError);
    expect(Object.keys((error as InvalidParamsError).errors)).toEqual(['status']);
    expect(sandbox.mock.state.requests).toHaveLength(before);
  });

  it('NotFoundError for an unknown trx id (verify and retrieve)', async () => {
    for (const call of [client.payments.verify('TRXUNKNOWN0000'), client.payments.retrieve('TRXUNKNOWN0000')]) {
      const error = await failure(call);
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error).toMatchObject({ status: 404, label: 'Not Found' });
    }
  });

  it('RateLimitError with retryAfter once the per-minute limit is spent', async () => {
    const limited = await startSandbox({ timeScale: 0.001, rateLimitPerMinute: 3 });
    try {
      const tight = limited.clientWith({ maxRetries: 0 });
      for (let i = 0; i < 3; i++) await tight.balance.retrieve();
      const error = await failure(tight.balance.retrieve());
      expect(error).toBeInstanceOf(RateLimitError);
      expect(error).toMatchObject({ status: 429, label: 'Too Many Requests' });
      const { retryAfter } = error as RateLimitError;
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(limited.mock.state.requests.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    } finally {
      await limited.close();
    }
  });
});

describe('clock skew', () => {
  it('a client clock 10 minutes behind gets AuthenticationError saying it is behind by about 600 s', async () => {
    // The service keeps real time; only the client's Date is set back (timers stay real: real sockets).
    const realNow = Date.now;
    const service = await startSandbox({ timeScale: 0.001, now: () => realNow() });
    vi.useFakeTimers({ toFake: ['Date'], now: realNow() - 600_000 });
    let error: unknown;
    try {
      error = await failure(service.clientWith({ maxRetries: 0 }).balance.retrieve());
    } finally {
      vi.useRealTimers();
      await service.close();
    }
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toBeInstanceOf(APIError);
    const { message } = error as AuthenticationError;
    const match = /clock is (\d+) s behind/.exec(message);
    expect(match, message).not.toBeNull();
    expect(Math.abs(Number(match![1]) - 600)).toBeLessThanOrEqual(2);
    expect(message).toMatch(/Stale timestamp/);
  });
});
