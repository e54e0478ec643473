// Webhook delivery of the mock: payload and headers from the spec's Events section, the
// signature checked with our own node:crypto HMAC, and the retry schedule on an injected clock.
import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createMockService, DEFAULT_CREDENTIALS, TEST_PHONE_NUMBERS } from '../../../src/testing.js';
import { defaultMerchant } from '../../../src/testing/mock-service/defaults.js';
import { verifyWebhook } from '../../../src/webhooks.js';
import { hostedBody, pushBody, setup, T0, webhookSignature } from '../../support/mock-service.js';

const MIN = 60_000;

describe('mock service: webhook payload and signature', () => {
  it('sends payment.completed to ipn_url with the spec payload and signed headers', async () => {
    const { mock, call, received, creds } = setup();
    const { body } = await call('POST', '/api/v1/payments', hostedBody({ customer_phone: '255712000111' }));
    await mock.completeCheckout(body.trx_id, 'success');
    await mock.runDue();
    expect(received).toHaveLength(1);
    const delivery = received[0]!;
    expect(delivery.url).toBe('https://shop.example.com/ipn');
    const ts = String(Math.floor(T0 / 1000));
    expect(delivery.headers).toMatchObject({
      'content-type': 'application/json',
      'x-service-event': 'payment.completed',
      'x-service-timestamp': ts,
      'x-service-signature': webhookSignature(creds.webhookSecret, ts, delivery.body),
      'x-environment': 'sandbox',
    });
    expect(delivery.headers['x-service-signature']).toMatch(/^[0-9a-f]{64}$/); // no sha256= prefix
    const event = JSON.parse(delivery.body);
    expect(event).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'payment.completed',
      api_version: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      created_at: '2025-01-15T12:00:00+00:00',
      data: {
        trx_id: body.trx_id,
        merchant_ref: 'order-1001',
        status: 'completed',
        amount: { value: 25, currency: 'USD' },
        settlement: {
          gross: { value: 25, currency: 'USD' },
          fees: { value: 0.75, currency: 'USD' },
          net: { value: 24.25, currency: 'USD' },
        },
        customer: { name: 'Asha Mwangi', email: 'asha@example.com', phone: '255712000111' },
        environment: 'sandbox',
      },
    });
    expect(mock.state.events[0]).toMatchObject({ id: event.id, status: 'delivered', attempts: 1, body: delivery.body });
  });

  it('sends payment.failed with status failed, webhook_url as target, and the brand option in header names', async () => {
    const { mock, call, clock, received } = setup({ brand: 'Acme' });
    const { ipn_url: _ipn, ...bodyNoIpn } = pushBody(TEST_PHONE_NUMBERS.insufficientFunds);
    const { body } = await call('POST', '/api/v1/payments', { ...bodyNoIpn, webhook_url: 'https://shop.example.com/hook' });
    clock.advance(5_000);
    await mock.runDue();
    expect(received[0]!.url).toBe('https://shop.example.com/hook');
    expect(received[0]!.headers['x-acme-event']).toBe('payment.failed');
    expect(received[0]!.headers).toHaveProperty('x-acme-signature');
    const event = JSON.parse(received[0]!.body);
    expect(event.data).toMatchObject({
      trx_id: body.trx_id,
      status: 'failed',
      settlement: { fees: { value: 0 }, net: { value: 0 } },
      customer: { name: null, email: null },
    });
  });

  it('falls back to the merchant default webhook URL and signs with the current secret', async () => {
    const { mock, call, received } = setup();
    mock.state.merchants[0]!.defaultWebhookUrl = 'https://shop.example.com/default';
    mock.state.merchants[0]!.webhookSecret = 'whsec_rotated';
    const { ipn_url: _ipn, ...noIpn } = hostedBody();
    const { body } = await call('POST', '/api/v1/payments', noIpn);
    await mock.completeCheckout(body.trx_id, 'failed');
    await mock.runDue();
    const delivery = received[0]!;
    expect(delivery.url).toBe('https://shop.example.com/default');
    expect(delivery.headers['x-service-signature']).toBe(
      webhookSignature('whsec_rotated', delivery.headers['x-service-timestamp']!, delivery.body),
    );
  });

  it('production deliveries say X-Environment production', async () => {
    const { mock, call, received, creds } = setup();
    const { body } = await call('POST', '/api/v1/payments', hostedBody(), { env: 'production', creds: creds.production });
    await mock.completeCheckout(body.trx_id, 'success');
    await mock.runDue();
    expect(received[0]!.headers['x-environment']).toBe('production');
    expect(JSON.parse(received[0]!.body).data.environment).toBe('production');
  });
});

