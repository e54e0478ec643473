// Payouts (gates, preview, outcomes) and recurring billing (plans, subscriptions with
// consent, invoices, charge outcomes, dunning) on the mock.
import { describe, expect, it } from 'vitest';
import { PAYOUT_TEST_AMOUNTS, TEST_PHONE_NUMBERS } from '../../../src/testing.js';
import { setup, T0 } from '../../support/mock-service.js';

const DAY = 86_400_000;

describe('mock service: payouts', () => {
  it('previews amount, fee and payable_amount', async () => {
    const { call } = setup();
    const reply = await call('POST', '/api/v1/payouts/preview', { amount: 1000 });
    expect(reply.body).toEqual({ amount: 1000, fee: 10, payable_amount: 990, currency: 'TZS' });
    const bad = await call('POST', '/api/v1/payouts/preview', { amount: -1 });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toHaveProperty('amount');
  });

  it('pays out to the settlement number and debits the wallet', async () => {
    const { mock, call } = setup();
    const reply = await call('POST', '/api/v1/payouts', { amount: 1000, destination: '+255712345678' });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      status: 'success',
      data: {
        id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
        environment: 'sandbox',
        amount: 1000,
        fee: 10,
        payable_amount: 990,
        currency: 'TZS',
        destination: '255712345678',
        status: 'SUCCESS',
        created_at: new Date(T0).toISOString(),
        updated_at: new Date(T0).toISOString(),
      },
    });
    expect(mock.state.merchants[0]!.currencies.TZS!.balance).toBe(999_000);
    const got = await call('GET', `/api/v1/payouts/${reply.body.data.id}`);
    expect(got.body).toEqual(reply.body);
    const list = await call('GET', '/api/v1/payouts');
    expect(list.body).toMatchObject({ total: 1, has_more: false, data: [reply.body.data] });
  });

  it('rejects with 422 Payout Rejected when a gate is not met or the destination differs', async () => {
    const gates: Array<[string, (m: { kybApproved: boolean; status: string; settlementNumber: string | null }) => void, RegExp]> = [
      ['KYB', (m) => (m.kybApproved = false), /KYB/],
      ['business', (m) => (m.status = 'pending'), /approved business/],
      ['settlement number', (m) => (m.settlementNumber = null), /settlement mobile number/],
    ];
    for (const [name, change, message] of gates) {
      const { mock, call } = setup();
      change(mock.state.merchants[0]!);
      const reply = await call('POST', '/api/v1/payouts', { amount: 10 });
      expect(reply.status, name).toBe(422);
      expect(reply.body).toEqual({ error: 'Payout Rejected', message: expect.stringMatching(message) });
      expect(mock.state.payouts.size).toBe(0);
    }
    const { call } = setup();
    const wrongDestination = await call('POST', '/api/v1/payouts', { amount: 10, destination: '255799999999' });
    expect(wrongDestination.body.error).toBe('Payout Rejected');
    const tooMuch = await call('POST', '/api/v1/payouts', { amount: 2_000_000 });
    expect(tooMuch.body).toMatchObject({ error: 'Payout Rejected', message: expect.stringMatching(/insufficient balance/i) });
  });

  it('outcomes by amount: 12.12 INPROGRESS (then SUCCESS), 13.13 AMBIGUOUS, 14.14 FAILED (refunded)', async () => {
    const { mock, call, clock } = setup();
    const inProgress = await call('POST', '/api/v1/payouts', { amount: PAYOUT_TEST_AMOUNTS.inProgress });
    expect(inProgress.body.data.status).toBe('INPROGRESS');
    const ambiguous = await call('POST', '/api/v1/payouts', { amount: PAYOUT_TEST_AMOUNTS.ambiguous });
    expect(ambiguous.body.data.status).toBe('AMBIGUOUS');
    const balance = mock.state.merchants[0]!.currencies.TZS!.balance;
    const failed = await call('POST', '/api/v1/payouts', { amount: PAYOUT_TEST_AMOUNTS.failed });
    expect(failed.body.data.status).toBe('FAILED');
    expect(mock.state.merchants[0]!.currencies.TZS!.balance).toBe(balance);
    clock.advance(60_000);
    await mock.runDue();
    expect((await call('GET', `/api/v1/payouts/${inProgress.body.data.id}`)).body.data.status).toBe('SUCCESS');
    expect((await call('GET', `/api/v1/payouts/${ambiguous.body.data.id}`)).body.data.status).toBe('AMBIGUOUS');
  });

  it('replays a payout for the same Idempotency-Key', async () => {
    const { mock, call } = setup();
    const a = await call('POST', '/api/v1/payouts', { amount: 50 }, { idempotencyKey: 'payout-1' });
    const b = await call('POST', '/api/v1/payouts', { amount: 50 }, { idempotencyKey: 'payout-1' });
    expect(b.text).toBe(a.text);
    expect(mock.state.payouts.size).toBe(1);
  });

  it('answers 404 for a non-UUID or unknown payout id, and for another environment', async () => {
    const { call, creds } = setup();
    expect((await call('GET', '/api/v1/payouts/not-a-uuid')).status).toBe(404);
    expect((await call('GET', '/api/v1/payouts/123e4567-e89b-12d3-a456-426614174000')).status).toBe(404);
    const { body } = await call('POST', '/api/v1/payouts', { amount: 5 });
    expect((await call('GET', `/api/v1/payouts/${body.data.id}`, undefined, { env: 'production', creds: creds.production })).status).toBe(
      404,
    );
  });
});

