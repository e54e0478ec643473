// `business-payments trigger`: one signed delivery to a real local endpoint, which checks
// it with verifyWebhook exactly as a merchant's handler would.
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { WEBHOOK_EVENT_TYPES } from '../../src/index.js';
import { verifyWebhook } from '../../src/webhooks.js';
import { expectUsageError, runCli } from '../support/cli.js';

const secret = 'whsec_trigger_test';
interface Delivery {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}
let deliveries: Delivery[] = [];
let answer = 200;
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      deliveries.push({ method: req.method!, path: req.url!, headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(answer, { 'content-type': 'text/plain' }).end(answer === 200 ? 'ok' : 'signature mismatch');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/payments`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  deliveries = [];
  answer = 200;
});

const received = () => {
  expect(deliveries).toHaveLength(1);
  return deliveries[0]!;
};

describe('trigger', () => {
  test('payment.completed: a POST that verifyWebhook accepts, with the spec payload; prints the status', async () => {
    const run = await runCli(['trigger', 'payment.completed', '--url', url, '--secret', secret]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const delivery = received();
    expect(delivery.method).toBe('POST');
    expect(delivery.path).toBe('/webhooks/payments');
    expect(delivery.headers['content-type']).toBe('application/json');
    const event = await verifyWebhook({
      payload: delivery.body,
      headers: delivery.headers,
      secret,
      environment: 'sandbox',
      brand: 'Service',
    });
    expect(run.stdout).toBe(`payment.completed ${event.id} -> ${url}: 200 OK\n`);
    expect(event).toMatchObject({ type: 'payment.completed', api_version: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) });
    expect(event.id).toMatch(/^evt_[0-9a-f]{24}$/);
    expect(event.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/);
    if (event.type !== 'payment.completed') throw new Error('narrowing');
    const { data } = event;
    expect(data).toMatchObject({
      status: 'completed',
      environment: 'sandbox',
      merchant_ref: expect.any(String),
      trx_id: expect.any(String),
    });
    expect(data.amount).toEqual({ value: expect.any(Number), currency: expect.stringMatching(/^[A-Z]{3}$/) });
    // The sandbox sends the whole documented shape (the types allow less from other servers).
    const { gross, fees, net } = data.settlement!;
    expect(gross!.value! - fees!.value!).toBe(net!.value);
    expect(gross!.value).toBe(data.amount!.value);
    expect(data.customer).toEqual({ name: expect.any(String), email: expect.stringContaining('@'), phone: expect.stringMatching(/^\d+$/) });
  });

  test.each(WEBHOOK_EVENT_TYPES)('%s verifies, event header = type', async (type) => {
    const run = await runCli(['trigger', type, '--url', url, '--secret', secret]);
    expect(run.code).toBe(0);
    const delivery = received();
    expect(delivery.headers['x-service-event']).toBe(type);
    const event = await verifyWebhook({ payload: delivery.body, headers: delivery.headers, secret });
    expect(event.type).toBe(type);
    expect(event.data).toMatchObject({ environment: 'sandbox' });
  });

  test('payment.failed carries status failed and nothing settled', async () => {
    await runCli(['trigger', 'payment.failed', '--url', url, '--secret', secret]);
    const event = await verifyWebhook({ payload: received().body, headers: received().headers, secret });
    expect(event.data).toMatchObject({ status: 'failed', settlement: { net: { value: 0 } } });
  });

  test('--data, --environment, --brand', async () => {
    const run = await runCli([
      'trigger',
      'payment.completed',
      '--url',
      url,
      '--secret',
      secret,
      '--data',
      '{"merchant_ref":"order-7","extra":{"a":1}}',
      '--environment',
      'production',
      '--brand',
      'Acme',
    ]);
    expect(run.code).toBe(0);
    const { headers, body } = received();
    expect(headers['x-acme-signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(headers['x-environment']).toBe('production');
    const event = await verifyWebhook({ payload: body, headers, secret, environment: 'production', brand: 'Acme' });
    expect(event.data).toMatchObject({ merchant_ref: 'order-7', extra: { a: 1 }, environment: 'production', status: 'completed' });
  });

  test('--secret falls back to BUSINESS_PAYMENTS_WEBHOOK_SECRET', async () => {
    const run = await runCli(['trigger', 'invoice.paid', '--url', url], { env: { BUSINESS_PAYMENTS_WEBHOOK_SECRET: secret } });
    expect(run.code).toBe(0);
    await verifyWebhook({ payload: received().body, headers: received().headers, secret });
  });

  test('--environment picks its own secret: env BUSINESS_PAYMENTS_WEBHOOK_SECRET_<ENVIRONMENT> before the shared one', async () => {
    const env = {
      BUSINESS_PAYMENTS_WEBHOOK_SECRET: 'whsec_shared',
      BUSINESS_PAYMENTS_WEBHOOK_SECRET_SANDBOX: 'whsec_sandbox_only',
      BUSINESS_PAYMENTS_WEBHOOK_SECRET_PRODUCTION: 'whsec_production_only',
    };
    const signedWith = async (args: string[], io: { env: Record<string, string> }) => {
      deliveries = [];
      expect((await runCli(['trigger', 'payment.completed', '--url', url, ...args], io)).code).toBe(0);
      const { headers, body } = received();
      for (const candidate of ['whsec_shared', 'whsec_sandbox_only', 'whsec_production_only', secret]) {
        const ok = await verifyWebhook({ payload: body, headers, secret: candidate }).then(
          () => true,
          () => false,
        );
        if (ok) return candidate;
      }
      return undefined;
    };
    expect(await signedWith(['--environment', 'production'], { env })).toBe('whsec_production_only');
    expect(await signedWith([], { env })).toBe('whsec_sandbox_only');
    expect(await signedWith(['--environment', 'production'], { env: { BUSINESS_PAYMENTS_WEBHOOK_SECRET: 'whsec_shared' } })).toBe(
      'whsec_shared',
    );
    expect(await signedWith(['--environment', 'production', '--secret', secret], { env })).toBe(secret);
  });

  test('--timestamp signs an old delivery, which a handler must refuse', async () => {
    await runCli(['trigger', 'payment.completed', '--url', url, '--secret', secret, '--timestamp', '1700000000']);
    const { headers, body } = received();
    expect(headers['x-service-timestamp']).toBe('1700000000');
    await expect(verifyWebhook({ payload: body, headers, secret })).rejects.toMatchObject({ reason: 'timestamp_too_old' });
    await verifyWebhook({ payload: body, headers, secret, now: () => 1_700_000_000_000 });
  });

  test('an undocumented type is sent with a note on stderr', async () => {
    const run = await runCli(['trigger', 'payment.refunded', '--url', url, '--secret', secret]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe(`note: 'payment.refunded' is not a documented event type; sending it anyway\n`);
    const event = await verifyWebhook({ payload: received().body, headers: received().headers, secret });
    expect(event.type).toBe('payment.refunded');
  });

  test('a non-2xx answer: status printed, the body on stderr, exit 1', async () => {
    answer = 401;
    const run = await runCli(['trigger', 'payment.completed', '--url', url, '--secret', secret]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/: 401 Unauthorized\n$/);
    expect(run.stderr).toBe('endpoint answered: signature mismatch\n');
  });

  test('nothing listening: one line naming the URL and the cause, exit 1', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const run = await runCli(['trigger', 'payment.completed', '--url', `http://127.0.0.1:${port}/hook`, '--secret', secret]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(`trigger: could not deliver payment.completed to http://127.0.0.1:${port}/hook: ECONNREFUSED\n`);
  });

  test.each([
    [['--url', 'http://x', '--secret', 's'], /missing <event-type>/],
    [['payment.completed', '--secret', 's'], /missing --url$/],
    [
      ['payment.completed', '--url', 'http://x'],
      /--secret is not set: pass it or set BUSINESS_PAYMENTS_WEBHOOK_SECRET_SANDBOX or BUSINESS_PAYMENTS_WEBHOOK_SECRET$/,
    ],
    [['payment.completed', 'payment.failed', '--url', 'http://x', '--secret', 's'], /one event type at a time/],
    [['payment completed', '--url', 'http://x', '--secret', 's'], /is not an event type/],
    [['payment.completed', '--url', 'localhost:3000/hook', '--secret', 's'], /--url must be http or https/],
    [['payment.completed', '--url', '/hook', '--secret', 's'], /--url must be an absolute URL/],
    [['payment.completed', '--url', 'http://x', '--secret', 's', '--data', '[1]'], /--data must be a JSON object/],
    [['payment.completed', '--url', 'http://x', '--secret', 's', '--data', '{'], /--data must be a JSON object/],
    [['payment.completed', '--url', 'http://x', '--secret', 's', '--environment', 'test'], /--environment must be sandbox or production/],
    [['payment.completed', '--url', 'http://x', '--secret', 's', '--brand', 'A B'], /--brand must be letters/],
  ])('bad arguments %j: exit 2 with usage, nothing sent', async (args, reason) => {
    expectUsageError(await runCli(['trigger', ...args], { env: {} }), reason);
    expect(deliveries).toHaveLength(0);
  });

  test('--help lists the event types', async () => {
    const run = await runCli(['trigger', '--help']);
    expect(run.code).toBe(0);
    for (const type of WEBHOOK_EVENT_TYPES) expect(run.stdout).toContain(type);
  });
});

