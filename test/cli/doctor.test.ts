// `business-payments doctor` and diagnose() against a running sandbox: all ✓ when the
// integration is right, and one ✗ with its fix for each fault.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { diagnose, type DiagnoseOptions, type Diagnosis } from '../../src/doctor.js';
import { createFulfillment } from '../../src/fulfillment.js';
import { PaymentsClient } from '../../src/index.js';
import { verifyWebhook, type WebhookEvent } from '../../src/webhooks.js';
import { createMockService, type MockServer, type MockService } from '../../src/testing.js';
import { runCli } from '../support/cli.js';

let mock: MockService;
let server: MockServer;
let endpoint: Server;
let hookUrl: string;
/**
 * What the endpoint answers next (`body` may name the test transaction: `{trx}`), and what
 * it received. It verifies with either environment's webhook secret.
 */
const hook = {
  status: 204,
  body: '',
  headers: {} as Record<string, string>,
  received: [] as Array<{ event: WebhookEvent; headers: IncomingHttpHeaders }>,
};
const reset = () => Object.assign(hook, { status: 204, body: '', headers: {}, received: [] });
beforeEach(reset);

beforeAll(async () => {
  mock = createMockService({ autoRun: false });
  server = await mock.listen({ port: 0 });
  const secrets = [mock.credentials.sandbox.webhookSecret, mock.credentials.production.webhookSecret];
  endpoint = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', async () => {
      const event = await verifyWebhook({ payload: body, headers: req.headers, secret: secrets }).catch(() => undefined);
      if (!event) return void res.writeHead(400).end('bad signature');
      hook.received.push({ event, headers: req.headers });
      const trxId = (event.data as { trx_id?: string }).trx_id ?? '';
      res.writeHead(hook.status, hook.headers).end(hook.body.replace('{trx}', trxId));
    });
  });
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/hooks`;
});
afterAll(async () => {
  await server.close();
  await mock.close();
  await new Promise((resolve) => endpoint.close(resolve));
});

const good = (): DiagnoseOptions => ({
  environment: 'sandbox',
  baseUrl: server.url,
  ...mock.credentials.sandbox,
  webhookUrl: hookUrl,
  webhookSecret: mock.credentials.webhookSecret,
});
const status = (d: Diagnosis) => Object.fromEntries(d.checks.map((c) => [c.name, c.status]));
const failed = (d: Diagnosis) => d.checks.filter((c) => c.status === 'fail');

describe('diagnose()', () => {
  test('a right integration: every check passes (approval skipped in sandbox)', async () => {
    const d = await diagnose(good());
    expect(failed(d)).toEqual([]);
    expect(d.ok).toBe(true);
    expect(d.generation).toBe('current');
    expect(d.checks.find((c) => c.name === 'generation')?.detail).toMatch(/^current: every route of the spec/);
    expect(status(d)).toEqual({
      configuration: 'pass',
      'service reachable': 'pass',
      generation: 'pass',
      credentials: 'pass',
      clock: 'pass',
      approval: 'skip',
      wallets: 'pass',
      'webhook endpoint': 'pass',
      contract: 'pass',
    });
    expect(hook.received.at(-1)?.event.type).toBe('payment.completed');
  });

  // The live service describes what the spec does not show in its own way.
  // That is advice (the SDK reads it defensively), never a failure; a shown shape that
  // differs is still drift.
  test('a live openapi.json naming the payout id payout_id: contract passes, with advice naming the field', async () => {
    const d = await diagnose({ ...good(), fetch: rewriteOpenApi((schemas) => renameProperty(schemas.Payout!, 'id', 'payout_id')) });
    const contract = d.checks.find((c) => c.name === 'contract')!;
    expect(contract.status).toBe('pass');
    expect(contract.advice).toContain('/api/v1/payouts → data.id: the SDK reads it, the doc does not have it');
    expect(contract.detail).toContain('Advice, not a failure');
    expect(d.ok).toBe(true);
  });

  test('a live openapi.json whose verify response lacks amount: contract ✗ (a shown shape)', async () => {
    const d = await diagnose({
      ...good(),
      fetch: rewriteOpenApi((schemas) => renameProperty(schemas.VerifiedTransaction!, 'amount', 'total')),
    });
    const contract = d.checks.find((c) => c.name === 'contract')!;
    expect(contract.status).toBe('fail');
    expect(contract.detail).toContain('amount');
  });

  test('a wrong secret: credentials ✗ with the label and a fix', async () => {
    const d = await diagnose({ ...good(), apiSecret: 'test_wrong_secret' });
    expect(failed(d)).toEqual([
      expect.objectContaining({
        name: 'credentials',
        detail: expect.stringMatching(/^Invalid API credentials: /),
        fix: expect.stringContaining('sandbox'),
      }),
    ]);
  });

  test('the wrong environment (sandbox keys, production): configuration ✗, the rest skipped', async () => {
    const d = await diagnose({ ...good(), environment: 'production' });
    expect(failed(d)).toEqual([
      expect.objectContaining({
        name: 'configuration',
        detail: expect.stringMatching(/test_ \(sandbox\) credential but environment is 'production'/),
      }),
    ]);
    expect(d.checks.filter((c) => c.status === 'skip').map((c) => c.name)).toHaveLength(8);
  });

  test('clock skew (an injected clock an hour ahead): clock ✗ naming the difference', async () => {
    const d = await diagnose({ ...good(), now: () => Date.now() + 3_600_000 });
    expect(failed(d)).toEqual([
      expect.objectContaining({
        name: 'clock',
        detail: expect.stringMatching(/^the local clock is 36\d\d s ahead of the service's \(its Date header\)$/),
        fix: expect.stringContaining('NTP'),
      }),
    ]);
  });

  test('an endpoint that answers 500: webhook endpoint ✗ with what it answered', async () => {
    hook.status = 500;
    const d = await diagnose(good());
    expect(failed(d)).toEqual([
      expect.objectContaining({ name: 'webhook endpoint', detail: 'answered 500', fix: expect.stringContaining('2xx') }),
    ]);
  });

  test('a wrong webhook secret: the endpoint refuses the signature, and the fix says so', async () => {
    const d = await diagnose({ ...good(), webhookSecret: 'whsec_wrong' });
    expect(failed(d)).toEqual([
      expect.objectContaining({
        name: 'webhook endpoint',
        detail: 'answered 400: bad signature',
        fix: expect.stringContaining('signature'),
      }),
    ]);
  });

  test('nothing listening at baseUrl: service reachable ✗ with a fix', async () => {
    // A port that was just free: connecting is refused.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));
    const d = await diagnose({ ...good(), baseUrl: `http://127.0.0.1:${port}` });
    expect(failed(d)).toEqual([
      expect.objectContaining({ name: 'service reachable', fix: expect.stringMatching(/Nothing listens at baseUrl/) }),
    ]);
  });
});

