// Construction-time configuration, env defaults, per-call options and the headers on the wire.
import { beforeEach, describe, expect, test, vi } from 'vitest';
import { ConfigurationError, InvalidParamsError, PaymentsClient, PaymentsError, type ClientOptions } from '../../src/index.js';
import { rejection } from '../support/assertions.js';
import { BASE_URL, CREDENTIALS, expectedSignature, fixtures } from '../support/fake-api.js';
import { useFakeApi } from '../support/harness.js';

// The fake server checks X-Timestamp against Date.now(), on the harness's fake timers.
const { api, setup } = useFakeApi();

const ENV_NAMES = [
  'BUSINESS_PAYMENTS_ENVIRONMENT',
  'BUSINESS_PAYMENTS_MERCHANT_KEY',
  'BUSINESS_PAYMENTS_API_KEY',
  'BUSINESS_PAYMENTS_API_SECRET',
  'BUSINESS_PAYMENTS_BASE_URL',
  'BUSINESS_PAYMENTS_LOG',
];

beforeEach(() => {
  // Whatever the machine running the tests has set must not leak in.
  for (const name of ENV_NAMES) vi.stubEnv(name, undefined);
});

const valid: ClientOptions = { environment: 'sandbox', ...CREDENTIALS, baseUrl: BASE_URL };
const production: ClientOptions = {
  environment: 'production',
  merchantKey: 'live_merchant_001',
  apiKey: 'live_key_001',
  apiSecret: 'live_secret_001',
  baseUrl: 'https://api.payments.example.com',
};

/** The ConfigurationError `new PaymentsClient(options)` must throw. */
function configError(options: ClientOptions): ConfigurationError {
  try {
    new PaymentsClient(options);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error).toBeInstanceOf(PaymentsError);
    return error as ConfigurationError;
  }
  throw new Error('expected new PaymentsClient() to throw a ConfigurationError');
}

