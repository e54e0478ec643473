// billing.plans.create / billing.subscriptions.create / billing.invoices.list against the fake API.
// (Walking invoice pages: pagination.test.ts.)
import { beforeEach, describe, expect, test } from 'vitest';
import { expectPlainJson, gaps, invalidParams, settle, UUID } from '../support/assertions.js';
import { liveRoute, productionClient, useFakeApi } from '../support/harness.js';

const { api, setup } = useFakeApi();

const plan = { plan_code: 'gold-monthly', name: 'Gold', amount: 10000, currency: 'TZS', interval: 'month' } as const;
// The plan as the service answers it (the sandbox's shape).
const planRecord = {
  ...plan,
  description: null,
  interval_count: 1,
  status: 'active',
  environment: 'sandbox',
  created_at: '2026-11-22T12:00:00Z',
};
const terms = 'TZS 10,000 charged monthly by USSD push until you cancel. Reply STOP to cancel.';
const subscriptionParams = { plan_code: 'gold-monthly', customer_phone: '255712345678', terms_shown: terms };
const subscription = { id: 'sub_01HX', plan_code: 'gold-monthly', status: 'pending_first_charge', customer_phone: '255712345678' };

describe('billing.plans.create', () => {
  test('POSTs the plan params to /api/v1/billing/plans with a generated Idempotency-Key', async () => {
    api.on('post', '/api/v1/billing/plans', { body: { status: 'success', data: planRecord } });
    const { client } = setup();
    const result = await client.billing.plans.create(plan);
    const req = api.seen[0]!;
    expect(api.seen).toHaveLength(1);
    expect(req.method).toBe('POST');
    expect(req.pathWithQuery).toBe('/api/v1/billing/plans');
    expect(JSON.parse(req.rawBody)).toStrictEqual(plan);
    expect(req.signatureValid).toBe(true);
    expect(req.headers['idempotency-key']).toMatch(UUID);
    expect(result).toStrictEqual(planRecord);
    expectPlainJson(result);
  });

  test('accepts a bare plan object, unknown fields kept; .withResponse() gives the status', async () => {
    const body = { plan_code: 'gold-monthly', amount: 10000, currency: 'TZS', interval: 'month', trial_days: 0 };
    api.on('post', '/api/v1/billing/plans', { status: 201, body });
    const { client } = setup();
    const { data, response } = await client.billing.plans.create({ name: 'Gold', amount: 10000 }).withResponse();
    expect(response.status).toBe(201);
    expect(data).toStrictEqual(body);
  });

  // The spec shows no plan body, so the SDK's guess is a suggestion, never a
  // rule: `interval: 'monthly'` and unknown fields are sent as written. JSON types still checked.
  test('an unshown body is sent as written: interval monthly, trial_days, any other field', async () => {
    api.on('post', '/api/v1/billing/plans', { body: planRecord });
    const { client } = setup();
    const params = { name: 'Gold', amount: 10, currency: 'TZS', interval: 'monthly', trial_days: 7, metadata: { tier: 'gold' } };
    await client.billing.plans.create(params);
    expect(api.seen[0]!.json).toStrictEqual(params);
  });

  test('JSON types of the suggested fields are checked before sending', async () => {
    api.on('post', '/api/v1/billing/plans', { body: planRecord });
    const { client } = setup();
    const missing = await invalidParams(client.billing.plans.create({ plan_code: 'gold' } as never));
    expect(Object.keys(missing.errors).sort()).toEqual(['amount', 'name']);
    const wrong = await invalidParams(client.billing.plans.create({ ...plan, interval: 7, interval_count: '2' } as never));
    expect(Object.keys(wrong.errors).sort()).toEqual(['interval', 'interval_count']);
    expect(api.seen).toHaveLength(0);
  });

  test("sends the caller's idempotencyKey; 64 characters accepted, 65 refused", async () => {
    api.on('post', '/api/v1/billing/plans', { body: planRecord });
    const { client } = setup();
    await client.billing.plans.create(plan, { idempotencyKey: 'plan-gold-v1' });
    await client.billing.plans.create(plan, { idempotencyKey: 'x'.repeat(64) });
    expect(api.seen.map((r) => r.headers['idempotency-key'])).toEqual(['plan-gold-v1', 'x'.repeat(64)]);
    const error = await invalidParams(client.billing.plans.create(plan, { idempotencyKey: 'x'.repeat(65) }));
    expect(Object.keys(error.errors)).toEqual(['idempotencyKey']);
    expect(api.seen).toHaveLength(2);
  });

  test('a retry (500, then 200) reuses the Idempotency-Key', async () => {
    api.sequence('post', '/api/v1/billing/plans', [{ status: 500, body: { error: 'Server Error' } }, { body: planRecord }]);
    const { client } = setup();
    // The backoff wait runs on the harness's fake timers: settle() lets it pass.
    expect(await settle(client.billing.plans.create(plan))).toStrictEqual(planRecord);
    expect(api.seen).toHaveLength(2);
    expect(api.seen[1]!.headers['idempotency-key']).toBe(api.seen[0]!.headers['idempotency-key']);
    expect(gaps(api.seen)).toEqual([437]);
  });

  test.each([['plan_code not a string', { ...plan, plan_code: 7 }]])('refuses %s before sending', async (_name, params) => {
    api.on('post', '/api/v1/billing/plans', { body: plan });
    const { client } = setup();
    const error = await invalidParams(client.billing.plans.create(params as never));
    expect(Object.keys(error.errors)).toEqual(['plan_code']);
    expect(api.seen).toHaveLength(0);
  });

  test.each([[null], ['gold'], [[plan]]])('refuses params %j that are not an object', async (params) => {
    api.on('post', '/api/v1/billing/plans', { body: plan });
    const { client } = setup();
    await invalidParams(client.billing.plans.create(params as never));
    expect(api.seen).toHaveLength(0);
  });

  // Provisional shape: a plan answered with `price`, `code` or a number id reads as a plan.
  test.each([
    ['a numeric plan_code', { status: 'success', data: { plan_code: 42 } }, { plan_code: '42' }],
    [
      'price instead of amount',
      { data: { plan_code: 'gold', price: '10.00', interval: 'monthly' } },
      { plan_code: 'gold', amount: 10, price: 10, interval: 'monthly' },
    ],
    ['code instead of plan_code', { plan: { code: 'gold', amount: 10 } }, { plan_code: 'gold', code: 'gold', amount: 10 }],
  ])('%s is read, nothing thrown', async (_name, body, expected) => {
    api.on('post', '/api/v1/billing/plans', { body });
    const { client } = setup();
    expect(await client.billing.plans.create(plan)).toStrictEqual(expected);
  });
});