describe("trigger --format legacy: the earlier generation's IPN", () => {
  const apiSecret = 'test_secret_trigger_legacy';
  const hex = (secret: string, body: Buffer | string) => createHmac('sha256', secret).update(body).digest('hex');

  test('payment.completed: the IPN body and headers as the earlier generation sends them, signed with the API secret', async () => {
    const run = await runCli([
      'trigger',
      'payment.completed',
      '--url',
      url,
      '--secret',
      apiSecret,
      '--format',
      'legacy',
      '--timestamp',
      '1700000000',
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const { headers, body } = received();
    expect(headers['x-signature']).toBe(hex(apiSecret, body));
    expect(headers).toMatchObject({ 'x-environment': 'sandbox', 'content-type': 'application/json', 'user-agent': 'GuzzleHttp/7' });
    expect(Object.keys(headers).filter((name) => /^x-.+-(signature|timestamp|event)$/.test(name))).toEqual([]);
    const text = body.toString('utf8');
    expect(text).not.toContain('\\/');
    const ipn = JSON.parse(text) as { data: Record<string, unknown>; message: string; status: string; timestamp: number };
    expect(Object.keys(ipn)).toEqual(['data', 'message', 'status', 'timestamp']);
    expect(ipn).toMatchObject({ message: 'Payment Completed', status: 'completed', timestamp: 1_700_000_000 });
    expect(Object.keys(ipn.data).at(-1)).toBe('trx_id');
    expect(ipn.data).toMatchObject({
      ref_trx: 'order-1001',
      amount: 15_000,
      currency_code: 'TZS',
      environment: 'sandbox',
      is_sandbox: true,
    });
    expect(run.stdout).toBe(`payment.completed ${String(ipn.data.trx_id)} (legacy IPN) -> ${url}: 200 OK\n`);
    const event = await verifyWebhook({ payload: body, headers, secret: apiSecret, now: () => 1_700_000_000_000, environment: 'sandbox' });
    expect(event).toMatchObject({
      type: 'payment.completed',
      format: 'legacy',
      data: { trx_id: ipn.data.trx_id, merchant_ref: 'order-1001', amount: { value: 15_000, currency: 'TZS' } },
    });
    expect(event.id).toBeUndefined();
  });

  test('payment.failed, --environment production, --data over the IPN data; the API secret from BUSINESS_PAYMENTS_API_SECRET', async () => {
    const run = await runCli(
      [
        'trigger',
        'payment.failed',
        '--url',
        url,
        '--format',
        'legacy',
        '--environment',
        'production',
        '--data',
        '{"ref_trx":"order-7","amount":"99.50"}',
      ],
      { env: { BUSINESS_PAYMENTS_API_SECRET: apiSecret, BUSINESS_PAYMENTS_WEBHOOK_SECRET: 'whsec_not_this_one' } },
    );
    expect(run.code).toBe(0);
    const { headers, body } = received();
    expect(headers['x-environment']).toBe('production');
    expect(headers['x-signature']).toBe(hex(apiSecret, body));
    const event = await verifyWebhook({ payload: body, headers, secret: apiSecret, environment: 'production' });
    expect(event).toMatchObject({
      type: 'payment.failed',
      format: 'legacy',
      data: { status: 'failed', merchant_ref: 'order-7', amount: { value: 99.5 }, environment: 'production', is_sandbox: false },
      legacy: { message: 'Payment Failed', status: 'failed' },
    });
  });

  test.each([
    [['invoice.paid', '--format', 'legacy'], /--format legacy sends payment.completed or payment.failed only/],
    [['payment.completed', '--format', 'legacy', '--brand', 'Acme'], /--brand does not apply to --format legacy/],
    [['payment.completed', '--format', 'old'], /--format must be current or legacy, got 'old'/],
  ])('bad arguments %j: exit 2, nothing sent', async (args, reason) => {
    expectUsageError(await runCli(['trigger', ...args, '--url', url, '--secret', 's'], { env: {} }), reason);
    expect(deliveries).toHaveLength(0);
  });

  test('--format legacy without a secret names BUSINESS_PAYMENTS_API_SECRET', async () => {
    expectUsageError(
      await runCli(['trigger', 'payment.completed', '--url', url, '--format', 'legacy'], { env: {} }),
      /--secret is not set: pass it or set BUSINESS_PAYMENTS_API_SECRET$/,
    );
  });

  test('--help says what --format legacy sends and which secret signs it', async () => {
    const run = await runCli(['trigger', '--help']);
    expect(run.stdout).toMatch(/--format F/);
    expect(run.stdout).toMatch(/earlier\s+generation's IPN/);
    expect(run.stdout).toMatch(/API secret/);
  });

  test('--format current is the default form', async () => {
    expect((await runCli(['trigger', 'payment.completed', '--url', url, '--secret', secret, '--format', 'current'])).code).toBe(0);
    const { headers, body } = received();
    expect(headers['x-service-signature']).toMatch(/^[0-9a-f]{64}$/);
    await expect(verifyWebhook({ payload: body, headers, secret })).resolves.toMatchObject({ format: 'current' });
  });
});

// A handler that re-serialises the body before verifying
// (JSON.stringify(JSON.parse(body)), or a framework's parsed body) fails against trigger as it
// would in production. The current form is written as the service writes it (PHP's
// json_encode: `\uXXXX`, `\/`) and its default data has a non-ASCII letter (Zoë), so
// re-serialising changes the bytes. The earlier generation's IPN leaves slashes and Unicode
// unescaped: it re-serialises to the same bytes unless it holds U+2028/U+2029 (escaped by PHP,
// raw in JSON.stringify) or the other cases in src/testing/mock-service/earlier-ipn.ts (docs/cli.md).
describe('a handler that re-serialises the body before verifying is refused (401), as in production', () => {
  const apiSecret = 'test_secret_trigger_reserialise';
  let reserialising: Server;
  let reserialisingUrl: string;
  const seen: Array<{ raw: string; reserialised: string }> = [];
  beforeAll(async () => {
    // The classic mistake: verify what a body parser made of the delivery, not its bytes.
    reserialising = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const reserialised = JSON.stringify(JSON.parse(raw));
        seen.push({ raw, reserialised });
        verifyWebhook({ payload: reserialised, headers: req.headers, secret: [secret, apiSecret] }).then(
          () => res.writeHead(200).end('ok'),
          (error: { reason?: string }) => res.writeHead(401).end(error.reason),
        );
      });
    });
    await new Promise<void>((resolve) => reserialising.listen(0, '127.0.0.1', resolve));
    reserialisingUrl = `http://127.0.0.1:${(reserialising.address() as AddressInfo).port}/webhooks/payments`;
  });
  afterAll(() => new Promise<void>((resolve) => reserialising.close(() => resolve())));
  beforeEach(() => void (seen.length = 0));

  test('the current form, default data: the body as PHP writes it (Zo\\u00eb), 401 once re-serialised; the raw bytes verify', async () => {
    const run = await runCli(['trigger', 'payment.completed', '--url', reserialisingUrl, '--secret', secret]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/: 401 Unauthorized\n$/);
    expect(run.stderr).toBe('endpoint answered: invalid_signature\n');
    const [{ raw, reserialised }] = seen as [{ raw: string; reserialised: string }];
    expect(raw).toContain('"name":"Zo\\u00eb Mwinyi"');
    expect(raw).not.toContain('ë');
    expect(reserialised).toContain('"name":"Zoë Mwinyi"');
    expect(reserialised).not.toBe(raw);

    // The same delivery verified on its raw bytes is accepted.
    expect((await runCli(['trigger', 'payment.completed', '--url', url, '--secret', secret])).code).toBe(0);
    const { headers, body } = received();
    const event = await verifyWebhook({ payload: body, headers, secret });
    expect(event.data).toMatchObject({ customer: { name: 'Zoë Mwinyi' } });
  });

  test('--format legacy holding U+2028 (PHP writes \\u2028, JSON.stringify the raw character): 401 once re-serialised', async () => {
    const args = [
      'payment.completed',
      '--secret',
      apiSecret,
      '--format',
      'legacy',
      '--data',
      '{"description":"Coffee beans, 1 kg\\u2028Gift wrap"}',
    ];
    const run = await runCli(['trigger', ...args, '--url', reserialisingUrl]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/\(legacy IPN\) -> .*: 401 Unauthorized\n$/);
    const [{ raw, reserialised }] = seen as [{ raw: string; reserialised: string }];
    expect(raw).toContain('"description":"Coffee beans, 1 kg\\u2028Gift wrap"');
    expect(reserialised).toContain('"description":"Coffee beans, 1 kg\u2028Gift wrap"');

    expect((await runCli(['trigger', ...args, '--url', url])).code).toBe(0);
    const { headers, body } = received();
    const event = await verifyWebhook({ payload: body, headers, secret: apiSecret });
    expect(event).toMatchObject({ format: 'legacy', data: { description: 'Coffee beans, 1 kg\u2028Gift wrap' } });
  });

  test('--format legacy, default data: slashes and Unicode unescaped, so it re-serialises to the same bytes (documented in docs/cli.md)', async () => {
    const run = await runCli(['trigger', 'payment.completed', '--url', reserialisingUrl, '--secret', apiSecret, '--format', 'legacy']);
    expect(run.code).toBe(0);
    const [{ raw, reserialised }] = seen as [{ raw: string; reserialised: string }];
    expect(raw).toContain('"customer_name":"Zoë Mwinyi"');
    expect(raw).toContain('"ipn_url":"https://merchant.example/ipn"');
    expect(reserialised).toBe(raw);
  });
});

describe('secrets are handled the same way by every command', () => {
  test.each([
    ['trigger', ['trigger', 'payment.completed', '--url', 'http://127.0.0.1:9/hooks', '--secret', ' whsec_padded']],
    ['sign', ['sign', '--method', 'GET', '--path', '/api/v1/balance', '--secret', 'test_secret_001 ']],
  ])('%s refuses a secret with surrounding whitespace, as verify-webhook does', async (name, argv) => {
    expectUsageError(await runCli(argv), new RegExp(`^business-payments ${name}: --secret has leading or trailing whitespace`));
  });
});