const webhookCheck = (d: Diagnosis) => d.checks.find((c) => c.name === 'webhook endpoint')!;
const production = (): DiagnoseOptions => ({
  ...good(),
  environment: 'production',
  ...mock.credentials.production,
  webhookSecret: mock.credentials.production.webhookSecret,
});

describe("doctor's test delivery", () => {
  test('a complete, documented payment.completed for a test transaction: every field of the spec payload', async () => {
    await diagnose(good());
    expect(hook.received).toHaveLength(1);
    const { event, headers } = hook.received[0]!;
    expect(headers['x-environment']).toBe('sandbox');
    expect(headers['x-service-event']).toBe('payment.completed');
    expect(event).toEqual({
      id: expect.stringMatching(/^evt_doctor_test_[0-9a-f]{12}$/),
      type: 'payment.completed',
      format: 'current',
      api_version: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/),
      data: {
        trx_id: expect.stringMatching(/^TRX_DOCTOR_TEST_[0-9A-F]{12}$/),
        merchant_ref: 'doctor-test',
        status: 'completed',
        amount: { value: 1000, currency: 'TZS' },
        settlement: {
          gross: { value: 1000, currency: 'TZS' },
          fees: { value: 30, currency: 'TZS' },
          net: { value: 970, currency: 'TZS' },
        },
        customer: { name: expect.stringContaining('test'), email: 'doctor-test@example.com', phone: '255700000000' },
        environment: 'sandbox',
      },
    });
  });

  test('a createFulfillment handler: it verifies, finds no such payment, fulfils nothing: ✓ reachable and verifying', async () => {
    const client = new PaymentsClient({ environment: 'sandbox', baseUrl: server.url, ...mock.credentials.sandbox });
    const paid: unknown[] = [];
    const fulfillment = createFulfillment({
      environment: 'sandbox',
      secret: mock.credentials.webhookSecret,
      client,
      onPaid: (tx) => void paid.push(tx),
    });
    const kit = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', async () => {
        const { status, body } = await fulfillment.handleWebhook({ payload: Buffer.concat(chunks), headers: req.headers });
        res.writeHead(status, { 'content-type': 'application/json' }).end(body);
      });
    });
    await new Promise<void>((resolve) => kit.listen(0, '127.0.0.1', resolve));
    try {
      const d = await diagnose({ ...good(), webhookUrl: `http://127.0.0.1:${(kit.address() as AddressInfo).port}/hooks` });
      expect(webhookCheck(d)).toEqual({
        name: 'webhook endpoint',
        status: 'pass',
        detail: expect.stringMatching(
          /^answered \d{3}: .*TRX_DOCTOR_TEST_\w+.*\. Reachable and verifying: .*verifies before it fulfils answers so\)$/,
        ),
      });
      expect(d.ok).toBe(true);
      expect(paid).toEqual([]);
    } finally {
      await new Promise((resolve) => kit.close(resolve));
    }
  });

  test.each([
    [409, '', 'pass'],
    [404, '{"error":"unknown transaction {trx}"}', 'pass'],
    [422, 'no order for {trx}', 'pass'],
    [503, 'payment {trx} not found', 'pass'],
    [401, 'invalid signature for {trx}', 'fail'],
    [404, 'Cannot POST /hooks', 'fail'],
  ] as const)('an answer %i %j: %s', async (status, body, expected) => {
    Object.assign(hook, { status, body });
    const check = webhookCheck(await diagnose(good()));
    expect(check.status).toBe(expected);
    if (expected === 'pass') expect(check.detail).toContain('Reachable and verifying');
    if (status === 401) expect(check.fix).toMatch(/refused the signature: .*the sandbox one/);
    if (expected === 'fail' && status === 404) expect(check.fix).toMatch(/Nothing answers at this path/);
  });

  test('a redirect: ✗, the service does not follow it', async () => {
    Object.assign(hook, { status: 308, headers: { location: 'https://shop.example.com/hooks/' } });
    const check = webhookCheck(await diagnose(good()));
    expect(check).toMatchObject({
      status: 'fail',
      detail: 'answered 308',
      fix: expect.stringContaining('https://shop.example.com/hooks/'),
    });
  });

  test('production: not sent without confirmProduction (– with why and how), sent with it', async () => {
    const refused = await diagnose(production());
    expect(webhookCheck(refused)).toEqual({
      name: 'webhook endpoint',
      status: 'skip',
      detail: expect.stringMatching(/^not sent: the client is for production.*--yes \(CLI\) or confirmProduction: true \(diagnose\)\.$/),
    });
    expect(hook.received).toEqual([]);

    const sent = await diagnose({ ...production(), confirmProduction: true });
    expect(webhookCheck(sent).status).toBe('pass');
    expect(hook.received).toHaveLength(1);
    expect(hook.received[0]!.headers['x-environment']).toBe('production');
    expect(hook.received[0]!.event.data).toMatchObject({ environment: 'production', trx_id: expect.stringMatching(/^TRX_DOCTOR_TEST_/) });
  });
});

