// Payments on the mock: validation, the runtime decision order, both creation shapes,
// idempotency, list/get/verify, simulated USSD push outcomes and hosted checkout.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CREDENTIALS, TEST_PHONE_NUMBERS } from '../../../src/testing.js';
import { defaultMerchant } from '../../../src/testing/mock-service/defaults.js';
import { hostedBody, pushBody, setup, T0 } from '../../support/mock-service.js';

describe('mock service: payment validation (422 Validation failed)', () => {
  it('lists every failing field with messages', async () => {
    const { call, mock } = setup();
    const reply = await call('POST', '/api/v1/payments', {
      payment_amount: 0.5,
      currency_code: 'usd',
      ref_trx: 'x'.repeat(61),
      success_redirect: 'not a url',
      customer_name: 'n'.repeat(101),
      customer_email: 'not-an-email',
      payment_mode: 'push',
      allow_payment_methods: 42,
      ipn_url: 'ftp://example.com/ipn',
    });
    expect(reply.status).toBe(422);
    expect(reply.body.error).toBe('Validation failed');
    expect(reply.body.message).toBe('The given data was invalid.');
    expect(Object.keys(reply.body.errors).sort()).toEqual(
      [
        'allow_payment_methods',
        'currency_code',
        'customer_email',
        'customer_name',
        'customer_phone',
        'ipn_url',
        'payment_amount',
        'ref_trx',
        'success_redirect',
      ].sort(),
    );
    for (const messages of Object.values(reply.body.errors)) expect(messages).toEqual([expect.any(String)]);
    expect(mock.state.payments.size).toBe(0);
  });

  it('requires payment_amount, currency_code and ref_trx, and a number amount ≥ 1.00', async () => {
    const { call } = setup();
    const empty = await call('POST', '/api/v1/payments', {});
    expect(Object.keys(empty.body.errors).sort()).toEqual(['currency_code', 'ipn_url', 'payment_amount', 'ref_trx']);
    const stringAmount = await call('POST', '/api/v1/payments', hostedBody({ payment_amount: '25' }));
    expect(stringAmount.body.errors.payment_amount).toEqual(['The payment amount must be a number.']);
    expect((await call('POST', '/api/v1/payments', hostedBody({ payment_amount: 1 }))).status).toBe(200);
    expect((await call('POST', '/api/v1/payments', hostedBody({ ref_trx: 'r'.repeat(60) }))).status).toBe(200);
  });

  it('needs ipn_url/webhook_url on /payments only when the merchant has no default webhook URL', async () => {
    const { call, mock } = setup();
    const { ipn_url: _ipn, ...noIpn } = hostedBody();
    expect((await call('POST', '/api/v1/payments', noIpn)).body.errors).toHaveProperty('ipn_url');
    expect((await call('POST', '/api/v1/payments', { ...noIpn, webhook_url: 'https://shop.example.com/hook' })).status).toBe(200);
    const clash = await call('POST', '/api/v1/payments', hostedBody({ webhook_url: 'https://other.example.com/hook' }));
    expect(clash.body.errors).toHaveProperty('webhook_url');
    mock.state.merchants[0]!.defaultWebhookUrl = 'https://shop.example.com/default-hook';
    expect((await call('POST', '/api/v1/payments', { ...noIpn, ref_trx: 'order-1002' })).status).toBe(200);
  });

  it('requires https webhook URLs in production', async () => {
    const { call, creds } = setup();
    const reply = await call('POST', '/api/v1/payments', hostedBody({ ipn_url: 'http://shop.example.com/ipn' }), {
      env: 'production',
      creds: creds.production,
    });
    expect(reply.status).toBe(422);
    expect(reply.body.errors.ipn_url[0]).toMatch(/https/);
    expect((await call('POST', '/api/v1/payments', hostedBody({ ipn_url: 'http://shop.example.com/ipn' }))).status).toBe(200);
  });

  it('requires customer_phone for push, in international digits form', async () => {
    const { call } = setup();
    const missing = await call('POST', '/api/v1/payments', { ...pushBody('x'), customer_phone: undefined });
    expect(missing.body.errors.customer_phone[0]).toMatch(/required when payment mode is push/);
    const bad = await call('POST', '/api/v1/payments', pushBody('0712 345 678'));
    expect(bad.body.errors).toHaveProperty('customer_phone');
    expect((await call('POST', '/api/v1/payments', pushBody('+255712345678'))).status).toBe(200);
    expect((await call('POST', '/api/v1/payments', hostedBody({ payment_mode: 'card' }))).body.errors).toHaveProperty('payment_mode');
  });

  it('requires success_redirect, cancel_redirect and ipn_url on the legacy route', async () => {
    const { call } = setup();
    const { ipn_url: _ipn, ...noUrls } = hostedBody();
    const reply = await call('POST', '/api/v1/initiate-payment', noUrls);
    expect(reply.status).toBe(422);
    expect(Object.keys(reply.body.errors).sort()).toEqual(['cancel_redirect', 'ipn_url', 'success_redirect']);
  });
});