describe('mock service: billing', () => {
  const plan = { plan_code: 'gold-monthly', name: 'Gold', amount: 10_000, currency: 'TZS', interval: 'month' };
  const terms = 'TZS 10,000 every month until you cancel. Approve each charge with your PIN.';

  it('creates a plan with its plan_code (generated when absent) and refuses duplicates and bad input', async () => {
    const { call } = setup();
    const created = await call('POST', '/api/v1/billing/plans', plan);
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({
      plan_code: 'gold-monthly',
      name: 'Gold',
      amount: 10_000,
      currency: 'TZS',
      interval: 'month',
      interval_count: 1,
      status: 'active',
    });
    const generated = await call('POST', '/api/v1/billing/plans', { name: 'Silver', amount: 5_000 });
    expect(generated.body.data.plan_code).toMatch(/^plan_/);
    const dup = await call('POST', '/api/v1/billing/plans', plan);
    expect(dup.body.errors.plan_code).toEqual(['The plan code has already been taken.']);
    const bad = await call('POST', '/api/v1/billing/plans', { interval: 'fortnight' });
    expect(Object.keys(bad.body.errors).sort()).toEqual(['amount', 'interval', 'name']);
    expect((await call('POST', '/api/v1/billing/plans', { name: 'Euro', amount: 5, currency: 'EUR' })).body.error).toBe(
      'Receiver wallet for this currency is not available',
    );
  });

  it('validates subscriptions: existing plan_code, Tanzanian phone, terms_shown required', async () => {
    const { call, creds } = setup();
    await call('POST', '/api/v1/billing/plans', plan);
    const bad = await call('POST', '/api/v1/billing/subscriptions', {
      plan_code: 'nope',
      customer_phone: '254712345678',
      terms_shown: '  ',
    });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['customer_phone', 'plan_code', 'terms_shown']);
    // Plans belong to one environment.
    const prod = await call(
      'POST',
      '/api/v1/billing/subscriptions',
      { plan_code: 'gold-monthly', customer_phone: TEST_PHONE_NUMBERS.success, terms_shown: terms },
      { env: 'production', creds: creds.production },
    );
    expect(prod.body.errors).toHaveProperty('plan_code');
  });

  it('records consent, opens an invoice and charges it by USSD push: subscription.created, invoice.created, invoice.paid', async () => {
    const { mock, call, clock, received } = setup();
    await call('POST', '/api/v1/billing/plans', plan);
    const created = await call('POST', '/api/v1/billing/subscriptions', {
      plan_code: 'gold-monthly',
      customer_phone: TEST_PHONE_NUMBERS.success,
      terms_shown: terms,
      webhook_url: 'https://shop.example.com/billing-hook',
    });
    expect(created.status).toBe(200);
    const sub = created.body.data;
    expect(sub).toMatchObject({
      id: expect.stringMatching(/^sub_/),
      plan_code: 'gold-monthly',
      status: 'pending',
      customer_phone: TEST_PHONE_NUMBERS.success,
      consent: { terms_shown: terms, accepted_at: new Date(T0).toISOString(), ip_address: 'local' },
      latest_invoice: expect.stringMatching(/^inv_/),
    });
    clock.advance(5_000);
    await mock.runDue();
    expect(received.map((r) => JSON.parse(r.body).type)).toEqual(['subscription.created', 'invoice.created', 'invoice.paid']);
    expect(new Set(received.map((r) => r.url))).toEqual(new Set(['https://shop.example.com/billing-hook']));
    const paid = JSON.parse(received[2]!.body).data;
    expect(paid).toMatchObject({
      id: sub.latest_invoice,
      subscription: sub.id,
      status: 'paid',
      amount: 10_000,
      fee: 300,
      net_amount: 9_700,
      environment: 'sandbox',
    });

    const invoices = await call('GET', `/api/v1/billing/invoices?subscription=${sub.id}`);
    expect(invoices.body).toMatchObject({ total: 1, data: [{ id: sub.latest_invoice, status: 'paid' }] });
    expect((await call('GET', '/api/v1/billing/invoices?subscription=sub_other')).body.total).toBe(0);
    expect((await call('GET', '/api/v1/billing/invoices?subscription=abc')).status).toBe(422);
    expect(mock.state.subscriptions.get(sub.id)).toMatchObject({ status: 'active' });

    // The next period opens a new invoice (30 days for a monthly plan).
    clock.advance(30 * DAY);
    await mock.runDue();
    clock.advance(5_000);
    await mock.runDue();
    expect((await call('GET', `/api/v1/billing/invoices?subscription=${sub.id}`)).body.total).toBe(2);
    expect(received.map((r) => JSON.parse(r.body).type).slice(3)).toEqual(['invoice.created', 'invoice.paid']);
  });

  it('a failed charge sends invoice.payment_failed, retries (dunning), then suspends the subscription', async () => {
    const { mock, call, clock, received } = setup();
    mock.state.merchants[0]!.defaultWebhookUrl = 'https://shop.example.com/default';
    await call('POST', '/api/v1/billing/plans', plan);
    const { body } = await call('POST', '/api/v1/billing/subscriptions', {
      plan_code: 'gold-monthly',
      customer_phone: TEST_PHONE_NUMBERS.declined,
      terms_shown: terms,
    });
    clock.advance(5_000);
    await mock.runDue();
    const types = () => received.map((r) => JSON.parse(r.body).type);
    expect(types()).toEqual(['subscription.created', 'invoice.created', 'invoice.payment_failed']);
    expect(received[0]!.url).toBe('https://shop.example.com/default');
    const failed = JSON.parse(received[2]!.body).data;
    expect(failed).toMatchObject({
      status: 'open',
      attempt_count: 1,
      failure_reason: 'PAYMENT_DECLINED',
      next_attempt_at: new Date(T0 + 5_000 + DAY).toISOString(),
    });
    expect(mock.state.subscriptions.get(body.data.id)).toMatchObject({ status: 'past_due' });
    // Each retry rings the phone when due; its answer comes 5 s later.
    for (const wait of [DAY, 5_000, 2 * DAY, 5_000]) {
      clock.advance(wait);
      await mock.runDue();
    }
    expect(types().slice(3)).toEqual(['invoice.payment_failed', 'invoice.payment_failed', 'subscription.suspended']);
    expect(mock.state.subscriptions.get(body.data.id)).toMatchObject({ status: 'suspended' });
    expect(JSON.parse(received[4]!.body).data).toMatchObject({ status: 'uncollectible', attempt_count: 3, next_attempt_at: null });
    expect(JSON.parse(received[5]!.body).data).toMatchObject({ id: body.data.id, status: 'suspended' });
  });

  it('records events without a URL as no_endpoint and sends nothing', async () => {
    const { mock, call, clock, received } = setup();
    await call('POST', '/api/v1/billing/plans', plan);
    await call('POST', '/api/v1/billing/subscriptions', {
      plan_code: 'gold-monthly',
      customer_phone: TEST_PHONE_NUMBERS.success,
      terms_shown: terms,
    });
    clock.advance(5_000);
    await mock.runDue();
    expect(received).toHaveLength(0);
    expect(mock.state.events.map((e) => [e.type, e.status])).toEqual([
      ['subscription.created', 'no_endpoint'],
      ['invoice.created', 'no_endpoint'],
      ['invoice.paid', 'no_endpoint'],
    ]);
  });
});
