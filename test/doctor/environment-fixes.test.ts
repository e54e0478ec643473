// diagnose() where the environment is at fault, not a key or the webhook signature (issue):
// - the webhook endpoint is for the other environment: it says so (the fulfillment kit's 400
//   environment_mismatch), or it takes the same test delivery marked for the other environment
//   (sent marked production only with confirmProduction); the fix names the environment;
// - BUSINESS_PAYMENTS_ENVIRONMENT forgotten (sandbox by default) with production keys, which
//   carry no prefix: the fix says to set the environment, not to use the sandbox keys.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { diagnose, type DiagnoseOptions, type Diagnosis } from '../../src/doctor.js';
import { createFulfillment } from '../../src/fulfillment.js';
import { PaymentsClient } from '../../src/index.js';
import { createMockService, type MockServer, type MockService } from '../../src/testing.js';
import { verifyWebhook } from '../../src/webhooks.js';
import { runCli } from '../support/cli.js';

const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

type Sandbox = { mock: MockService; server: MockServer };
async function sandbox(generation: 'current' | 'earlier' = 'current'): Promise<Sandbox> {
  const mock = createMockService({ autoRun: false, generation });
  const server = await mock.listen({ port: 0 });
  closers.push(
    () => server.close(),
    () => mock.close(),
  );
  return { mock, server };
}

/** A node:http endpoint; `handle` gets the raw body. Resolves to its URL, and what it received (X-Environment of each). */
async function endpoint(handle: (req: IncomingMessage, body: Buffer, res: ServerResponse) => Promise<void>) {
  const received: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push(String(req.headers['x-environment']));
      void handle(req, Buffer.concat(chunks), res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received };
}

/** An endpoint that verifies for one environment and says nothing of why it refuses: 401 `bad signature`. */
const opaque = (environment: 'sandbox' | 'production', secret: string) =>
  endpoint(async (req, body, res) => {
    const event = await verifyWebhook({ payload: body, headers: req.headers, secret, environment }).catch(() => undefined);
    res.writeHead(event ? 204 : 401).end(event ? '' : 'bad signature');
  });

const check = (d: Diagnosis, name: string) => d.checks.find((c) => c.name === name)!;
const failed = (d: Diagnosis) => d.checks.filter((c) => c.status === 'fail').map((c) => c.name);
const options = ({ mock, server }: Sandbox, environment: 'sandbox' | 'production' = 'sandbox'): DiagnoseOptions => ({
  environment,
  baseUrl: server.url,
  ...mock.credentials[environment],
});