describe('mock service: runtime decision order', () => {
  it('422 Currency is not enabled for this merchant', async () => {
    const { call } = setup();
    const reply = await call('POST', '/api/v1/payments', hostedBody({ currency_code: 'BDT' }));
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual({ error: 'Currency is not enabled for this merchant', message: expect.stringContaining('BDT') });
  });

  it('422 Receiver wallet for this currency is not available (EUR: supported, no wallet)', async () => {
    const { call } = setup();
    const reply = await call('POST', '/api/v1/payments', hostedBody({ currency_code: 'EUR' }));
    expect(reply.status).toBe(422);
    expect(reply.body.error).toBe('Receiver wallet for this currency is not available');
  });

  it('checks the currency before the wallet, and both after validation', async () => {
    const { mock, call } = setup();
    mock.state.merchants[0]!.currencies.USD!.wallet = false;
    expect((await call('POST', '/api/v1/payments', hostedBody())).body.error).toBe('Receiver wallet for this currency is not available');
    expect((await call('POST', '/api/v1/payments', hostedBody({ currency_code: 'XYZ' }))).body.error).toBe(
      'Currency is not enabled for this merchant',
    );
    expect((await call('POST', '/api/v1/payments', hostedBody({ currency_code: 'XYZ', ref_trx: '' }))).body.error).toBe(
      'Validation failed',
    );
  });

  it('offers every active gateway of the currency when none is selected; restricts to the selection otherwise', async () => {
    const { mock, call } = setup();
    const open = await call(
      'POST',
      '/api/v1/initiate-payment',
      hostedBody({ currency_code: 'TZS', success_redirect: 'https://s.example.com/ok', cancel_redirect: 'https://s.example.com/no' }),
    );
    expect(open.body.info).toMatchObject({
      merchant_payment_methods_restricted: false,
      merchant_payment_method_ids: [3, 4, 5],
      merchant_payment_method_codes: ['mpesa', 'tigopesa', 'airtelmoney'],
    });
    mock.state.gateways.find((g) => g.code === 'tigopesa')!.active = false;
    mock.state.merchants[0]!.selectedGatewayIds = [1, 3, 4, 6];
    const restricted = await call(
      'POST',
      '/api/v1/initiate-payment',
      hostedBody({
        ref_trx: 'order-1002',
        currency_code: 'TZS',
        success_redirect: 'https://s.example.com/ok',
        cancel_redirect: 'https://s.example.com/no',
      }),
    );
    expect(restricted.body.info).toMatchObject({
      merchant_payment_methods_restricted: true,
      merchant_payment_method_ids: [3],
      merchant_payment_method_codes: ['mpesa'],
    });
  });

  it('422 No payment method available when no gateway serves the currency', async () => {
    const { mock, call } = setup();
    mock.state.merchants[0]!.selectedGatewayIds = [3]; // mpesa (TZS) only
    const reply = await call('POST', '/api/v1/payments', hostedBody());
    expect(reply.status).toBe(422);
    expect(reply.body.error).toBe('No payment method available');
  });

  it('allow_payment_methods narrows by case-insensitive keyword on name or code and never adds', async () => {
    const { call } = setup();
    let n = 0;
    const legacy = (allow: unknown, currency = 'USD') =>
      call(
        'POST',
        '/api/v1/initiate-payment',
        hostedBody({
          ref_trx: `allow-${++n}`,
          currency_code: currency,
          allow_payment_methods: allow,
          success_redirect: 'https://s.example.com/ok',
          cancel_redirect: 'https://s.example.com/no',
        }),
      );
    expect((await legacy('PayPal')).body.info.merchant_payment_method_codes).toEqual(['paypal']);
    expect((await legacy(['CARD', 'pay'])).body.info.merchant_payment_method_codes).toEqual(['card', 'paypal']);
    expect((await legacy('m-pesa, airtel', 'TZS')).body.info.merchant_payment_method_codes).toEqual(['mpesa', 'airtelmoney']);
    expect((await legacy('m-pesa, airtel', 'TZS')).body.info.allow_payment_methods).toEqual(['m-pesa', 'airtel']);
    // mpesa is a TZS gateway: asking for it on USD exposes nothing.
    const none = await legacy('mpesa');
    expect(none.status).toBe(422);
    expect(none.body.error).toBe('No payment method matches allow_payment_methods');
  });
});