describe('business-payments doctor', () => {
  test('all ✓ against the running sandbox: exit 0', async () => {
    const run = await runCli(
      [
        'doctor',
        '--base-url',
        server.url,
        '--merchant-key',
        mock.credentials.sandbox.merchantKey,
        '--api-key',
        mock.credentials.sandbox.apiKey,
        '--api-secret',
        mock.credentials.sandbox.apiSecret,
        '--webhook-url',
        hookUrl,
        '--webhook-secret',
        mock.credentials.webhookSecret,
      ],
      { env: {} },
    );
    expect(run.code).toBe(0);
    // Each value named by its flag; the environment is the default.
    expect(run.stdout).toMatch(
      /^✓ configuration: sandbox at http:\/\/\S+ \(environment by default; baseUrl from --base-url; merchantKey from --merchant-key; apiKey from --api-key; apiSecret from --api-secret\)\n/,
    );
    expect(run.stdout).not.toContain('✗');
    expect(run.stdout).toMatch(/All checks passed\.\n$/);
  });

  test('a fault: ✗ with its fix, exit 1; --json for machines', async () => {
    const env = {
      BUSINESS_PAYMENTS_BASE_URL: server.url,
      BUSINESS_PAYMENTS_MERCHANT_KEY: mock.credentials.sandbox.merchantKey,
      BUSINESS_PAYMENTS_API_KEY: mock.credentials.sandbox.apiKey,
      BUSINESS_PAYMENTS_API_SECRET: 'test_wrong',
    };
    const run = await runCli(['doctor'], { env });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^✗ credentials: Invalid API credentials: .*\n {4}fix: /m);
    // Values from variables are named by them, never called options.
    expect(run.stdout).toMatch(
      /^✓ configuration: sandbox at \S+ \(environment by default; baseUrl from BUSINESS_PAYMENTS_BASE_URL; merchantKey from BUSINESS_PAYMENTS_MERCHANT_KEY; apiKey from BUSINESS_PAYMENTS_API_KEY; apiSecret from BUSINESS_PAYMENTS_API_SECRET\)$/m,
    );
    expect(run.stdout).toMatch(
      /fix: .*\(now merchantKey from BUSINESS_PAYMENTS_MERCHANT_KEY; .*apiSecret from BUSINESS_PAYMENTS_API_SECRET\)\.$/m,
    );
    expect(run.stdout).not.toMatch(/option/);
    const json = await runCli(['doctor', '--json'], { env });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      checks: expect.arrayContaining([expect.objectContaining({ name: 'credentials', status: 'fail' })]),
    });
  });

  test('production: the test delivery waits for --yes; the production webhook secret comes from its own variable', async () => {
    const env = {
      BUSINESS_PAYMENTS_ENVIRONMENT: 'production',
      BUSINESS_PAYMENTS_BASE_URL: server.url,
      BUSINESS_PAYMENTS_MERCHANT_KEY: mock.credentials.production.merchantKey,
      BUSINESS_PAYMENTS_API_KEY: mock.credentials.production.apiKey,
      BUSINESS_PAYMENTS_API_SECRET: mock.credentials.production.apiSecret,
      BUSINESS_PAYMENTS_WEBHOOK_SECRET: mock.credentials.sandbox.webhookSecret,
      BUSINESS_PAYMENTS_WEBHOOK_SECRET_PRODUCTION: mock.credentials.production.webhookSecret,
    };
    const refused = await runCli(['doctor', '--webhook-url', hookUrl], { env });
    expect(refused.stdout).toMatch(/^– webhook endpoint: not sent: the client is for production.*--yes \(CLI\)/m);
    expect(hook.received).toEqual([]);

    const sent = await runCli(['doctor', '--webhook-url', hookUrl, '--yes', '--json'], { env });
    expect(JSON.parse(sent.stdout)).toMatchObject({
      checks: expect.arrayContaining([expect.objectContaining({ name: 'webhook endpoint', status: 'pass' })]),
    });
    expect(hook.received.map((r) => r.headers['x-environment'])).toEqual(['production']);
  });
});

