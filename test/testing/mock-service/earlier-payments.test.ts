// The earlier generation's initiate-payment, verify-payment and site-info, from the facts
// sheet (spec/deployed-generation.md): Laravel validation bodies, business errors, the server
// bug, no idempotency, no trx_id in the answer nor in its checkout link (the real product's
// signed /payment/checkout?expires&token&signature, the page and its buttons working from it),
// verify's three shapes with the net amount.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Ctx } from '../../../src/testing/mock-service/context.js';
import { defaultMerchant } from '../../../src/testing/mock-service/defaults.js';
import { earlierCheckoutLink, earlierLinkSigned, trxOfToken } from '../../../src/testing/mock-service/earlier-link.js';
import { BASE, setup, T0 } from '../../support/mock-service.js';

const earlier = (options: Parameters<typeof setup>[0] = {}) => setup({ generation: 'earlier', ...options });

/** A valid initiate-payment body. */
const initiate = (extra: Record<string, unknown> = {}) => ({
  ref_trx: 'order-1001',
  currency_code: 'USD',
  payment_amount: 100,
  ipn_url: 'https://shop.example.com/ipn',
  success_redirect: 'https://shop.example.com/thanks',
  cancel_redirect: 'https://shop.example.com/cart',
  description: 'Coffee beans, 1 kg',
  customer_name: 'Asha Mwinyi',
  customer_email: 'asha@example.com',
  ...extra,
});

/** The real product's checkout link: `<base>/payment/checkout?expires=<unix>&token=…&signature=<64 hex>`. */
const linkForm = (expires: number | string = '\\d+') =>
  new RegExp(`^${BASE.replace(/[.]/g, '\\.')}/payment/checkout\\?expires=${expires}&token=[^&]+&signature=[0-9a-f]{64}$`);

/** The trx_id of the payment just created (the answer does not carry it). */
const newest = (mock: ReturnType<typeof setup>['mock']) => [...mock.state.payments.keys()].at(-1)!;

