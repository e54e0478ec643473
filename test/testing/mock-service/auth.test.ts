// The mock's authentication, availability, rate limit and routing, checked against the
// spec's Authentication, Errors and Limits tables with a signer of our own.
import { describe, expect, it } from 'vitest';
import { createMockService, DEFAULT_CREDENTIALS } from '../../../src/testing.js';
import { BASE, hostedBody, setup, sign, T0 } from '../../support/mock-service.js';

describe('mock service: authentication', () => {
  it('accepts a correctly signed GET (payload ends with a dot) and POST', async () => {
    const { call } = setup();
    expect((await call('GET', '/api/v1/balance')).status).toBe(200);
    expect((await call('POST', '/api/v1/payments', hostedBody())).status).toBe(200);
  });

  it('signs the path with its query exactly as sent', async () => {
    const { call } = setup();
    const ok = await call('GET', '/api/v1/payments?limit=5&offset=0');
    expect(ok.status).toBe(200);
    // Signed without the query: refused.
    const ts = Math.floor(T0 / 1000);
    const bad = await call('GET', '/api/v1/payments?limit=5', undefined, {
      headers: { 'X-Signature': sign(DEFAULT_CREDENTIALS.sandbox.apiSecret, ts, 'GET', '/api/v1/payments', '') },
    });
    expect(bad.status).toBe(401);
  });

  it('refuses a bad signature with 401 Invalid API credentials naming the check', async () => {
    const { call } = setup();
    const reply = await call('GET', '/api/v1/balance', undefined, { signWith: 'not-the-secret' });
    expect(reply.status).toBe(401);
    expect(reply.body.error).toBe('Invalid API credentials');
    expect(reply.body.message).toMatch(/bad signature/i);
    expect(reply.text).not.toContain(DEFAULT_CREDENTIALS.sandbox.apiSecret);
    expect(reply.body).not.toHaveProperty('error_code');
  });

  it('refuses a body that differs from the signed one', async () => {
    const { call, creds } = setup();
    const ts = Math.floor(T0 / 1000);
    const signed = JSON.stringify(hostedBody());
    const reply = await call('POST', '/api/v1/payments', undefined, {
      rawBody: JSON.stringify(hostedBody({ payment_amount: 26 })),
      headers: { 'X-Signature': sign(creds.sandbox.apiSecret, ts, 'POST', '/api/v1/payments', signed) },
    });
    expect(reply.status).toBe(401);
    expect(reply.body.message).toMatch(/bad signature/i);
  });

  it('accepts a timestamp 300 s off either way and refuses 301 s (stale timestamp)', async () => {
    const { call } = setup();
    const now = Math.floor(T0 / 1000);
    for (const ts of [now - 300, now + 300]) expect((await call('GET', '/api/v1/balance', undefined, { timestamp: ts })).status).toBe(200);
    for (const ts of [now - 301, now + 301]) {
      const reply = await call('GET', '/api/v1/balance', undefined, { timestamp: ts });
      expect(reply.status).toBe(401);
      expect(reply.body).toMatchObject({ error: 'Invalid API credentials' });
      expect(reply.body.message).toMatch(/stale timestamp/i);
    }
  });

  it('honours toleranceSeconds', async () => {
    const { call } = setup({ toleranceSeconds: 10 });
    const now = Math.floor(T0 / 1000);
    expect((await call('GET', '/api/v1/balance', undefined, { timestamp: now - 10 })).status).toBe(200);
    expect((await call('GET', '/api/v1/balance', undefined, { timestamp: now - 11 })).status).toBe(401);
  });

  it('refuses missing or malformed timestamp and signature headers', async () => {
    const { call } = setup();
    for (const headers of <Array<Record<string, string | null>>>[
      { 'X-Timestamp': null },
      { 'X-Timestamp': '1.7e9' },
      { 'X-Signature': null },
      { 'X-Signature': 'deadbeef' },
      { 'X-API-Key': null },
      { 'X-Merchant-Key': null },
    ]) {
      const reply = await call('GET', '/api/v1/balance', undefined, { headers });
      expect(reply.status, JSON.stringify(headers)).toBe(401);
      expect(reply.body.error).toBe('Invalid API credentials');
    }
  });

  it('refuses sandbox keys sent as production and production keys sent as sandbox (unknown key)', async () => {
    const { call, creds } = setup();
    const a = await call('GET', '/api/v1/balance', undefined, { env: 'production', creds: creds.sandbox });
    expect(a.status).toBe(401);
    expect(a.body.message).toMatch(/unknown merchant key for the production environment/i);
    const b = await call('GET', '/api/v1/balance', undefined, { env: 'sandbox', creds: creds.production });
    expect(b.status).toBe(401);
    expect(b.body.message).toMatch(/other environment/i);
    // The production set on production works.
    expect((await call('GET', '/api/v1/balance', undefined, { env: 'production', creds: creds.production })).status).toBe(200);
  });

  it('refuses a wrong API key and an unknown X-Environment', async () => {
    const { call, creds } = setup();
    const wrongKey = await call('GET', '/api/v1/balance', undefined, { creds: { ...creds.sandbox, apiKey: 'test_other' } });
    expect(wrongKey.status).toBe(401);
    expect(wrongKey.body.message).toMatch(/unknown api key/i);
    const env = await call('GET', '/api/v1/balance', undefined, { headers: { 'X-Environment': 'live' } });
    expect(env.status).toBe(401);
  });

  it('accepts X-Business-Key as an alias of X-Merchant-Key', async () => {
    const { call, creds } = setup();
    const reply = await call('GET', '/api/v1/balance', undefined, {
      headers: { 'X-Merchant-Key': null, 'X-Business-Key': creds.sandbox.merchantKey },
    });
    expect(reply.status).toBe(200);
    const conflicting = await call('GET', '/api/v1/balance', undefined, { headers: { 'X-Business-Key': 'test_someone_else' } });
    expect(conflicting.status).toBe(401);
  });

  it('with requireSignatures false, keys are still checked but no signature is needed', async () => {
    const { call } = setup({ requireSignatures: false });
    expect((await call('GET', '/api/v1/balance', undefined, { headers: { 'X-Signature': null, 'X-Timestamp': null } })).status).toBe(200);
    expect((await call('GET', '/api/v1/balance', undefined, { headers: { 'X-API-Key': 'nope' } })).status).toBe(401);
  });
});

