// `business-payments billing list | reconcile` through a merchant's module (--billing): the real
// createBilling over the sandbox on a real socket, one test clock for the service, the
// client's signatures and the kit; its webhooks answered and dropped (lost), so what the kit
// knows of a charge is what reconcile reads. The merchant's modules are small files written
// to a temporary directory: each hands the CLI the kit the test put on globalThis.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { createBilling, memoryStore, type BillingKit } from '../../src/billing.js';
import { PaymentsClient } from '../../src/index.js';
import { createMockService, createTestClock, TEST_PHONE_NUMBERS, type MockServer, type MockService } from '../../src/testing.js';
import { expectUsageError, runCli } from '../support/cli.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const MONTH = 30 * DAY; // the sandbox's month
const TERMS = 'TZS 10,000 every month, charged by USSD push to this number, until you cancel.';

type Slot = { cliBillingKit?: unknown };
const slot = globalThis as unknown as Slot;

// The merchant's modules: the kit on globalThis, reached through a Proxy (a module is imported
// once per run, the kit is each test's own).
const KIT = 'new Proxy({}, { get: (_, name) => globalThis.cliBillingKit[name] })';
const cwd = mkdtempSync(join(tmpdir(), 'cli-billing-'));
const MODULES: Record<string, string> = {
  'billing.mjs': `export const billing = ${KIT};\nexport const helper = 1;\n`,
  'default-export.mjs': `export default ${KIT};\n`,
  'default-billing.mjs': `export default { billing: ${KIT} };\n`,
  'no-billing.mjs': 'export const helper = 1;\n',
};
for (const [name, text] of Object.entries(MODULES)) writeFileSync(join(cwd, name), text);

let open: { mock: MockService; server: MockServer } | undefined;
afterEach(async () => {
  delete slot.cliBillingKit;
  await open?.server.close();
  await open?.mock.close();
  open = undefined;
});
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

/**
 * The sandbox on a test clock, every webhook answered 200 and dropped; the real kit on a store
 * that says it is durable (a database would keep the records across runs), put where the
 * modules find it. `subscribe(customer, phone)` subscribes one customer to the plan.
 */
async function setup(store: Parameters<typeof createBilling>[0]['store'] = { ...memoryStore(), durable: true }) {
  const clock = createTestClock();
  const mock = createMockService({ clock, fetch: () => Promise.resolve(new Response(null, { status: 200 })) });
  const server = await mock.listen({ port: 0 });
  open = { mock, server };
  const client = new PaymentsClient({
    environment: 'sandbox',
    ...mock.credentials.sandbox,
    baseUrl: server.url,
    now: clock.now,
    maxRetries: 0,
  });
  const kit = createBilling({ client, store, now: clock.now });
  slot.cliBillingKit = kit;
  const plan = await client.billing.plans.create({ name: 'Clinic Pro', amount: 10_000, currency: 'TZS', interval: 'month' });
  const subscribe = async (customer: string, phone: string) =>
    (
      await kit.subscribe({
        customer,
        plan_code: plan.plan_code,
        customer_phone: phone,
        terms_shown: TERMS,
        consent: { at: clock.now(), ip: '203.0.113.7', userAgent: 'Mozilla/5.0', termsVersion: 'v3' },
        webhook_url: 'http://127.0.0.1:9/hooks',
      })
    ).record;
  return { mock, clock, kit, plan, subscribe };
}

/** No credential of the sandbox and no test phone number, beyond its last 3 digits, in `text`. */
function expectNothingSecret(text: string, mock: MockService): void {
  for (const value of Object.values(mock.credentials.sandbox)) if (value) expect(text).not.toContain(value);
  for (const number of Object.values(TEST_PHONE_NUMBERS)) expect(text).not.toContain(number.slice(3));
  expect(text).not.toContain('203.0.113.7');
}

/** A stand-in kit (for what the real one does not do on cue): durable, no records, `reconcile` as given. */
function fakeKit(reconcile: BillingKit['reconcile']): Pick<BillingKit, 'durable' | 'subscriptions' | 'reconcile'> {
  return { durable: true, subscriptions: () => Promise.resolve([]), reconcile };
}