describe('mock service: creation responses', () => {
  it('POST /payments: status, trx_id, payment_url and the Payment data object', async () => {
    const { call } = setup();
    const reply = await call('POST', '/api/v1/payments', hostedBody());
    expect(reply.status).toBe(200);
    const { body } = reply;
    expect(body).toEqual({
      status: 'success',
      trx_id: expect.stringMatching(/^TRX/),
      payment_url: body.data.checkout_url,
      data: {
        trx_id: body.trx_id,
        merchant_ref: 'order-1001',
        amount: 25,
        currency: 'USD',
        status: 'pending',
        checkout_url: expect.stringMatching(
          new RegExp(`^https://sandbox\\.business-payments\\.test/checkout/${body.trx_id}\\?expires=\\d+&signature=[0-9a-f]{64}$`),
        ),
        expires_at: new Date(T0 + 60 * 60_000).toISOString(),
        environment: 'sandbox',
      },
    });
  });

  it('push mode has no checkout link', async () => {
    const { call } = setup();
    const { body } = await call('POST', '/api/v1/payments', pushBody(TEST_PHONE_NUMBERS.success));
    expect(body.data.checkout_url).toBeNull();
    expect(body.payment_url).toBeNull();
    expect(body.data.status).toBe('pending');
  });

  it('legacy route: payment_url, every info field and data.trx_id/checkout_url', async () => {
    const { call } = setup();
    const reply = await call('POST', '/api/v1/initiate-payment', {
      payment_amount: 10.5,
      currency_code: 'USD',
      ref_trx: 'legacy-1',
      success_redirect: 'https://shop.example.com/ok',
      cancel_redirect: 'https://shop.example.com/cancel',
      ipn_url: 'https://shop.example.com/ipn',
      description: 'Two mugs',
      customer_name: 'Asha',
      customer_email: 'asha@example.com',
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      payment_url: expect.stringContaining('/checkout/'),
      info: {
        ref_trx: 'legacy-1',
        description: 'Two mugs',
        ipn_url: 'https://shop.example.com/ipn',
        cancel_redirect: 'https://shop.example.com/cancel',
        success_redirect: 'https://shop.example.com/ok',
        customer_name: 'Asha',
        customer_email: 'asha@example.com',
        merchant_id: 1001,
        merchant_name: 'Demo Shop',
        amount: 10.5,
        currency_code: 'USD',
        environment: 'sandbox',
        is_sandbox: true,
        allow_payment_methods: [],
        merchant_payment_methods_restricted: false,
        merchant_payment_method_ids: [1, 2],
        merchant_payment_method_codes: ['card', 'paypal'],
      },
      data: { trx_id: expect.stringMatching(/^TRX/), checkout_url: reply.body.payment_url },
    });
  });

  it('production creation says so', async () => {
    const { call, creds } = setup();
    const { body } = await call(
      'POST',
      '/api/v1/initiate-payment',
      hostedBody({ success_redirect: 'https://s.example.com/ok', cancel_redirect: 'https://s.example.com/no' }),
      { env: 'production', creds: creds.production },
    );
    expect(body.info).toMatchObject({ environment: 'production', is_sandbox: false });
  });
});

