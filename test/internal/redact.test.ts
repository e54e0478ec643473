// The API secret never leaves the client; the logger is off by default and redacts what it prints.
import { inspect } from 'node:util';
import { delay, http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, test, vi } from 'vitest';
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  AuthenticationError,
  ConfigurationError,
  InvalidParamsError,
  PaymentsClient,
  ResponseValidationError,
  type ClientOptions,
  type Logger,
} from '../../src/index.js';
import { rejection, settle } from '../support/assertions.js';
import { BASE_URL, CREDENTIALS, fixtures } from '../support/fake-api.js';
import { useFakeApi } from '../support/harness.js';

const { api, setup } = useFakeApi();

const SECRET = CREDENTIALS.apiSecret;
const PHONE = '255712345678';
const createBody = { status: 'success', data: fixtures.payment, payment_url: fixtures.payment.checkout_url, trx_id: 'TRX123456' };

beforeEach(() => {
  vi.stubEnv('BUSINESS_PAYMENTS_LOG', undefined);
  vi.stubEnv('BUSINESS_PAYMENTS_API_SECRET', undefined);
});

function constructionError(options: ClientOptions): unknown {
  try {
    new PaymentsClient(options);
  } catch (error) {
    return error;
  }
  throw new Error('expected new PaymentsClient() to throw');
}

/** Every way an error is commonly turned into text (loggers, error trackers, console). */
function renderings(error: unknown): Record<string, string> {
  const e = error as Error;
  return {
    message: e.message,
    string: String(e),
    stack: e.stack ?? '',
    json: JSON.stringify(e),
    jsonOwnProps: JSON.stringify(e, Object.getOwnPropertyNames(e)),
    inspect: inspect(e, { depth: Infinity, showHidden: true }),
  };
}

function expectNoSecretIn(error: unknown, secret: string = SECRET) {
  for (const [how, text] of Object.entries(renderings(error))) {
    expect(text, `${how} of ${(error as Error).name}`).not.toContain(secret);
  }
}

/**
 * Errors end up in logs and error trackers, which the logger's redaction cannot reach: the
 * API key and the request signatures (the logger redacts both) must not ride along either.
 */
function expectNoCredentialsIn(error: unknown, signatures: string[]) {
  expect(signatures.length).toBeGreaterThan(0);
  expectNoSecretIn(error);
  for (const [how, text] of Object.entries(renderings(error))) {
    expect(text, `${how} of ${(error as Error).name}`).not.toContain(CREDENTIALS.apiKey);
    for (const signature of signatures) expect(text, `${how} of ${(error as Error).name}`).not.toContain(signature);
  }
}

/** A fetch that remembers the signature of every request it passes on. */
function signatureRecordingFetch() {
  const signatures: string[] = [];
  const wrapped: typeof fetch = (input, init) => {
    const request = new Request(input, init);
    signatures.push(request.headers.get('x-signature') ?? '');
    return fetch(request);
  };
  return { signatures, fetch: wrapped };
}

/** A logger that keeps every call. */
function collectingLogger() {
  const calls: Array<{ level: keyof Logger; args: unknown[] }> = [];
  const logger: Logger = {
    error: (...args: unknown[]) => void calls.push({ level: 'error', args }),
    warn: (...args: unknown[]) => void calls.push({ level: 'warn', args }),
    info: (...args: unknown[]) => void calls.push({ level: 'info', args }),
    debug: (...args: unknown[]) => void calls.push({ level: 'debug', args }),
  };
  const text = () => calls.map((c) => `${inspect(c.args, { depth: Infinity })}\n${JSON.stringify(c.args)}`).join('\n');
  return { logger, calls, text };
}