describe('earlier generation: initiate-payment', () => {
  it('200 {payment_url, info}: no trx_id anywhere, the fields echoed, amount exactly as sent', async () => {
    const { mock, call } = earlier();
    const reply = await call('POST', '/api/v1/initiate-payment', initiate({ payment_amount: '100.50', customer_email: '' }));
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body)).toEqual(['payment_url', 'info']);
    expect(reply.text).not.toContain('trx_id');
    const trx = newest(mock);
    const expires = Math.floor(T0 / 1000) + 900 * 60;
    // The real product's link: no trx_id in it (checkout link tests below).
    expect(reply.body.payment_url).toMatch(linkForm(expires));
    expect(decodeURIComponent(reply.body.payment_url).toUpperCase()).not.toContain(trx.toUpperCase());
    expect(reply.body.info).toEqual({
      ref_trx: 'order-1001',
      description: 'Coffee beans, 1 kg',
      ipn_url: 'https://shop.example.com/ipn',
      cancel_redirect: 'https://shop.example.com/cart',
      success_redirect: 'https://shop.example.com/thanks',
      customer_name: 'Asha Mwinyi',
      customer_email: null, // empty is null
      merchant_id: 1001,
      merchant_name: 'Demo Shop',
      amount: '100.50', // a string stays a string
      currency_code: 'USD',
      environment: 'sandbox',
      is_sandbox: true,
      allow_payment_methods: [],
      merchant_payment_methods_restricted: false,
      merchant_payment_method_ids: [1, 2],
      merchant_payment_method_codes: ['card', 'paypal'],
    });
  });

  it('absent optional fields are absent; allow_payment_methods as a list; a number stays a number', async () => {
    const { call } = earlier();
    const { customer_email: _e, customer_name: _n, ...body } = initiate({ allow_payment_methods: 'pay, x' });
    const reply = await call('POST', '/api/v1/initiate-payment', body);
    expect(reply.body.info).not.toHaveProperty('customer_email');
    expect(reply.body.info).not.toHaveProperty('customer_name');
    expect(reply.body.info).toMatchObject({ amount: 100, allow_payment_methods: ['pay', 'x'], merchant_payment_method_codes: ['paypal'] });
  });

  it('ignores webhook_url, payment_mode, customer_phone and Idempotency-Key; no duplicate check', async () => {
    const { mock, call } = earlier();
    const body = initiate({ webhook_url: 'https://x.test/h', payment_mode: 'push', customer_phone: '255700000001' });
    const first = await call('POST', '/api/v1/initiate-payment', body, { idempotencyKey: 'k-1' });
    const second = await call('POST', '/api/v1/initiate-payment', body, { idempotencyKey: 'k-1' });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(first.body.payment_url).not.toBe(second.body.payment_url);
    expect(mock.state.payments.size).toBe(2); // every call creates a transaction, same ref_trx
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(Object.keys(first.body.info)).not.toEqual(expect.arrayContaining(['webhook_url', 'payment_mode', 'customer_phone']));
  });

  it('422 {"status":"error","errors":{…}} with Laravel messages, fields in the rules order', async () => {
    const { call } = earlier();
    const empty = await call('POST', '/api/v1/initiate-payment', {});
    expect(empty.status).toBe(422);
    expect(empty.body).toEqual({
      status: 'error',
      errors: {
        ref_trx: ['The ref trx field is required.'],
        currency_code: ['The currency code field is required.'],
        payment_amount: ['The payment amount field is required.'],
        ipn_url: ['The ipn url field is required.'],
        success_redirect: ['The success redirect field is required.'],
        cancel_redirect: ['The cancel redirect field is required.'],
      },
    });
    const bad = await call(
      'POST',
      '/api/v1/initiate-payment',
      initiate({ ipn_url: 'not a url', ref_trx: 'r'.repeat(61), payment_amount: 0.5, customer_email: 'asha' }),
    );
    expect(bad.body).toEqual({
      status: 'error',
      errors: {
        ref_trx: ['The ref trx field must not be greater than 60 characters.'],
        payment_amount: ['The payment amount field must be at least 1.'],
        ipn_url: ['The ipn url field must be a valid URL.'],
        customer_email: ['The customer email field must be a valid email address.'],
      },
    });
    const word = await call('POST', '/api/v1/initiate-payment', initiate({ payment_amount: 'ten' }));
    expect(word.body.errors).toEqual({ payment_amount: ['The payment amount field must be a number.'] });
  });

  it('reads the body only when Content-Type contains /json; http:// is accepted in production', async () => {
    const { call, creds } = earlier();
    const plain = await call('POST', '/api/v1/initiate-payment', initiate(), { headers: { 'Content-Type': 'text/plain' } });
    expect(plain.status).toBe(422);
    expect(Object.keys(plain.body.errors)).toContain('ref_trx');
    const textJson = await call('POST', '/api/v1/initiate-payment', initiate(), { headers: { 'Content-Type': 'text/json' } });
    expect(textJson.status).toBe(200);
    const garbled = await call('POST', '/api/v1/initiate-payment', undefined, { rawBody: '{"ref_trx":' });
    expect(garbled.status).toBe(422);
    const http = initiate({ ipn_url: 'http://shop.example.com/ipn', success_redirect: 'http://shop.example.com/ok' });
    const prod = await call('POST', '/api/v1/initiate-payment', http, { env: 'production', creds: creds.production });
    expect([prod.status, prod.body.info.environment, prod.body.info.is_sandbox]).toEqual([200, 'production', false]);
  });

  it('business errors: {"error":"<sentence>"} with the trailing periods, and no message', async () => {
    const usdOnly = { ...defaultMerchant(), id: 2002, currencies: { USD: { wallet: true, balance: 0 } } };
    const { call, creds, mock } = earlier();
    mock.state.merchants.push(usdOnly);
    const unknown = await call('POST', '/api/v1/initiate-payment', initiate({ currency_code: 'XYZ' }));
    expect([unknown.status, unknown.text]).toEqual([422, '{"error":"Invalid currency code."}']);
    const noWallet = await call('POST', '/api/v1/initiate-payment', initiate({ currency_code: 'EUR' }));
    expect(noWallet.text).toBe('{"error":"Receiver wallet for this currency is not available."}');
    mock.state.merchants.shift(); // the USD-only merchant answers with the same keys now
    mock.state.merchants[0]!.credentials = { sandbox: { ...creds.sandbox }, production: { ...creds.production } };
    const notEnabled = await call('POST', '/api/v1/initiate-payment', initiate({ currency_code: 'TZS' }));
    expect(notEnabled.text).toBe('{"error":"Currency is not enabled for this merchant."}');
  });

  it('the server bug: neither description nor customer_name is 422 Undefined array key', async () => {
    const { call, mock } = earlier();
    const { description: _d, customer_name: _n, ...body } = initiate();
    const reply = await call('POST', '/api/v1/initiate-payment', body);
    expect([reply.status, reply.text]).toEqual([422, '{"error":"Undefined array key \\"customer_name\\""}']);
    expect(mock.state.payments.size).toBe(0);
    expect((await call('POST', '/api/v1/initiate-payment', { ...body, customer_name: 'Asha' })).status).toBe(200);
    expect((await call('POST', '/api/v1/initiate-payment', { ...body, description: 'Beans' })).status).toBe(200);
  });
});

