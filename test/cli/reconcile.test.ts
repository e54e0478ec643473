// `business-payments reconcile` against a running sandbox: the dry run (verify only, from
// the BUSINESS_PAYMENTS_* variables) and the sweep through a merchant's own fulfillment
// module (--fulfillment), plus the argument errors.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { PaymentsClient } from '../../src/index.js';
import { createMockService, type MockServer, type MockService } from '../../src/testing.js';
import { expectUsageError, runCli } from '../support/cli.js';

let mock: MockService;
let server: MockServer;
let dir: string;
let env: Record<string, string>;
const trx = { paid: '', failed: '', pending: '', boom: '' };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bp-reconcile-'));
  mock = createMockService({ autoRun: false, rateLimitPerMinute: 100_000 });
  server = await mock.listen({ port: 0 });
  env = {
    BUSINESS_PAYMENTS_ENVIRONMENT: 'sandbox',
    BUSINESS_PAYMENTS_BASE_URL: server.url,
    BUSINESS_PAYMENTS_MERCHANT_KEY: mock.credentials.sandbox.merchantKey,
    BUSINESS_PAYMENTS_API_KEY: mock.credentials.sandbox.apiKey,
    BUSINESS_PAYMENTS_API_SECRET: mock.credentials.sandbox.apiSecret,
  };
  const client = new PaymentsClient({ environment: 'sandbox', baseUrl: server.url, ...mock.credentials.sandbox });
  // Their webhooks never come: the sandbox does not run its deliveries (autoRun: false).
  const create = async (ref: string) =>
    (await client.payments.create({ payment_amount: 25, currency_code: 'USD', ref_trx: ref, ipn_url: 'http://127.0.0.1:9/hooks' })).trx_id;
  trx.paid = await create('order-paid');
  trx.failed = await create('order-failed');
  trx.pending = await create('order-pending');
  trx.boom = await create('order-boom');
  await mock.completeCheckout(trx.paid, 'success');
  await mock.completeCheckout(trx.failed, 'failed');
  await mock.completeCheckout(trx.boom, 'success');
});
afterAll(async () => {
  await server.close();
  await mock.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A merchant's fulfillment module, as --fulfillment loads it; what its handlers ran lands in globalThis[name]. */
function fulfillmentModule(name: string, exportAs: 'named' | 'default' = 'named', durable = true): string {
  const file = join(dir, `${name}.mjs`);
  // The sweeps below keep their store in this process (as a database would keep it across
  // runs): a memory store that says it is durable. A plain memoryStore() is refused.
  const store = durable ? '{ ...memoryStore(), durable: true }' : 'memoryStore()';
  writeFileSync(
    file,
    `import { createFulfillment, memoryStore } from 'business-payments/fulfillment';
import { PaymentsClient } from 'business-payments';
const ran = (globalThis[${JSON.stringify(name)}] = { paid: [], failed: [] });
const client = new PaymentsClient(${JSON.stringify({ environment: 'sandbox', baseUrl: server.url, ...mock.credentials.sandbox })});
const kit = createFulfillment({
  environment: 'sandbox',
  secret: ${JSON.stringify(mock.credentials.webhookSecret)},
  client,
  store: ${store},
  onPaid: (tx) => {
    if (tx.merchant_ref === 'order-boom') throw new Error('the warehouse is closed');
    ran.paid.push(tx.merchant_ref);
  },
  onFailed: (tx) => void ran.failed.push(tx.merchant_ref),
});
${exportAs === 'named' ? 'export const fulfillment = kit;' : 'export default kit;'}
export const helper = 1;
`,
  );
  return file;
}
const ran = (name: string) => (globalThis as unknown as Record<string, { paid: string[]; failed: string[] }>)[name]!;

describe('reconcile: dry run (no --fulfillment)', () => {
  test('lists what verify says of each payment in the window; nothing recorded; exit 0', async () => {
    const run = await runCli(['reconcile', '--since', '24h', '--older-than', '0'], { env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^Dry run \(no --fulfillment\) on sandbox at http:\/\/127\.0\.0\.1:\d+: verify only; no store, no handler ran, nothing recorded\.\n/,
    );
    expect(run.stdout).toMatch(new RegExp(`^  ${trx.paid} +order-paid +success +USD 25 +\\d{4}-`, 'm'));
    expect(run.stdout).toMatch(new RegExp(`^  ${trx.failed} +order-failed +failed +USD 25 `, 'm'));
    expect(run.stdout).toMatch(new RegExp(`^  ${trx.pending} +order-pending +pending +USD 25 `, 'm'));
    expect(run.stdout).toMatch(/^ {2}seen +4 {2}payments the walk looked at$/m);
    expect(run.stdout).toMatch(/^ {2}paid +2 {2}success at the service$/m);
    expect(run.stdout).toMatch(/^ {2}errors +0$/m);
  });

  test('--json: the report on stdout, with each payment verified', async () => {
    const run = await runCli(['reconcile', '--since', '24h', '--older-than', '0', '--json'], { env });
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(report).toMatchObject({
      mode: 'dry-run',
      olderThan: 0,
      seen: 4,
      checked: 4,
      paid: 2,
      failed: 1,
      pending: 1,
      busy: 0,
      errors: [],
    });
    expect(Date.now() - Date.parse(report.since as string)).toBeGreaterThanOrEqual(86_400_000);
    expect(report.payments).toContainEqual(
      expect.objectContaining({ trx_id: trx.failed, merchant_ref: 'order-failed', status: 'failed', amount: 25, currency: 'USD' }),
    );
  });

  test('the default --older-than 10m leaves payments this young alone: seen, not checked', async () => {
    const run = await runCli(['reconcile', '--since', '1h', '--json'], { env });
    expect(JSON.parse(run.stdout)).toMatchObject({ mode: 'dry-run', olderThan: 600_000, seen: 4, checked: 0, payments: [] });
  });

  test('--since as an ISO date takes the payments since then', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const run = await runCli(['reconcile', '--since', today, '--older-than', '0', '--json'], { env });
    expect(JSON.parse(run.stdout)).toMatchObject({ since: `${today}T00:00:00.000Z`, checked: 4 });
  });

  test('on a terminal: a progress line on stderr, overwritten in place and erased before the report', async () => {
    let stderr = '';
    const run = await runCli(['reconcile', '--since', '24h', '--older-than', '0'], {
      env,
      stderr: { write: (text: string) => (stderr += text), isTTY: true } as never,
    });
    expect(run.code).toBe(0);
    expect(stderr).toMatch(/^\r\x1b\[2Kreconcile: 1 seen, 1 checked: /);
    expect(stderr.endsWith('\r\x1b[2K')).toBe(true);
    expect(stderr).not.toContain('\n');
  });

  test('refused credentials: the walk fails, exit 1 with the reason', async () => {
    const run = await runCli(['reconcile', '--since', '24h'], { env: { ...env, BUSINESS_PAYMENTS_API_SECRET: 'test_wrong' } });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^business-payments reconcile: .*Invalid API credentials/);
  });

  test('interrupted (Ctrl+C aborts io.signal): no report, exit 1, says to run it again', async () => {
    const run = await runCli(['reconcile', '--since', '24h'], { env, signal: AbortSignal.abort() });
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr: 'business-payments reconcile: interrupted after 0 payment(s); run it again to go on\n',
    });
  });

  test('no credentials: exit 2 naming what to set', async () => {
    expectUsageError(await runCli(['reconcile', '--since', '24h'], { env: {} }), /^business-payments reconcile: .*merchant/i);
  });
});