describe('mock service: Idempotency-Key', () => {
  it('replays the stored response for the same key and body, creating nothing', async () => {
    const { mock, call } = setup();
    const first = await call('POST', '/api/v1/payments', hostedBody(), { idempotencyKey: 'key-1' });
    const again = await call('POST', '/api/v1/payments', hostedBody(), { idempotencyKey: 'key-1' });
    expect(again.status).toBe(first.status);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(mock.state.payments.size).toBe(1);
    // Key order does not matter: same meaning, same body.
    const reordered = Object.fromEntries(Object.entries(hostedBody()).reverse());
    expect((await call('POST', '/api/v1/payments', reordered, { idempotencyKey: 'key-1' })).text).toBe(first.text);
    expect(mock.state.payments.size).toBe(1);
  });

  it('refuses the same key with another body: 422 Idempotency key reuse', async () => {
    const { mock, call } = setup();
    await call('POST', '/api/v1/payments', hostedBody(), { idempotencyKey: 'key-2' });
    const reuse = await call('POST', '/api/v1/payments', hostedBody({ payment_amount: 99 }), { idempotencyKey: 'key-2' });
    expect(reuse.status).toBe(422);
    expect(reuse.body).toEqual({ error: 'Idempotency key reuse', message: expect.any(String) });
    expect(mock.state.payments.size).toBe(1);
  });

  it('scopes keys per route and merchant environment, keeps them 24 h, stores only successes', async () => {
    const { mock, call, clock, creds } = setup();
    const first = await call('POST', '/api/v1/payments', hostedBody(), { idempotencyKey: 'k' });
    await call(
      'POST',
      '/api/v1/initiate-payment',
      hostedBody({ ref_trx: 'order-1002', success_redirect: 'https://s.example.com/ok', cancel_redirect: 'https://s.example.com/no' }),
      { idempotencyKey: 'k' },
    );
    // The other environment has its own keys, and its own references.
    await call('POST', '/api/v1/payments', hostedBody(), { idempotencyKey: 'k', env: 'production', creds: creds.production });
    expect(mock.state.payments.size).toBe(3);
    clock.advance(24 * 3_600_000 - 1);
    const replayed = await call('POST', '/api/v1/payments', hostedBody(), { idempotencyKey: 'k' });
    expect([replayed.text, replayed.headers.get('idempotent-replayed')]).toEqual([first.text, 'true']);
    clock.advance(1);
    // 24 h on, the key is forgotten: the request runs again, and its ref_trx is taken.
    expect((await call('POST', '/api/v1/payments', hostedBody(), { idempotencyKey: 'k' })).body.error).toBe('DUPLICATE_REFERENCE');
    const fresh = await call('POST', '/api/v1/payments', hostedBody({ ref_trx: 'order-1003' }), { idempotencyKey: 'k' });
    expect([fresh.status, fresh.headers.get('idempotent-replayed')]).toEqual([200, null]);
    expect(mock.state.payments.size).toBe(4);
    // A failed request is not stored: fixed and resent with the same key, it creates.
    const failed = await call('POST', '/api/v1/payments', hostedBody({ ref_trx: 'order-1004', currency_code: 'EUR' }), {
      idempotencyKey: 'fix-me',
    });
    expect(failed.status).toBe(422);
    expect((await call('POST', '/api/v1/payments', hostedBody({ ref_trx: 'order-1004' }), { idempotencyKey: 'fix-me' })).status).toBe(200);
  });

  it('answers concurrent requests with one key once', async () => {
    const { mock, call } = setup();
    const replies = await Promise.all([1, 2, 3].map(() => call('POST', '/api/v1/payments', hostedBody(), { idempotencyKey: 'race' })));
    expect(new Set(replies.map((r) => r.text)).size).toBe(1);
    expect(mock.state.payments.size).toBe(1);
  });

  it('refuses keys longer than 64 characters', async () => {
    const { mock, call } = setup();
    expect((await call('POST', '/api/v1/payments', hostedBody(), { idempotencyKey: 'k'.repeat(64) })).status).toBe(200);
    const long = await call('POST', '/api/v1/payments', hostedBody(), { idempotencyKey: 'k'.repeat(65) });
    expect(long.status).toBe(422);
    expect(long.body.error).toBe('Validation failed');
    expect(long.body.errors).toHaveProperty('Idempotency-Key');
    expect(mock.state.payments.size).toBe(1);
  });
});