describe('the client object', () => {
  test('JSON.stringify, util.inspect (showHidden, any depth), String and template strings show no secret', () => {
    const { client } = setup();
    const views = [
      JSON.stringify(client),
      inspect(client, { depth: Infinity, showHidden: true }),
      inspect(client, { depth: Infinity, showHidden: true, getters: true }),
      String(client),
      `${client}`,
      JSON.stringify(Object.entries(client)),
    ];
    for (const view of views) expect(view).not.toContain(SECRET);
    // …but they still say something useful.
    expect(JSON.parse(JSON.stringify(client))).toMatchObject({ environment: 'sandbox', baseUrl: BASE_URL });
    expect(inspect(client)).toContain('PaymentsClient');
  });

  test('resources (which hold the client) show no secret either', () => {
    const { client } = setup();
    for (const resource of [client.payments, client.payouts, client.balance, client.siteInfo, client.billing, client.billing.plans]) {
      expect(JSON.stringify(resource)).not.toContain(SECRET);
      expect(inspect(resource, { depth: Infinity, showHidden: true })).not.toContain(SECRET);
    }
  });

  test('a secret from the environment is just as hidden', () => {
    const envSecret = 'test_env_only_secret_51f0';
    vi.stubEnv('BUSINESS_PAYMENTS_API_SECRET', envSecret);
    const client = new PaymentsClient({ merchantKey: 'test_m', apiKey: 'test_k', baseUrl: BASE_URL });
    expect(JSON.stringify(client)).not.toContain(envSecret);
    expect(inspect(client, { depth: Infinity, showHidden: true })).not.toContain(envSecret);
  });
});