describe('mock service: a webhook secret per environment', () => {
  it('signs production deliveries with the production secret: they do not verify with the sandbox one', async () => {
    const { mock, call, received, creds } = setup();
    for (const env of ['sandbox', 'production'] as const) {
      const { body } = await call('POST', '/api/v1/payments', hostedBody(), { env, creds: creds[env] });
      await mock.completeCheckout(body.trx_id, 'success');
    }
    await mock.runDue();
    const [sandbox, production] = received;
    const signature = (secret: string, r: typeof sandbox) => webhookSignature(secret, r!.headers['x-service-timestamp']!, r!.body);
    expect(creds.production.webhookSecret).not.toBe(creds.sandbox.webhookSecret);
    expect(sandbox!.headers['x-service-signature']).toBe(signature(creds.sandbox.webhookSecret, sandbox));
    expect(production!.headers['x-service-signature']).toBe(signature(creds.production.webhookSecret, production));
    // The SDK's verifier agrees: the sandbox secret refuses the production delivery.
    const check = (r: typeof sandbox, secret: string) =>
      verifyWebhook({ payload: r!.body, headers: r!.headers, secret, now: () => T0 }).then(
        () => 'ok',
        (error: { reason?: string }) => error.reason,
      );
    expect(await check(production, creds.sandbox.webhookSecret)).toBe('invalid_signature');
    expect(await check(production, creds.production.webhookSecret)).toBe('ok');
    expect(await check(sandbox, creds.sandbox.webhookSecret)).toBe('ok');
  });

  it('credentials: each environment has its own secret; the top-level one is the sandbox one', () => {
    const mock = createMockService({ autoRun: false });
    expect(mock.credentials.sandbox.webhookSecret).toBe('whsec_test_1001');
    expect(mock.credentials.webhookSecret).toBe('whsec_test_1001');
    expect(DEFAULT_CREDENTIALS.sandbox.webhookSecret).toBe('whsec_test_1001');
    expect(DEFAULT_CREDENTIALS.webhookSecret).toBe(DEFAULT_CREDENTIALS.sandbox.webhookSecret);
    expect(mock.credentials.production.webhookSecret).toBe(DEFAULT_CREDENTIALS.production.webhookSecret);
    expect(mock.credentials.production.webhookSecret).not.toBe(mock.credentials.sandbox.webhookSecret);
  });

  it('a merchant given one webhookSecret (the older shape) gets a distinct production secret; either field rotates the sandbox one', () => {
    const { webhookSecret: _s, ...base } = defaultMerchant();
    const legacy = {
      ...base,
      credentials: {
        sandbox: { ...DEFAULT_CREDENTIALS.sandbox, webhookSecret: undefined },
        production: { ...DEFAULT_CREDENTIALS.production, webhookSecret: undefined },
      },
      webhookSecret: 'whsec_mine',
    };
    const mock = createMockService({ autoRun: false, merchants: [legacy] });
    expect(mock.credentials.sandbox.webhookSecret).toBe('whsec_mine');
    expect(mock.credentials.production.webhookSecret).toBe('whsec_mine_live');
    const merchant = mock.state.merchants[0]!;
    merchant.credentials.sandbox.webhookSecret = 'whsec_rotated';
    expect([merchant.webhookSecret, mock.credentials.webhookSecret]).toEqual(['whsec_rotated', 'whsec_rotated']);
    merchant.webhookSecret = 'whsec_again';
    expect(mock.credentials.sandbox.webhookSecret).toBe('whsec_again');
    expect(mock.credentials.production.webhookSecret).toBe('whsec_mine_live');
    const none = { ...legacy, webhookSecret: undefined };
    expect(() => createMockService({ merchants: [none] })).toThrow(/no webhook secret/);
  });
});