describe('mock service: DUPLICATE_REFERENCE', () => {
  const DUPLICATE = {
    error: 'DUPLICATE_REFERENCE',
    message: 'Transaction reference already exists',
    errors: { ref_trx: ['Transaction reference already exists'] },
  };
  const legacyBody = (extra: Record<string, unknown> = {}) =>
    hostedBody({ success_redirect: 'https://s.example.com/ok', cancel_redirect: 'https://s.example.com/no', ...extra });

  it('refuses a second payment with a used ref_trx: 409, under another key or none, on either create route', async () => {
    const { mock, call } = setup();
    expect((await call('POST', '/api/v1/payments', hostedBody(), { idempotencyKey: 'first' })).status).toBe(200);
    for (const [path, body, key] of [
      ['/api/v1/payments', hostedBody(), 'second'],
      ['/api/v1/payments', hostedBody({ payment_amount: 40 }), undefined],
      ['/api/v1/initiate-payment', legacyBody(), 'third'],
    ] as const) {
      const reply = await call('POST', path, body, key === undefined ? {} : { idempotencyKey: key });
      expect([path, reply.status], String(key)).toEqual([path, 409]);
      expect(reply.text).toBe(JSON.stringify(DUPLICATE));
    }
    expect(mock.state.payments.size).toBe(1);
    // Legacy first, then /payments: one rule for both routes.
    expect((await call('POST', '/api/v1/initiate-payment', legacyBody({ ref_trx: 'legacy-ref' }))).status).toBe(200);
    expect((await call('POST', '/api/v1/payments', hostedBody({ ref_trx: 'legacy-ref' }))).body).toEqual(DUPLICATE);
  });

  it('a replay with the same Idempotency-Key still gets the first answer (idempotency wins)', async () => {
    const { mock, call } = setup();
    const first = await call('POST', '/api/v1/payments', hostedBody(), { idempotencyKey: 'same' });
    const again = await call('POST', '/api/v1/payments', hostedBody(), { idempotencyKey: 'same' });
    expect([again.status, again.text, again.headers.get('idempotent-replayed')]).toEqual([200, first.text, 'true']);
    // A refused request is not stored: the same key with a free reference then creates.
    expect((await call('POST', '/api/v1/payments', hostedBody(), { idempotencyKey: 'other' })).status).toBe(409);
    expect((await call('POST', '/api/v1/payments', hostedBody({ ref_trx: 'order-1002' }), { idempotencyKey: 'other' })).status).toBe(200);
    expect(mock.state.payments.size).toBe(2);
  });

  it('is per merchant and environment, and holds for a failed payment too', async () => {
    const second = { ...DEFAULT_CREDENTIALS.sandbox, merchantKey: 'test_merchant_2002', apiKey: 'test_api_key_2002' };
    const merchants = [
      defaultMerchant(),
      {
        ...defaultMerchant(),
        id: 2002,
        credentials: {
          sandbox: second,
          production: { ...DEFAULT_CREDENTIALS.production, merchantKey: 'live_merchant_2002', apiKey: 'live_api_key_2002' },
        },
      },
    ];
    const { mock, call, creds } = setup({ merchants });
    const first = await call('POST', '/api/v1/payments', hostedBody());
    expect((await call('POST', '/api/v1/payments', hostedBody(), { env: 'production', creds: creds.production })).status).toBe(200);
    expect((await call('POST', '/api/v1/payments', hostedBody(), { creds: second })).status).toBe(200);
    await mock.completeCheckout(first.body.trx_id, 'failed');
    expect((await call('POST', '/api/v1/payments', hostedBody())).status).toBe(409);
  });

  it('two concurrent creates with one ref_trx and different keys: one payment, one 409', async () => {
    const { mock, call } = setup();
    const replies = await Promise.all(
      ['a', 'b', 'c'].map((key) => call('POST', '/api/v1/payments', hostedBody(), { idempotencyKey: key })),
    );
    expect(replies.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    expect(mock.state.payments.size).toBe(1);
  });
});

describe('mock service: list, get and verify', () => {
  it('lists the merchant environment payments newest first with filters and pages', async () => {
    const { call, creds } = setup();
    for (const ref of ['a', 'b', 'c']) await call('POST', '/api/v1/payments', hostedBody({ ref_trx: ref }));
    await call('POST', '/api/v1/payments', hostedBody({ ref_trx: 'prod' }), { env: 'production', creds: creds.production });
    const all = await call('GET', '/api/v1/payments');
    expect(all.body).toMatchObject({ total: 3, limit: 20, offset: 0, has_more: false });
    expect(all.body.data.map((p: { merchant_ref: string }) => p.merchant_ref)).toEqual(['c', 'b', 'a']);
    const paged = await call('GET', '/api/v1/payments?limit=2&offset=1');
    expect(paged.body).toMatchObject({ total: 3, limit: 2, offset: 1, has_more: false });
    expect(paged.body.data.map((p: { merchant_ref: string }) => p.merchant_ref)).toEqual(['b', 'a']);
    expect((await call('GET', '/api/v1/payments?limit=1')).body.has_more).toBe(true);
    expect((await call('GET', '/api/v1/payments?merchant_ref=b')).body.total).toBe(1);
    expect((await call('GET', '/api/v1/payments?status=success')).body.total).toBe(0);
    const bad = await call('GET', '/api/v1/payments?limit=0&status=done');
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['limit', 'status']);
  });

  it('gets one payment and verifies it only for its merchant and environment', async () => {
    const { call, creds } = setup();
    const { body } = await call('POST', '/api/v1/payments', hostedBody({ description: 'Mugs' }));
    const got = await call('GET', `/api/v1/payments/${body.trx_id}`);
    expect(got.body).toMatchObject({ status: 'success', data: { trx_id: body.trx_id, status: 'pending', amount: 25 } });
    const verified = await call('GET', `/api/v1/verify-payment/${body.trx_id}`);
    expect(verified.body).toEqual({
      status: 'pending',
      trx_id: body.trx_id,
      amount: 25,
      fee: 0,
      currency: 'USD',
      net_amount: 0,
      customer: { name: 'Asha Mwangi', email: 'asha@example.com' },
      description: 'Mugs',
      created_at: new Date(T0).toISOString(),
      updated_at: new Date(T0).toISOString(),
    });
    expect(
      (await call('GET', `/api/v1/verify-payment/${body.trx_id}`, undefined, { env: 'production', creds: creds.production })).status,
    ).toBe(404);
    expect((await call('GET', '/api/v1/verify-payment/TRXNOPE')).status).toBe(404);
    expect((await call('GET', '/api/v1/payments/TRXNOPE')).body).toEqual({ error: 'Not Found', message: expect.any(String) });
  });

  it('another merchant cannot see or verify the payment', async () => {
    const { mock, call } = setup();
    const other = structuredClone(mock.state.merchants[0]!);
    other.id = 2002;
    other.credentials.sandbox = { merchantKey: 'test_m2', apiKey: 'test_k2', apiSecret: 'test_s2' };
    other.credentials.production = { merchantKey: 'live_m2', apiKey: 'live_k2', apiSecret: 'live_s2' };
    mock.state.merchants.push(other);
    const { body } = await call('POST', '/api/v1/payments', hostedBody());
    const asOther = { creds: other.credentials.sandbox };
    expect((await call('GET', `/api/v1/verify-payment/${body.trx_id}`, undefined, asOther)).status).toBe(404);
    expect((await call('GET', `/api/v1/payments/${body.trx_id}`, undefined, asOther)).status).toBe(404);
    expect((await call('GET', '/api/v1/payments', undefined, asOther)).body.total).toBe(0);
  });
});