describe('ConfigurationError at construction', () => {
  test('a complete configuration constructs', () => {
    expect(() => new PaymentsClient(valid)).not.toThrow();
    expect(() => new PaymentsClient(production)).not.toThrow();
  });

  test.each([
    ['merchantKey', 'BUSINESS_PAYMENTS_MERCHANT_KEY'],
    ['apiKey', 'BUSINESS_PAYMENTS_API_KEY'],
    ['apiSecret', 'BUSINESS_PAYMENTS_API_SECRET'],
  ] as const)('missing %s names the option and %s', (option, envName) => {
    const { [option]: _dropped, ...rest } = valid;
    const error = configError(rest);
    expect(error.message).toContain(option);
    expect(error.message).toContain(envName);
    // An empty string is as missing as undefined.
    expect(configError({ ...valid, [option]: '' }).message).toContain(envName);
  });

  test('missing baseUrl names the option and BUSINESS_PAYMENTS_BASE_URL', () => {
    const { baseUrl: _dropped, ...rest } = valid;
    const error = configError(rest);
    expect(error.message).toContain('baseUrl');
    expect(error.message).toContain('BUSINESS_PAYMENTS_BASE_URL');
  });

  test.each([
    ['not a URL', 'payments.example.com'],
    ['not a URL (spaces)', 'https://exa mple.com'],
    ['ftp:', 'ftp://payments.example.com'],
    ['a query string', 'https://payments.example.com/?tenant=1'],
    ['a fragment', 'https://payments.example.com/#x'],
    ['user info', 'https://user:pass@payments.example.com'],
  ])('bad baseUrl (%s)', (_what, baseUrl) => {
    const error = configError({ ...valid, baseUrl });
    expect(error.message).toContain('baseUrl');
  });

  test('http baseUrl in production is refused', () => {
    const error = configError({ ...production, baseUrl: 'http://api.payments.example.com' });
    expect(error.message).toContain('baseUrl');
    expect(error.message).toMatch(/https/);
  });

  test.each(['http://localhost:8080', 'http://127.0.0.1:4010', 'http://[::1]:4010'])('loopback %s is allowed in production', (baseUrl) => {
    const client = new PaymentsClient({ ...production, baseUrl });
    expect(client.baseUrl).toBe(baseUrl);
    expect(client.environment).toBe('production');
  });

  test('http baseUrl is fine in sandbox; a trailing slash is dropped', () => {
    expect(new PaymentsClient({ ...valid, baseUrl: 'http://sandbox.local/' }).baseUrl).toBe('http://sandbox.local');
    expect(new PaymentsClient({ ...valid, baseUrl: 'https://gw.example.com/pay/' }).baseUrl).toBe('https://gw.example.com/pay');
  });

  test.each(['merchantKey', 'apiKey', 'apiSecret'] as const)('a live_ %s in sandbox is refused', (option) => {
    const error = configError({ ...valid, [option]: 'live_abc' });
    expect(error.message).toContain(option);
    expect(error.message).toContain('live_');
    expect(error.message).toContain('sandbox');
  });

  test.each(['merchantKey', 'apiKey', 'apiSecret'] as const)('a test_ %s in production is refused', (option) => {
    const error = configError({ ...production, [option]: 'test_abc' });
    expect(error.message).toContain(option);
    expect(error.message).toContain('test_');
    expect(error.message).toContain('production');
  });

  test('production credentials without a prefix are accepted', () => {
    expect(() => new PaymentsClient({ ...production, merchantKey: 'm_001', apiKey: 'k_001', apiSecret: 's_001' })).not.toThrow();
  });

  test('unknown environment', () => {
    const error = configError({ ...valid, environment: 'staging' as never });
    expect(error.message).toContain('environment');
    expect(error.message).toContain('staging');
  });

  test.each([
    ['timeout', -1],
    ['timeout', 0],
    ['timeout', 1.5],
    ['timeout', Number.NaN],
    ['maxRetries', -1],
    ['maxRetries', 0.5],
    ['maxRetries', Number.POSITIVE_INFINITY],
  ] as const)('%s %s is refused', (option, value) => {
    const error = configError({ ...valid, [option]: value });
    expect(error.message).toContain(option);
  });

  test('maxRetries 0 is a valid choice', () => {
    expect(() => new PaymentsClient({ ...valid, maxRetries: 0 })).not.toThrow();
  });

  test('in a browser without dangerouslyAllowBrowser', () => {
    vi.stubGlobal('window', {});
    vi.stubGlobal('document', {});
    const error = configError(valid);
    expect(error.message).toMatch(/browser/i);
    expect(error.message).toContain('dangerouslyAllowBrowser');
  });

  test('in a browser with dangerouslyAllowBrowser: true it constructs', () => {
    vi.stubGlobal('window', {});
    vi.stubGlobal('document', {});
    expect(() => new PaymentsClient({ ...valid, dangerouslyAllowBrowser: true })).not.toThrow();
  });

  test('a worker-like global (window without document) is not a browser page', () => {
    vi.stubGlobal('window', {});
    expect(() => new PaymentsClient(valid)).not.toThrow();
  });

  test.each([
    'X-Signature',
    'x-timestamp',
    'X-API-Key',
    'X-Merchant-Key',
    'X-Business-Key',
    'X-Environment',
    'Content-Type',
    'Accept',
    'Idempotency-Key',
  ])('reserved header %s in defaultHeaders is refused', (name) => {
    const error = configError({ ...valid, defaultHeaders: { [name]: 'x' } });
    expect(error.message).toContain('defaultHeaders');
    expect(error.message).toContain(name);
  });

  test('unknown logLevel is refused', () => {
    expect(configError({ ...valid, logLevel: 'verbose' as never }).message).toContain('logLevel');
  });
});