describe('earlier generation: the checkout link (the real product form, no trx_id)', () => {
  type Setup = ReturnType<typeof earlier>;
  /** A payment made with initiate: its link, and its trx_id as a test harness knows it (the sandbox's state). */
  async function made(s: Setup, extra: Record<string, unknown> = {}) {
    const reply = await s.call('POST', '/api/v1/initiate-payment', initiate(extra));
    return { link: reply.body.payment_url as string, trx: newest(s.mock) };
  }
  const open = (s: Setup, url: string, method = 'GET') => s.mock.handle(new Request(url, { method, headers: { Accept: 'text/html' } }));
  /** A button of the page: POST `<link path>/<verb>` with the link's query. */
  const press = (s: Setup, link: string, verb: string, form: Record<string, string> = {}) => {
    const url = new URL(link);
    url.pathname += `/${verb}`;
    const headers = { 'Content-Type': 'application/x-www-form-urlencoded' };
    return s.mock.handle(new Request(url, { method: 'POST', headers, body: new URLSearchParams(form) }));
  };
  const withParam = (link: string, name: string, value: string) => {
    const url = new URL(link);
    url.searchParams.set(name, value);
    return url.href;
  };
  const status = async (s: Setup, trx: string) => (await s.call('GET', `/api/v1/verify-payment/${trx}`)).body.status as string;

  it('has the real form; neither the link, decoded, nor its token carries the trx_id; the page and the console use it', async () => {
    const s = earlier();
    const { link, trx } = await made(s);
    const again = await made(s);
    expect(link).toMatch(linkForm(Math.floor(T0 / 1000) + 900 * 60));
    expect(again.link).toMatch(linkForm());
    for (const [url, id] of [
      [link, trx],
      [again.link, again.trx],
    ] as const) {
      const decoded = decodeURIComponent(url).toUpperCase();
      expect(decoded).not.toContain(id.toUpperCase());
      expect(decoded).not.toContain(id.slice(3).toUpperCase()); // not its random part either
      // The token is opaque: Laravel's encrypter form, base64 of {iv, value, mac, tag}.
      const inner = Buffer.from(new URL(url).searchParams.get('token')!, 'base64').toString('utf8');
      expect(JSON.parse(inner)).toEqual({ iv: expect.any(String), value: expect.any(String), mac: '', tag: expect.any(String) });
      expect(inner.toUpperCase()).not.toContain(id.slice(3).toUpperCase());
    }
    expect(new URL(link).searchParams.get('token')).not.toBe(new URL(again.link).searchParams.get('token'));
    const page = await open(s, link);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('order-1001');
    expect(html.toUpperCase()).not.toContain(trx.toUpperCase());
    const search = new URL(link).search;
    const actions = [...html.matchAll(/action="([^"]+)"/g)].map((m) => m[1]!.replaceAll('&#38;', '&'));
    expect(actions).toEqual([`/payment/checkout/pay${search}`, `/payment/checkout/cancel${search}`]); // no decline
    // The console (the sandbox's own records) names the payment and opens the same link.
    const console = await (await open(s, `${BASE}/console/payments/${trx}`)).text();
    expect(console).toContain(`href="${link.replaceAll('&', '&#38;')}"`);
  });

  it('Pay through the link settles the payment, sends the IPN (which brings the trx_id), then redirects as given', async () => {
    const s = earlier();
    const { link, trx } = await made(s);
    const done = await press(s, link, 'pay', { gateway: 'paypal' });
    expect([done.status, done.headers.get('location')]).toEqual([303, 'https://shop.example.com/thanks']);
    await s.mock.runDue();
    expect(s.received).toHaveLength(1);
    const ipn = JSON.parse(s.received[0]!.body) as { status: string; data: { trx_id: string; ref_trx: string } };
    expect(ipn).toMatchObject({ status: 'completed', message: 'Payment Completed', data: { trx_id: trx, ref_trx: 'order-1001' } });
    expect(await status(s, ipn.data.trx_id)).toBe('success');
    expect(s.mock.state.payments.get(trx)).toMatchObject({ gateway: 'paypal' });
    expect((await open(s, link)).status).toBe(409); // no longer pending
    expect((await press(s, link, 'pay')).status).toBe(409);
    expect(s.received).toHaveLength(1);
  });

  it('Cancel fails it (Payment Failed); there is no decline, and the old /checkout/{trx} form does not exist', async () => {
    const s = earlier();
    const { link, trx } = await made(s);
    const search = new URL(link).search;
    expect((await press(s, link, 'decline')).status).toBe(404);
    expect((await open(s, `${BASE}/checkout/${trx}${search}`)).status).toBe(404);
    expect((await s.mock.handle(new Request(`${BASE}/checkout/${trx}/pay${search}`, { method: 'POST' }))).status).toBe(404);
    const wrong = await open(s, `${BASE}/payment/checkout/pay${search}`);
    expect([wrong.status, wrong.headers.get('allow')]).toEqual([405, 'POST']);
    expect((await open(s, link, 'PUT')).headers.get('allow')).toBe('GET, HEAD');
    expect((await open(s, link, 'HEAD')).status).toBe(200);
    expect(await status(s, trx)).toBe('pending');
    const back = await press(s, link, 'cancel');
    expect([back.status, back.headers.get('location')]).toEqual([303, 'https://shop.example.com/cart']);
    await s.mock.runDue();
    expect(JSON.parse(s.received[0]!.body)).toMatchObject({ status: 'failed', message: 'Payment Failed', data: { trx_id: trx } });
    expect(await status(s, trx)).toBe('failed');
  });

  it('a tampered token or signature, one missing, another payment’s token, or a parameter added: 403, nothing settled', async () => {
    const s = earlier();
    const { link, trx } = await made(s);
    const other = await made(s);
    const url = new URL(link);
    const token = url.searchParams.get('token')!;
    const signature = url.searchParams.get('signature')!;
    const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
    const noSignature = new URL(link);
    noSignature.searchParams.delete('signature');
    const tampered = [
      withParam(link, 'token', flip(token, 20)),
      withParam(link, 'token', flip(token, token.length - 6)),
      withParam(link, 'token', new URL(other.link).searchParams.get('token')!),
      withParam(link, 'signature', `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`),
      withParam(link, 'signature', signature.toUpperCase()),
      withParam(link, 'expires', String(Number(url.searchParams.get('expires')) + 60)),
      noSignature.href,
      `${link}&ref=order-1001`,
    ];
    for (const bad of tampered) {
      expect([bad, (await open(s, bad)).status]).toEqual([bad, 403]);
      const pay = await press(s, bad, 'pay');
      expect([bad, pay.status, pay.headers.get('location')]).toEqual([bad, 403, null]);
    }
    expect([await status(s, trx), await status(s, other.trx)]).toEqual(['pending', 'pending']);
    expect(s.received).toHaveLength(0);
  });

  it('an expired link is 410 (EXPIRED_SESSION), its buttons too; the payment stays pending', async () => {
    const s = earlier();
    const { link, trx } = await made(s);
    s.clock.advance(900 * 60_000); // valid 900 minutes
    expect((await open(s, link)).status).toBe(200);
    s.clock.advance(1_000);
    const page = await open(s, link);
    expect(page.status).toBe(410);
    expect(await page.text()).toContain('EXPIRED_SESSION');
    expect((await press(s, link, 'pay')).status).toBe(410);
    expect(await status(s, trx)).toBe('pending');
    expect(s.received).toHaveLength(0);
  });

  it('a link whose payment the bounded store has let go: 404', async () => {
    const s = earlier();
    const { link, trx } = await made(s);
    s.mock.state.payments.delete(trx);
    expect((await open(s, link)).status).toBe(404);
    expect((await press(s, link, 'pay')).status).toBe(404);
  });

  const b64 = (text: string) => Buffer.from(text).toString('base64');
  it.each([
    ['empty', ''],
    ['one letter', 'x'],
    ['bad %-encoding', '%ZZ%'],
    ['not base64', '!!!***'],
    ['base64 of text', b64('hello')],
    ['base64 of JSON null', b64('null')],
    ['base64 of a JSON number', b64('12')],
    ['fields of the wrong type', b64('{"iv":1,"value":[],"mac":"","tag":{}}')],
    ['an IV too short', b64('{"iv":"AAAA","value":"AAAA","mac":"","tag":"AAAAAAAAAAAAAAAAAAAAAA=="}')],
    ['a well-formed token of no key', b64('{"iv":"AAAAAAAAAAAAAAAA","value":"AAAA","mac":"","tag":"AAAAAAAAAAAAAAAAAAAAAA=="}')],
    ['a NUL and an emoji', '%00%F0%9F%98%80'],
    ['10,000 characters', 'A'.repeat(10_000)],
  ])('a garbage token (%s) is a 4xx page, never a 5xx', async (_name, token) => {
    const s = earlier();
    for (const query of [`expires=9999999999&token=${token}&signature=${'0'.repeat(64)}`, `token=${token}`, `token=${token}&token=x`]) {
      const url = `${BASE}/payment/checkout?${query}`;
      for (const answer of [await open(s, url), await press(s, url, 'pay'), await press(s, url, 'cancel')]) {
        expect(answer.status).toBeGreaterThanOrEqual(400);
        expect(answer.status).toBeLessThan(500);
        expect(answer.headers.get('content-type')).toMatch(/^text\/html/);
      }
    }
  });

  it('under a baseUrl with a path: the link carries it, and works', async () => {
    const s = earlier({ baseUrl: `${BASE}/gateway` });
    const reply = await s.call('POST', '/gateway/api/v1/initiate-payment', initiate());
    const link = reply.body.payment_url as string;
    expect(link.startsWith(`${BASE}/gateway/payment/checkout?expires=`)).toBe(true);
    expect((await open(s, link)).status).toBe(200);
    expect((await press(s, link, 'pay')).status).toBe(303);
    expect(s.mock.state.payments.get(newest(s.mock))).toMatchObject({ status: 'success' });
  });
});

