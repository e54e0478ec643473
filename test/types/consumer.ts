// A merchant's file, compiled under strict + exactOptionalPropertyTypes by types.test.ts:
// every `@ts-expect-error` below must be an error (an unused one fails the compile), and
// every other line must compile.
import {
  normalizePhone,
  paidAmount,
  PaymentsClient,
  type PhoneCountry,
  RouteNotSupportedError,
  type BalanceResult,
  type ServiceGeneration,
  type Payment,
  type PaymentListParams,
  type PaymentStatus,
  type Payout,
  type VerifiedTransaction,
  type Wallet,
} from 'business-payments';
import { verifyWebhook } from 'business-payments/webhooks';
import { createFulfillment, memoryStore } from 'business-payments/fulfillment';
import { postgresStore, type PostgresClaimDb, type PostgresQueryable } from 'business-payments/fulfillment/postgres';

declare const env: Record<string, string | undefined>;
declare function expectType<T>(value: T): void;
declare const pool: PostgresQueryable;
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
declare function assertTrue<_T extends true>(): void;

// Options accept undefined for every optional field (process.env values, optional props).
const client = new PaymentsClient({
  environment: env.ENV === 'production' ? 'production' : 'sandbox',
  merchantKey: env.KEY,
  apiKey: env.API_KEY,
  apiSecret: env.SECRET,
  baseUrl: env.BASE_URL,
  timeout: undefined,
  maxRetries: undefined,
  fetch: undefined,
  logger: undefined,
  logLevel: undefined,
  defaultHeaders: undefined,
  dangerouslyAllowBrowser: undefined,
});