describe('mock service: simulated USSD push', () => {
  const cases = [
    [TEST_PHONE_NUMBERS.success, 'success', null, 5_000],
    [TEST_PHONE_NUMBERS.insufficientFunds, 'failed', 'INSUFFICIENT_FUNDS', 5_000],
    [TEST_PHONE_NUMBERS.declined, 'failed', 'PAYMENT_DECLINED', 5_000],
    [TEST_PHONE_NUMBERS.timeout, 'failed', 'TIMEOUT', 60_000],
    ['255712345678', 'success', null, 5_000],
  ] as const;

  for (const [phone, status, reason, after] of cases) {
    it(`${phone} → ${status}${reason ? ` (${reason})` : ''} after ${after / 1000} s`, async () => {
      const { mock, call, clock, received } = setup();
      const { body } = await call('POST', '/api/v1/payments', pushBody(phone));
      clock.advance(after - 1);
      await mock.runDue();
      expect((await call('GET', `/api/v1/verify-payment/${body.trx_id}`)).body.status).toBe('pending');
      clock.advance(1);
      await mock.runDue();
      const verified = (await call('GET', `/api/v1/verify-payment/${body.trx_id}`)).body;
      expect(verified.status).toBe(status);
      if (status === 'success') {
        expect(verified.fee).toBe(150); // 3 % of 5000
        expect(verified.net_amount).toBe(4850);
      } else {
        expect(verified).toMatchObject({ fee: 0, net_amount: 0 });
      }
      const record = (await call('GET', `/api/v1/payments/${body.trx_id}`)).body.data;
      expect(record.failure_reason).toBe(reason);
      expect(received).toHaveLength(1);
      expect(JSON.parse(received[0]!.body).type).toBe(status === 'success' ? 'payment.completed' : 'payment.failed');
    });
  }

  it('timeScale scales the answer time', async () => {
    const { mock, call, clock } = setup({ timeScale: 0.01 });
    const { body } = await call('POST', '/api/v1/payments', pushBody(TEST_PHONE_NUMBERS.success));
    clock.advance(50);
    await mock.runDue();
    expect((await call('GET', `/api/v1/verify-payment/${body.trx_id}`)).body.status).toBe('success');
  });

  it('credits the wallet with the net amount on success', async () => {
    const { mock, call, clock } = setup();
    await call('POST', '/api/v1/payments', pushBody(TEST_PHONE_NUMBERS.success));
    clock.advance(5_000);
    await mock.runDue();
    expect(mock.state.merchants[0]!.currencies.TZS!.balance).toBe(1_004_850);
  });

  it('POST /payments/{trx_id}/push rings a pending payment, 404 unknown, 422 not pending', async () => {
    const { mock, call, clock } = setup();
    const { body } = await call('POST', '/api/v1/payments', hostedBody({ currency_code: 'TZS' }));
    const noPhone = await call('POST', `/api/v1/payments/${body.trx_id}/push`, {});
    expect(noPhone.status).toBe(422);
    expect(noPhone.body.errors).toHaveProperty('customer_phone');
    const pushed = await call('POST', `/api/v1/payments/${body.trx_id}/push`, { customer_phone: TEST_PHONE_NUMBERS.declined });
    expect(pushed.status).toBe(200);
    expect(pushed.body.data).toMatchObject({ trx_id: body.trx_id, status: 'pending', customer_phone: TEST_PHONE_NUMBERS.declined });
    clock.advance(5_000);
    await mock.runDue();
    const again = await call('POST', `/api/v1/payments/${body.trx_id}/push`, {});
    expect(again.status).toBe(422);
    expect(again.body.error).toBe('Payment is not pending');
    expect((await call('POST', '/api/v1/payments/TRXNOPE/push', { customer_phone: TEST_PHONE_NUMBERS.success })).status).toBe(404);
  });

  it('a re-push uses the phone from creation when none is given, and the first outcome wins', async () => {
    const { mock, call, clock, received } = setup();
    const { body } = await call('POST', '/api/v1/payments', pushBody(TEST_PHONE_NUMBERS.timeout));
    clock.advance(1_000);
    const repush = await call('POST', `/api/v1/payments/${body.trx_id}/push`, { customer_phone: TEST_PHONE_NUMBERS.success });
    expect(repush.status).toBe(200);
    clock.advance(60_000);
    await mock.runDue();
    expect((await call('GET', `/api/v1/verify-payment/${body.trx_id}`)).body.status).toBe('success');
    expect(received).toHaveLength(1);
  });
});