describe('environment variable defaults', () => {
  function stubAll(values: Partial<Record<string, string>>) {
    for (const [name, value] of Object.entries(values)) vi.stubEnv(name, value);
  }

  test('new PaymentsClient() reads every BUSINESS_PAYMENTS_* variable and sends those headers', async () => {
    stubAll({
      BUSINESS_PAYMENTS_ENVIRONMENT: 'sandbox',
      BUSINESS_PAYMENTS_MERCHANT_KEY: CREDENTIALS.merchantKey,
      BUSINESS_PAYMENTS_API_KEY: CREDENTIALS.apiKey,
      BUSINESS_PAYMENTS_API_SECRET: CREDENTIALS.apiSecret,
      BUSINESS_PAYMENTS_BASE_URL: BASE_URL,
    });
    api.on('get', '/api/v1/site-info', { body: fixtures.siteInfo });

    const client = new PaymentsClient();
    expect(client.environment).toBe('sandbox');
    expect(client.baseUrl).toBe(BASE_URL);
    await client.siteInfo.retrieve();

    const [seen] = api.seen;
    expect(seen!.signatureValid).toBe(true);
    expect(seen!.headers['x-environment']).toBe('sandbox');
    expect(seen!.headers['x-merchant-key']).toBe(CREDENTIALS.merchantKey);
    expect(seen!.headers['x-api-key']).toBe(CREDENTIALS.apiKey);
  });

  test('BUSINESS_PAYMENTS_ENVIRONMENT=production is picked up', async () => {
    stubAll({
      BUSINESS_PAYMENTS_ENVIRONMENT: 'production',
      BUSINESS_PAYMENTS_MERCHANT_KEY: 'live_m',
      BUSINESS_PAYMENTS_API_KEY: 'live_k',
      BUSINESS_PAYMENTS_API_SECRET: 'live_s',
      BUSINESS_PAYMENTS_BASE_URL: 'https://api.payments.example.com',
    });
    expect(new PaymentsClient().environment).toBe('production');
  });

  test('environment defaults to sandbox when neither option nor env says', () => {
    const { environment: _dropped, ...rest } = valid;
    expect(new PaymentsClient(rest).environment).toBe('sandbox');
  });

  test('explicit options win over env', async () => {
    stubAll({
      BUSINESS_PAYMENTS_ENVIRONMENT: 'production',
      BUSINESS_PAYMENTS_MERCHANT_KEY: 'env_merchant',
      BUSINESS_PAYMENTS_API_KEY: 'env_key',
      BUSINESS_PAYMENTS_API_SECRET: 'env_secret',
      BUSINESS_PAYMENTS_BASE_URL: 'https://env.example.com',
    });
    api.on('get', '/api/v1/site-info', { body: fixtures.siteInfo });
    const { client } = setup({ ...valid });
    expect(client.environment).toBe('sandbox');
    expect(client.baseUrl).toBe(BASE_URL);
    await client.siteInfo.retrieve();
    const [seen] = api.seen;
    // Signed with the explicit secret, and the explicit key/merchant sent.
    expect(seen!.signatureValid).toBe(true);
    expect(seen!.headers['x-environment']).toBe('sandbox');
    expect(seen!.headers['x-api-key']).toBe(CREDENTIALS.apiKey);
    expect(seen!.headers['x-merchant-key']).toBe(CREDENTIALS.merchantKey);
  });

  test('credential env values are used as set: surrounding whitespace, or only whitespace, is refused naming the variable', () => {
    const { apiSecret: _dropped, ...rest } = valid;
    for (const padded of ['   ', ` ${CREDENTIALS.apiSecret}\n`]) {
      stubAll({ BUSINESS_PAYMENTS_API_SECRET: padded });
      expect(configError(rest).message).toBe(
        'BUSINESS_PAYMENTS_API_SECRET has leading or trailing whitespace (a copy-paste slip?): remove it.',
      );
    }
    // An empty variable is not set.
    stubAll({ BUSINESS_PAYMENTS_API_SECRET: '' });
    expect(configError(rest).message).toMatch(/^apiSecret is not set: .*BUSINESS_PAYMENTS_API_SECRET\.$/);
  });

  test('setting env values (environment, base URL, log level) are trimmed; a blank one counts as unset', () => {
    stubAll({
      BUSINESS_PAYMENTS_ENVIRONMENT: ' sandbox\n',
      BUSINESS_PAYMENTS_BASE_URL: ` ${BASE_URL}\n`,
      BUSINESS_PAYMENTS_LOG: 'off\n',
    });
    const { environment: _e, baseUrl: _b, ...rest } = valid;
    const client = new PaymentsClient(rest);
    expect(client.environment).toBe('sandbox');
    expect(client.baseUrl).toBe(BASE_URL);
    stubAll({ BUSINESS_PAYMENTS_BASE_URL: '  ' });
    expect(configError(rest).message).toMatch(/^baseUrl is not set: .*BUSINESS_PAYMENTS_BASE_URL/);
  });

  test('a bad env environment is a ConfigurationError naming the variable', () => {
    stubAll({ BUSINESS_PAYMENTS_ENVIRONMENT: 'live' });
    const { environment: _dropped, ...rest } = valid;
    expect(configError(rest).message).toContain('BUSINESS_PAYMENTS_ENVIRONMENT');
  });
});

