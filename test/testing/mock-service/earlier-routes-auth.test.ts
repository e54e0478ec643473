// The sandbox playing the earlier generation (spec/deployed-generation.md): its three routes,
// the framework's 404 and 405 for everything else (before authentication), and its
// authentication order and bodies. Signatures are made here with node:crypto.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EARLIER_CREDENTIALS } from '../../../src/testing/mock-service/defaults.js';
import { EARLIER_API_ROUTES } from '../../../src/testing/mock-service/earlier-routes.js';
import { API_ROUTES } from '../../../src/testing/mock-service/routes.js';
import { BASE, setup, T0 } from '../../support/mock-service.js';

const earlier = (options: Parameters<typeof setup>[0] = {}) => setup({ generation: 'earlier', ...options });
const THREE = ['POST /api/v1/initiate-payment', 'GET /api/v1/verify-payment/{trxId}', 'GET /api/v1/site-info'];
const unauthorized = (message: string) => ({ error: 'Unauthorized', message });

async function bare(mock: ReturnType<typeof setup>['mock'], method: string, path: string, headers: Record<string, string> = {}) {
  const response = await mock.handle(new Request(BASE + path, { method, headers, body: method === 'POST' ? '{}' : undefined }));
  return { status: response.status, headers: response.headers, text: await response.text() };
}

