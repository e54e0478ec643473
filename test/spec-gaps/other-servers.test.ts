// The real server, not our mirror: every SDK method against servers that are not
// our sandbox, yet are faithful to the spec. A real node:http server of our own (it checks
// every signature with its own HMAC) answers each provisional route in several other plausible
// shapes, and each shown route in the variants the spec tolerates. For each: no throw, nothing
// the server sent is lost (every field present, as sent or read as the spec's type), and the
// SDK's own logic reads it right (list walks, waitForOutcome, push status, payout outcome).
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { APITimeoutError, InvalidParamsError, RateLimitError, type PaymentsClient } from '../../src/index.js';
import { fixtures } from '../support/fake-api.js';
import {
  LIST_DIALECTS,
  listReply,
  lostFields,
  payoutLedger,
  startOtherServer,
  type OtherServer,
  type Reply,
} from '../support/other-servers.js';

let server: OtherServer;
let client: PaymentsClient;

beforeAll(async () => {
  server = await startOtherServer();
  client = server.client();
});
afterEach(() => {
  // Every request the SDK made was signed as the spec says, checked by the server's own HMAC.
  expect(server.refused()).toEqual([]);
  server.reset();
});
afterAll(() => server.close());

/** One way a server may answer a route: the reply, the resource in it, and what the SDK must read. */
interface Variant {
  name: string;
  reply: Reply;
  /** The resource the server sent (what must not be lost). */
  resource: Record<string, unknown>;
  /** Fields the SDK must read exactly so (canonical names, spec types). */
  reads: Record<string, unknown>;
  /** Fields the SDK may move aside (a payout's `status` → `server_status`). */
  moved?: Record<string, string>;
}

/** Runs `call` against each variant served on `method path`: no throw, nothing lost, read right. */
function eachVariant(method: string, path: string, variants: Variant[], call: (variant: Variant) => Promise<unknown>) {
  test.each(variants.map((v) => [v.name, v] as const))('%s', async (_name, variant) => {
    server.on(method, path, variant.reply);
    const result = (await call(variant)) as Record<string, unknown>;
    expect(lostFields(result, variant.resource, variant.moved)).toEqual([]);
    expect(result).toMatchObject(variant.reads);
    expect(server.seen).toHaveLength(1);
  });
}

const TRX = 'TRX7781';
const UUID = '9f1c2b7e-3d4a-4e5f-8a6b-7c8d9e0f1a2b';
const PHONE = '255712345678';

// --- Shown shapes: the tolerated variants ------------------------------------------------------