describe('billing.subscriptions.create', () => {
  test('POSTs plan_code, customer_phone, terms_shown, webhook_url with a generated Idempotency-Key', async () => {
    api.on('post', '/api/v1/billing/subscriptions', { body: { status: 'success', data: subscription } });
    const { client } = setup();
    const params = { ...subscriptionParams, webhook_url: 'https://shop.example.com/billing-hook' };
    const result = await client.billing.subscriptions.create(params);
    const req = api.seen[0]!;
    expect(api.seen).toHaveLength(1);
    expect(req.method).toBe('POST');
    expect(req.pathWithQuery).toBe('/api/v1/billing/subscriptions');
    expect(req.json).toStrictEqual(params);
    expect(req.signatureValid).toBe(true);
    expect(req.headers['idempotency-key']).toMatch(UUID);
    expect(result).toStrictEqual(subscription);
    expectPlainJson(result);
  });

  test('terms_shown is sent exactly as shown (consent record), whitespace included', async () => {
    api.on('post', '/api/v1/billing/subscriptions', { body: subscription });
    const { client } = setup();
    const shown = `  ${terms}\n\nCancel any time.\n`;
    await client.billing.subscriptions.create({ ...subscriptionParams, terms_shown: shown });
    expect((api.seen[0]!.json as { terms_shown: string }).terms_shown).toBe(shown);
  });

  test("accepts a bare subscription; caller's idempotencyKey; .withResponse()", async () => {
    api.on('post', '/api/v1/billing/subscriptions', { status: 201, body: subscription });
    const { client } = setup();
    const { data, response } = await client.billing.subscriptions
      .create({ ...subscriptionParams, customer_phone: '+255612345678' }, { idempotencyKey: 'consent-77' })
      .withResponse();
    expect(response.status).toBe(201);
    expect(data).toStrictEqual(subscription);
    expect(api.seen[0]!.headers['idempotency-key']).toBe('consent-77');
  });

  test.each([['plan_code'], ['customer_phone'], ['terms_shown']])('requires %s', async (field) => {
    api.on('post', '/api/v1/billing/subscriptions', { body: subscription });
    const { client } = setup();
    const params: Record<string, unknown> = { ...subscriptionParams };
    delete params[field];
    const error = await invalidParams(client.billing.subscriptions.create(params as never));
    expect(Object.keys(error.errors)).toEqual([field]);
    expect(api.seen).toHaveLength(0);
  });

  test('lists every missing field at once', async () => {
    const { client } = setup();
    const error = await invalidParams(client.billing.subscriptions.create({} as never, { idempotencyKey: 'k'.repeat(65) }));
    expect(Object.keys(error.errors).sort()).toEqual(['customer_phone', 'idempotencyKey', 'plan_code', 'terms_shown']);
    expect(api.seen).toHaveLength(0);
  });

  test.each([
    ['customer_phone Kenyan', { customer_phone: '254712345678' }, 'customer_phone'],
    ['customer_phone of another country', { customer_phone: '+254 712 345 678' }, 'customer_phone'],
    ['customer_phone Tanzanian landline', { customer_phone: '255222123456' }, 'customer_phone'],
    ['customer_phone too short', { customer_phone: '25571234567' }, 'customer_phone'],
    ['customer_phone too long', { customer_phone: '2557123456789' }, 'customer_phone'],
    ['plan_code empty', { plan_code: '' }, 'plan_code'],
    ['terms_shown empty', { terms_shown: '' }, 'terms_shown'],
    ['terms_shown only whitespace', { terms_shown: ' \n\t ' }, 'terms_shown'],
    ['terms_shown not a string', { terms_shown: true }, 'terms_shown'],
    ['webhook_url not a URL', { webhook_url: 'billing-hook' }, 'webhook_url'],
    ['webhook_url not http(s)', { webhook_url: 'mailto:ops@example.com' }, 'webhook_url'],
  ])('refuses %s before sending', async (_name, change, field) => {
    api.on('post', '/api/v1/billing/subscriptions', { body: subscription });
    const { client } = setup();
    const error = await invalidParams(client.billing.subscriptions.create({ ...subscriptionParams, ...change } as never));
    expect(Object.keys(error.errors)).toEqual([field]);
    expect(api.seen).toHaveLength(0);
  });

  test('refuses unknown keys', async () => {
    api.on('post', '/api/v1/billing/subscriptions', { body: subscription });
    const { client } = setup();
    const error = await invalidParams(client.billing.subscriptions.create({ ...subscriptionParams, consent: true } as never));
    expect(JSON.stringify(error.errors)).toContain('consent');
    expect(api.seen).toHaveLength(0);
  });

  test('an http webhook_url is accepted in sandbox', async () => {
    api.on('post', '/api/v1/billing/subscriptions', { body: subscription });
    const { client } = setup();
    await client.billing.subscriptions.create({ ...subscriptionParams, webhook_url: 'http://localhost:3000/hook' });
    expect(api.seen).toHaveLength(1);
  });

  test('production: an http webhook_url is refused, an https one is sent', async () => {
    const seen = liveRoute(api, 'post', '/api/v1/billing/subscriptions', subscription);
    const client = productionClient();
    const error = await invalidParams(
      client.billing.subscriptions.create({ ...subscriptionParams, webhook_url: 'http://shop.example.com/hook' }),
    );
    expect(Object.keys(error.errors)).toEqual(['webhook_url']);
    expect(seen).toHaveLength(0);
    const params = { ...subscriptionParams, webhook_url: 'https://shop.example.com/hook' };
    expect(await client.billing.subscriptions.create(params)).toStrictEqual(subscription);
    expect(seen).toEqual([
      { method: 'POST', path: '/api/v1/billing/subscriptions', env: 'production', signatureValid: true, json: params },
    ]);
  });

  test.each([
    ['a numeric id', { id: 99, plan_code: 'gold-monthly' }, { id: '99', plan_code: 'gold-monthly' }],
    [
      'subscription_id',
      { data: { subscription_id: 'sub_9', status: 'pending' } },
      { id: 'sub_9', subscription_id: 'sub_9', status: 'pending' },
    ],
  ])('%s is read, nothing thrown', async (_name, body, expected) => {
    api.on('post', '/api/v1/billing/subscriptions', { body });
    const { client } = setup();
    expect(await client.billing.subscriptions.create(subscriptionParams)).toStrictEqual(expected);
  });
});