describe('reconcile --fulfillment', () => {
  test("runs the module's reconcile: onPaid and onFailed once each, a handler's throw is an error (exit 1); again: only that one", async () => {
    const file = fulfillmentModule('sweepOne');
    const first = await runCli(['reconcile', '--since', '24h', '--older-than', '0', '--fulfillment', file], { env: {} });
    expect(first.code).toBe(1);
    expect(first.stdout).toMatch(
      /^Reconciled with .*sweepOne\.mjs \(its client, store and handlers\)\.\nPayments created since \S+, older than 0s:\n/,
    );
    expect(first.stdout).toMatch(/^ {2}paid +1 {2}settled as paid now \(onPaid ran\)$/m);
    expect(first.stdout).toMatch(/^ {2}failed +1 /m);
    expect(first.stdout).toMatch(/^ {2}pending +1 /m);
    expect(first.stdout).toMatch(new RegExp(`^Errors \\(run it again to retry them\\):\\n  ${trx.boom}  the warehouse is closed$`, 'm'));
    expect(ran('sweepOne')).toEqual({ paid: ['order-paid'], failed: ['order-failed'] });

    // The module is loaded once per process: the same store, so what is settled stays settled.
    const again = await runCli(['reconcile', '--since', '24h', '--older-than', '0', '--fulfillment', file, '--json'], { env: {} });
    expect(JSON.parse(again.stdout)).toMatchObject({
      mode: 'fulfillment',
      seen: 4,
      checked: 2,
      paid: 0,
      failed: 0,
      pending: 1,
      errors: [{ trx_id: trx.boom, message: 'the warehouse is closed' }],
    });
    expect(ran('sweepOne')).toEqual({ paid: ['order-paid'], failed: ['order-failed'] });
  });

  test('a default export, found from a path relative to the working directory', async () => {
    fulfillmentModule('sweepDefault', 'default');
    const run = await runCli(['reconcile', '--since', '24h', '--older-than', '0', '--fulfillment', './sweepDefault.mjs', '--json'], {
      env: {},
      cwd: dir,
    });
    expect(JSON.parse(run.stdout)).toMatchObject({ mode: 'fulfillment', paid: 1, failed: 1 });
  });

  test('a fulfillment on memoryStore() is refused (exit 2): it starts empty, and every paid payment would be fulfilled again', async () => {
    const file = fulfillmentModule('sweepMemory', 'named', false);
    const run = await runCli(['reconcile', '--since', '24h', '--older-than', '0', '--fulfillment', file], { env: {} });
    expectUsageError(run, /^business-payments reconcile: --fulfillment .*sweepMemory\.mjs uses memoryStore\(\), which starts empty here/);
    expect(ran('sweepMemory')).toEqual({ paid: [], failed: [] });
  });

  test('a module without a fulfillment, a missing file, client options with it: exit 2', async () => {
    const empty = join(dir, 'empty.mjs');
    writeFileSync(empty, 'export const fulfilment = {};\n');
    expectUsageError(
      await runCli(['reconcile', '--since', '24h', '--fulfillment', empty]),
      /^business-payments reconcile: --fulfillment .*empty\.mjs exports no fulfillment: export const fulfillment = createFulfillment/,
    );
    expectUsageError(
      await runCli(['reconcile', '--since', '24h', '--fulfillment', 'nope.mjs'], { cwd: dir }),
      /^business-payments reconcile: --fulfillment: no file at .*nope\.mjs$/,
    );
    expectUsageError(
      await runCli(['reconcile', '--since', '24h', '--fulfillment', empty, '--base-url', 'http://127.0.0.1:1']),
      /^business-payments reconcile: --base-url is for the dry run: with --fulfillment, your module's client is used$/,
    );
  });

  test('a module that throws as it loads: exit 1 with its message', async () => {
    const broken = join(dir, 'broken.mjs');
    writeFileSync(broken, "throw new Error('DATABASE_URL is not set');\n");
    const run = await runCli(['reconcile', '--since', '24h', '--fulfillment', broken]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^business-payments reconcile: --fulfillment .*broken\.mjs could not be loaded: DATABASE_URL is not set\n$/);
  });
});

describe('reconcile: bad arguments (exit 2)', () => {
  test.each([
    [[], /^business-payments reconcile: missing --since$/],
    [['--since', 'yesterday'], /--since must be a duration such as 24h or an ISO 8601 date, got 'yesterday'$/],
    [['--since', '24'], /--since must be a duration/],
    [['--since', '2999-01-01'], /--since 2999-01-01 is in the future$/],
    [['--since', '24h', '--older-than', '10'], /--older-than must be a duration such as 30m, 24h or 7d, got '10'$/],
    [['--since', '24h', '--older-than', '-5m'], /--older-than must be a duration/],
    [['--since', '24h', '--environment', 'staging'], /--environment must be sandbox or production, got 'staging'$/],
    [['--since', '24h', '--nope'], /Unknown option '--nope'$/],
  ])('%j', async (args, reason) => {
    expectUsageError(await runCli(['reconcile', ...args], { env }), reason);
  });

  test('--help prints the usage on stdout', async () => {
    const run = await runCli(['reconcile', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: business-payments reconcile --since WHEN/);
  });
});
