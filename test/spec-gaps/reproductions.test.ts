// The real server, not our mirror: one regression test per way a server faithful to the spec
// was found to break the SDK, each named after it, against a real server of our own (it
// checks every signature with its own HMAC). The 1 GiB / gzip-bomb / 5,000-deep cases live in
// test/internal/read-body.test.ts; the sandbox and webhook cases in their own suites.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { APIError, APITimeoutError, InternalServerError, type PaymentsClient } from '../../src/index.js';
import { fixtures } from '../support/fake-api.js';
import { listReply, payoutLedger, startOtherServer, type OtherServer, type Reply } from '../support/other-servers.js';

let server: OtherServer;
let client: PaymentsClient;

beforeAll(async () => {
  server = await startOtherServer();
  client = server.client();
});
afterEach(() => {
  expect(server.refused()).toEqual([]);
  server.reset();
});
afterAll(() => server.close());

const UUID = '3f2b8c1e-5a6d-4e7f-9a0b-1c2d3e4f5a6b';
const PHONE = '255712345678';
const CREATE = { payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1001' } as const;
const verified = { ...fixtures.verified, trx_id: 'TRX1' };

describe('payouts.create answered 500 {"error":"Payout Ambiguous","message":"network did not confirm"} (or "status":"IN_PROGRESS", "code":"TRANSACTION_AMBIGUOUS") is retried: 3 attempts, 3 transfers against a server that stores only 2xx answers per key', () => {
  const answers: Array<[string, Reply]> = [
    [
      '{"error":"Payout Ambiguous","message":"network did not confirm"}',
      { status: 500, body: { error: 'Payout Ambiguous', message: 'network did not confirm' } },
    ],
    [
      '{"status":"IN_PROGRESS","code":"TRANSACTION_AMBIGUOUS"}',
      { status: 500, body: { status: 'IN_PROGRESS', code: 'TRANSACTION_AMBIGUOUS' } },
    ],
  ];
  test.each(answers)(
    '500 %s: 1 attempt, 1 transfer; the error carries the key and says how to look the payout up',
    async (_name, answer) => {
      // Every transfer ends the same way: the network never confirms, so nothing is stored.
      const ledger = payoutLedger(server, () => answer);
      const error = (await client.payouts.create({ amount: 100 }).catch((e: unknown) => e)) as InternalServerError & {
        idempotencyKey?: string;
        attempts?: number;
      };
      expect(ledger.transfers).toHaveLength(1);
      expect(ledger.requests).toHaveLength(1);
      expect(error).toBeInstanceOf(InternalServerError);
      expect(error.status).toBe(500);
      expect(error.idempotencyKey).toBe(ledger.transfers[0]);
      expect(error.message).toContain('client.payouts.list()');
    },
  );
});

describe('payments.push answered 200 {"status":"success","trx_id":"TRX1","data":{"status":"pending"}} resolves with status: \'success\'. 200 {"status":"error","message":"Payment is not pending"} resolves as if the push went out. A payout {"status":"success","payout_status":"AMBIGUOUS"} reads as success.', () => {
  test('push answered {"status":"success","trx_id":"TRX1","data":{"status":"pending"}}: status is the payment’s, pending', async () => {
    server.on('POST', '/api/v1/payments/:trx_id/push', { body: { status: 'success', trx_id: 'TRX1', data: { status: 'pending' } } });
    const result = await client.payments.push('TRX1', { customer_phone: PHONE });
    expect(result).toMatchObject({ trx_id: 'TRX1', status: 'pending' });
  });

  test('push answered 200 {"status":"error","message":"Payment is not pending"}: an APIError with status 200', async () => {
    server.on('POST', '/api/v1/payments/:trx_id/push', { body: { status: 'error', message: 'Payment is not pending' } });
    const error = await client.payments.push('TRX1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(200);
    expect((error as APIError).message).toContain('Payment is not pending');
  });

  test('a payout {"status":"success","payout_status":"AMBIGUOUS"} reads as AMBIGUOUS (create and retrieve)', async () => {
    const body = { status: 'success', payout_status: 'AMBIGUOUS', id: UUID, amount: 100 };
    server.on('POST', '/api/v1/payouts', { body });
    server.on('GET', '/api/v1/payouts/:id', { body: { status: 'success', payout_status: 'AMBIGUOUS', amount: 100 } });
    expect(await client.payouts.create({ amount: 100 })).toMatchObject({ id: UUID, status: 'AMBIGUOUS' });
    expect((await client.payouts.retrieve(UUID)).status).toBe('AMBIGUOUS');
  });
});

describe('payouts.create answered {"status":"success","data":{"payout_id":"<uuid>","amount":100,"status":"SUCCESSFUL"}} → ResponseValidationError (id: is required); retrying with the same key replays the same body and throws again; payouts.list/retrieve throw too.', () => {
  const record = { payout_id: UUID, amount: 100, status: 'SUCCESSFUL' };
  const body = { status: 'success', data: record };

  test('create resolves with id from payout_id and status SUCCESS; a retry with the same key replays it: still 1 transfer', async () => {
    const ledger = payoutLedger(server, () => ({ body }));
    const first = await client.payouts.create({ amount: 100 }, { idempotencyKey: 'payout-2026-11-22-1' });
    expect(first).toMatchObject({ id: UUID, payout_id: UUID, amount: 100, status: 'SUCCESS', server_status: 'SUCCESSFUL' });
    const again = await client.payouts.create({ amount: 100 }, { idempotencyKey: 'payout-2026-11-22-1' });
    expect(again).toStrictEqual(first);
    expect(ledger.requests).toEqual(['payout-2026-11-22-1', 'payout-2026-11-22-1']);
    expect(ledger.transfers).toHaveLength(1);
  });

  test('payouts.list and payouts.retrieve read the same record', async () => {
    server.on('GET', '/api/v1/payouts', { body: { data: [record], has_more: false } });
    server.on('GET', '/api/v1/payouts/:id', { body });
    const page = await client.payouts.list();
    expect(page.data).toEqual([expect.objectContaining({ id: UUID, status: 'SUCCESS' })]);
    expect(await client.payouts.retrieve(UUID)).toMatchObject({ id: UUID, status: 'SUCCESS' });
  });
});

describe('payments.create with "amount":"25.00" or merchant_ref: null; verify with customer: null, fee: null while pending, no description (waitForOutcome throws on its first poll); legacy initiate with merchant_id: "12" or PHP-style 1/0 booleans; site-info with site_logo: null: all throw.', () => {
  const payment = {
    trx_id: 'TRX1',
    merchant_ref: 'order-1001',
    amount: 25,
    currency: 'USD',
    status: 'pending',
    checkout_url: 'https://c.other.test/TRX1',
  };
  const created = (data: Record<string, unknown>) => ({
    body: { status: 'success', data, trx_id: 'TRX1', payment_url: payment.checkout_url },
  });
  const { description: _description, ...undescribed } = verified;
  const pending = { ...undescribed, status: 'pending', customer: null, fee: null, net_amount: null };
  const initiate = () =>
    client.payments.initiate({
      ...CREATE,
      success_redirect: 'https://shop.example.com/thanks',
      cancel_redirect: 'https://shop.example.com/cancel',
      ipn_url: 'https://shop.example.com/ipn',
    });

  test('payments.create with "amount":"25.00" reads 25', async () => {
    server.on('POST', '/api/v1/payments', created({ ...payment, amount: '25.00' }));
    expect(await client.payments.create(CREATE)).toMatchObject({ trx_id: 'TRX1', amount: 25 });
  });

  test('payments.create with merchant_ref: null keeps the null', async () => {
    server.on('POST', '/api/v1/payments', created({ ...payment, merchant_ref: null }));
    expect(await client.payments.create(CREATE)).toMatchObject({ trx_id: 'TRX1', merchant_ref: null });
  });

  test('verify with customer: null, fee: null while pending, no description', async () => {
    server.on('GET', '/api/v1/verify-payment/:trxId', { body: pending });
    expect(await client.payments.verify('TRX1')).toStrictEqual(pending);
  });

  test('waitForOutcome polls through that pending answer to the outcome', async () => {
    server.sequence('GET', '/api/v1/verify-payment/:trxId', [{ body: pending }, { body: verified }]);
    expect(await client.payments.waitForOutcome('TRX1', { interval: 2, timeout: 5_000 })).toMatchObject({ status: 'success' });
    expect(server.seen).toHaveLength(2);
  });

  test('legacy initiate with merchant_id: "12" reads 12', async () => {
    server.on('POST', '/api/v1/initiate-payment', {
      body: { payment_url: 'https://c.other.test/p', info: { merchant_id: '12', amount: 25 } },
    });
    expect((await initiate()).info).toMatchObject({ merchant_id: 12 });
  });

  test('legacy initiate with PHP-style 1/0 booleans reads true/false', async () => {
    server.on('POST', '/api/v1/initiate-payment', {
      body: { payment_url: 'https://c.other.test/p', info: { is_sandbox: 1, merchant_payment_methods_restricted: 0 } },
    });
    expect((await initiate()).info).toMatchObject({ is_sandbox: true, merchant_payment_methods_restricted: false });
  });

  test('site-info with site_logo: null keeps the null', async () => {
    server.on('GET', '/api/v1/site-info', { body: { site_name: 'Other', site_logo: null, status: 'operational' } });
    expect(await client.siteInfo.retrieve()).toMatchObject({ site_name: 'Other', site_logo: null });
  });
});

describe('balance.retrieve() throws for [{currency, available, pending}], for {wallets:[…]}, for a currency map. payments.retrieve throws on a state field, an integer id, a decimal string. Lists throw when an item names its id payout_id or subscription_id. A plan answered with price instead of amount throws.', () => {
  test('balance.retrieve() reads [{currency, available, pending}]', async () => {
    server.on('GET', '/api/v1/balance', { body: [{ currency: 'USD', available: '120.50', pending: '10.00' }] });
    expect(await client.balance.retrieve()).toEqual([{ currency: 'USD', balance: 120.5, available: 120.5, pending: 10 }]);
  });

  test('balance.retrieve() reads {wallets:[…]}', async () => {
    server.on('GET', '/api/v1/balance', { body: { wallets: [{ currency: 'TZS', balance: 2500 }] } });
    expect(await client.balance.retrieve()).toEqual([{ currency: 'TZS', balance: 2500 }]);
  });

  test('balance.retrieve() reads a currency map', async () => {
    server.on('GET', '/api/v1/balance', { body: { USD: 100, TZS: '2500.00' } });
    expect(await client.balance.retrieve()).toEqual([
      { currency: 'USD', balance: 100 },
      { currency: 'TZS', balance: 2500 },
    ]);
  });

  test('payments.retrieve reads a state field', async () => {
    server.on('GET', '/api/v1/payments/:trx_id', { body: { trx_id: 'TRX1', state: 'success', amount: 25, currency: 'USD' } });
    expect(await client.payments.retrieve('TRX1')).toMatchObject({ trx_id: 'TRX1', status: 'success', state: 'success' });
  });

  test('payments.retrieve reads an integer id', async () => {
    server.on('GET', '/api/v1/payments/:trx_id', { body: { trx_id: 4242, status: 'pending', amount: 25, currency: 'USD' } });
    expect(await client.payments.retrieve('4242')).toMatchObject({ trx_id: '4242', status: 'pending' });
  });

  test('payments.retrieve reads a decimal string', async () => {
    server.on('GET', '/api/v1/payments/:trx_id', { body: { trx_id: 'TRX1', status: 'pending', amount: '25.00', currency: 'USD' } });
    expect(await client.payments.retrieve('TRX1')).toMatchObject({ amount: 25 });
  });

  test('payouts.list reads items whose id is payout_id', async () => {
    server.on('GET', '/api/v1/payouts', { body: { data: [{ payout_id: UUID, amount: 100, status: 'SUCCESS' }] } });
    expect((await client.payouts.list()).data).toEqual([expect.objectContaining({ id: UUID, payout_id: UUID })]);
  });

  test('billing.invoices.list reads items naming subscription_id (and invoice_id)', async () => {
    server.on('GET', '/api/v1/billing/invoices', {
      body: { data: [{ invoice_id: 'inv_1', subscription_id: 'sub_1', amount: '10000.00', status: 'paid' }] },
    });
    expect((await client.billing.invoices.list()).data).toEqual([
      expect.objectContaining({ id: 'inv_1', subscription: 'sub_1', subscription_id: 'sub_1', amount: 10000 }),
    ]);
  });

  test('billing.subscriptions.create reads a subscription named by subscription_id', async () => {
    server.on('POST', '/api/v1/billing/subscriptions', {
      body: { status: 'success', data: { subscription_id: 'sub_1', status: 'pending' } },
    });
    const subscription = await client.billing.subscriptions.create({
      plan_code: 'GOLD',
      customer_phone: PHONE,
      terms_shown: 'TZS 10,000 monthly',
    });
    expect(subscription).toMatchObject({ id: 'sub_1', status: 'pending' });
  });

  test('a plan answered with price instead of amount reads amount from price', async () => {
    server.on('POST', '/api/v1/billing/plans', {
      body: { status: 'success', data: { plan_code: 'GOLD', price: '10000.00', currency: 'TZS', interval: 'month' } },
    });
    expect(await client.billing.plans.create({ name: 'Gold', amount: 10000 })).toMatchObject({
      plan_code: 'GOLD',
      amount: 10000,
      price: 10000,
    });
  });
});

describe("Request bodies the spec does not show are refused before sending: billing.plans.create({ name, amount, currency, interval: 'monthly', trial_days: 7 }) → InvalidParamsError. There is no way around it.", () => {
  test("billing.plans.create({ name, amount, currency, interval: 'monthly', trial_days: 7 }) is sent as written", async () => {
    server.on('POST', '/api/v1/billing/plans', {
      status: 201,
      body: { data: { plan_code: 'GOLD', amount: 10000, currency: 'TZS', interval: 'monthly' } },
    });
    const params = { name: 'Gold', amount: 10000, currency: 'TZS', interval: 'monthly', trial_days: 7 };
    expect(await client.billing.plans.create(params)).toMatchObject({ plan_code: 'GOLD', interval: 'monthly' });
    expect(server.seen).toHaveLength(1);
    expect(server.seen[0]!.json).toStrictEqual(params);
  });
});

describe('A list walk stops after a short page even when the server says has_more: true (a server that clamps limit: 100 to 50 with total: 120: 50 items, no error). A Laravel paginator that ignores offset (meta.per_page: 15, total: 45): 15 items, no error.', () => {
  const collect = async (list: AsyncIterable<{ trx_id: string }>) => {
    const got: string[] = [];
    for await (const item of list) if (got.push(item.trx_id) > 500) throw new Error('the walk does not end');
    return got;
  };

  test('a server that clamps limit: 100 to 50, has_more: true, total: 120: all 120 items, once each', async () => {
    const items = Array.from({ length: 120 }, (_, i) => ({ trx_id: `TRX${i}`, amount: 1, currency: 'USD', status: 'success' }));
    server.on('GET', '/api/v1/payments', (req) => {
      const offset = Number(req.query.get('offset') ?? 0);
      const data = items.slice(offset, offset + Math.min(Number(req.query.get('limit') ?? 50), 50));
      return { body: { data, has_more: offset + data.length < items.length, total: items.length } };
    });
    expect(await collect(client.payments.list({ limit: 100 }))).toEqual(items.map((item) => item.trx_id));
    expect(server.seen).toHaveLength(3);
  });

  test('a Laravel paginator that ignores offset (meta.per_page: 15, total: 45): all 45 items, once each', async () => {
    const items = Array.from({ length: 45 }, (_, i) => ({ trx_id: `TRX${i}`, amount: 1, currency: 'USD', status: 'success' }));
    server.on('GET', '/api/v1/payments', (req) => listReply('laravel', items, req, server.url, 'payments'));
    expect(await collect(client.payments.list({ limit: 100 }))).toEqual(items.map((item) => item.trx_id));
    expect(server.seen).toHaveLength(3);
  });
});

describe('waitForOutcome resolves on any status other than pending (processing, initiated).', () => {
  test('processing, then initiated, then success: resolves on success, after 3 polls', async () => {
    server.sequence(
      'GET',
      '/api/v1/verify-payment/:trxId',
      ['processing', 'initiated', 'success'].map((status) => ({ body: { ...verified, status } })),
    );
    expect(await client.payments.waitForOutcome('TRX1', { interval: 2, timeout: 5_000 })).toMatchObject({ status: 'success' });
    expect(server.seen).toHaveLength(3);
  });

  test('processing until the deadline: APITimeoutError with lastStatus processing', async () => {
    server.on('GET', '/api/v1/verify-payment/:trxId', { body: { ...verified, status: 'processing' } });
    const error = await client.payments.waitForOutcome('TRX1', { interval: 5, timeout: 60 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APITimeoutError);
    expect((error as APITimeoutError).lastStatus).toBe('processing');
  });
});