describe('mock service: hosted checkout', () => {
  it('serves an HTML page with Pay and Cancel forms, and Pay settles the payment', async () => {
    const { mock, call, received } = setup();
    const { body } = await call('POST', '/api/v1/payments', hostedBody({ success_redirect: 'https://shop.example.com/thanks' }));
    const page = await mock.handle(new Request(body.data.checkout_url));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const html = await page.text();
    expect(html).toContain('Demo Shop');
    expect(html).toContain('25 USD');
    const actions = [...html.matchAll(/action="([^"]+)"/g)].map((m) => m[1]!.replace(/&#38;/g, '&'));
    expect(actions).toHaveLength(3);
    expect(actions[0]).toMatch(new RegExp(`/checkout/${body.trx_id}/pay\\?expires=`));
    expect(actions[1]).toMatch(new RegExp(`/checkout/${body.trx_id}/decline\\?expires=`));
    expect(actions[2]).toMatch(new RegExp(`/checkout/${body.trx_id}/cancel\\?expires=`));
    const paid = await mock.handle(
      new Request(`https://sandbox.business-payments.test${actions[0]}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'gateway=paypal',
      }),
    );
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe('https://shop.example.com/thanks');
    const record = (await call('GET', `/api/v1/payments/${body.trx_id}`)).body.data;
    expect(record).toMatchObject({ status: 'success', gateway: 'paypal', fee: 0.75, net_amount: 24.25 });
    await mock.runDue();
    expect(JSON.parse(received[0]!.body).type).toBe('payment.completed');
    // A finished payment's page says so.
    expect((await mock.handle(new Request(body.data.checkout_url))).status).toBe(409);
  });

  it('Decline fails the payment as the processor would (PAYMENT_DECLINED) and redirects to cancel_redirect', async () => {
    const { mock, call, received } = setup();
    const { body } = await call('POST', '/api/v1/payments', hostedBody());
    const url = new URL(body.data.checkout_url);
    const declined = await mock.handle(new Request(`${url.origin}${url.pathname}/decline${url.search}`, { method: 'POST' }));
    expect(declined.status).toBe(303);
    expect(declined.headers.get('location')).toBe('https://shop.example.com');
    const record = (await call('GET', `/api/v1/payments/${body.trx_id}`)).body.data;
    expect(record).toMatchObject({ status: 'failed', failure_reason: 'PAYMENT_DECLINED' });
    await mock.runDue();
    expect(JSON.parse(received[0]!.body).type).toBe('payment.failed');
  });

  it('Cancel fails the payment and redirects to cancel_redirect (default: the site URL)', async () => {
    const { mock, call } = setup();
    const { body } = await call('POST', '/api/v1/payments', hostedBody());
    const url = new URL(body.data.checkout_url);
    const canceled = await mock.handle(new Request(`${url.origin}${url.pathname}/cancel${url.search}`, { method: 'POST' }));
    expect(canceled.status).toBe(303);
    expect(canceled.headers.get('location')).toBe('https://shop.example.com');
    expect((await call('GET', `/api/v1/verify-payment/${body.trx_id}`)).body.status).toBe('failed');
  });

  it('refuses a tampered link (403) and an expired one (410)', async () => {
    const { mock, call, clock } = setup();
    const { body } = await call('POST', '/api/v1/payments', hostedBody());
    const tampered = body.data.checkout_url.replace(/expires=\d+/, 'expires=9999999999');
    expect((await mock.handle(new Request(tampered))).status).toBe(403);
    clock.advance(60 * 60_000 + 1_000);
    const expired = await mock.handle(new Request(body.data.checkout_url));
    expect(expired.status).toBe(410);
    expect(await expired.text()).toContain('EXPIRED_SESSION');
  });

  it('completeCheckout settles programmatically and refuses unknown or finished payments', async () => {
    const { mock, call, received, clock } = setup();
    const { body } = await call('POST', '/api/v1/payments', hostedBody());
    await mock.completeCheckout(body.trx_id, 'success');
    expect((await call('GET', `/api/v1/verify-payment/${body.trx_id}`)).body).toMatchObject({
      status: 'success',
      fee: 0.75,
      net_amount: 24.25,
    });
    expect(received).toHaveLength(0); // autoRun is off: delivered on runDue
    await mock.runDue();
    expect(received).toHaveLength(1);
    await expect(mock.completeCheckout(body.trx_id, 'failed')).rejects.toThrow(/already success/);
    await expect(mock.completeCheckout('TRXNOPE', 'success')).rejects.toThrow(/no payment/);
    const second = await call('POST', '/api/v1/payments', hostedBody({ ref_trx: 'o-2' }));
    clock.advance(1_000);
    await mock.completeCheckout(second.body.trx_id, 'failed');
    expect((await call('GET', `/api/v1/verify-payment/${second.body.trx_id}`)).body.status).toBe('failed');
  });
});
