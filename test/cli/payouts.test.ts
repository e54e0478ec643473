// `business-payments payouts list | resolve` through a merchant's module (--payouts): fake
// `createPayouts` objects with canned intents and reports (test/fixtures/cli-payouts/), the
// output (table, JSON, masked destinations), the exit codes and the argument errors.
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { expectUsageError, root, runCli } from '../support/cli.js';

const cwd = join(root, 'test/fixtures/cli-payouts');
const calls = () => (globalThis as unknown as { cliPayoutsCalls: unknown[] }).cliPayoutsCalls;
const setReport = (report: unknown) => ((globalThis as unknown as { cliPayoutsReport?: unknown }).cliPayoutsReport = report);

afterEach(() => {
  setReport(undefined);
  delete (globalThis as unknown as { cliPayoutsCalls?: unknown }).cliPayoutsCalls;
});

/** No phone number of the fixtures, whole or in part beyond its last 3 digits. */
function expectNoPhoneNumbers(text: string): void {
  for (const number of ['255712345678', '712345678', '12345678', '255798765432', '798765432']) expect(text).not.toContain(number);
}

describe('payouts: help and subcommands', () => {
  test('alone, or --help: the usage with both subcommands on stdout, exit 0', async () => {
    for (const args of [['payouts'], ['payouts', '--help'], ['help', 'payouts'], ['payouts', 'resolve', '-h']]) {
      const run = await runCli(args);
      expect(run.code).toBe(0);
      expect(run.stderr).toBe('');
      expect(run.stdout).toMatch(/^Usage: business-payments payouts list --payouts FILE/);
      expect(run.stdout).toMatch(/^ {7}business-payments payouts resolve --payouts FILE/m);
      expect(run.stdout).toMatch(/page someone/);
      expect(run.stdout).toMatch(/confirmResend\(key\)/);
    }
  });

  test('the top-level help lists it', async () => {
    expect((await runCli(['--help'])).stdout).toMatch(/^ {2}payouts {9}list payout intents/m);
  });

  test('an unknown subcommand, a stray argument or a missing subcommand is a usage error', async () => {
    expectUsageError(await runCli(['payouts', 'send', '--payouts', 'payouts.mjs'], { cwd }), /unknown subcommand 'send': list or resolve$/);
    expectUsageError(await runCli(['payouts', 'list', 'extra', '--payouts', 'payouts.mjs'], { cwd }), /unexpected argument 'extra'$/);
    expectUsageError(await runCli(['payouts', '--json'], { cwd }), /^business-payments payouts: missing subcommand: list or resolve$/);
    expectUsageError(await runCli(['payouts', 'list', '--bogus'], { cwd }), /^business-payments payouts: Unknown option '--bogus'$/);
  });
});

describe('payouts: loading --payouts', () => {
  test('missing --payouts: exit 2, for both subcommands', async () => {
    expectUsageError(await runCli(['payouts', 'list'], { cwd }), /^business-payments payouts: missing --payouts$/);
    expectUsageError(await runCli(['payouts', 'resolve'], { cwd }), /^business-payments payouts: missing --payouts$/);
  });

  test('no such file: exit 2, naming the path', async () => {
    const run = await runCli(['payouts', 'list', '--payouts', 'nowhere.mjs'], { cwd });
    expectUsageError(run, /^business-payments payouts: --payouts: no file at .*nowhere\.mjs$/);
    expect(run.stderr).toContain(resolve(cwd, 'nowhere.mjs'));
  });

  test('a module without payouts: exit 2, saying what to export', async () => {
    expectUsageError(
      await runCli(['payouts', 'list', '--payouts', 'no-payouts.mjs'], { cwd }),
      /--payouts no-payouts\.mjs exports no payouts: export const payouts = createPayouts\(\{ \.\.\. \}\) \(or export default\)$/,
    );
  });

  test('a memory store (durable: false) is refused: it forgets with its process', async () => {
    for (const sub of ['list', 'resolve']) {
      expectUsageError(
        await runCli(['payouts', sub, '--payouts', 'memory-store.mjs'], { cwd }),
        /--payouts memory-store\.mjs uses memoryStore\(\), which forgets with its process/,
      );
    }
  });

  test('the default export works as the named one; an absolute path too', async () => {
    const run = await runCli(['payouts', 'list', '--json', '--payouts', join(cwd, 'default-export.mjs')]);
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as unknown[]).length).toBe(4);
  });
});