describe('earlier generation: the link, unit (earlier-link.ts)', () => {
  const ctxOf = (key: string) => ({ checkoutKey: key }) as Ctx;
  const ctx = ctxOf('a'.repeat(64));
  const hmac = (key: string, text: string) => createHmac('sha256', key).update(text).digest('hex');

  it('two links for one payment differ; each is signed and names it; another service reads neither', async () => {
    const [one, two] = await Promise.all([
      earlierCheckoutLink(ctx, BASE, 'TRXABCDEFGH2345', T0),
      earlierCheckoutLink(ctx, BASE, 'TRXABCDEFGH2345', T0),
    ]);
    expect(one).not.toBe(two);
    for (const link of [one, two]) {
      expect(link).toMatch(linkForm(Math.floor(T0 / 1000)));
      const query = new URL(link).searchParams;
      expect(await earlierLinkSigned(ctx, query)).toBe(true);
      expect(await trxOfToken(ctx, query.get('token')!)).toBe('TRXABCDEFGH2345');
      // The signature: HMAC of the path and query without it, with the checkout key.
      expect(query.get('signature')).toBe(hmac(ctx.checkoutKey, `/payment/checkout?${link.split('?')[1]!.replace(/&signature=.*$/, '')}`));
      const stranger = ctxOf('b'.repeat(64));
      expect(await earlierLinkSigned(stranger, query)).toBe(false);
      expect(await trxOfToken(stranger, query.get('token')!)).toBeNull();
    }
  });

  it('a garbage token under a good signature: signed, but names no payment (a 404 page), never a throw', async () => {
    for (const token of ['', 'x', '%%', 'e30=', 'bnVsbA==', 'A'.repeat(5_000), '😀']) {
      const query = new URLSearchParams({ expires: '9999999999', token });
      query.set('signature', hmac(ctx.checkoutKey, `/payment/checkout?${new URLSearchParams({ expires: '9999999999', token })}`));
      expect(await earlierLinkSigned(ctx, query)).toBe(token.length <= 1_024);
      expect(await trxOfToken(ctx, token)).toBeNull();
    }
  });
});