describe('the wire', () => {
  test('no header of any attempt carries the secret', async () => {
    api.sequence('post', '/api/v1/payments', [{ status: 503 }, { body: createBody }]);
    api.on('get', '/api/v1/verify-payment/:id', { body: fixtures.verified });
    const { client } = setup();
    await settle(client.payments.create({ payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1001' }));
    await client.payments.verify('TRX123456');
    expect(api.seen).toHaveLength(3);
    for (const request of api.seen) {
      expect(request.signatureValid).toBe(true);
      for (const [name, value] of Object.entries(request.headers)) {
        expect(value, name).not.toContain(SECRET);
      }
      expect(request.rawBody).not.toContain(SECRET);
      expect(request.pathWithQuery).not.toContain(SECRET);
    }
  });
});

describe('thrown errors', () => {
  const distinct = 'test_s3cr3t_value_7a1c';
  const base: ClientOptions = { environment: 'sandbox', merchantKey: 'test_m', apiKey: 'test_k', apiSecret: distinct, baseUrl: BASE_URL };

  test.each<[string, ClientOptions, string]>([
    ['bad baseUrl', { ...base, baseUrl: 'ftp://x.example.com' }, distinct],
    ['missing merchantKey', { ...base, merchantKey: undefined }, distinct],
    ['secret with whitespace', { ...base, apiSecret: ` ${distinct} ` }, distinct],
    ['live_ secret in sandbox', { ...base, apiSecret: `live_${distinct}` }, `live_${distinct}`],
    [
      'test_ secret in production',
      { ...base, environment: 'production', merchantKey: 'm', apiKey: 'k', baseUrl: 'https://p.example.com' },
      distinct,
    ],
    ['negative timeout', { ...base, timeout: -1 }, distinct],
    ['reserved default header', { ...base, defaultHeaders: { 'X-Signature': 'x' } }, distinct],
  ])('ConfigurationError (%s) does not contain the secret', (_what, options, secret) => {
    const error = constructionError(options);
    expect(error).toBeInstanceOf(ConfigurationError);
    expectNoSecretIn(error, secret);
  });

  test('ConfigurationError in a browser does not contain the secret', () => {
    vi.stubGlobal('window', {});
    vi.stubGlobal('document', {});
    const error = constructionError(base);
    expect(error).toBeInstanceOf(ConfigurationError);
    expectNoSecretIn(error, distinct);
  });

  test('InvalidParamsError does not contain the secret', async () => {
    const { client } = setup();
    const error = await rejection(
      client.payments.create({ payment_amount: 0, currency_code: 'usd', ref_trx: '' }, { headers: { 'X-Signature': 'forged' } }),
    );
    expect(error).toBeInstanceOf(InvalidParamsError);
    expectNoSecretIn(error);
  });

  test.each([
    [
      '401 with a skewed clock',
      {
        status: 401,
        body: { error: 'Invalid API credentials' },
        headers: { Date: new Date(Date.UTC(2026, 10, 22, 11, 0, 0)).toUTCString() },
      },
      AuthenticationError,
    ],
    [
      '422 validation failure',
      { status: 422, body: { error: 'Validation failed', message: 'The given data was invalid.', errors: { ref_trx: ['taken'] } } },
      APIError,
    ],
    ['500 HTML page', { status: 500, body: '<html>oops</html>' }, APIError],
    ['200 not JSON', { status: 200, body: '<html>hello</html>' }, ResponseValidationError],
  ] as const)('API error (%s) does not contain the secret', async (_what, reply, ErrorClass) => {
    api.on('post', '/api/v1/payments', reply as never);
    const { client } = setup({ maxRetries: 0 });
    const error = await rejection(client.payments.create({ payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1001' }));
    expect(error).toBeInstanceOf(ErrorClass);
    expectNoCredentialsIn(
      error,
      api.seen.map((r) => r.headers['x-signature']!),
    );
  });

  test('APIConnectionError (network error, after retries) contains no secret, API key or signature', async () => {
    api.use(http.post(`${BASE_URL}/api/v1/payments`, () => HttpResponse.error()));
    const recording = signatureRecordingFetch();
    const { client } = setup({ fetch: recording.fetch });
    const error = await rejection(client.payments.create({ payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1001' }));
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(recording.signatures).toHaveLength(3);
    expectNoCredentialsIn(error, recording.signatures);
  });

  test('APITimeoutError contains no secret, API key or signature', async () => {
    api.on('get', '/api/v1/balance', async () => {
      await delay('infinite');
      return {};
    });
    const { client } = setup({ timeout: 30, maxRetries: 0 });
    const error = await rejection(client.balance.retrieve());
    expect(error).toBeInstanceOf(APITimeoutError);
    expectNoCredentialsIn(
      error,
      api.seen.map((r) => r.headers['x-signature']!),
    );
  });
});

describe('logging', () => {
  /** A busy session: a retried create with a phone, a push, a payout, a subscription, a failure. */
  async function busySession(client: PaymentsClient) {
    // A 429: a push-mode create is retried after one (never after a 503: the phone may have rung).
    api.sequence('post', '/api/v1/payments', [{ status: 429, headers: { 'Retry-After': '1' } }, { body: createBody }]);
    api.on('post', '/api/v1/payments/:id/push', { body: { trx_id: 'TRX123456', status: 'pending' } });
    api.on('post', '/api/v1/payouts', { body: { id: '123e4567-e89b-12d3-a456-426614174000', amount: 100, status: 'INPROGRESS' } });
    api.on('post', '/api/v1/billing/subscriptions', { body: { id: 'sub_1', plan_code: 'gold', status: 'pending' } });
    api.on('get', '/api/v1/balance', { status: 404, body: { error: 'Not Found', message: 'No such route' } });

    await settle(
      client.payments.create({
        payment_amount: 25,
        currency_code: 'USD',
        ref_trx: 'order-1001',
        payment_mode: 'push',
        customer_phone: PHONE,
      }),
    );
    await client.payments.push('TRX123456', { customer_phone: `+${PHONE}` });
    await client.payouts.create({ amount: 100, destination: PHONE });
    await client.billing.subscriptions.create({ plan_code: 'gold', customer_phone: PHONE, terms_shown: 'TZS 10,000 monthly' });
    await rejection(client.balance.retrieve());
  }

  test('at debug: every attempt is logged, with no secret, API key, signature or phone number', async () => {
    const log = collectingLogger();
    const { client } = setup({ logger: log.logger, logLevel: 'debug' });
    await busySession(client);

    const text = log.text();
    // Something was logged for each attempt (6 requests: one create was retried).
    expect(api.seen).toHaveLength(6);
    expect(log.calls.filter((c) => c.level === 'debug')).toHaveLength(6);
    expect(log.calls.some((c) => c.level === 'warn')).toBe(true);
    // Non-secret headers are there, so the checks below are not vacuous.
    expect(text).toContain(CREDENTIALS.merchantKey);
    expect(text).toContain('X-Signature');
    expect(text).toContain('X-API-Key');
    expect(text).toContain('customer_phone');

    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(CREDENTIALS.apiKey);
    for (const request of api.seen) expect(text).not.toContain(request.headers['x-signature']);
    expect(text).not.toContain(PHONE);
  });

  test('the debug line for a request redacts X-Signature and X-API-Key values and body phone fields', async () => {
    const log = collectingLogger();
    api.on('post', '/api/v1/payments', { body: createBody });
    const { client } = setup({ logger: log.logger, logLevel: 'debug' });
    await client.payments.create({
      payment_amount: 25,
      currency_code: 'USD',
      ref_trx: 'order-1001',
      payment_mode: 'push',
      customer_phone: PHONE,
    });

    const debug = log.calls.find((c) => c.level === 'debug')!;
    expect(String(debug.args[0])).toContain('POST /api/v1/payments');
    const details = debug.args[1] as { headers: Record<string, string>; body: Record<string, unknown> };
    expect(details.headers['X-Signature']).toBeDefined();
    expect(details.headers['X-Signature']).not.toBe(api.seen[0]!.headers['x-signature']);
    expect(details.headers['X-Signature']).not.toMatch(/[0-9a-f]{64}/);
    expect(details.headers['X-API-Key']).toBeDefined();
    expect(details.headers['X-API-Key']).not.toBe(CREDENTIALS.apiKey);
    expect(details.headers['X-Environment']).toBe('sandbox');
    expect(details.body.customer_phone).toBeDefined();
    expect(details.body.customer_phone).not.toBe(PHONE);
    expect(details.body.ref_trx).toBe('order-1001');
    // Redaction works on a copy: what went on the wire is intact.
    expect(api.seen[0]!.signatureValid).toBe(true);
    expect((api.seen[0]!.json as { customer_phone: string }).customer_phone).toBe(PHONE);
  });

  test('logLevel defaults to off: the logger is never called, even on retries and failures', async () => {
    const log = collectingLogger();
    const { client } = setup({ logger: log.logger });
    await busySession(client);
    expect(api.seen).toHaveLength(6);
    expect(log.calls).toEqual([]);
  });

  test('BUSINESS_PAYMENTS_LOG=debug turns logging on', async () => {
    vi.stubEnv('BUSINESS_PAYMENTS_LOG', 'debug');
    const log = collectingLogger();
    api.on('get', '/api/v1/site-info', { body: fixtures.siteInfo });
    const { client } = setup({ logger: log.logger });
    await client.siteInfo.retrieve();
    expect(log.calls.map((c) => c.level)).toEqual(['debug', 'info']);
    expect(log.text()).not.toContain(SECRET);
  });

  test('an explicit logLevel beats BUSINESS_PAYMENTS_LOG', async () => {
    vi.stubEnv('BUSINESS_PAYMENTS_LOG', 'debug');
    const log = collectingLogger();
    api.on('get', '/api/v1/site-info', { body: fixtures.siteInfo });
    const { client } = setup({ logger: log.logger, logLevel: 'off' });
    await client.siteInfo.retrieve();
    expect(log.calls).toEqual([]);
  });

  test('logLevel warn: retries and failures, but no per-attempt debug or info lines', async () => {
    const log = collectingLogger();
    const { client } = setup({ logger: log.logger, logLevel: 'warn' });
    await busySession(client);
    const levels = new Set(log.calls.map((c) => c.level));
    expect(levels.has('warn')).toBe(true);
    expect(levels.has('debug')).toBe(false);
    expect(levels.has('info')).toBe(false);
    expect(log.text()).not.toContain(SECRET);
  });

  test('without a logger, debug output goes to console and is just as clean', async () => {
    const printed: unknown[][] = [];
    for (const level of ['debug', 'info', 'warn', 'error'] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void printed.push(args));
    }
    api.on('post', '/api/v1/payments', { body: createBody });
    const { client } = setup({ logLevel: 'debug' });
    await client.payments.create({
      payment_amount: 25,
      currency_code: 'USD',
      ref_trx: 'order-1001',
      payment_mode: 'push',
      customer_phone: PHONE,
    });
    expect(printed.length).toBeGreaterThan(0);
    const text = inspect(printed, { depth: Infinity });
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(CREDENTIALS.apiKey);
    expect(text).not.toContain(PHONE);
  });
});

describe('logging: custom auth headers', () => {
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