describe('mock service: merchant availability', () => {
  it('gives a pending merchant 403 Merchant Pending Approval in production, but serves it in sandbox', async () => {
    const { mock, call, creds } = setup();
    mock.state.merchants[0]!.status = 'pending';
    const prod = await call('POST', '/api/v1/payments', hostedBody(), { env: 'production', creds: creds.production });
    expect(prod.status).toBe(403);
    expect(prod.body).toEqual({ error: 'Merchant Pending Approval', message: expect.any(String) });
    expect((await call('POST', '/api/v1/payments', hostedBody())).status).toBe(200);
  });

  it('blocks rejected and disabled merchants in both environments', async () => {
    const { mock, call, creds } = setup();
    for (const status of ['rejected', 'disabled'] as const) {
      mock.state.merchants[0]!.status = status;
      expect((await call('GET', '/api/v1/balance')).status).toBe(403);
      expect((await call('GET', '/api/v1/balance', undefined, { env: 'production', creds: creds.production })).status).toBe(403);
    }
  });

  it('checks credentials before availability (a wrong key is 401 even for a pending merchant)', async () => {
    const { mock, call, creds } = setup();
    mock.state.merchants[0]!.status = 'pending';
    const reply = await call('GET', '/api/v1/balance', undefined, { env: 'production', creds: creds.production, signWith: 'x' });
    expect(reply.status).toBe(401);
  });
});

describe('mock service: rate limit', () => {
  it('answers 429 Too Many Requests with Retry-After past rateLimitPerMinute, per merchant and IP', async () => {
    const { mock, call, clock } = setup({ rateLimitPerMinute: 3 });
    for (let i = 0; i < 3; i++) {
      const ok = await call('GET', '/api/v1/balance');
      expect(ok.status).toBe(200);
      expect(ok.headers.get('x-ratelimit-remaining')).toBe(String(2 - i));
      clock.advance(10_000);
    }
    const limited = await call('GET', '/api/v1/balance');
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('Too Many Requests');
    // The first request (at T0) leaves the window at T0 + 60 s; now is T0 + 30 s.
    expect(limited.headers.get('retry-after')).toBe('30');
    // Another IP (listen mode) has its own window.
    const viaOtherIp = await (mock as unknown as { handleWith: (r: Request, v: object) => Promise<Response> }).handleWith(
      signedGet(mock.credentials.sandbox, clock.now(), '/api/v1/balance'),
      { clientIp: '10.0.0.9' },
    );
    expect(viaOtherIp.status).toBe(200);
    clock.advance(30_000);
    expect((await call('GET', '/api/v1/balance')).status).toBe(200);
  });

  it('defaults to 120 per minute', async () => {
    const { call } = setup();
    for (let i = 0; i < 120; i++) expect((await call('GET', '/api/v1/site-info')).status).toBe(200);
    expect((await call('GET', '/api/v1/site-info')).status).toBe(429);
  });
});