describe('earlier generation: verify-payment', () => {
  it('pending and failed: {status, trx_id, message} and nothing else', async () => {
    const { mock, call } = earlier();
    await call('POST', '/api/v1/initiate-payment', initiate());
    const trx = newest(mock);
    const pending = await call('GET', `/api/v1/verify-payment/${trx}`);
    expect(pending.text).toBe(`{"status":"pending","trx_id":"${trx}","message":"Payment is still pending."}`);
    await mock.completeCheckout(trx, 'failed');
    const failed = await call('GET', `/api/v1/verify-payment/${trx}`);
    expect(failed.text).toBe(`{"status":"failed","trx_id":"${trx}","message":"Payment failed or canceled."}`);
  });

  it('success: amount is the net (= net_amount), the fee, the service description, Laravel dates', async () => {
    const { mock, call, clock } = earlier();
    await call('POST', '/api/v1/initiate-payment', initiate());
    const trx = newest(mock);
    clock.advance(90_000);
    await mock.completeCheckout(trx, 'success');
    const reply = await call('GET', `/api/v1/verify-payment/${trx}`);
    expect(reply.body).toEqual({
      status: 'success',
      trx_id: trx,
      amount: 97.5,
      fee: 2.5,
      currency: 'USD',
      net_amount: 97.5,
      customer: { name: 'Asha Mwinyi', email: 'asha@example.com' },
      description: expect.not.stringMatching(/^Coffee beans/),
      created_at: '2025-01-15T12:00:00.000000Z',
      updated_at: '2025-01-15T12:01:30.000000Z',
    });
    expect(reply.text).toContain('"amount":97.5,"fee":2.5,');
  });

  it('merchantFeeRate: 0 gives amount 100 (no .0), customer values may be null', async () => {
    const { mock, call } = earlier({ merchantFeeRate: 0 });
    const { customer_email: _e, ...body } = initiate({ customer_name: '', description: 'x' });
    await call('POST', '/api/v1/initiate-payment', body);
    await mock.completeCheckout(newest(mock), 'success');
    const reply = await call('GET', `/api/v1/verify-payment/${newest(mock)}`);
    expect(reply.text).toContain('"amount":100,"fee":0,"currency":"USD","net_amount":100,"customer":{"name":null,"email":null}');
  });

  it('ids match case-insensitively; unknown, another merchant or the other environment: 404 Transaction not found.', async () => {
    const { mock, call, creds } = earlier();
    await call('POST', '/api/v1/initiate-payment', initiate());
    const trx = newest(mock);
    expect((await call('GET', `/api/v1/verify-payment/${trx.toLowerCase()}`)).body).toMatchObject({ trx_id: trx, status: 'pending' });
    const notFound = '{"error":"Transaction not found."}';
    expect((await call('GET', '/api/v1/verify-payment/TRXNOPE')).text).toBe(notFound);
    const prod = await call('GET', `/api/v1/verify-payment/${trx}`, undefined, { env: 'production', creds: creds.production });
    expect([prod.status, prod.text]).toEqual([404, notFound]);
    mock.state.payments.get(trx)!.merchant_id = 9999;
    expect((await call('GET', `/api/v1/verify-payment/${trx}`)).status).toBe(404);
  });

  it('sandbox payments move no balances; production ones credit the net', async () => {
    const { mock, call, creds } = earlier();
    const wallet = mock.state.merchants[0]!.currencies.USD!;
    await call('POST', '/api/v1/initiate-payment', initiate());
    await mock.completeCheckout(newest(mock), 'success');
    expect(wallet.balance).toBe(1_000);
    await call('POST', '/api/v1/initiate-payment', initiate(), { env: 'production', creds: creds.production });
    await mock.completeCheckout(newest(mock), 'success');
    expect(wallet.balance).toBe(1_097.5);
  });
});

describe('earlier generation: site-info', () => {
  it('the spec fields plus security_message and branding; api_version "1.0"', async () => {
    const { call } = earlier();
    const reply = await call('GET', '/api/v1/site-info');
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      site_name: expect.any(String),
      site_logo: expect.stringMatching(/^https:\/\//),
      features: expect.any(Object),
      environments: { production: expect.any(String), sandbox: expect.any(String) },
      api_version: '1.0',
      status: 'operational',
      security_message: expect.any(String),
      branding: expect.any(Object),
    });
    expect(reply.text).toContain('"site_logo":"https:\\/\\/');
  });
});