describe('business-payments doctor: where each value came from, and a clock that is off', () => {
  const creds = () => mock.credentials.sandbox;

  test('a variable at fault: ✗ configuration names the variable, and the fix says to correct it there', async () => {
    const env = {
      BUSINESS_PAYMENTS_BASE_URL: server.url,
      BUSINESS_PAYMENTS_MERCHANT_KEY: creds().merchantKey,
      BUSINESS_PAYMENTS_API_KEY: 'live_key_in_the_sandbox',
      BUSINESS_PAYMENTS_API_SECRET: creds().apiSecret,
    };
    const run = await runCli(['doctor'], { env });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /^✗ configuration: BUSINESS_PAYMENTS_API_KEY is a live_ \(production\) credential but environment is 'sandbox'/m,
    );
    expect(run.stdout).toMatch(
      /^ {4}fix: Correct BUSINESS_PAYMENTS_API_KEY, where the value named above came from, or the environment \(environment by default\)\.$/m,
    );
    expect(run.stdout).not.toMatch(/option/);
  });

  test('a flag at fault: named as the flag', async () => {
    const run = await runCli(
      ['doctor', '--base-url', 'ftp://payments.example.com', '--merchant-key', creds().merchantKey, '--api-key', creds().apiKey],
      { env: { BUSINESS_PAYMENTS_API_SECRET: creds().apiSecret, BUSINESS_PAYMENTS_ENVIRONMENT: 'sandbox' } },
    );
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^✗ configuration: baseUrl \(from --base-url\) must use https:/m);
    expect(run.stdout).toMatch(/^ {4}fix: Correct --base-url, where the value named above came from\.$/m);
  });

  test('the webhook secret from its variable: a refused signature names it', async () => {
    const env = {
      BUSINESS_PAYMENTS_BASE_URL: server.url,
      BUSINESS_PAYMENTS_MERCHANT_KEY: creds().merchantKey,
      BUSINESS_PAYMENTS_API_KEY: creds().apiKey,
      BUSINESS_PAYMENTS_API_SECRET: creds().apiSecret,
      BUSINESS_PAYMENTS_WEBHOOK_SECRET_SANDBOX: 'whsec_wrong',
    };
    const run = await runCli(['doctor', '--webhook-url', hookUrl], { env });
    expect(run.stdout).toMatch(/^✗ webhook endpoint: answered 400: bad signature$/m);
    expect(run.stdout).toContain('(the sandbox one, webhookSecret from BUSINESS_PAYMENTS_WEBHOOK_SECRET_SANDBOX)');
  });

  test('a sandbox an hour ahead (this clock an hour behind): ✗ clock with the skew and NTP, – credentials, exit 1', async () => {
    const skewed = createMockService({ autoRun: false, now: () => Date.now() + 3_600_000 });
    const at = await skewed.listen({ port: 0 });
    try {
      const { merchantKey, apiKey, apiSecret } = skewed.credentials.sandbox;
      const run = await runCli(
        ['doctor', '--base-url', at.url, '--merchant-key', merchantKey, '--api-key', apiKey, '--api-secret', apiSecret],
        {
          env: {},
        },
      );
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(
        /^✗ clock: the local clock is 3\d{3} s behind the service's \(its Date header\): the service refused the signed request \(401 Invalid API credentials\) for it\n {4}fix: Synchronise this machine's clock with NTP/m,
      );
      expect(run.stdout).toMatch(/^– credentials: not judged: the service answered 401/m);
      expect(run.stdout).not.toMatch(/✗ credentials/);
      expect(run.stdout.match(/^✗/gm)).toHaveLength(1);
    } finally {
      await at.close();
      await skewed.close();
    }
  });
});

type Schemas = Record<string, { properties: Record<string, unknown>; required?: string[] }>;

/** A fetch that serves the sandbox, with its openapi.json changed by `change`. */
function rewriteOpenApi(change: (schemas: Schemas) => void): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const url = input instanceof Request ? input.url : String(input);
    if (!url.endsWith('/api/v1/openapi.json')) return response;
    const doc = (await response.json()) as { components: { schemas: Schemas } };
    change(doc.components.schemas);
    return new Response(JSON.stringify(doc), { status: 200, headers: { 'content-type': 'application/json' } });
  };
}

function renameProperty(schema: Schemas[string], from: string, to: string): void {
  schema.properties[to] = schema.properties[from];
  delete schema.properties[from];
  schema.required = schema.required?.map((name) => (name === from ? to : name));
}