describe('billing: help and subcommands', () => {
  test('alone, or --help: the usage with both subcommands on stdout, exit 0', async () => {
    for (const args of [['billing'], ['billing', '--help'], ['help', 'billing'], ['billing', 'reconcile', '-h']]) {
      const run = await runCli(args);
      expect(run.code).toBe(0);
      expect(run.stderr).toBe('');
      expect(run.stdout).toMatch(/^Usage: business-payments billing list --billing FILE \[--state S\] \[--limit N\] \[--json\]$/m);
      expect(run.stdout).toMatch(/^ {7}business-payments billing reconcile --billing FILE \[--json\]$/m);
      expect(run.stdout).toMatch(/pending, active, past_due, suspended, cancelled, ended/);
      expect(run.stdout).toMatch(/onChargedAfterCancel/);
    }
  });

  test('the top-level help lists it', async () => {
    expect((await runCli(['--help'])).stdout).toMatch(/^ {2}billing {9}list subscriptions, or reconcile/m);
  });

  test('an unknown subcommand, a stray argument or a missing subcommand is a usage error', async () => {
    expectUsageError(
      await runCli(['billing', 'cancel', '--billing', 'billing.mjs'], { cwd }),
      /unknown subcommand 'cancel': list or reconcile$/,
    );
    expectUsageError(await runCli(['billing', 'list', 'extra', '--billing', 'billing.mjs'], { cwd }), /unexpected argument 'extra'$/);
    expectUsageError(await runCli(['billing', '--json'], { cwd }), /^business-payments billing: missing subcommand: list or reconcile$/);
    expectUsageError(await runCli(['billing', 'list', '--bogus'], { cwd }), /^business-payments billing: Unknown option '--bogus'$/);
  });
});

describe('billing: loading --billing', () => {
  test('missing --billing, or no file there: exit 2', async () => {
    expectUsageError(await runCli(['billing', 'list'], { cwd }), /^business-payments billing: missing --billing$/);
    expectUsageError(await runCli(['billing', 'reconcile'], { cwd }), /^business-payments billing: missing --billing$/);
    expectUsageError(
      await runCli(['billing', 'list', '--billing', 'nowhere.mjs'], { cwd }),
      /^business-payments billing: --billing: no file at .*nowhere\.mjs$/,
    );
  });

  test('a module without billing: exit 2, saying what to export', async () => {
    for (const sub of ['list', 'reconcile']) {
      expectUsageError(
        await runCli(['billing', sub, '--billing', 'no-billing.mjs'], { cwd }),
        /--billing no-billing\.mjs exports no billing: export const billing = createBilling\(\{ \.\.\. \}\) \(or export default\)$/,
      );
    }
  });

  test('a memoryStore() kit (durable: false) is refused: it forgets with its process', async () => {
    await setup(memoryStore());
    expect((slot.cliBillingKit as BillingKit).durable).toBe(false);
    for (const sub of ['list', 'reconcile']) {
      expectUsageError(
        await runCli(['billing', sub, '--billing', 'billing.mjs'], { cwd }),
        /--billing billing\.mjs uses memoryStore\(\), which forgets with its process: .*postgresStore or redisStore/,
      );
    }
  });

  test('the default export, or its billing, works as the named one; an absolute path too', async () => {
    const { subscribe } = await setup();
    await subscribe('clinic-42', TEST_PHONE_NUMBERS.success);
    for (const file of ['default-export.mjs', 'default-billing.mjs']) {
      const run = await runCli(['billing', 'list', '--json', '--billing', join(cwd, file)]);
      expect(run.stderr).toBe('');
      expect((JSON.parse(run.stdout) as unknown[]).length).toBe(1);
    }
  });
});