describe('payouts list', () => {
  test('a table: key, state, amount, masked destination, payout id, sends, ISO time, note cut to fit; exit 0', async () => {
    const run = await runCli(['payouts', 'list', '--payouts', 'payouts.mjs'], { cwd });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toMatch(/^ {2}key +state +amount +to +payout id +sends +updated +note$/);
    expect(run.stdout).toMatch(/^ {2}po-pending +pending +1500 +0 +2026-01-02T03:04:05Z$/m);
    expect(run.stdout).toMatch(/^ {2}po-unknown +unknown +2500 +…678 +1 +2026-01-02T03:04:06Z +error: timed out after 30000 ms$/m);
    expect(run.stdout).toMatch(/^ {2}po-sent +sent +5000 +…678 +7b0e4f7e-1d2c-4b7a-9a51-0f2f4d6c1a10 +1 +2026-01-02T03:04:07Z$/m);
    const review = lines.find((line) => line.startsWith('  po-review'))!;
    expect(review).toMatch(/^ {2}po-review +needs_review +7000 +…432 +2 +2026-01-02T03:04:08Z +two payouts at the service .*…$/);
    // The note gets what is left of 120 columns, 40 at least: here the payout id takes the rest.
    expect(review.slice(review.indexOf('two payouts'))).toHaveLength(40);
    expect(run.stdout).toMatch(/^4 intent\(s\)\.$/m);
    expect(run.stdout).toMatch(/^1 in needs_review: .*payouts\.confirmResend\(key\)/m);
    expectNoPhoneNumbers(run.stdout);
  });

  test('--json: one array of the intents, destinations masked (the payout record too)', async () => {
    const run = await runCli(['payouts', 'list', '--payouts', 'payouts.mjs', '--json'], { cwd });
    expect(run.code).toBe(0);
    const intents = JSON.parse(run.stdout) as Array<Record<string, unknown>>;
    expect(intents.map((i) => i.key)).toEqual(['po-pending', 'po-unknown', 'po-sent', 'po-review']);
    expect(intents[2]).toMatchObject({
      key: 'po-sent',
      state: 'sent',
      amount: 5000,
      destination: '…678',
      payoutId: '7b0e4f7e-1d2c-4b7a-9a51-0f2f4d6c1a10',
      payout: { id: '7b0e4f7e-1d2c-4b7a-9a51-0f2f4d6c1a10', destination: '…678', status: 'SUCCESS' },
      matchedBy: 'answer',
      sends: 1,
    });
    expect(intents[0]).not.toHaveProperty('destination');
    expectNoPhoneNumbers(run.stdout);
  });

  test('--state filters, --limit caps (default 1000)', async () => {
    (globalThis as unknown as { cliPayoutsCalls: unknown[] }).cliPayoutsCalls = [];
    const run = await runCli(['payouts', 'list', '--payouts', 'payouts.mjs', '--state', 'needs_review'], { cwd });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^ {2}po-review /m);
    expect(run.stdout).not.toMatch(/po-sent|po-pending|po-unknown/);
    expect(run.stdout).toMatch(/^1 intent\(s\) in state needs_review\.$/m);
    const none = await runCli(['payouts', 'list', '--payouts', 'payouts.mjs', '--state', 'failed'], { cwd });
    expect(none).toEqual({ code: 0, stdout: 'No payout intents in state failed.\n', stderr: '' });
    const limited = await runCli(['payouts', 'list', '--payouts', 'payouts.mjs', '--limit', '2', '--json'], { cwd });
    expect((JSON.parse(limited.stdout) as unknown[]).length).toBe(2);
    expect(calls()).toEqual([
      { state: 'needs_review', limit: 1000 },
      { state: 'failed', limit: 1000 },
      { state: undefined, limit: 2 },
    ]);
  });

  test('a bad --state names the seven states; a bad --limit its bounds; options of list are refused by resolve', async () => {
    expectUsageError(
      await runCli(['payouts', 'list', '--payouts', 'payouts.mjs', '--state', 'done'], { cwd }),
      /^business-payments payouts: --state must be one of pending, in_progress, ambiguous, unknown, sent, failed, needs_review, got 'done'$/,
    );
    expectUsageError(
      await runCli(['payouts', 'list', '--payouts', 'payouts.mjs', '--limit', '0'], { cwd }),
      /--limit must be a whole number from 1 to 100000, got '0'$/,
    );
    expectUsageError(
      await runCli(['payouts', 'resolve', '--payouts', 'payouts.mjs', '--state', 'sent'], { cwd }),
      /^business-payments payouts: --state is for payouts list$/,
    );
  });
});