describe('billing.invoices.list', () => {
  const invoices = [
    { id: 'inv_1', subscription: 'sub_01HX', status: 'paid', amount: 10000, currency: 'TZS' },
    { id: 'inv_2', subscription: 'sub_01HX', status: 'open', amount: 10000, currency: 'TZS' },
  ];
  beforeEach(() => api.on('get', '/api/v1/billing/invoices', { body: { data: invoices } }));

  test('GETs /api/v1/billing/invoices, signed, no Idempotency-Key, and resolves to one page', async () => {
    const { client } = setup();
    const page = await client.billing.invoices.list();
    const req = api.seen[0]!;
    expect(api.seen).toHaveLength(1);
    expect(req.method).toBe('GET');
    expect(req.pathWithQuery).toBe('/api/v1/billing/invoices');
    expect(req.rawBody).toBe('');
    expect(req.signatureValid).toBe(true);
    expect(req.headers['idempotency-key']).toBeUndefined();
    expect(page).toStrictEqual({ data: invoices, offset: 0, limit: undefined, has_more: true });
    expectPlainJson(page);
  });

  test('sends the subscription filter in the query', async () => {
    const { client } = setup();
    const { data, response } = await client.billing.invoices.list({ subscription: 'sub_01HX' }).withResponse();
    expect(response.status).toBe(200);
    expect(data.data).toStrictEqual(invoices);
    expect(api.seen[0]!.pathWithQuery).toBe('/api/v1/billing/invoices?subscription=sub_01HX');
    expect(api.seen[0]!.signatureValid).toBe(true);
  });

  test.each([
    ['without the sub_ prefix', { subscription: '01HX' }, 'subscription'],
    ['with only the prefix', { subscription: 'sub_' }, 'subscription'],
    ['upper-case prefix', { subscription: 'SUB_01HX' }, 'subscription'],
    ['a plan code', { subscription: 'gold-monthly' }, 'subscription'],
    ['with a query-breaking character', { subscription: 'sub_1&limit=1' }, 'subscription'],
    ['limit 0', { limit: 0 }, 'limit'],
    ['offset negative', { offset: -2 }, 'offset'],
  ])('refuses a filter %s before sending', async (_name, params, field) => {
    const { client } = setup();
    const error = await invalidParams(client.billing.invoices.list(params));
    expect(Object.keys(error.errors)).toEqual([field]);
    expect(api.seen).toHaveLength(0);
  });

  test('refuses unknown keys', async () => {
    const { client } = setup();
    const error = await invalidParams(client.billing.invoices.list({ status: 'open' } as never));
    expect(JSON.stringify(error.errors)).toContain('status');
    expect(api.seen).toHaveLength(0);
  });

  test('a numeric invoice id and invoice_id / subscription_id names are read, nothing thrown', async () => {
    const body = {
      data: [
        { id: 1, status: 'paid' },
        { invoice_id: 'inv_2', subscription_id: 'sub_1', amount: '5.00' },
      ],
    };
    api.on('get', '/api/v1/billing/invoices', { body });
    const { client } = setup();
    expect((await client.billing.invoices.list()).data).toStrictEqual([
      { id: '1', status: 'paid' },
      { id: 'inv_2', invoice_id: 'inv_2', subscription: 'sub_1', subscription_id: 'sub_1', amount: 5 },
    ]);
  });
});