describe('billing list', () => {
  test('a table: key, customer, plan, state, paid through, subscription id, charged after cancel; a count per state', async () => {
    const { mock, clock, kit, plan, subscribe } = await setup();
    const paying = await subscribe('clinic-1', TEST_PHONE_NUMBERS.success);
    await subscribe('clinic-2', TEST_PHONE_NUMBERS.insufficientFunds);
    await clock.advance(HOUR); // the first pushes answered: paid, and failed
    await kit.reconcile();
    await subscribe('clinic-3', TEST_PHONE_NUMBERS.success); // not charged yet
    const run = await runCli(['billing', 'list', '--billing', 'billing.mjs'], { cwd });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    const id = /sub_\S+/.source;
    expect(lines[0]).toMatch(/^ {2}key +customer +plan +state +paid through +subscription id +charged after cancel$/);
    const through = new Date(paying.createdAt + MONTH).toISOString().slice(0, 16);
    expect(run.stdout).toMatch(
      new RegExp(`^ {2}sub:clinic-1:${plan.plan_code}:1 +clinic-1 +${plan.plan_code} +active +${through}:\\d\\dZ +${id} +0$`, 'm'),
    );
    expect(run.stdout).toMatch(new RegExp(`^ {2}sub:clinic-2:${plan.plan_code}:1 +clinic-2 +\\S+ +pending +- +${id} +0$`, 'm'));
    expect(run.stdout).toMatch(new RegExp(`^ {2}sub:clinic-3:${plan.plan_code}:1 +clinic-3 +\\S+ +pending +- +${id} +0$`, 'm'));
    expect(run.stdout).toMatch(/^3 subscription\(s\): 2 pending, 1 active\.$/m);
    expect(run.stdout).not.toMatch(/charged after a cancel,/);
    expectNothingSecret(run.stdout, mock);
  });

  test('--state filters (checked against the six states), --limit caps', async () => {
    const { clock, kit, subscribe } = await setup();
    await subscribe('clinic-1', TEST_PHONE_NUMBERS.success);
    await subscribe('clinic-2', TEST_PHONE_NUMBERS.success);
    await clock.advance(HOUR);
    await kit.reconcile();
    await subscribe('clinic-3', TEST_PHONE_NUMBERS.success);
    const active = await runCli(['billing', 'list', '--billing', 'billing.mjs', '--state', 'active'], { cwd });
    expect(active.code).toBe(0);
    expect(active.stdout).toMatch(/^ {2}sub:clinic-1:/m);
    expect(active.stdout).toMatch(/^ {2}sub:clinic-2:/m);
    expect(active.stdout).not.toMatch(/clinic-3/);
    expect(active.stdout).toMatch(/^2 subscription\(s\) in state active\.$/m);
    expect(await runCli(['billing', 'list', '--billing', 'billing.mjs', '--state', 'suspended'], { cwd })).toEqual({
      code: 0,
      stdout: 'No subscriptions in state suspended.\n',
      stderr: '',
    });
    const limited = await runCli(['billing', 'list', '--billing', 'billing.mjs', '--limit', '2', '--json'], { cwd });
    expect((JSON.parse(limited.stdout) as Array<{ customer: string }>).map((r) => r.customer)).toEqual(['clinic-1', 'clinic-2']);
  });

  test('a bad --state names the six states; a bad --limit its bounds; options of list are refused by reconcile', async () => {
    expectUsageError(
      await runCli(['billing', 'list', '--billing', 'billing.mjs', '--state', 'paid'], { cwd }),
      /^business-payments billing: --state must be one of pending, active, past_due, suspended, cancelled, ended, got 'paid'$/,
    );
    expectUsageError(
      await runCli(['billing', 'list', '--billing', 'billing.mjs', '--limit', '0'], { cwd }),
      /--limit must be a whole number from 1 to 100000, got '0'$/,
    );
    expectUsageError(
      await runCli(['billing', 'reconcile', '--billing', 'billing.mjs', '--state', 'active'], { cwd }),
      /^business-payments billing: --state is for billing list$/,
    );
    expectUsageError(
      await runCli(['billing', 'reconcile', '--billing', 'billing.mjs', '--limit', '5'], { cwd }),
      /^business-payments billing: --limit is for billing list$/,
    );
  });

  test('--json: one array of the records, paidThrough added; the phone masked, the consent without IP or user agent', async () => {
    const { mock, clock, kit, plan, subscribe } = await setup();
    const record = await subscribe('clinic-42', TEST_PHONE_NUMBERS.success);
    await clock.advance(HOUR);
    await kit.reconcile();
    const run = await runCli(['billing', 'list', '--billing', 'billing.mjs', '--json'], { cwd });
    expect(run.code).toBe(0);
    const records = JSON.parse(run.stdout) as Array<Record<string, unknown>>;
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      key: `sub:clinic-42:${plan.plan_code}:1`,
      customer: 'clinic-42',
      plan: plan.plan_code,
      n: 1,
      state: 'active',
      subscriptionId: record.subscriptionId,
      sends: 1,
      phone: '…001',
      termsShown: TERMS,
      consent: { at: record.createdAt, termsVersion: 'v3' },
      paid: [{ start: record.createdAt, end: record.createdAt + MONTH }],
      failed: [],
      chargedAfterCancel: [],
      paidThrough: record.createdAt + MONTH,
    });
    expect(records[0]!.consent).toEqual({ at: record.createdAt, termsVersion: 'v3' });
    expectNothingSecret(run.stdout, mock);
  });

  test('a renewal paid after a cancel: counted in its row, and a line telling the merchant to refund it', async () => {
    const { clock, kit, plan, subscribe } = await setup();
    const record = await subscribe('clinic-42', TEST_PHONE_NUMBERS.success);
    await clock.advance(HOUR);
    await kit.reconcile();
    await kit.cancel('clinic-42', plan.plan_code);
    await clock.advance(MONTH); // the service pushes the renewal all the same, and it is paid
    await kit.reconcile();
    const run = await runCli(['billing', 'list', '--billing', 'billing.mjs'], { cwd });
    expect(run.code).toBe(0);
    const through = new Date(record.createdAt + MONTH).toISOString().slice(0, 16);
    // Access ended at the paidThrough the cancel kept: the renewal never extends it.
    expect(run.stdout).toMatch(new RegExp(`^ {2}sub:clinic-42:\\S+ +clinic-42 +\\S+ +ended +${through}:\\d\\dZ +sub_\\S+ +1$`, 'm'));
    expect(run.stdout).toMatch(/^1 subscription\(s\): 1 ended\.$/m);
    expect(run.stdout).toMatch(
      /^1 invoice\(s\) charged after a cancel, on 1 subscription\(s\): .*\n.*Refund each one \(onChargedAfterCancel/m,
    );
    const [json] = JSON.parse((await runCli(['billing', 'list', '--billing', 'billing.mjs', '--json'], { cwd })).stdout) as Array<{
      chargedAfterCancel: string[];
      paidThrough: number;
    }>;
    expect([json!.chargedAfterCancel.length, json!.paidThrough]).toEqual([1, record.createdAt + MONTH]);
  });
});

