// docs/payouts.md, as written: its ```ts blocks (each a file, named by its first line) are
// type-checked together under `strict`, `exactOptionalPropertyTypes` and
// `noUncheckedIndexedAccess`, and every one runs: against the local sandbox on a real port
// (production credentials in the BUSINESS_PAYMENTS_* variables, as the page's client reads
// them), PGlite behind a one-connection pool standing in for pg's Pool, the page's ```sql the
// ledger's schema. The machinery is test/fulfillment/docs-pages.ts.
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, afterEach, beforeAll, expect, test, vi } from 'vitest';
import { postgresStore } from '../../src/fulfillment-postgres.js';
import type { PayoutKit, PayoutResolveReport } from '../../src/payouts.js';
import { onePool } from '../support/pglite-pool.js';
import { openSandbox, readPage, samples, standIn, typecheck } from '../fulfillment/docs-pages.js';

const page = readPage('docs/payouts.md');

test('every ts block names its file once and runs (none is marked not run)', () => {
  expect(page.blocks.length).toBeGreaterThanOrEqual(5);
  expect(page.files.size).toBe(page.blocks.length);
  expect(page.blocks.filter((block) => block.notRun)).toEqual([]);
  expect(page.sql).toHaveLength(1);
});

test('compiles under strict, exactOptionalPropertyTypes and noUncheckedIndexedAccess', () => {
  expect(typecheck(page)).toEqual([]);
}, 120_000);

let pglite: PGlite;
beforeAll(async () => {
  pglite = await PGlite.create();
}, 120_000);
afterAll(async () => {
  await pglite?.close();
});
afterEach(() => {
  vi.useRealTimers();
});

test('the samples run: a settlement paid once, a lost answer settled by resolve(), the way out of review, the local try', async () => {
  const pool = onePool(pglite);
  standIn(pool);
  for (const sql of page.sql) await pglite.exec(sql);
  const sandbox = await openSandbox('current', () => Promise.resolve(new Response(null, { status: 200 })));
  try {
    const { load, unrun } = samples(page, join(page.dir, 'run'));
    const lib = await load<{ payouts: PayoutKit; pool: unknown }>('lib/payouts.ts');
    expect(lib.pool).toBe(pool);
    const { settle } = await load<{ settle(day: string, amount: number): Promise<string> }>('jobs/settle.ts');
    const { resolvePayouts } = await load<{ resolvePayouts(): Promise<PayoutResolveReport> }>('jobs/resolve-payouts.ts');
    const { confirmResend } = await load<{ confirmResend(key: string): Promise<string> }>('admin/confirm-resend.ts');
    const { tryLostAnswer } = await load<{ tryLostAnswer(): Promise<Record<string, unknown>> }>('local/try-payouts.ts');
    const { mock } = sandbox;
    const ledger = async (key: string) =>
      (await pool.query('SELECT from_state, to_state FROM payout_ledger WHERE key = $1 ORDER BY id', [key])).rows.map(
        (row) => `${String((row as { from_state: unknown }).from_state)}→${String((row as { to_state: unknown }).to_state)}`,
      );

    // A settlement, and the same job run again: one payout.
    expect(await settle('2026-11-25', 500)).toMatch(/^paid: payout [0-9a-f-]{36}$/);
    expect(await settle('2026-11-25', 500)).toMatch(/^paid: payout /);
    expect(mock.state.payouts.size).toBe(1);
    expect(await ledger('settle-2026-11-25')).toEqual(['null→pending', 'pending→unknown', 'unknown→sent']);

    // The answer lost after the payout was made: not settled yet; resolve() (a minute later,
    // past settleAfter) asks again with the key and the service replays it.
    mock.payoutBehaviour({ loseAnswer: 1 });
    expect(await settle('2026-11-26', 250)).toBe('not settled yet (unknown)');
    mock.payoutBehaviour({ loseAnswer: 0 });
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 2 * 60_000);
    const report = await resolvePayouts();
    expect(report.changed).toEqual([{ key: 'settle-2026-11-26', from: 'unknown', to: 'sent' }]);
    expect(mock.state.payouts.size).toBe(2);

    // Refused by the service: failed, nothing paid.
    mock.state.merchants[0]!.kybApproved = false;
    expect(await settle('2026-11-27', 100)).toMatch(/^refused: .*KYB/);
    mock.state.merchants[0]!.kybApproved = true;

    // An intent a person reviewed: confirmResend sends it.
    const at = Date.now();
    await postgresStore(pool).payouts!.add({
      key: 'settle-2026-10-01',
      amount: 75,
      state: 'needs_review',
      version: 1,
      createdAt: at,
      updatedAt: at,
      sends: 1,
      note: 'No payout for it in the list',
    });
    expect(await confirmResend('settle-2026-10-01')).toBe('sent');
    expect(mock.state.payouts.size).toBe(3);

    expect(await tryLostAnswer()).toEqual({ first: 'unknown', after: 'sent', payoutsMade: 1 });
    expect(unrun()).toEqual([]);
  } finally {
    await sandbox.close();
  }
}, 60_000);