describe('payments.create (shown: Payment) in tolerated variants', () => {
  const documented = {
    trx_id: TRX,
    merchant_ref: 'order-1001',
    amount: 25,
    currency: 'USD',
    status: 'pending',
    checkout_url: `https://checkout.other.test/c/${TRX}`,
    expires_at: '2026-11-22T13:00:00Z',
    environment: 'sandbox',
  };
  const decimal = {
    merchant_ref: null,
    amount: '25.00',
    currency: 'USD',
    status: 'pending',
    checkout_url: null,
    fee: '0.75',
    customer: null,
  };
  const integerId = {
    trx_id: 987654,
    amount: 25,
    currency: 'USD',
    status: 'pending',
    environment: 'sandbox',
    expires_at: null,
    gateway: null,
  };
  const push = {
    trx_id: TRX,
    merchant_ref: 'order-1002',
    amount: '1500.50',
    currency: 'TZS',
    status: 'pending',
    payment_mode: 'push',
    customer_phone: PHONE,
  };
  eachVariant(
    'POST',
    '/api/v1/payments',
    [
      {
        name: 'documented { status, data, payment_url, trx_id }',
        reply: { body: { status: 'success', data: documented, payment_url: documented.checkout_url, trx_id: TRX } },
        resource: documented,
        reads: { trx_id: TRX, status: 'pending', amount: 25, currency: 'USD' },
      },
      {
        name: '"amount": "25.00", merchant_ref and checkout_url null, no expires_at/environment, trx_id only at the top level',
        reply: { body: { status: 'success', trx_id: 'TRX-TOP', payment_url: 'https://checkout.other.test/c/TRX-TOP', data: decimal } },
        resource: decimal,
        reads: { trx_id: 'TRX-TOP', status: 'pending', amount: 25, merchant_ref: null },
      },
      {
        name: '201 { success: true, data } with an integer trx_id and nulls in non-acted fields',
        reply: { status: 201, body: { success: true, data: integerId } },
        resource: integerId,
        reads: { trx_id: '987654', amount: 25, status: 'pending' },
      },
      {
        name: '202 push mode: no checkout link at all, "amount": "1500.50"',
        reply: { status: 202, body: { status: 'success', message: 'USSD push sent', data: push } },
        resource: push,
        reads: { trx_id: TRX, amount: 1500.5, currency: 'TZS', status: 'pending' },
      },
    ],
    () => client.payments.create({ payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1001' }),
  );
});

describe('payments.initiate (shown: PaymentSession) in tolerated variants', () => {
  const info = fixtures.sessionInfo;
  const php = {
    ...info,
    merchant_id: '12',
    is_sandbox: 1,
    merchant_payment_methods_restricted: 0,
    amount: '25.00',
    description: null,
    customer_email: null,
    allow_payment_methods: null,
    merchant_payment_method_ids: ['3', '4'],
  };
  const strings = { ref_trx: 'order-1001', merchant_id: 12, is_sandbox: '1', merchant_payment_methods_restricted: 'false', amount: 25 };
  const url = 'https://checkout.other.test/pay/abc?signature=f00';
  const params = {
    payment_amount: 25,
    currency_code: 'USD',
    ref_trx: 'order-1001',
    success_redirect: 'https://shop.example.com/thanks',
    cancel_redirect: 'https://shop.example.com/cancel',
    ipn_url: 'https://shop.example.com/ipn',
  };
  eachVariant(
    'POST',
    '/api/v1/initiate-payment',
    [
      {
        name: 'documented { payment_url, info, data }',
        reply: { body: { payment_url: url, info, data: { trx_id: TRX, checkout_url: url } } },
        resource: { payment_url: url, info, data: { trx_id: TRX, checkout_url: url } },
        reads: { payment_url: url, info: { merchant_id: 42, is_sandbox: true } },
      },
      {
        name: 'PHP: merchant_id "12", 1/0 booleans, "amount": "25.00", nulls, no data',
        reply: { body: { payment_url: url, info: php } },
        resource: { payment_url: url, info: php },
        reads: { info: { merchant_id: 12, is_sandbox: true, merchant_payment_methods_restricted: false, amount: 25, description: null } },
      },
      {
        name: '"1"/"false" booleans, most info fields missing, integer data.trx_id, a top-level status',
        reply: { body: { status: 'success', payment_url: url, info: strings, data: { trx_id: 4321, checkout_url: null } } },
        resource: { status: 'success', payment_url: url, info: strings, data: { trx_id: 4321, checkout_url: null } },
        reads: { payment_url: url, info: { is_sandbox: true, merchant_payment_methods_restricted: false } },
      },
    ],
    () => client.payments.initiate(params),
  );

  // Found by this suite: flag fields were read through String(value), so a value
  // that is no flag spelling at all ([1], ["false"]) became a boolean instead of being kept.
  test('a flag field holding something else ([1]) is kept as sent', async () => {
    const odd = { ...info, is_sandbox: [1], merchant_payment_methods_restricted: ['false'] };
    server.on('POST', '/api/v1/initiate-payment', { body: { payment_url: url, info: odd } });
    const session = await client.payments.initiate(params);
    expect(lostFields(session, { payment_url: url, info: odd })).toEqual([]);
  });
});

const verified = { ...fixtures.verified, trx_id: TRX };

describe('payments.verify (shown: VerifiedTransaction) in tolerated variants', () => {
  const pending = {
    status: 'pending',
    trx_id: TRX,
    amount: '25.00',
    fee: null,
    currency: 'USD',
    net_amount: null,
    customer: null,
    created_at: '2026-11-22T12:00:00Z',
  };
  // An integer trx_id, read as its string: asked for as '123456' (an answer about another id is refused).
  const enveloped = {
    status: 'pending',
    trx_id: 123456,
    amount: '25.00',
    currency: 'USD',
    fee: '0.00',
    customer: { name: null, email: 'a@b.co' },
    created_at: null,
  };
  const failed = { ...verified, status: 'failed', fee: '0', net_amount: '0', description: null, failure_reason: 'PAYMENT_DECLINED' };
  eachVariant(
    'GET',
    '/api/v1/verify-payment/:trxId',
    [
      { name: 'documented, bare', reply: { body: verified }, resource: verified, reads: { status: 'success', trx_id: TRX, amount: 25 } },
      {
        name: 'pending: customer null, fee null, no description, "amount": "25.00"',
        reply: { body: pending },
        resource: pending,
        reads: { status: 'pending', amount: 25, fee: null, customer: null },
      },
      {
        name: '{ status: "success", data } whose payment is pending, integer trx_id',
        reply: { body: { status: 'success', data: enveloped } },
        resource: enveloped,
        reads: { status: 'pending', trx_id: '123456', amount: 25, fee: 0 },
      },
      {
        name: '{ success: true, message, data } of a failed payment with decimal strings',
        reply: { body: { success: true, message: 'Transaction found', data: failed } },
        resource: { message: 'Transaction found', ...failed },
        reads: { status: 'failed', fee: 0, net_amount: 0 },
      },
    ],
    (variant) => client.payments.verify(variant.name.includes('integer trx_id') ? '123456' : TRX),
  );
});

describe('siteInfo.retrieve (shown: SiteInfo) in tolerated variants', () => {
  const documented = {
    site_name: 'Other Payments',
    site_logo: 'https://other.test/logo.png',
    site_url: 'https://other.test',
    gateway_name: 'Other Gateway',
    gateway_description: 'Hosted checkout and mobile money',
    features: { ssl_secured: 'SSL', instant_processing: 'Instant', global_support: 'Global', mobile_ready: 'Mobile' },
    environments: { production: 'Live', sandbox: 'Test' },
    api_version: '1.0',
    status: 'operational',
  };
  const { features: _features, ...featureless } = documented;
  const nulls = { ...featureless, site_logo: null, environments: null, maintenance: false };
  const numbers = { site_name: 'Other', site_logo: null, api_version: 1, status: 'ok', features: { ssl_secured: true } };
  eachVariant(
    'GET',
    '/api/v1/site-info',
    [
      { name: 'documented, bare', reply: { body: documented }, resource: documented, reads: { site_name: 'Other Payments' } },
      {
        name: 'site_logo null, no features, environments null, an extra field',
        reply: { body: nulls },
        resource: nulls,
        reads: { site_logo: null },
      },
      {
        name: '{ status: "success", data } with a number api_version and a boolean feature',
        reply: { body: { status: 'success', data: numbers } },
        resource: numbers,
        reads: { site_logo: null, api_version: 1 },
      },
    ],
    () => client.siteInfo.retrieve(),
  );
});

describe('payouts.preview (shown: PayoutPreview) in tolerated variants', () => {
  const decimal = { amount: '100.00', fee: '1.50', payable_amount: '98.50', currency: 'TZS' };
  const wrapped = { amount: 100, fee: 1.5, payable_amount: 98.5, currency: null };
  const partial = { fee: 2, payable_amount: '98', fee_percent: '2.0' };
  eachVariant(
    'POST',
    '/api/v1/payouts/preview',
    [
      { name: 'decimal strings', reply: { body: decimal }, resource: decimal, reads: { amount: 100, fee: 1.5, payable_amount: 98.5 } },
      {
        name: '{ status: "success", data } with currency null',
        reply: { body: { status: 'success', data: wrapped } },
        resource: wrapped,
        reads: { fee: 1.5, payable_amount: 98.5, currency: null },
      },
      {
        name: 'no amount (not acted on), an extra field, 201',
        reply: { status: 201, body: partial },
        resource: partial,
        reads: { fee: 2, payable_amount: 98 },
      },
    ],
    () => client.payouts.preview({ amount: 100 }),
  );
});

// --- Provisional shapes: other envelopes, other names ------------------------------------------

describe('payments.retrieve (provisional) in other shapes', () => {
  const stateField = {
    transaction_id: TRX,
    state: 'success',
    amount: '25.00',
    fee: '0.75',
    net_amount: '24.25',
    currency: 'USD',
    merchant_ref: null,
    risk_score: 0.2,
  };
  const intId = { trx_id: 4242, payment_status: 'pending', amount: 25, currency: 'USD', customer: { name: 'Asha', phone: PHONE } };
  const failed = { trx_id: TRX, status: 'failed', failure_reason: 'INSUFFICIENT_FUNDS', amount: '25', currency: 'USD' };
  const named = { transaction_id: 'TX-9', state: 'pending', amount: '10.5', currency: 'TZS', gateway: null };
  const failedById = { transaction_id: TRX, status: 'failed', amount: '25.00', currency: 'USD', failure_reason: 'PAYMENT_DECLINED' };
  eachVariant(
    'GET',
    '/api/v1/payments/:trx_id',
    [
      {
        name: 'bare, a state field, transaction_id, decimal strings',
        reply: { body: stateField },
        resource: stateField,
        reads: { trx_id: TRX, status: 'success', amount: 25, fee: 0.75, net_amount: 24.25 },
      },
      {
        name: '{ status: "success", data: { payment } }, an integer id, payment_status',
        reply: { body: { status: 'success', data: { payment: intId } } },
        resource: intId,
        reads: { trx_id: '4242', status: 'pending' },
      },
      {
        name: '{ success: true, data } of a failed payment, "amount": "25"',
        reply: { body: { success: true, data: failed } },
        resource: failed,
        reads: { status: 'failed', amount: 25, failure_reason: 'INSUFFICIENT_FUNDS' },
      },
      {
        name: '{ transaction: {...} }',
        reply: { body: { transaction: named } },
        resource: named,
        reads: { trx_id: 'TX-9', status: 'pending', amount: 10.5 },
      },
    ],
    () => client.payments.retrieve(TRX),
  );

  // Found by this suite: a record whose id goes by another name the SDK reads
  // (transaction_id) and whose status is `failed` was taken for a failure envelope (APIError 200).
  test('a bare failed payment named by transaction_id is a record, not a failure envelope', async () => {
    server.on('GET', '/api/v1/payments/:trx_id', { body: failedById });
    const payment = await client.payments.retrieve(TRX);
    expect(lostFields(payment, failedById)).toEqual([]);
    expect(payment).toMatchObject({ trx_id: TRX, status: 'failed', amount: 25 });
  });

  // Found by this suite: the first fix covered transaction_id, not trxId, another name the
  // SDK reads trx_id from: a failed payment named so was still an APIError 200.
  test('a bare failed payment named by trxId is a record, not a failure envelope', async () => {
    const camel = { trxId: TRX, status: 'failed', amount: '25.00', currency: 'USD' };
    server.on('GET', '/api/v1/payments/:trx_id', { body: camel });
    expect(await client.payments.retrieve(TRX)).toMatchObject({ trx_id: TRX, status: 'failed', amount: 25 });
  });
});

describe('payments.push (provisional): the status is the resource’s, never the envelope’s', () => {
  const wrapped = { transaction_id: TRX, payment_status: 'pending', customer_phone: PHONE, push_count: 2 };
  eachVariant(
    'POST',
    '/api/v1/payments/:trx_id/push',
    [
      {
        name: '{ status: "success", trx_id, data: { status: "pending" } }',
        reply: { body: { status: 'success', trx_id: 'TRX1', data: { status: 'pending' } } },
        resource: { trx_id: 'TRX1', status: 'pending' },
        reads: { trx_id: 'TRX1', status: 'pending' },
      },
      {
        name: '{ success: true, message, data } with transaction_id and payment_status',
        reply: { body: { success: true, message: 'USSD push sent', data: wrapped } },
        resource: { message: 'USSD push sent', ...wrapped },
        reads: { trx_id: TRX, status: 'pending', push_count: 2 },
      },
      {
        name: '202 { data: { payment: {...} } }',
        reply: { status: 202, body: { data: { payment: { trx_id: TRX, status: 'pending', push_count: '1' } } } },
        resource: { trx_id: TRX, status: 'pending', push_count: '1' },
        reads: { trx_id: TRX, status: 'pending' },
      },
    ],
    () => client.payments.push(TRX, { customer_phone: PHONE }),
  );

  test('a flat { status: "success", message, trx_id }: no status is made up from the envelope', async () => {
    server.on('POST', '/api/v1/payments/:trx_id/push', { body: { status: 'success', message: 'Push sent', trx_id: TRX } });
    const result = await client.payments.push(TRX);
    expect(result.status).toBeUndefined();
    expect(result).toMatchObject({ trx_id: TRX, message: 'Push sent' });
  });

  test.each([202, 204])('%s with an empty body', async (status) => {
    server.on('POST', '/api/v1/payments/:trx_id/push', { status });
    expect(await client.payments.push(TRX)).toEqual({});
  });
});

describe('balance.retrieve (provisional) in other shapes', () => {
  const cases: Array<[string, unknown, Array<Record<string, unknown>>, Array<Record<string, unknown>>]> = [
    [
      'a bare list [{ currency, available, pending }]',
      [
        { currency: 'USD', available: '120.50', pending: '10.00' },
        { currency: 'TZS', available: 250000, pending: 0 },
      ],
      [
        { currency: 'USD', available: '120.50', pending: '10.00' },
        { currency: 'TZS', available: 250000, pending: 0 },
      ],
      [
        { currency: 'USD', balance: 120.5, available: 120.5, pending: 10 },
        { currency: 'TZS', balance: 250000 },
      ],
    ],
    [
      '{ wallets: [...] } with available_balance',
      { wallets: [{ currency: 'USD', available_balance: '5.00', wallet_id: 7 }] },
      [{ currency: 'USD', available_balance: '5.00', wallet_id: 7 }],
      [{ currency: 'USD', balance: 5 }],
    ],
    [
      'a currency map { USD: 100, TZS: "2500.00" }',
      { USD: 100, TZS: '2500.00' },
      [],
      [
        { currency: 'USD', balance: 100 },
        { currency: 'TZS', balance: 2500 },
      ],
    ],
    [
      '{ status: "success", data: { USD: { available, pending } } }',
      { status: 'success', data: { USD: { available: '10.00', pending: 0 }, EUR: { available: 3 } } },
      [{ available: '10.00', pending: 0 }, { available: 3 }],
      [
        { currency: 'USD', balance: 10 },
        { currency: 'EUR', balance: 3 },
      ],
    ],
    [
      '{ success: true, data: { balances: [{ currency, amount }] } }',
      { success: true, data: { balances: [{ currency: 'TZS', amount: '7.25', updated_at: null }] } },
      [{ currency: 'TZS', amount: '7.25', updated_at: null }],
      [{ currency: 'TZS', balance: 7.25 }],
    ],
    [
      '201 { data: { accounts: [{ currency, balance }] } }',
      { data: { accounts: [{ currency: 'USD', balance: '12', account: 'main' }] } },
      [{ currency: 'USD', balance: '12', account: 'main' }],
      [{ currency: 'USD', balance: 12 }],
    ],
  ];
  test.each(cases)('%s', async (_name, body, sentWallets, reads) => {
    server.on('GET', '/api/v1/balance', { status: _name.startsWith('201') ? 201 : 200, body });
    const wallets = await client.balance.retrieve();
    expect(Array.isArray(wallets)).toBe(true);
    expect(wallets).toHaveLength(reads.length);
    reads.forEach((read, i) => expect(wallets[i]).toMatchObject(read));
    sentWallets.forEach((sent, i) => expect(lostFields(wallets[i], sent)).toEqual([]));
  });
});

const payoutVariants = (): Variant[] => {
  const successful = { payout_id: UUID, amount: 100, status: 'SUCCESSFUL' };
  const pending = { uuid: UUID, amount: '100.00', fee: '1.50', state: 'PENDING', destination: PHONE };
  const flat = { payout_status: 'AMBIGUOUS', reference: UUID, amount: 100 };
  const inProgress = { id: UUID, status: 'IN_PROGRESS', amount: 100, currency: 'TZS' };
  const processing = { id: UUID, status: 'processing', amount: '50' };
  const coded = { id: UUID, code: 'TRANSACTION_AMBIGUOUS', status: 'pending', amount: 100 };
  const failed = { payout_id: UUID, status: 'FAILED', failure_reason: 'Insufficient balance', amount: 100 };
  return [
    {
      name: '{ status: "success", data: { payout_id, status: "SUCCESSFUL" } }',
      reply: { body: { status: 'success', data: successful } },
      resource: successful,
      reads: { id: UUID, status: 'SUCCESS', server_status: 'SUCCESSFUL', amount: 100 },
      moved: { status: 'server_status' },
    },
    {
      name: '201 { payout: { uuid, state: "PENDING", "amount": "100.00" } }',
      reply: { status: 201, body: { payout: pending } },
      resource: pending,
      reads: { id: UUID, status: 'INPROGRESS', amount: 100, fee: 1.5 },
    },
    {
      name: '202 flat { status: "success", payout_status: "AMBIGUOUS", reference }',
      reply: { status: 202, body: { status: 'success', ...flat } },
      resource: flat,
      reads: { id: UUID, status: 'AMBIGUOUS' },
    },
    {
      name: '{ id, status: "IN_PROGRESS" }',
      reply: { body: inProgress },
      resource: inProgress,
      reads: { id: UUID, status: 'INPROGRESS', server_status: 'IN_PROGRESS' },
      moved: { status: 'server_status' },
    },
    {
      name: '{ data: { payout: { id, status: "processing" } } }',
      reply: { body: { data: { payout: processing } } },
      resource: processing,
      reads: { id: UUID, status: 'INPROGRESS', amount: 50 },
      moved: { status: 'server_status' },
    },
    {
      name: '{ success: true, data: { code: "TRANSACTION_AMBIGUOUS", status: "pending" } }',
      reply: { body: { success: true, data: coded } },
      resource: coded,
      reads: { id: UUID, status: 'AMBIGUOUS', server_status: 'pending' },
      moved: { status: 'server_status' },
    },
    {
      name: '{ payout_id, status: "FAILED", failure_reason }',
      reply: { body: failed },
      resource: failed,
      reads: { id: UUID, status: 'FAILED' },
    },
  ];
};

describe('payouts.create (provisional) in other shapes: the outcome read wherever it is', () => {
  eachVariant('POST', '/api/v1/payouts', payoutVariants(), () => client.payouts.create({ amount: 100 }));

  // Found by this suite: `reference` is one of the payout id names the SDK reads,
  // yet a flat body naming its id so was taken for an envelope and its status word dropped.
  test('{ reference, status: "success" } (a payout named by reference) keeps its status', async () => {
    server.on('POST', '/api/v1/payouts', { body: { reference: UUID, status: 'success', amount: 100 } });
    const payout = await client.payouts.create({ amount: 100 });
    expect(payout).toMatchObject({ id: UUID, status: 'SUCCESS' });
  });
});

describe('payouts.retrieve (provisional) in other shapes', () => {
  eachVariant('GET', '/api/v1/payouts/:id', payoutVariants(), () => client.payouts.retrieve(UUID));

  // Found by this suite: as for payments, `reference` names the payout, yet a FAILED
  // payout named so was taken for a failure envelope (APIError 200) instead of being returned.
  test('{ reference, status: "FAILED" } is a failed payout, not a failure envelope', async () => {
    server.on('GET', '/api/v1/payouts/:id', { body: { reference: UUID, status: 'FAILED', amount: 100 } });
    expect(await client.payouts.retrieve(UUID)).toMatchObject({ id: UUID, status: 'FAILED', amount: 100 });
  });
});

describe('billing.plans.create (provisional): the body sent as written, the plan read from other names', () => {
  const params = { name: 'Gold', amount: 10000, currency: 'TZS', interval: 'monthly', trial_days: 7, metadata: { tier: 'gold' } };
  const code = { code: 'GOLD', name: 'Gold', price: '10000.00', currency: 'TZS', interval: 'monthly', trial_days: 7 };
  const planId = { plan_id: 17, amount: '10000.00', interval: 'monthly', interval_count: '1' };
  const id = { id: 'plan_01', amount: 10000, currency: 'TZS', interval: 'month', interval_count: 1, status: 'active' };
  const variants: Variant[] = [
    { name: '{ data: { code, price } }', reply: { body: { data: code } }, resource: code, reads: { plan_code: 'GOLD', amount: 10000 } },
    {
      name: '201 { status: "success", plan: { plan_id: 17 } }',
      reply: { status: 201, body: { status: 'success', plan: planId } },
      resource: planId,
      reads: { plan_code: '17', amount: 10000, interval_count: 1 },
    },
    { name: 'bare { id }', reply: { body: id }, resource: id, reads: { plan_code: 'plan_01', amount: 10000 } },
    {
      name: '{ success: true, data: { plan_code, amount: "99.99" } }',
      reply: { body: { success: true, data: { plan_code: 'gold', amount: '99.99' } } },
      resource: { plan_code: 'gold', amount: '99.99' },
      reads: { plan_code: 'gold', amount: 99.99 },
    },
  ];
  eachVariant('POST', '/api/v1/billing/plans', variants, async () => {
    const plan = await client.billing.plans.create(params);
    expect(server.seen[0]!.json).toStrictEqual(params);
    return plan;
  });

  test('only the JSON types of the suggested fields are checked before sending', async () => {
    const error = await client.billing.plans.create({ name: 7, amount: '10,000', interval: 1 } as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidParamsError);
    expect(Object.keys((error as InvalidParamsError).errors).sort()).toEqual(['amount', 'interval', 'name']);
    expect(server.seen).toHaveLength(0);
  });
});

describe('billing.subscriptions.create (provisional) in other shapes', () => {
  const byName = { subscription_id: 'sub_123', plan_code: 'GOLD', status: 'pending', amount: '10000.00', customer_phone: PHONE };
  const nested = { id: 'sub_9', status: 'pending', plan: { code: 'GOLD' } };
  const bare = { id: 'sub_7', state: 'pending_consent', consent: { terms_shown: 'TZS 10,000 monthly', accepted_at: null } };
  eachVariant(
    'POST',
    '/api/v1/billing/subscriptions',
    [
      {
        name: '{ data: { subscription_id } }',
        reply: { body: { data: byName } },
        resource: byName,
        reads: { id: 'sub_123', amount: 10000 },
      },
      {
        name: '202 { success: true, message, subscription: {...} }',
        reply: { status: 202, body: { success: true, message: 'Consent recorded', subscription: nested } },
        resource: { message: 'Consent recorded', ...nested },
        reads: { id: 'sub_9', status: 'pending' },
      },
      { name: '201 bare with a state field', reply: { status: 201, body: bare }, resource: bare, reads: { id: 'sub_7' } },
    ],
    () => client.billing.subscriptions.create({ plan_code: 'GOLD', customer_phone: PHONE, terms_shown: 'TZS 10,000 monthly' }),
  );
});

describe('openapi() from other servers', () => {
  const docs: Array<[string, Record<string, unknown>]> = [
    ['OpenAPI 3.0 with extensions', { openapi: '3.0.3', info: { title: 'Other', version: '2' }, paths: {}, 'x-logo': { url: null } }],
    ['Swagger 2.0', { swagger: '2.0', info: { title: 'Legacy' }, host: 'other.test', paths: { '/x': {} } }],
    ['OpenAPI 3.1 with webhooks only', { openapi: '3.1.0', info: { title: 'Hooks', version: '1' }, webhooks: { paid: {} } }],
  ];
  test.each(docs)('%s', async (_name, doc) => {
    server.on('GET', '/api/v1/openapi.json', { body: doc });
    expect(await client.openapi()).toStrictEqual(doc);
  });
});

// --- Lists: every item exactly once across pages, whatever the pagination --------------------

const uuidOf = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

interface ListCase {
  name: string;
  path: string;
  plural: string;
  count: number;
  /** Item `i` as the server holds it, and what the SDK must read of it. */
  item: (i: number) => { sent: Record<string, unknown>; reads: Record<string, unknown>; key: string };
  walk: (client: PaymentsClient) => AsyncIterable<Record<string, unknown>>;
}

const LISTS: ListCase[] = [
  {
    name: 'payments.list',
    path: '/api/v1/payments',
    plural: 'payments',
    count: 37,
    item: (i) => {
      const common = { amount: `${i}.50`, fee: '0.25', currency: 'TZS', merchant_ref: i % 4 ? `order-${i}` : null, risk: { score: i } };
      if (i % 3 === 0)
        return {
          sent: { trx_id: 1000 + i, state: 'success', ...common },
          reads: { trx_id: String(1000 + i), status: 'success', amount: i + 0.5 },
          key: String(1000 + i),
        };
      if (i % 3 === 1)
        return {
          sent: { transaction_id: `TX${i}`, payment_status: 'pending', ...common },
          reads: { trx_id: `TX${i}`, status: 'pending', fee: 0.25 },
          key: `TX${i}`,
        };
      return { sent: { trx_id: `TRX${i}`, status: 'failed', ...common }, reads: { trx_id: `TRX${i}`, status: 'failed' }, key: `TRX${i}` };
    },
    walk: (c) => c.payments.list({ limit: 10 }),
  },
  {
    name: 'payouts.list',
    path: '/api/v1/payouts',
    plural: 'payouts',
    count: 31,
    item: (i) => {
      const words: Array<[string, string, string]> = [
        ['payout_id', 'SUCCESSFUL', 'SUCCESS'],
        ['uuid', 'PENDING', 'INPROGRESS'],
        ['reference', 'AMBIGUOUS', 'AMBIGUOUS'],
        ['id', 'in_progress', 'INPROGRESS'],
        ['payout_id', 'FAILED', 'FAILED'],
        ['uuid', 'processing', 'INPROGRESS'],
      ];
      const [idName, word, reading] = words[i % words.length]!;
      const sent = { [idName]: uuidOf(i), status: word, amount: `${100 + i}.00`, destination: PHONE, created_at: null };
      return { sent, reads: { id: uuidOf(i), status: reading, amount: 100 + i }, key: uuidOf(i) };
    },
    walk: (c) => c.payouts.list({ limit: 10 }),
  },
  {
    name: 'billing.invoices.list',
    path: '/api/v1/billing/invoices',
    plural: 'invoices',
    count: 33,
    item: (i) => {
      const sent =
        i % 2
          ? { invoice_id: `inv_${i}`, subscription_id: 'sub_1', amount: '10000.00', status: 'paid', attempt_count: '1' }
          : { id: `inv_${i}`, subscription: 'sub_1', amount: 10000, status: 'open', currency: 'TZS', paid_at: null };
      return { sent, reads: { id: `inv_${i}`, subscription: 'sub_1', amount: 10000 }, key: `inv_${i}` };
    },
    walk: (c) => c.billing.invoices.list({ subscription: 'sub_1', limit: 10 }),
  },
];

describe.each(LISTS)('$name: a walk yields every item exactly once, read right, whatever the pagination', (list) => {
  test.each(LIST_DIALECTS)('%s', async (dialect) => {
    const items = Array.from({ length: list.count }, (_, i) => list.item(i));
    server.on('GET', list.path, (req) =>
      listReply(
        dialect,
        items.map((item) => item.sent),
        req,
        server.url,
        list.plural,
      ),
    );
    const got: Array<Record<string, unknown>> = [];
    for await (const item of list.walk(client)) {
      got.push(item);
      if (got.length > list.count * 2) throw new Error('the walk does not end');
    }
    expect(got.map((item) => String(item.trx_id ?? item.id))).toEqual(items.map((item) => item.key));
    got.forEach((item, i) => {
      expect(item).toMatchObject(items[i]!.reads);
      expect(lostFields(item, items[i]!.sent, { status: 'server_status' })).toEqual([]);
    });
    // The walk ends exactly where the server says (no page fetched past the end) ...
    const pageSize = dialect === 'meta_total_clamped' ? 7 : dialect.startsWith('laravel') ? 15 : 10;
    expect(server.seen).toHaveLength(Math.ceil(list.count / pageSize));
    // ... a link to another origin is never followed: the pages are asked for by number.
    if (dialect === 'laravel_foreign_next') {
      expect(server.seen.map((req) => req.query.get('page'))).toEqual([null, '2', '3']);
    }
    if (list.name === 'billing.invoices.list' && !dialect.startsWith('laravel') && dialect !== 'drf') {
      expect(server.seen.every((req) => req.query.get('subscription') === 'sub_1')).toBe(true);
    }
  });
});

// Found by this suite: PHP servers write has_more as 1/0 (the SDK reads PHP 1/0
// flags elsewhere). A server that clamps the page size and said has_more: 1 lost the rest of
// the list silently: the short page ended the walk, as a short page with has_more: true once did.
test('a PHP server’s has_more: 1 keeps a walk going past a clamped (short) page', async () => {
  const items = Array.from({ length: 30 }, (_, i) => ({ trx_id: `TRX${i}`, amount: '1.00' }));
  server.on('GET', '/api/v1/payments', (req) => {
    const offset = Number(req.query.get('offset') ?? 0);
    const data = items.slice(offset, offset + 7);
    return { body: { data, has_more: offset + data.length < items.length ? 1 : 0 } };
  });
  const got: unknown[] = [];
  for await (const payment of client.payments.list({ limit: 10 })) got.push(payment);
  expect(got).toHaveLength(30);
});

// --- waitForOutcome against other verify shapes -------------------------------------------------

describe('payments.waitForOutcome against other servers', () => {
  const at = (status: string, extra: Record<string, unknown> = {}) => ({ ...verified, status, ...extra });
  // This file's client sends hundreds of requests a minute: its polls would wait for the
  // polling budget (docs/retries.md). These servers have no rate limit.
  const unpaced = () => client.withOptions({ pollingBudget: 1_000_000 });

  test('bare verify with decimal strings: pending → processing → initiated → success ends on success', async () => {
    const replies = ['pending', 'processing', 'initiated', 'success'].map((s) => ({ body: at(s, { amount: '25.00', fee: null }) }));
    server.sequence('GET', '/api/v1/verify-payment/:trxId', replies);
    const outcome = await unpaced().payments.waitForOutcome(TRX, { interval: 2, timeout: 5_000 });
    expect(outcome).toMatchObject({ status: 'success', amount: 25, fee: null });
    expect(server.seen).toHaveLength(4);
  });

  test('{ status: "success", data } envelopes: the envelope’s success never ends the wait; failed does, with the reason', async () => {
    const replies = ['pending', 'PENDING', 'failed'].map((s) => ({ body: { status: 'success', data: at(s, { customer: null }) } }));
    server.sequence('GET', '/api/v1/verify-payment/:trxId', replies);
    server.on('GET', '/api/v1/payments/:trx_id', {
      body: { data: { transaction_id: TRX, state: 'failed', failure_reason: 'INSUFFICIENT_FUNDS', failure_message: 'Not enough funds' } },
    });
    const outcome = await unpaced().payments.waitForOutcome(TRX, { interval: 2, timeout: 5_000 });
    expect(outcome).toMatchObject({ status: 'failed', failure_reason: 'INSUFFICIENT_FUNDS', failure_message: 'Not enough funds' });
    expect(server.seen.filter((req) => req.path.startsWith('/api/v1/verify-payment/'))).toHaveLength(3);
  });

  test('{ success: true, data } with an integer trx_id, ending on success', async () => {
    const replies = ['initiated', 'success'].map((s) => ({ body: { success: true, data: at(s, { trx_id: 7781 }) } }));
    server.sequence('GET', '/api/v1/verify-payment/:trxId', replies);
    expect(await unpaced().payments.waitForOutcome('7781', { interval: 2, timeout: 5_000 })).toMatchObject({
      status: 'success',
      trx_id: '7781',
    });
  });

  test('a status that never settles ("processing") ends at the deadline in APITimeoutError with lastStatus', async () => {
    server.on('GET', '/api/v1/verify-payment/:trxId', { body: { status: 'success', data: at('processing') } });
    const error = await unpaced()
      .payments.waitForOutcome(TRX, { interval: 5, timeout: 80 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APITimeoutError);
    expect((error as APITimeoutError).lastStatus).toBe('processing');
  });
});

// --- payouts.create: never sent twice on a guess ----------------------------------------------

describe('payouts.create against a server that stores only 2xx answers per Idempotency-Key', () => {
  const paid = { body: { status: 'success', data: { payout_id: UUID, amount: 100, status: 'SUCCESSFUL' } } };
  const outcomes: Array<[string, Reply]> = [
    ['500 plain', { status: 500, body: { error: 'Server Error', message: 'Server Error' } }],
    ['502 HTML', { status: 502, text: '<html>Bad Gateway</html>' }],
    ['503', { status: 503, body: { error: 'Service Unavailable' } }],
    ['504', { status: 504, body: { message: 'Gateway Timeout' } }],
    ['408', { status: 408, body: { message: 'Request Timeout' } }],
  ];
  test.each(outcomes)('%s: not retried (1 transfer); the error carries the key and names client.payouts.list()', async (_name, reply) => {
    const ledger = payoutLedger(server, () => reply);
    const error = (await client.payouts.create({ amount: 100 }).catch((e: unknown) => e)) as Error & { idempotencyKey?: string };
    expect(ledger.transfers).toHaveLength(1);
    expect(ledger.requests).toHaveLength(1);
    expect(error.idempotencyKey).toBe(ledger.transfers[0]);
    expect(error.message).toContain('client.payouts.list()');
  });

  test('429 (a refusal, no transfer): retried with the same key, then the payout', async () => {
    const limited = { status: 429, headers: { 'retry-after': '0' }, body: { error: 'Too Many Requests' } };
    server.sequence('POST', '/api/v1/payouts', [limited, paid]);
    const payout = await client.payouts.create({ amount: 100 });
    expect(payout).toMatchObject({ id: UUID, status: 'SUCCESS', server_status: 'SUCCESSFUL' });
    expect(server.seen).toHaveLength(2);
    expect(new Set(server.seen.map((req) => req.headers['idempotency-key'])).size).toBe(1);
  });

  test('429 whose body names an unsettled outcome (IN_PROGRESS): not retried', async () => {
    server.on('POST', '/api/v1/payouts', {
      status: 429,
      headers: { 'retry-after': '0' },
      body: { error: 'Too Many Requests', status: 'IN_PROGRESS' },
    });
    const error = await client.payouts.create({ amount: 100 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(server.seen).toHaveLength(1);
  });

  test('a timeout: not retried (the payout may have been made)', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const ledger = payoutLedger(server, () => paid);
    server.on('POST', '/api/v1/payouts', async (req) => {
      ledger.transfers.push(String(req.headers['idempotency-key']));
      await held;
      return paid;
    });
    const error = (await server
      .client({ timeout: 30 })
      .payouts.create({ amount: 100 })
      .catch((e: unknown) => e)) as Error & { idempotencyKey?: string };
    release();
    expect(error).toBeInstanceOf(APITimeoutError);
    expect(error.message).toContain('client.payouts.list()');
    expect(ledger.transfers).toEqual([error.idempotencyKey]);
    expect(server.seen).toHaveLength(1);
  });
});