describe('mock service: webhook retry schedule', () => {
  it('retries 3, 6 and 12 min after each failure: attempts at 0, 3, 9, 21 min, then delivered', async () => {
    const { mock, call, clock, received, answers } = setup();
    answers.push(500, 503, 'network-error', 404, 200);
    const { body } = await call('POST', '/api/v1/payments', hostedBody());
    await mock.completeCheckout(body.trx_id, 'success');
    // Walk the clock minute by minute, running what is due.
    for (let minute = 0; minute <= 60; minute++) {
      await mock.runDue();
      clock.advance(MIN);
    }
    const offsets = mock.state.deliveries.map((d) => (d.at - T0) / MIN);
    expect(offsets).toEqual([0, 3, 9, 21, 45]);
    expect(mock.state.deliveries.map((d) => d.status)).toEqual([500, 503, null, 404, 200]);
    expect(mock.state.deliveries.map((d) => d.attempt)).toEqual([1, 2, 3, 4, 5]);
    expect(mock.state.events[0]!.status).toBe('delivered');
    // The same event id and body on every attempt, each signed with its own timestamp.
    const ids = new Set(received.map((r) => JSON.parse(r.body).id));
    expect(ids.size).toBe(1);
    expect(new Set(received.map((r) => r.body)).size).toBe(1);
    expect(received.map((r) => r.headers['x-service-timestamp'])).toEqual(
      [0, 3, 9, 21, 45].map((m) => String(Math.floor((T0 + m * MIN) / 1000))),
    );
    for (const r of received)
      expect(r.headers['x-service-signature']).toBe(
        webhookSignature(mock.credentials.webhookSecret, r.headers['x-service-timestamp']!, r.body),
      );
  });

  it('endpoint failing 4 times then 200: attempts at 0, 3, 9, 21 min', async () => {
    const { mock, call, clock, answers } = setup();
    answers.push(500, 500, 500, 500, 200);
    const { body } = await call('POST', '/api/v1/payments', hostedBody());
    await mock.completeCheckout(body.trx_id, 'success');
    await mock.runDue();
    for (const wait of [3, 6, 12]) {
      clock.advance(wait * MIN - 1);
      await mock.runDue();
      const before = mock.state.deliveries.length;
      clock.advance(1);
      await mock.runDue();
      expect(mock.state.deliveries.length).toBe(before + 1);
    }
    expect(mock.state.deliveries.map((d) => (d.at - T0) / MIN)).toEqual([0, 3, 9, 21]);
    expect(mock.state.events[0]!.status).toBe('pending');
  });

  it('abandons after 5 failed attempts', async () => {
    const { mock, call, clock, answers } = setup();
    answers.push(500);
    const { body } = await call('POST', '/api/v1/payments', hostedBody());
    await mock.completeCheckout(body.trx_id, 'success');
    for (let minute = 0; minute <= 24 * 60; minute++) {
      await mock.runDue();
      clock.advance(MIN);
    }
    expect(mock.state.deliveries).toHaveLength(5);
    expect(mock.state.deliveries.map((d) => (d.at - T0) / MIN)).toEqual([0, 3, 9, 21, 45]);
    expect(mock.state.events[0]).toMatchObject({ status: 'abandoned', attempts: 5 });
  });

  it('a 3xx answer is a failure (redirects are not followed)', async () => {
    const { mock, call, answers } = setup();
    answers.push(302);
    const { body } = await call('POST', '/api/v1/payments', hostedBody());
    await mock.completeCheckout(body.trx_id, 'success');
    await mock.runDue();
    expect(mock.state.events[0]!.status).toBe('pending');
  });

  it('timeScale shrinks the schedule; with autoRun real timers deliver and close() stops them', async () => {
    const timeScale = 0.0001; // 3 min → 18 ms
    const seen: number[] = [];
    let answer = 500;
    const mock = createMockService({
      timeScale,
      fetch: (async () => {
        seen.push(Date.now());
        return new Response(null, { status: answer });
      }) as typeof fetch,
    });
    const { sandbox } = mock.credentials;
    const server = await mock.listen();
    const pay = async (ref_trx: string) => {
      const res = await signedPost(server.url, sandbox, '/api/v1/payments', hostedBody({ ref_trx }));
      const { trx_id } = (await res.json()) as { trx_id: string };
      await mock.completeCheckout(trx_id, 'success'); // resolves after the first attempt
    };
    try {
      // Real timers deliver: the retries come on the shrunk schedule until a 200.
      await pay('order-1001');
      expect(seen).toHaveLength(1);
      await waitFor(() => seen.length >= 2);
      answer = 200;
      await waitFor(() => mock.state.events[0]!.status === 'delivered');
      expect(seen.length).toBeGreaterThanOrEqual(3);

      // A second payment's webhook fails twice: its third attempt is armed, due 6 min (36 ms)
      // after the second. close() now, with that attempt still to come.
      answer = 500;
      seen.length = 0;
      await pay('order-1002');
      await waitFor(() => seen.length >= 2);
    } finally {
      await mock.close();
    }
    const event = mock.state.events[1]!;
    expect(seen).toHaveLength(2);
    expect(event).toMatchObject({ status: 'pending', attempts: 2, nextAttemptAt: expect.any(Number) });
    // Past the third attempt's time, and then some: nothing was sent after close().
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, event.nextAttemptAt! - Date.now()) + 50));
    expect(seen).toHaveLength(2);
    expect(event).toMatchObject({ status: 'pending', attempts: 2 });
  });

  it('delivers to a real local endpoint over HTTP', async () => {
    const got: Array<{ headers: Record<string, unknown>; body: string }> = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        got.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const port = (receiver.address() as { port: number }).port;
    const mock = createMockService();
    try {
      const server = await mock.listen();
      const res = await signedPost(
        server.url,
        mock.credentials.sandbox,
        '/api/v1/payments',
        hostedBody({ ipn_url: `http://127.0.0.1:${port}/ipn` }),
      );
      const { trx_id } = (await res.json()) as { trx_id: string };
      await mock.completeCheckout(trx_id, 'success');
      expect(got).toHaveLength(1);
      const ts = String(got[0]!.headers['x-service-timestamp']);
      expect(got[0]!.headers['x-service-signature']).toBe(webhookSignature(mock.credentials.webhookSecret, ts, got[0]!.body));
      expect(mock.state.deliveries[0]!.status).toBe(204);
    } finally {
      await mock.close();
      await new Promise((r) => receiver.close(r));
    }
  });
});

async function waitFor(condition: () => boolean, ms = 2_000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function signedPost(base: string, creds: { merchantKey: string; apiKey: string; apiSecret: string }, path: string, body: unknown) {
  const { sign } = await import('../../support/mock-service.js');
  const raw = JSON.stringify(body);
  const ts = Math.floor(Date.now() / 1000);
  return fetch(base + path, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-Environment': 'sandbox',
      'X-Merchant-Key': creds.merchantKey,
      'X-API-Key': creds.apiKey,
      'X-Timestamp': String(ts),
      'X-Signature': sign(creds.apiSecret, ts, 'POST', path, raw),
    },
    body: raw,
  });
}