describe('earlier generation: routes', () => {
  it('has exactly three merchant routes', () => {
    expect(EARLIER_API_ROUTES.map((r) => `${[r.method].flat()[0]} ${r.path}`)).toEqual(THREE);
  });

  it('answers every other route of the spec with the framework 404, before authentication', async () => {
    const { mock } = earlier({ debug: false });
    const others = API_ROUTES.filter((r) => !THREE.includes(`${r.method} ${r.path}`));
    expect(others.length).toBe(13);
    for (const route of others) {
      const path = route.path.replace(/\{\w+\}/, 'TRX1');
      const reply = await bare(mock, route.method, path, { Accept: 'application/json' });
      expect([route.path, reply.status]).toEqual([route.path, 404]);
      expect(reply.headers.get('content-type')).toBe('application/json');
      expect(reply.text).toBe(`{\n    "message": "The route ${path.slice(1)} could not be found."\n}`);
    }
    expect(mock.state.payments.size).toBe(0);
  });

  it('in debug mode (the default) the 404 carries exception, file, line and a short trace; slashes unescaped', async () => {
    const { mock } = earlier();
    const reply = await bare(mock, 'GET', '/api/v1/payments?limit=5', { Accept: 'application/json' });
    expect(reply.status).toBe(404);
    const body = JSON.parse(reply.text);
    expect(Object.keys(body)).toEqual(['message', 'exception', 'file', 'line', 'trace']);
    expect(body).toMatchObject({
      message: 'The route api/v1/payments could not be found.',
      exception: 'Symfony\\Component\\HttpKernel\\Exception\\NotFoundHttpException',
      file: expect.stringMatching(/^\/var\/www\/.*\.php$/),
      line: expect.any(Number),
    });
    expect(body.trace.length).toBeGreaterThan(0);
    expect(body.trace.length).toBeLessThanOrEqual(5);
    expect(reply.text).toContain('"exception": "Symfony\\\\Component\\\\HttpKernel\\\\Exception\\\\NotFoundHttpException"');
    expect(reply.text).toContain('"file": "/var/www/');
  });

  it('answers an HTML 404 page when Accept does not ask for JSON (the message only in debug)', async () => {
    for (const debug of [true, false]) {
      const { mock } = earlier({ debug });
      for (const accept of ['text/html', '*/*', 'text/html, application/json;q=0.9']) {
        const reply = await bare(mock, 'POST', '/api/v1/payments', { Accept: accept });
        expect(reply.status).toBe(404);
        expect(reply.headers.get('content-type')).toMatch(/^text\/html/);
        expect(reply.text).toContain('Not Found');
        expect(reply.text.includes('The route api/v1/payments could not be found.')).toBe(debug);
      }
    }
    const { mock } = earlier();
    expect((await bare(mock, 'GET', '/api/v1/balance', { Accept: 'application/vnd.api+json' })).text).toMatch(/^\{\n {4}"message"/);
  });

  it('a wrong method on an existing route is a 405 with Allow', async () => {
    const { mock } = earlier({ debug: false });
    const get = await bare(mock, 'GET', '/api/v1/initiate-payment', { Accept: 'application/json' });
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
    expect(JSON.parse(get.text)).toEqual({
      message: 'The GET method is not supported for route api/v1/initiate-payment. Supported methods: POST.',
    });
    const post = await bare(mock, 'POST', '/api/v1/site-info', { Accept: 'application/json' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    const html = await bare(mock, 'POST', '/api/v1/verify-payment/TRX1', { Accept: 'text/html' });
    expect([html.status, html.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    expect(html.text).toContain('Method Not Allowed');
  });

  it('serves no openapi.json, and its JSON index says so', async () => {
    const { mock } = earlier();
    const index = JSON.parse((await bare(mock, 'GET', '/', { Accept: 'application/json' })).text);
    expect(index).not.toHaveProperty('openapi');
    expect((await bare(mock, 'GET', '/api/v1/openapi.json', { Accept: 'application/json' })).status).toBe(404);
  });
});

describe('earlier generation: authentication', () => {
  it('a missing X-Environment is production; another value is 400 with the valid list', async () => {
    const { call, creds } = earlier();
    const prod = await call('GET', '/api/v1/site-info', undefined, { creds: creds.production, headers: { 'X-Environment': null } });
    expect(prod.status).toBe(200);
    const sandboxKeys = await call('GET', '/api/v1/site-info', undefined, { headers: { 'X-Environment': null } });
    expect([sandboxKeys.status, sandboxKeys.body]).toEqual([401, unauthorized('Invalid API credentials for the specified environment')]);
    const bad = await call('GET', '/api/v1/site-info', undefined, { headers: { 'X-Environment': 'Sandbox' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'Invalid environment', message: expect.any(String), valid_environments: ['sandbox', 'production'] });
  });

  it('credentials: sandbox keys start test_, production keys carry no prefix; X-Business-Key is not read', async () => {
    const { call, creds } = earlier();
    expect(creds.sandbox.merchantKey).toMatch(/^test_merchant_/);
    expect(creds.sandbox.apiKey).toMatch(/^test_/);
    expect(creds.sandbox.apiSecret).toMatch(/^test_secret_/);
    for (const value of Object.values(creds.production)) expect(value).not.toMatch(/^(test|live)_/);
    expect(creds.production).toMatchObject(EARLIER_CREDENTIALS.production);
    const alias = await call('GET', '/api/v1/site-info', undefined, {
      headers: { 'X-Merchant-Key': null, 'X-Business-Key': creds.sandbox.merchantKey },
    });
    expect([alias.status, alias.body]).toEqual([401, unauthorized('Invalid API credentials for the specified environment')]);
    const other = await call('GET', '/api/v1/site-info', undefined, { env: 'production', creds: creds.sandbox });
    expect(other.body).toEqual(unauthorized('Invalid API credentials for the specified environment'));
  });

  it('disabled or rejected: 403 Merchant Unavailable in both environments, before the signature', async () => {
    for (const status of ['disabled', 'rejected'] as const) {
      const { mock, call, creds } = earlier();
      mock.state.merchants[0]!.status = status;
      for (const env of ['sandbox', 'production'] as const) {
        const reply = await call('GET', '/api/v1/site-info', undefined, { env, creds: creds[env], signWith: 'wrong' });
        expect([reply.status, reply.body]).toEqual([
          403,
          { error: 'Merchant Unavailable', message: 'This merchant is currently disabled or rejected.' },
        ]);
      }
    }
  });

  it('a pending merchant: 403 Merchant Pending Approval in production, served in sandbox', async () => {
    const { mock, call, creds } = earlier();
    mock.state.merchants[0]!.status = 'pending';
    const prod = await call('GET', '/api/v1/site-info', undefined, { env: 'production', creds: creds.production });
    expect([prod.status, prod.body]).toEqual([403, { error: 'Merchant Pending Approval', message: expect.any(String) }]);
    expect((await call('GET', '/api/v1/site-info')).status).toBe(200);
  });

  it('rate limit: per merchant and IP, both environments, counted before the signature, a fixed 60 s window', async () => {
    const { call, clock, creds } = earlier({ rateLimitPerMinute: 3 });
    expect((await call('GET', '/api/v1/site-info', undefined, { signWith: 'wrong' })).status).toBe(401);
    expect((await call('GET', '/api/v1/site-info', undefined, { env: 'production', creds: creds.production })).status).toBe(200);
    clock.advance(45_000);
    const third = await call('GET', '/api/v1/site-info');
    expect(third.status).toBe(200);
    expect([...third.headers.keys()].filter((name) => name.startsWith('x-ratelimit'))).toEqual([]);
    const refused = await call('GET', '/api/v1/site-info');
    expect([refused.status, refused.headers.get('retry-after')]).toEqual([429, '15']);
    expect(refused.body).toEqual({ error: 'Too Many Requests', message: expect.any(String), retry_after: 15 });
    clock.advance(15_000); // the window opened at the first request has ended
    expect((await call('GET', '/api/v1/site-info')).status).toBe(200);
  });

  it('signature: the five 401 messages', async () => {
    const { mock, call } = earlier();
    const missing = await call('GET', '/api/v1/site-info', undefined, { headers: { 'X-Signature': null } });
    expect(missing.body).toEqual(unauthorized('Missing API request signature headers.'));
    const now = Math.floor(T0 / 1000);
    for (const timestamp of [now - 301, now + 301]) {
      const stale = await call('GET', '/api/v1/site-info', undefined, { timestamp });
      expect(stale.body).toEqual(unauthorized('API request timestamp is invalid or expired.'));
    }
    expect((await call('GET', '/api/v1/site-info', undefined, { timestamp: now - 300 })).status).toBe(200);
    const wrong = await call('GET', '/api/v1/site-info', undefined, { signWith: 'nope' });
    expect(wrong.body).toEqual(unauthorized('Invalid API request signature.'));
    mock.state.merchants[0]!.credentials.sandbox.apiSecret = '';
    const none = await call('GET', '/api/v1/site-info');
    expect(none.body).toEqual(unauthorized('API signing secret is not configured for this merchant.'));
  });

  it('signature: sha256= optional, hex lower case only, over the request target exactly as sent', async () => {
    const { call, creds } = earlier();
    const ts = Math.floor(T0 / 1000);
    const hex = (target: string) => createHmac('sha256', creds.sandbox.apiSecret).update(`${ts}.GET.${target}.`).digest('hex');
    const bare = await call('GET', '/api/v1/site-info', undefined, { headers: { 'X-Signature': hex('/api/v1/site-info') } });
    expect(bare.status).toBe(200);
    const upper = await call('GET', '/api/v1/site-info', undefined, { headers: { 'X-Signature': hex('/api/v1/site-info').toUpperCase() } });
    expect(upper.body).toEqual(unauthorized('Invalid API request signature.'));
    const query = await call('GET', '/api/v1/site-info?b=2&a=1', undefined, {
      headers: { 'X-Signature': hex('/api/v1/site-info?b=2&a=1') },
    });
    expect(query.status).toBe(200);
    const sorted = await call('GET', '/api/v1/site-info?b=2&a=1', undefined, {
      headers: { 'X-Signature': hex('/api/v1/site-info?a=1&b=2') },
    });
    expect(sorted.status).toBe(401);
  });

  it('requireSignatures: false needs no signature headers (keys still checked)', async () => {
    const { call } = earlier({ requireSignatures: false });
    expect((await call('GET', '/api/v1/site-info', undefined, { headers: { 'X-Signature': null, 'X-Timestamp': null } })).status).toBe(200);
  });
});