describe('per-call options', () => {
  test.each([0, -5, 1.5, Number.NaN])('invalid timeout %s → InvalidParamsError, nothing sent', async (timeout) => {
    api.on('get', '/api/v1/balance', { body: [] });
    const { client } = setup();
    const error = await rejection(client.balance.retrieve({ timeout }));
    expect(error).toBeInstanceOf(InvalidParamsError);
    expect(error.errors).toHaveProperty('timeout');
    expect(api.seen).toHaveLength(0);
  });

  test('invalid maxRetries → InvalidParamsError, nothing sent', async () => {
    api.on('get', '/api/v1/balance', { body: [] });
    const { client } = setup();
    const error = await rejection(client.balance.retrieve({ maxRetries: -1 }));
    expect(error).toBeInstanceOf(InvalidParamsError);
    expect(error.errors).toHaveProperty('maxRetries');
    expect(api.seen).toHaveLength(0);
  });

  test.each(['X-Signature', 'x-api-key', 'X-Timestamp', 'X-Environment', 'Content-Type', 'Idempotency-Key'])(
    'reserved header %s in options.headers → InvalidParamsError, nothing sent',
    async (name) => {
      api.on('post', '/api/v1/payments', { body: {} });
      const { client } = setup();
      const error = await rejection(
        client.payments.create({ payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1' }, { headers: { [name]: 'forged' } }),
      );
      expect(error).toBeInstanceOf(InvalidParamsError);
      expect(Object.keys(error.errors)).toEqual([`headers.${name}`]);
      expect(error.message).toContain('Nothing was sent');
      expect(api.seen).toHaveLength(0);
    },
  );

  test('idempotencyKey longer than 64 characters → InvalidParamsError, nothing sent', async () => {
    api.on('post', '/api/v1/payments', { body: {} });
    const { client } = setup();
    const error = await rejection(
      client.payments.create({ payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1' }, { idempotencyKey: 'k'.repeat(65) }),
    );
    expect(error).toBeInstanceOf(InvalidParamsError);
    expect(error.errors).toHaveProperty('idempotencyKey');
    expect(api.seen).toHaveLength(0);
  });
});

describe('headers on the wire', () => {
  const nowSeconds = () => String(Math.floor(Date.now() / 1000));

  test('a GET carries the auth, signing and content headers', async () => {
    api.on('get', '/api/v1/verify-payment/:id', { body: fixtures.verified });
    const { client } = setup();
    await client.payments.verify('TRX123456');
    const [seen] = api.seen;
    const h = seen!.headers;
    expect(h['x-environment']).toBe('sandbox');
    expect(h['x-merchant-key']).toBe(CREDENTIALS.merchantKey);
    expect(h['x-api-key']).toBe(CREDENTIALS.apiKey);
    expect(h['x-timestamp']).toBe(nowSeconds());
    expect(h['x-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(h['x-signature']).toBe(expectedSignature(CREDENTIALS.apiSecret, nowSeconds(), 'GET', '/api/v1/verify-payment/TRX123456', ''));
    expect(h['content-type']).toBe('application/json');
    expect(h.accept).toBe('application/json');
    expect(seen!.signatureValid).toBe(true);
  });

  test('a POST carries them too, signed over the exact body sent', async () => {
    api.on('post', '/api/v1/payments', {
      body: { status: 'success', data: fixtures.payment, payment_url: fixtures.payment.checkout_url, trx_id: 'TRX123456' },
    });
    const { client } = setup();
    await client.payments.create({ payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1001' });
    const [seen] = api.seen;
    expect(seen!.headers['content-type']).toBe('application/json');
    expect(seen!.headers.accept).toBe('application/json');
    expect(seen!.headers['x-timestamp']).toBe(nowSeconds());
    expect(seen!.headers['x-signature']).toBe(
      expectedSignature(CREDENTIALS.apiSecret, nowSeconds(), 'POST', '/api/v1/payments', seen!.rawBody),
    );
    expect(seen!.json).toEqual({ payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1001' });
  });

  test('the production environment is sent as X-Environment: production', async () => {
    api.on('get', '/api/v1/balance', { body: [] });
    const counted: string[] = [];
    const client = new PaymentsClient({
      ...production,
      maxRetries: 0,
      fetch: async (input, init) => {
        const request = new Request(input, init);
        counted.push(request.headers.get('x-environment') ?? '');
        return new Response('[]', { status: 200, headers: { 'content-type': 'application/json' } });
      },
    });
    await client.balance.retrieve();
    expect(counted).toEqual(['production']);
  });

  test('defaultHeaders and options.headers arrive; the call header wins on a clash', async () => {
    api.on('get', '/api/v1/balance', { body: [] });
    const { client } = setup({ defaultHeaders: { 'X-Trace-Id': 'trace-1', 'X-Tenant': 'default' } });
    await client.balance.retrieve({ headers: { 'X-Request-Tag': 'tag-7', 'X-Tenant': 'per-call' } });
    const h = api.seen[0]!.headers;
    expect(h['x-trace-id']).toBe('trace-1');
    expect(h['x-request-tag']).toBe('tag-7');
    expect(h['x-tenant']).toBe('per-call');
    expect(api.seen[0]!.signatureValid).toBe(true);
  });
});
