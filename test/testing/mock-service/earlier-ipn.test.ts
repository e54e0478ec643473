// The earlier generation's IPN (spec/deployed-generation.md), checked with our own node:crypto
// HMAC (not the SDK's verifier): headers, body bytes, signature keyed with the API secret,
// retries only on a timeout, the hosted checkout that sends it before the redirect (over a
// real socket), the web console, and what re-serialising the body does to the signature.
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createMockService } from '../../../src/testing.js';
import { BASE, setup, T0 } from '../../support/mock-service.js';

const earlier = (options: Parameters<typeof setup>[0] = {}) => setup({ generation: 'earlier', ...options });
const hmac = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('hex');

const initiate = (extra: Record<string, unknown> = {}) => ({
  ref_trx: 'order-1001',
  description: 'Coffee beans, 1 kg',
  ipn_url: 'https://shop.example.com/ipn',
  cancel_redirect: 'https://shop.example.com/cart',
  success_redirect: 'https://shop.example.com/thanks',
  customer_name: 'Asha Mwinyi',
  customer_email: 'asha@example.com',
  currency_code: 'USD',
  payment_amount: '25.50',
  ...extra,
});

async function paid(
  options: Parameters<typeof setup>[0] = {},
  extra: Record<string, unknown> = {},
  outcome: 'success' | 'failed' = 'success',
) {
  const s = earlier(options);
  await s.call('POST', '/api/v1/initiate-payment', initiate(extra));
  const trx = [...s.mock.state.payments.keys()].at(-1)!;
  await s.mock.completeCheckout(trx, outcome);
  await s.mock.runDue();
  return { ...s, trx };
}

