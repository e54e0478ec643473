// Regressions found in review: each test pins one fix.
import { http, HttpResponse } from 'msw';
import { describe, expect, test, vi } from 'vitest';
import * as z from 'zod/mini';
import { InvalidParamsError, PaymentsClient, PaymentsError, PayoutListParams, signRequest } from '../../src/index.js';
import { MAX_STALE_PAGES } from '../../src/core/pagination.js';
import { BASE_URL, CREDENTIALS, fixtures } from '../support/fake-api.js';
import { useFakeApi } from '../support/harness.js';

const { api, setup } = useFakeApi();

describe('pagination', () => {
  test('items without ids from a server that ignores offset do not loop forever (nor repeat)', async () => {
    // Public list items all have ids now: a list of id-less rows goes through the client's
    // internal list call, as a shape without an id would.
    api.on('get', '/api/v1/payouts', { body: { data: [{ amount: 1 }, { amount: 2 }] } });
    const { client } = setup();
    const seen: unknown[] = [];
    const list = client.requestPage({
      operation: 'payouts.list',
      method: 'GET',
      path: '/api/v1/payouts',
      params: PayoutListParams,
      value: { limit: 2 },
      item: z.looseObject({ amount: z.number() }),
    });
    const failure = await (async () => {
      for await (const payout of list) seen.push(payout);
    })().catch((e: unknown) => e);
    expect(seen).toEqual([{ amount: 1 }, { amount: 2 }]);
    expect(failure).toBeInstanceOf(PaymentsError);
    expect(api.seen).toHaveLength(1 + MAX_STALE_PAGES);
  });
});

describe('validation', () => {
  test('an upper-case HTTPS scheme is HTTPS in production', async () => {
    const live = new PaymentsClient({
      environment: 'production',
      merchantKey: 'live_m',
      apiKey: 'live_k',
      apiSecret: 'live_s',
      baseUrl: BASE_URL,
      maxRetries: 0,
    });
    api.use(
      http.post(`${BASE_URL}/api/v1/payments`, () => HttpResponse.json({ status: 'success', data: fixtures.payment, trx_id: 'TRX123456' })),
    );
    await expect(
      live.payments.create({ payment_amount: 5, currency_code: 'USD', ref_trx: 'o-1', ipn_url: 'HTTPS://shop.example.com/ipn' }),
    ).resolves.toMatchObject({ trx_id: 'TRX123456' });
    await expect(
      live.payments.create({ payment_amount: 5, currency_code: 'USD', ref_trx: 'o-1', ipn_url: 'http://shop.example.com/ipn' }),
    ).rejects.toMatchObject({ errors: { ipn_url: [expect.stringContaining('https')] } });
  });

  test('an unknown key is reported under its own name', async () => {
    const { client } = setup();
    const error = await client.payments
      .create({ payment_amount: 5, currency_code: 'USD', ref_trx: 'o-1', amout: 5 } as never)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidParamsError);
    expect((error as InvalidParamsError).errors).toEqual({ amout: ['is not a known field (check the spelling)'] });
    expect(api.seen).toHaveLength(0);
  });
});

describe('documented shapes in a success envelope', () => {
  test('verify, siteInfo and payouts.preview unwrap { status, data }', async () => {
    api.on('get', '/api/v1/verify-payment/:id', { body: { status: 'success', data: fixtures.verified } });
    api.on('get', '/api/v1/site-info', { body: { status: 'success', data: fixtures.siteInfo } });
    api.on('post', '/api/v1/payouts/preview', { body: { status: 'success', data: { amount: 100, fee: 2, payable_amount: 98 } } });
    const { client } = setup();
    await expect(client.payments.verify('TRX123456')).resolves.toEqual(fixtures.verified);
    await expect(client.siteInfo.retrieve()).resolves.toEqual(fixtures.siteInfo);
    await expect(client.payouts.preview({ amount: 100 })).resolves.toEqual({ amount: 100, fee: 2, payable_amount: 98 });
  });
});

describe('logging', () => {
  test('Authorization and Cookie in custom headers are redacted; BUSINESS_PAYMENTS_LOG is case-insensitive', async () => {
    vi.stubEnv('BUSINESS_PAYMENTS_LOG', 'DEBUG');
    const lines: string[] = [];
    const logger = { error: vi.fn(), warn: vi.fn(), info: vi.fn(), debug: (...args: unknown[]) => lines.push(JSON.stringify(args)) };
    api.on('get', '/api/v1/balance', { body: [{ currency: 'USD', balance: 10 }] });
    const client = new PaymentsClient({
      ...CREDENTIALS,
      baseUrl: BASE_URL,
      logger,
      defaultHeaders: { Authorization: 'Bearer proxy-token-123' },
    });
    await client.balance.retrieve({ headers: { Cookie: 'session=abc' } });
    expect(lines.join('\n')).toContain('[redacted]');
    expect(lines.join('\n')).not.toContain('proxy-token-123');
    expect(lines.join('\n')).not.toContain('session=abc');
  });
});

describe('signRequest', () => {
  test('bad input is an InvalidParamsError naming each field, never a bare error', async () => {
    const error = await signRequest({ secret: '', timestamp: 'soon', method: 'G ET', pathWithQuery: 'api', body: 5 as never }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidParamsError);
    expect(Object.keys((error as InvalidParamsError).errors).sort()).toEqual(['body', 'method', 'pathWithQuery', 'secret', 'timestamp']);
  });
});

describe('allow_payment_methods', () => {
  test('a blank keyword is refused before sending (the service refuses it too)', async () => {
    const { client } = setup();
    for (const allow_payment_methods of ['  ', ['mpesa', ' ']]) {
      const error = await client.payments
        .create({ payment_amount: 5, currency_code: 'TZS', ref_trx: 'o-1', allow_payment_methods })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidParamsError);
      expect(Object.keys((error as InvalidParamsError).errors)[0]).toMatch(/^allow_payment_methods/);
    }
    expect(api.seen).toHaveLength(0);
  });
});
