// docs/fulfillment-stores.md's SQLite store, as written: its two blocks (lib/sqlite-store.ts,
// the store; check-sqlite-store.ts, testStore on it over two connections to one file) written
// out and run by the machinery of the docs' samples (test/fulfillment/docs-pages.ts), and the
// report the page's check answers has no failure, and skips only what the page says. The
// page's blocks are type-checked together by test/fulfillment/docs-sample.test.ts (whose run
// of the page leaves these two blocks to this file).
import { join } from 'node:path';
import { expect, test, vi } from 'vitest';
import type { StoreReport } from '../../src/testing.js';
import { readPage, samples } from '../fulfillment/docs-pages.js';
import { skipReasons } from './reasons.js';

test("docs/fulfillment-stores.md's SQLite store passes testStore (its own check, as the page writes it)", async () => {
  const page = readPage('docs/fulfillment-stores.md');
  const { load } = samples(page, join(page.dir, 'sqlite'));
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});
  const { report } = await load<{ report: StoreReport }>('check-sqlite-store.ts');
  expect(report.failed).toEqual([]);
  expect(skipReasons(report)).toEqual(['kill', 'transactionalDb', 'transactionalDb']);
  // What the page says of it.
  expect(report.passed).toHaveLength(16);
  expect(log).toHaveBeenCalledWith('16 passed, 3 skipped, 0 failed');
}, 60_000);