describe('earlier generation: the IPN', () => {
  it('one POST to ipn_url: X-Signature (hex HMAC of the body, API secret), X-Environment, JSON, GuzzleHttp/7; nothing else', async () => {
    const { received, creds, trx, mock } = await paid();
    expect(received).toHaveLength(1);
    const { url, headers, body } = received[0]!;
    expect(url).toBe('https://shop.example.com/ipn');
    expect(Object.keys(headers).sort()).toEqual(['content-type', 'user-agent', 'x-environment', 'x-signature']);
    expect(headers).toEqual({
      'content-type': 'application/json',
      'user-agent': 'GuzzleHttp/7',
      'x-environment': 'sandbox',
      'x-signature': hmac(creds.sandbox.apiSecret, body),
    });
    expect(headers['x-signature']).toMatch(/^[0-9a-f]{64}$/);
    // The "webhook secret" the kit hands out is the secret that signs the IPN.
    expect(creds.sandbox.webhookSecret).toBe(creds.sandbox.apiSecret);
    expect(creds.webhookSecret).toBe(creds.sandbox.apiSecret);
    expect(mock.state.events).toMatchObject([{ generation: 'earlier', status: 'delivered', attempts: 1, body, url }]);
    expect(mock.state.deliveries).toMatchObject([{ attempt: 1, status: 200, url }]);
    expect(trx).toMatch(/^TRX/);
  });

  it('body: compact, URLs and Unicode unescaped, info fields without merchant_id, trx_id last, the gross as sent', async () => {
    const { received, trx } = await paid({}, { customer_name: 'Zoë Müller' });
    const ts = Math.floor(T0 / 1000);
    expect(received[0]!.body).toBe(
      `{"data":{"ref_trx":"order-1001","description":"Coffee beans, 1 kg","ipn_url":"https://shop.example.com/ipn",` +
        `"cancel_redirect":"https://shop.example.com/cart","success_redirect":"https://shop.example.com/thanks",` +
        `"customer_name":"Zoë Müller","customer_email":"asha@example.com","merchant_name":"Demo Shop","amount":"25.50",` +
        `"currency_code":"USD","environment":"sandbox","is_sandbox":true,"allow_payment_methods":[],` +
        `"merchant_payment_methods_restricted":false,"merchant_payment_method_ids":[1,2],"merchant_payment_method_codes":["card","paypal"],` +
        `"trx_id":"${trx}"},"message":"Payment Completed","status":"completed","timestamp":${ts}}`,
    );
  });

  it('a cancelled checkout is Payment Failed; production IPNs are signed with the production API secret', async () => {
    const failed = await paid({}, {}, 'failed');
    expect(JSON.parse(failed.received[0]!.body)).toMatchObject({
      message: 'Payment Failed',
      status: 'failed',
      data: { trx_id: failed.trx },
    });
    const s = earlier();
    await s.call('POST', '/api/v1/initiate-payment', initiate(), { env: 'production', creds: s.creds.production });
    await s.mock.completeCheckout([...s.mock.state.payments.keys()].at(-1)!, 'success');
    await s.mock.runDue();
    const delivery = s.received[0]!;
    expect(delivery.headers['x-environment']).toBe('production');
    expect(delivery.headers['x-signature']).toBe(hmac(s.creds.production.apiSecret, delivery.body));
    expect(s.creds.production.webhookSecret).toBe(s.creds.production.apiSecret);
  });

  it('a re-serialised body no longer verifies when it carries U+2028 / U+2029 (PHP escapes them, JS does not)', async () => {
    const { received, creds } = await paid({}, { description: 'Line\u2028one\u2029two' });
    const { body, headers } = received[0]!;
    expect(body).toContain('"description":"Line\\u2028one\\u2029two"');
    const reserialised = JSON.stringify(JSON.parse(body));
    expect(reserialised).not.toBe(body);
    expect(hmac(creds.sandbox.apiSecret, body)).toBe(headers['x-signature']);
    expect(hmac(creds.sandbox.apiSecret, reserialised)).not.toBe(headers['x-signature']);
  });

  it('an ordinary body (plain text, URLs, amounts) re-serialises to the same bytes: documented, not hidden', async () => {
    const { received } = await paid();
    expect(JSON.stringify(JSON.parse(received[0]!.body))).toBe(received[0]!.body);
  });

  it('retried only on a timeout: 3 tries 1 s apart (× timeScale), then abandoned', async () => {
    const timeout = () => Promise.reject(Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' }));
    const s = earlier({ fetch: timeout as typeof fetch });
    await s.call('POST', '/api/v1/initiate-payment', initiate());
    await s.mock.completeCheckout([...s.mock.state.payments.keys()].at(-1)!, 'success');
    await s.mock.runDue();
    for (let i = 0; i < 3; i++) {
      s.clock.advance(1_000);
      await s.mock.runDue();
    }
    expect(s.mock.state.deliveries.map((d) => [d.attempt, d.at - T0, d.status, d.error])).toEqual([
      [1, 0, null, 'timeout'],
      [2, 1_000, null, 'timeout'],
      [3, 2_000, null, 'timeout'],
    ]);
    expect(s.mock.state.events[0]).toMatchObject({ status: 'abandoned', attempts: 3, nextAttemptAt: null });
  });

  it.each([500, 404, 302, 'network-error'] as const)('%s: never retried, nothing re-sends it later', async (answer) => {
    const s = earlier();
    s.answers.push(answer);
    await s.call('POST', '/api/v1/initiate-payment', initiate());
    await s.mock.completeCheckout([...s.mock.state.payments.keys()].at(-1)!, 'success');
    await s.mock.runDue();
    s.clock.advance(24 * 3_600_000);
    await s.mock.runDue();
    expect(s.received).toHaveLength(1);
    expect(s.mock.state.events[0]).toMatchObject({ status: 'abandoned', attempts: 1 });
  });
});

describe('earlier generation: hosted checkout over a real socket', () => {
  async function receiver() {
    const got: Array<{ headers: IncomingMessage['headers']; body: string; at: number }> = [];
    const server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      res.writeHead(200).end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ipn?shop=1`;
    return { got, url, close: () => new Promise((resolve) => server.close(resolve)) };
  }

  it('picking a gateway completes it: the IPN first, then a redirect to success_redirect as given; cancel fails it', async () => {
    const hook = await receiver();
    const mock = createMockService({ generation: 'earlier' });
    const server = await mock.listen({ port: 0 });
    try {
      const { apiSecret } = mock.credentials.sandbox;
      const create = async (ref: string) => {
        const body = JSON.stringify(
          initiate({ ref_trx: ref, ipn_url: hook.url, success_redirect: 'https://shop.example.com/thanks?order=1' }),
        );
        const ts = Math.floor(Date.now() / 1000);
        const signature = createHmac('sha256', apiSecret).update(`${ts}.POST./api/v1/initiate-payment.${body}`).digest('hex');
        const headers = {
          'Content-Type': 'application/json',
          Accept: 'application/json',
          'X-Environment': 'sandbox',
          'X-Merchant-Key': mock.credentials.sandbox.merchantKey,
          'X-API-Key': mock.credentials.sandbox.apiKey,
          'X-Timestamp': String(ts),
          'X-Signature': signature,
        };
        const answer = await fetch(`${server.url}/api/v1/initiate-payment`, { method: 'POST', headers, body });
        return ((await answer.json()) as { payment_url: string }).payment_url;
      };
      const link = await create('sock-1');
      expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/payment\/checkout\?expires=\d+&token=[^&]+&signature=[0-9a-f]{64}$/);
      const page = await (await fetch(link)).text();
      expect(page).toContain('name="gateway"');
      expect(page).not.toContain('/decline');
      const pay = new URL(link);
      pay.pathname += '/pay';
      const done = await fetch(pay, { method: 'POST', body: new URLSearchParams({ gateway: 'paypal' }), redirect: 'manual' });
      expect([done.status, done.headers.get('location')]).toEqual([303, 'https://shop.example.com/thanks?order=1']);
      expect(hook.got).toHaveLength(1); // sent before the redirect
      expect(hook.got[0]!.headers['x-signature']).toBe(hmac(apiSecret, hook.got[0]!.body));
      const ipn = JSON.parse(hook.got[0]!.body) as { data: { trx_id: string } };
      expect(ipn).toMatchObject({ status: 'completed', data: { ref_trx: 'sock-1', ipn_url: hook.url } });
      // The IPN is where the merchant learns the trx_id: the link did not carry it.
      expect(mock.state.payments.get(ipn.data.trx_id)).toMatchObject({ merchant_ref: 'sock-1', status: 'success' });
      expect(decodeURIComponent(link).toUpperCase()).not.toContain(ipn.data.trx_id.toUpperCase());
      const cancel = new URL(await create('sock-2'));
      cancel.pathname += '/cancel';
      const back = await fetch(cancel, { method: 'POST', redirect: 'manual' });
      expect([back.status, back.headers.get('location')]).toEqual([303, 'https://shop.example.com/cart']);
      expect(JSON.parse(hook.got[1]!.body)).toMatchObject({ status: 'failed', message: 'Payment Failed' });
    } finally {
      await mock.close();
      await hook.close();
    }
  });
});

describe('earlier generation: the web console', () => {
  const HTML = { Accept: 'text/html' };
  const page = async (mock: ReturnType<typeof setup>['mock'], path: string) =>
    (await mock.handle(new Request(BASE + path, { headers: HTML }))).text();
  const post = (mock: ReturnType<typeof setup>['mock'], path: string, form: Record<string, string>) =>
    mock.handle(
      new Request(BASE + path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form),
      }),
    );

  it('shows the payments and IPN deliveries; resend and a test IPN signed with the API secret', async () => {
    const { mock, trx, received, creds } = await paid();
    const home = await page(mock, '/');
    expect(home).toContain(trx);
    expect(home).toContain('earlier generation');
    expect(home).not.toContain('openapi.json');
    const event = mock.state.events[0]!;
    const eventPage = await page(mock, `/console/events/${event.id}`);
    expect(eventPage).toContain('sandbox API secret');
    expect(eventPage).toContain('Payment Completed');
    const token = /name="token" value="([0-9a-f]+)"/.exec(home)![1]!;
    expect((await post(mock, `/console/events/${event.id}/resend`, { token })).status).toBe(303);
    expect(received).toHaveLength(2);
    expect(received[1]!.body).toBe(received[0]!.body);
    expect(mock.state.deliveries[1]).toMatchObject({ manual: true, status: 200 });
    const test = await post(mock, '/console/events/test', { token, type: 'payment.failed', url: 'http://127.0.0.1:3000/ipn' });
    expect(test.status).toBe(303);
    await mock.runDue();
    const sent = received.at(-1)!;
    expect(sent.url).toBe('http://127.0.0.1:3000/ipn');
    expect(sent.headers['x-signature']).toBe(hmac(creds.sandbox.apiSecret, sent.body));
    expect(JSON.parse(sent.body)).toMatchObject({ message: 'Payment Failed', status: 'failed', data: { trx_id: trx } });
  });

  it('settling a pending payment from the console sends its IPN', async () => {
    const s = earlier();
    await s.call('POST', '/api/v1/initiate-payment', initiate());
    const trx = [...s.mock.state.payments.keys()].at(-1)!;
    const token = /name="token" value="([0-9a-f]+)"/.exec(await page(s.mock, '/'))![1]!;
    expect((await post(s.mock, `/console/payments/${trx}/settle`, { token, outcome: 'success' })).status).toBe(303);
    await s.mock.runDue();
    expect(JSON.parse(s.received[0]!.body)).toMatchObject({ status: 'completed', data: { trx_id: trx } });
  });
});