describe('payouts resolve', () => {
  test('a summary: checked, changes, open and review intents with their notes, errors; exit 1 (review and an error)', async () => {
    const run = await runCli(['payouts', 'resolve', '--payouts', 'payouts.mjs'], { cwd });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^Resolved with payouts\.mjs \(its client and store\): 3 intent\(s\) checked\.\n/);
    expect(run.stdout).toContain('Changed: 2\n  po-sent: unknown → sent\n  po-review: ambiguous → needs_review\n');
    expect(run.stdout).toMatch(
      /^Still open: 1 \(run resolve again later\)\n {2}po-unknown +unknown +2500 +…678 +still INPROGRESS at the service$/m,
    );
    expect(run.stdout).toMatch(/^Needs review: 1\n {2}po-review +needs_review +7000 +…432 +two payouts at the service/m);
    expect(run.stdout).toMatch(/call payouts\.confirmResend\(key\) in your code/);
    expect(run.stdout).toMatch(/^Errors: 1 \(run resolve again to retry them\)\n {2}po-pending {2}the service answered 503$/m);
    expectNoPhoneNumbers(run.stdout);
  });

  test('--json: the report as one object, destinations masked', async () => {
    const run = await runCli(['payouts', 'resolve', '--payouts', 'payouts.mjs', '--json'], { cwd });
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(report).toMatchObject({
      checked: 3,
      changed: [
        { key: 'po-sent', from: 'unknown', to: 'sent' },
        { key: 'po-review', from: 'ambiguous', to: 'needs_review' },
      ],
      open: [{ key: 'po-unknown', state: 'unknown', destination: '…678' }],
      review: [{ key: 'po-review', state: 'needs_review', destination: '…432' }],
      errors: [{ key: 'po-pending', error: 'the service answered 503' }],
    });
    expectNoPhoneNumbers(run.stdout);
  });

  test('exit 0 with no error and nothing in review (default export)', async () => {
    const run = await runCli(['payouts', 'resolve', '--payouts', 'default-export.mjs'], { cwd });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Needs review: 0$/m);
    expect(run.stdout).toMatch(/^Errors: 0$/m);
    expect(run.stdout).toMatch(/^ {2}po-pending +pending +1500$/m);
  });

  test('exit 1 for an intent in review alone, and for an error alone', async () => {
    const base = { checked: 1, changed: [], open: [] };
    setReport({
      ...base,
      review: [{ key: 'r', amount: 1, state: 'needs_review', version: 1, createdAt: 0, updatedAt: 0, sends: 1 }],
      errors: [],
    });
    expect((await runCli(['payouts', 'resolve', '--payouts', 'payouts.mjs', '--json'], { cwd })).code).toBe(1);
    setReport({ ...base, review: [], errors: [{ key: 'e', error: 'boom' }] });
    expect((await runCli(['payouts', 'resolve', '--payouts', 'payouts.mjs', '--json'], { cwd })).code).toBe(1);
    setReport({ ...base, review: [], errors: [] });
    expect(await runCli(['payouts', 'resolve', '--payouts', 'payouts.mjs', '--json'], { cwd })).toEqual({
      code: 0,
      stdout: '{"checked":1,"changed":[],"open":[],"review":[],"errors":[]}\n',
      stderr: '',
    });
  });

  test('interrupted (io.signal aborted): a line on stderr, no report, exit 1', async () => {
    const run = await runCli(['payouts', 'resolve', '--payouts', 'payouts.mjs'], { cwd, signal: AbortSignal.abort() });
    expect(run).toEqual({ code: 1, stdout: '', stderr: 'business-payments payouts: resolve interrupted; run it again to go on\n' });
  });

  test('a failing resolve (not interrupted): its message on stderr, exit 1', async () => {
    const run = await runCli(['payouts', 'resolve', '--payouts', 'throws.mjs'], { cwd });
    expect(run).toEqual({ code: 1, stdout: '', stderr: 'business-payments payouts: connection refused (postgres)\n' });
  });
});

describe('payouts: the real createPayouts', () => {
  test('resolve re-sends the unknown intent with its key (exit 0); list shows both sent, destinations masked', async () => {
    const resolved = await runCli(['payouts', 'resolve', '--payouts', 'real-kit.mjs', '--json'], { cwd });
    expect(resolved.stderr).toBe('');
    expect(resolved.code).toBe(0);
    expect(JSON.parse(resolved.stdout)).toMatchObject({
      changed: [{ key: 'order-1', from: 'unknown', to: 'sent' }],
      open: [],
      review: [],
      errors: [],
    });
    const { sends } = (await import('../fixtures/cli-payouts/real-kit.mjs' as string)) as { sends: string[] };
    expect(sends).toEqual(['order-1', 'order-2', 'order-1']);
    const listed = await runCli(['payouts', 'list', '--payouts', 'real-kit.mjs', '--json'], { cwd });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject([
      {
        key: 'order-1',
        state: 'sent',
        amount: 2500,
        destination: '…678',
        sends: 2,
        payoutId: 'pay-order-1',
        payout: { destination: '…678' },
      },
      { key: 'order-2', state: 'sent', amount: 4000, destination: '…432', sends: 1, payoutId: 'pay-order-2' },
    ]);
    expectNoPhoneNumbers(resolved.stdout + listed.stdout);
  });
});