describe('the webhook endpoint is for the other environment: the fix names the environment, not the signature', () => {
  let box: Sandbox;
  beforeAll(async () => {
    box = await sandbox();
  });

  test("a production fulfillment kit, doctor for the sandbox: the kit's 400 environment_mismatch", async () => {
    const { mock, server } = box;
    const client = new PaymentsClient({ environment: 'production', baseUrl: server.url, ...mock.credentials.production });
    const paid: unknown[] = [];
    const kit = createFulfillment({
      environment: 'production',
      secret: mock.credentials.webhookSecret,
      client,
      onPaid: (tx) => void paid.push(tx),
    });
    const hook = await endpoint(async (req, body, res) => {
      const { status, body: said } = await kit.handleWebhook({ payload: body, headers: req.headers });
      res.writeHead(status, { 'content-type': 'application/json' }).end(said);
    });
    const { environment: _, ...rest } = options(box);
    const d = await diagnose({ ...rest, webhookUrl: hook.url, webhookSecret: mock.credentials.webhookSecret });
    expect(failed(d)).toEqual(['webhook endpoint']);
    expect(check(d, 'webhook endpoint')).toEqual({
      name: 'webhook endpoint',
      status: 'fail',
      detail: expect.stringMatching(/^answered 400: .*environment_mismatch/),
      fix:
        'The endpoint is for the production environment, this configuration for sandbox (environment by default): ' +
        "give doctor your sandbox endpoint's URL, or check this one with the production configuration " +
        "(environment: 'production', with the production keys and webhook secret).",
    });
    expect(check(d, 'webhook endpoint').fix).not.toMatch(/signature/i);
    // Its own words were enough: one delivery, marked sandbox.
    expect(hook.received).toEqual(['sandbox']);
    expect(paid).toEqual([]);
  });

  test('an endpoint that answers 401 for anything: with confirmProduction, the same delivery marked production is taken', async () => {
    const secret = box.mock.credentials.webhookSecret;
    const hook = await opaque('production', secret);
    const d = await diagnose({ ...options(box), webhookUrl: hook.url, webhookSecret: secret, confirmProduction: true });
    expect(failed(d)).toEqual(['webhook endpoint']);
    expect(check(d, 'webhook endpoint')).toMatchObject({
      status: 'fail',
      detail: 'answered 401: bad signature; the same test delivery marked production was accepted (answered 204)',
      fix: expect.stringMatching(
        /^The endpoint is for the production environment, this configuration for sandbox \(environment from the environment option\): /,
      ),
    });
    expect(check(d, 'webhook endpoint').fix).not.toMatch(/signature/i);
    expect(hook.received).toEqual(['sandbox', 'production']);
  });

  test('the same endpoint without confirmProduction: nothing marked production is sent, and the signature fix stands', async () => {
    const secret = box.mock.credentials.webhookSecret;
    const hook = await opaque('production', secret);
    const d = await diagnose({ ...options(box), webhookUrl: hook.url, webhookSecret: secret });
    expect(check(d, 'webhook endpoint').fix).toMatch(/^The endpoint refused the signature: /);
    expect(hook.received).toEqual(['sandbox']);
  });

  test('doctor for production (confirmed), a sandbox endpoint: the delivery marked sandbox is taken', async () => {
    const secret = box.mock.credentials.production.webhookSecret;
    const hook = await opaque('sandbox', secret);
    const d = await diagnose({ ...options(box, 'production'), webhookUrl: hook.url, webhookSecret: secret, confirmProduction: true });
    expect(check(d, 'webhook endpoint')).toMatchObject({
      status: 'fail',
      detail: 'answered 401: bad signature; the same test delivery marked sandbox was accepted (answered 204)',
      fix: expect.stringMatching(/^The endpoint is for the sandbox environment, this configuration for production /),
    });
    expect(hook.received).toEqual(['production', 'sandbox']);
  });

  test('a wrong secret (refused whatever the environment): still the signature fix', async () => {
    const hook = await opaque('production', 'whsec_the_endpoints_own');
    const d = await diagnose({ ...options(box), webhookUrl: hook.url, webhookSecret: 'whsec_another', confirmProduction: true });
    expect(check(d, 'webhook endpoint')).toMatchObject({
      detail: 'answered 401: bad signature',
      fix: expect.stringMatching(
        /^The endpoint refused the signature: check it verifies the raw body with this secret \(the sandbox one, /,
      ),
    });
    expect(hook.received).toEqual(['sandbox', 'production']);
  });

  test("the earlier generation's IPN form: the body's environment is the other one's too", async () => {
    const earlier = await sandbox('earlier');
    const secret = earlier.mock.credentials.production.apiSecret;
    const hook = await opaque('sandbox', secret);
    const d = await diagnose({ ...options(earlier, 'production'), webhookUrl: hook.url, webhookSecret: secret, confirmProduction: true });
    expect(d.generation).toBe('earlier');
    expect(check(d, 'webhook endpoint')).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/; the same test delivery marked sandbox was accepted \(answered 204\)$/),
      fix: expect.stringMatching(/^The endpoint is for the sandbox environment/),
    });
  });
});