describe('billing reconcile', () => {
  test('finds a lost invoice.paid: pending → active, exit 0; run again, nothing changes', async () => {
    const { mock, clock, kit, plan, subscribe } = await setup();
    const record = await subscribe('clinic-42', TEST_PHONE_NUMBERS.success);
    await clock.advance(HOUR); // paid at the service; its invoice.paid answered 200 and dropped
    expect(mock.state.deliveries.some((delivery) => delivery.status === 200)).toBe(true);
    expect(await kit.entitlement('clinic-42', plan.plan_code)).toMatchObject({ active: false, state: 'pending' });
    const run = await runCli(['billing', 'reconcile', '--billing', 'billing.mjs'], { cwd });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      'Reconciled with billing.mjs (its client and store): 1 subscription(s) checked.\n\n' +
        `Changed: 1\n  ${record.key}: pending → active\n\nErrors: 0\n`,
    );
    expect(await kit.entitlement('clinic-42', plan.plan_code)).toMatchObject({ active: true, state: 'active' });
    const again = await runCli(['billing', 'reconcile', '--billing', 'billing.mjs', '--json'], { cwd });
    expect(again).toEqual({ code: 0, stdout: '{"checked":1,"changed":[],"errors":[]}\n', stderr: '' });
    expectNothingSecret(run.stdout + again.stdout, mock);
  });

  test('--json: the report as one object', async () => {
    const { clock, subscribe } = await setup();
    const paid = await subscribe('clinic-1', TEST_PHONE_NUMBERS.success);
    const failed = await subscribe('clinic-2', TEST_PHONE_NUMBERS.insufficientFunds);
    await clock.advance(HOUR);
    const run = await runCli(['billing', 'reconcile', '--billing', 'billing.mjs', '--json'], { cwd });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      checked: 2,
      changed: [
        { key: paid.key, from: 'pending', to: 'active' },
        { key: failed.key, from: 'pending', to: 'pending' },
      ],
      errors: [],
    });
  });

  test('invoices that cannot be read: each key and its message (personal data redacted), exit 1', async () => {
    const { subscribe } = await setup();
    const record = await subscribe('clinic-42', TEST_PHONE_NUMBERS.success);
    await open!.server.close(); // the service is gone: the invoices cannot be read
    const run = await runCli(['billing', 'reconcile', '--billing', 'billing.mjs'], { cwd });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      new RegExp(
        `^Errors: 1 \\(run reconcile again to retry them\\)\\n {2}${record.key}: billing\\.invoices\\.list: could not reach http://127\\.0\\.0\\.1:\\d+ `,
        'm',
      ),
    );
    slot.cliBillingKit = fakeKit(() =>
      Promise.resolve({ checked: 1, changed: [], errors: [{ key: 'sub:c:p:1', message: 'no invoices for +255 712 345 678' }] }),
    );
    expect(await runCli(['billing', 'reconcile', '--billing', 'billing.mjs', '--json'], { cwd })).toEqual({
      code: 1,
      stdout: '{"checked":1,"changed":[],"errors":[{"key":"sub:c:p:1","message":"no invoices for [redacted]"}]}\n',
      stderr: '',
    });
  });

  test('interrupted (io.signal aborted): a line on stderr, no report, exit 1', async () => {
    const { subscribe } = await setup();
    await subscribe('clinic-42', TEST_PHONE_NUMBERS.success);
    const run = await runCli(['billing', 'reconcile', '--billing', 'billing.mjs'], { cwd, signal: AbortSignal.abort() });
    expect(run).toEqual({ code: 1, stdout: '', stderr: 'business-payments billing: reconcile interrupted; run it again to go on\n' });
  });

  test('a failing reconcile (not interrupted): its message on stderr, exit 1', async () => {
    slot.cliBillingKit = fakeKit(() => Promise.reject(new Error('connection refused (postgres)')));
    const run = await runCli(['billing', 'reconcile', '--billing', 'billing.mjs'], { cwd });
    expect(run).toEqual({ code: 1, stdout: '', stderr: 'business-payments billing: connection refused (postgres)\n' });
  });
});