function signedGet(creds: { merchantKey: string; apiKey: string; apiSecret: string }, nowMs: number, path: string): Request {
  const ts = Math.floor(nowMs / 1000);
  return new Request(BASE + path, {
    headers: {
      'X-Environment': 'sandbox',
      'X-Merchant-Key': creds.merchantKey,
      'X-API-Key': creds.apiKey,
      'X-Timestamp': String(ts),
      'X-Signature': sign(creds.apiSecret, ts, 'GET', path, ''),
    },
  });
}

describe('mock service: routing and request bodies', () => {
  it('answers 404 with the error body shape for unknown routes, without needing credentials', async () => {
    const mock = createMockService({ autoRun: false });
    const reply = await mock.handle(new Request(`${BASE}/api/v1/nope`));
    expect(reply.status).toBe(404);
    expect(await reply.json()).toEqual({ error: 'Not Found', message: expect.any(String) });
    expect((await mock.handle(new Request(`${BASE}/elsewhere`))).status).toBe(404);
  });

  it('answers 405 with Allow for a known path and the wrong method', async () => {
    const { call } = setup();
    const reply = await call('DELETE', '/api/v1/payments');
    expect(reply.status).toBe(405);
    expect(reply.headers.get('allow')).toBe('POST, GET');
    expect(reply.body.error).toBe('Method Not Allowed');
    expect((await call('GET', '/api/v1/payouts/preview')).status).toBe(404); // GET /payouts/{id}: not a UUID
  });

  it('refuses a body that is not JSON (400) and a non-JSON Content-Type', async () => {
    const { call } = setup();
    const broken = await call('POST', '/api/v1/payments', undefined, { rawBody: '{"payment_amount": 1,' });
    expect(broken.status).toBe(400);
    expect(broken.body.error).toBe('Bad Request');
    const array = await call('POST', '/api/v1/payments', undefined, { rawBody: '[1]' });
    expect(array.status).toBe(400);
    const form = await call('POST', '/api/v1/payments', hostedBody(), { headers: { 'Content-Type': 'text/plain' } });
    expect(form.status).toBe(400);
  });

  it('records every answered request and reports it to onRequest', async () => {
    const seen: unknown[] = [];
    const { mock, call } = setup({ onRequest: (entry) => seen.push(entry) });
    await call('GET', '/api/v1/balance?x=1');
    await call('GET', '/api/v1/nope');
    expect(mock.state.requests).toEqual([
      { method: 'GET', path: '/api/v1/balance?x=1', status: 200, at: T0, requestId: 'req_000001' },
      { method: 'GET', path: '/api/v1/nope', status: 404, at: T0, reason: 'No route for GET /api/v1/nope.', requestId: 'req_000002' },
    ]);
    expect(seen).toEqual(mock.state.requests);
  });

  it('answers every API request with an X-Request-Id of its own (exposed to browsers), the one it logs', async () => {
    const { mock, call } = setup();
    const first = await call('GET', '/api/v1/balance');
    const second = await call('GET', '/api/v1/balance');
    expect(first.headers.get('x-request-id')).toBe('req_000001');
    expect(second.headers.get('x-request-id')).toBe('req_000002');
    expect(first.headers.get('access-control-expose-headers')).toContain('X-Request-Id');
    expect(mock.state.requests.map((entry) => entry.requestId)).toEqual(['req_000001', 'req_000002']);
  });

  it('sends a Date header from its clock', async () => {
    const { call } = setup();
    const reply = await call('GET', '/api/v1/balance');
    expect(reply.headers.get('date')).toBe(new Date(T0).toUTCString());
  });

  it('serves balance and every site-info field', async () => {
    const { call } = setup();
    const balance = await call('GET', '/api/v1/balance');
    expect(balance.body).toEqual({
      status: 'success',
      environment: 'sandbox',
      data: [
        { currency: 'USD', balance: 1000 },
        { currency: 'TZS', balance: 1_000_000 },
      ],
    });
    const info = (await call('GET', '/api/v1/site-info')).body;
    for (const key of ['site_name', 'site_logo', 'site_url', 'gateway_name', 'gateway_description', 'api_version', 'status']) {
      expect(typeof info[key], key).toBe('string');
    }
    expect(Object.keys(info.features).sort()).toEqual(['global_support', 'instant_processing', 'mobile_ready', 'ssl_secured']);
    expect(Object.keys(info.environments).sort()).toEqual(['production', 'sandbox']);
    const logo = await createMockService().handle(new Request(info.site_logo));
    expect(logo.headers.get('content-type')).toBe('image/svg+xml');
  });
});