describe('the environment forgotten, production keys (no prefix): set the environment, not "use the sandbox keys"', () => {
  const PRODUCTION_KEYS = { merchantKey: 'merchant-key-2002', apiKey: 'api-key-2002', apiSecret: 'api-secret-2002' };
  let box: Sandbox;
  beforeAll(async () => {
    box = await sandbox();
    // Production keys as the service hands them out: no prefix.
    Object.assign(box.mock.state.merchants[0]!.credentials.production, PRODUCTION_KEYS);
  });

  test('code options without environment: credentials ✗ with the environment fix, naming each source', async () => {
    const d = await diagnose({ baseUrl: box.server.url, ...PRODUCTION_KEYS });
    expect(check(d, 'configuration').detail).toMatch(/^sandbox at /);
    expect(failed(d)).toEqual(['credentials']);
    expect(check(d, 'credentials').fix).toBe(
      "These look like production keys (no test_ prefix): set BUSINESS_PAYMENTS_ENVIRONMENT=production (or environment: 'production'). " +
        'Now environment by default; merchantKey, apiKey, apiSecret from code options.',
    );
    expect(JSON.stringify(d)).not.toMatch(/of the sandbox environment/);
    // The fix is right: with the environment set, everything passes.
    const fixed = await diagnose({ baseUrl: box.server.url, ...PRODUCTION_KEYS, environment: 'production' });
    expect(failed(fixed)).toEqual([]);
  });

  test('environment variables: each named by its variable', async () => {
    vi.stubEnv('BUSINESS_PAYMENTS_ENVIRONMENT', '');
    vi.stubEnv('BUSINESS_PAYMENTS_BASE_URL', box.server.url);
    vi.stubEnv('BUSINESS_PAYMENTS_MERCHANT_KEY', PRODUCTION_KEYS.merchantKey);
    vi.stubEnv('BUSINESS_PAYMENTS_API_KEY', PRODUCTION_KEYS.apiKey);
    vi.stubEnv('BUSINESS_PAYMENTS_API_SECRET', PRODUCTION_KEYS.apiSecret);
    const d = await diagnose();
    expect(check(d, 'credentials').fix).toBe(
      "These look like production keys (no test_ prefix): set BUSINESS_PAYMENTS_ENVIRONMENT=production (or environment: 'production'). " +
        'Now environment by default; merchantKey from BUSINESS_PAYMENTS_MERCHANT_KEY; apiKey from BUSINESS_PAYMENTS_API_KEY; ' +
        'apiSecret from BUSINESS_PAYMENTS_API_SECRET.',
    );
  });

  test('sandbox keys (test_) that are wrong: still "use the sandbox credentials"', async () => {
    const d = await diagnose({ ...options(box), apiSecret: 'test_wrong_secret' });
    expect(check(d, 'credentials').fix).toMatch(/^Use the merchant key, API key and API secret of the sandbox environment/);
  });

  test('the CLI against the earlier generation (production keys unprefixed there): the fix, with flags named', async () => {
    const earlier = await sandbox('earlier');
    const keys = earlier.mock.credentials.production;
    expect(keys.merchantKey).not.toMatch(/^test_/);
    const run = await runCli(['doctor', '--base-url', earlier.server.url, '--merchant-key', keys.merchantKey, '--api-key', keys.apiKey], {
      env: { BUSINESS_PAYMENTS_API_SECRET: keys.apiSecret },
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^✗ credentials: Unauthorized: .*Invalid API credentials for the specified environment$/m);
    expect(run.stdout).toContain(
      "    fix: These look like production keys (no test_ prefix): set BUSINESS_PAYMENTS_ENVIRONMENT=production (or environment: 'production'). " +
        'Now environment by default; merchantKey from --merchant-key; apiKey from --api-key; apiSecret from BUSINESS_PAYMENTS_API_SECRET.\n',
    );
    // --environment sandbox given: the fix says to pass production there.
    const flagged = await runCli(
      [
        'doctor',
        '--environment',
        'sandbox',
        '--base-url',
        earlier.server.url,
        '--merchant-key',
        keys.merchantKey,
        '--api-key',
        keys.apiKey,
      ],
      { env: { BUSINESS_PAYMENTS_API_SECRET: keys.apiSecret } },
    );
    expect(flagged.stdout).toContain(
      'fix: These look like production keys (no test_ prefix): pass --environment production. Now environment from --environment;',
    );
  });
});