export async function run(): Promise<void> {
  const payment = await client.payments.create(
    { payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1', description: undefined, ipn_url: env.IPN },
    { idempotencyKey: undefined, timeout: undefined, signal: undefined, headers: undefined, maxRetries: undefined },
  );
  expectType<string>(payment.trx_id);
  expectType<PaymentStatus>(payment.status);
  assertTrue<Equal<typeof payment, Payment>>();
  // @ts-expect-error a misspelt field is a compile error (no index signature)
  void payment.stauts;

  const verified: VerifiedTransaction = await client.payments.verify(payment.trx_id);
  if (verified.status === 'success') expectType<number>(verified.amount);
  // @ts-expect-error a wrong enum literal is a compile error
  if (verified.status === 'succeeded') void 0;

  // Ids are plain strings, never optional.
  const payout: Payout = await client.payouts.create({ amount: 100, destination: undefined });
  expectType<string>(payout.id);
  // @ts-expect-error INPROGRES is not a payout status
  if (payout.status === 'INPROGRES') void 0;
  const plan = await client.billing.plans.create({ name: 'Gold', amount: 10, interval: 'month', currency: undefined });
  expectType<string>(plan.plan_code);
  // @ts-expect-error plans.create needs a name and an amount
  await client.billing.plans.create({ plan_code: 'gold' });
  // The plan body is not shown by the spec: its fields are suggestions, and any other
  // interval or field compiles and is sent as written.
  await client.billing.plans.create({ name: 'Gold', amount: 10, currency: 'TZS', interval: 'monthly', trial_days: 7 });
  // Provisional results keep fields the SDK does not name, readable without a cast.
  expectType<unknown>(plan['trial_days']);
  expectType<unknown>(payout['payout_status']);
  // Shown results stay exact: a misspelt field is an error there.
  // @ts-expect-error VerifiedTransaction has no field `ammount`
  void verified.ammount;
  // Fields nobody acts on may be null or absent, as a server sends them.
  expectType<number | null | undefined>(verified.fee);
  const subscription = await client.billing.subscriptions.create({
    plan_code: plan.plan_code,
    customer_phone: '255712345678',
    terms_shown: 'TZS 10 monthly',
  });
  expectType<string>(subscription.id);
  for await (const invoice of client.billing.invoices.list({ subscription: subscription.id })) expectType<string>(invoice.id);

  // Balance is iterable: a list of wallets.
  const balance: BalanceResult = await client.balance.retrieve();
  for (const wallet of balance) expectType<Wallet>(wallet);
  expectType<number>(balance[0]!.balance);

  // List status is a union; limit a number.
  const params: PaymentListParams = { status: 'pending', limit: 50, merchant_ref: undefined };
  // @ts-expect-error 'paid' is not a payment status
  await client.payments.list({ status: 'paid' });
  for await (const item of client.payments.list(params)) expectType<PaymentStatus>(item.status);

  const event = await verifyWebhook({ payload: '', headers: {}, secret: env.SECRET ?? '', toleranceSeconds: undefined });
  // A payment event of the earlier generation's form has no id: format tells the forms apart.
  if (event.type === 'payment.completed' && event.format === 'current') expectType<string>(event.id);
  if (event.type === 'payment.completed' && event.format === 'legacy') {
    expectType<undefined>(event.id);
    expectType<string>(event.data.trx_id);
    expectType<string | null | undefined>(event.data.merchant_ref);
  }
  // @ts-expect-error 'legacy' is a webhook format, not a formats list
  await verifyWebhook({ payload: '', headers: {}, secret: 's', formats: 'legacy' });
  await verifyWebhook({ payload: '', headers: {}, secret: ['whsec_x', 'api_secret_x'], formats: ['legacy'], environment: 'production' });

  // The earlier generation: verify's amount only once it succeeded, the gross from paidAmount.
  const tx = await client.payments.verify('TRX1');
  expectType<number | undefined>(tx.amount);
  // @ts-expect-error amount may be missing until the payment succeeded
  expectType<number>(tx.amount);
  if (tx.status === 'success') expectType<number>(paidAmount(tx));
  expectType<number | undefined>(paidAmount(tx));
  expectType<string | null | undefined>(tx.message);
  const generation: ServiceGeneration = await client.generation();
  if (generation === 'earlier')
    await client.payments.initiate({
      payment_amount: 1,
      currency_code: 'USD',
      ref_trx: 'o',
      success_redirect: 'https://a.b',
      cancel_redirect: 'https://a.b',
      ipn_url: 'https://a.b',
    });
  // Amounts as numbers or decimal strings (pg numeric); phones as people type them.
  await client.payments.create({ payment_amount: '19.99', currency_code: 'USD', ref_trx: 'o', customer_phone: '0712 345 678' });
  await client.payouts.create({ amount: '500.00', destination: normalizePhone('+255 712 345 678') });
  const country: PhoneCountry = client.phoneCountry;
  expectType<string>(normalizePhone('0712 123456', { country: 'KE' }));
  new PaymentsClient({ phoneCountry: country, apiSecret: env.SECRET });
  // @ts-expect-error a country the SDK does not know
  new PaymentsClient({ phoneCountry: 'US' });
  // @ts-expect-error an amount is a number or a string, not a bigint
  await client.payouts.preview({ amount: 10n });
  try {
    await client.payments.create({ payment_amount: 1, currency_code: 'USD', ref_trx: 'o' });
  } catch (error) {
    if (error instanceof RouteNotSupportedError) expectType<[number, string, string]>([error.status, error.operation, error.route]);
  }

  // ctx.db is typed from the store: Postgres's claim transaction, or undefined.
  createFulfillment({
    environment: 'production',
    secret: 's',
    client,
    store: postgresStore(pool),
    onPaid: async (paid, { db }) => {
      expectType<PostgresClaimDb>(db);
      const { rows } = await db.query('SELECT total FROM orders WHERE ref = $1', [paid.merchant_ref]);
      expectType<unknown[]>(rows);
    },
    onEvent: (_event, { db }) => expectType<PostgresClaimDb | undefined>(db),
  });
  // The kit under real conditions: the price check with ctx.db, attempts, the inbox.
  const kit = createFulfillment({
    environment: 'production',
    secret: 's',
    client,
    store: postgresStore(pool),
    inbox: undefined,
    maxAttempts: undefined,
    retryDelay: (attempts) => attempts * 1000,
    expect: async (paid, { db }) => {
      const { rows } = await db.query('SELECT amount, currency FROM orders WHERE id = $1', [paid.order_ref]);
      const row = rows[0] as { amount: string; currency: string } | undefined;
      return row && { amount: row.amount, currency: row.currency };
    },
    onMismatch: (paid, { expected }) => expectType<string | number | undefined>(expected?.amount ?? paid.amount),
    onDuplicatePayment: async (paid, { db }) => void (await db.query('INSERT INTO refunds (trx_id) VALUES ($1)', [paid.trx_id])),
    onPaid: () => {},
  });
  const attempt = await kit.newAttempt('order-1');
  await client.payments.create(
    { payment_amount: 25, currency_code: 'USD', ref_trx: attempt.ref_trx },
    { idempotencyKey: attempt.idempotencyKey },
  );
  const drained = await kit.drain({ signal: undefined, limit: undefined });
  expectType<number>(drained.dead);
  const [dead] = await kit.inbox({ state: 'dead' });
  if (dead) expectType<boolean>(await kit.replay(dead.id));
  await kit.work({ signal: AbortSignal.timeout(1000), idleMs: undefined });
  const report = await kit.reconcile({ since: 0 });
  expectType<string[]>(report.unknown);
  expectType<string[]>(report.review);
  createFulfillment({
    environment: 'sandbox',
    secret: 's',
    client,
    store: memoryStore(),
    // @ts-expect-error memoryStore has no database handle
    onPaid: (_paid, { db }) => db.query('SELECT 1'),
  });
}
