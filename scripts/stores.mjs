// The stores on real servers (CI): the store conformance suite (testStore, from
// business-payments/testing) of each kit (fulfillment, payouts, billing) for postgresStore over
// a `pg` Pool (and one pg Client) on a PostgreSQL server, and redisStore over node-redis and
// over ioredis on a Redis server, and the SIGSTOP cases (test/fulfillment/sigstop.ts: a real
// process holding a claim, paused for twice its lease while another process handles the same
// delivery; about 4 s a store); then the triggers on real engines (test/fulfillment/triggers-real.check.ts:
// pg-boss on PostgreSQL, a web process SIGKILLed inside the inbox row's transaction; BullMQ on
// Redis; each engine delivering a job 3 times). Both servers are throwaways: fresh data directories under the
// temp dir, loopback ports picked free, started here and stopped (directories removed)
// whatever happens. One line per store and kit, with its testStore cases passed (and skipped:
// what the store does not offer); exit 1 if any failed.
//
//   npm run test:stores
//
// The servers: scripts/db-servers.mjs (Debian's postgresql and redis-server packages).
import { fileURLToPath } from 'node:url';
import { startDbServers } from './db-servers.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
// The stores, then the triggers on real engines (pg-boss on PostgreSQL, BullMQ on Redis).
const SUITES = ['test/fulfillment/stores-real.check.ts', 'test/fulfillment/triggers-real.check.ts'];
const started = performance.now();
const seconds = (from) => `${((performance.now() - from) / 1000).toFixed(1)} s`;

let failed = false;

/**
 * A suite's line: a testStore run's cases (passed; skipped, with what the store or the check
 * goes without; failed), else its tests'.
 */
function counts(tests, ok, bad, skipped) {
  const cases = tests.map((test) => test.meta().storeCases).filter(Boolean);
  if (cases.length) {
    const sum = (key) => cases.reduce((total, run) => total + run[key], 0);
    const [passed, failedCases, skippedCases] = [sum('passed'), sum('failed'), sum('skipped')];
    const total = passed + failedCases + skippedCases;
    if (failedCases) return `${failedCases} of ${total} cases failed`;
    const without = [...new Set(cases.flatMap((run) => run.skippedFor))].join(', ');
    return `${passed} cases passed${skippedCases ? `, ${skippedCases} skipped (no ${without})` : ''}${ok ? '' : ', then an assertion failed'}`;
  }
  if (ok) return `${tests.length - skipped} passed${skipped ? `, ${skipped} not applicable` : ''}`;
  return `${bad} of ${tests.length} failed${bad ? '' : ' (a hook)'}`;
}

let stopServers = () => {};
try {
  const servers = await startDbServers({ name: 'test:stores' });
  stopServers = servers.stop;

  // The suites, in this process's vitest: only the real-server files (not *.test.ts, so
  // plain `npm test` never picks it up), no global setup (it needs no package build).
  process.env.BP_TEST_PG_URL = servers.pgUrl;
  process.env.BP_TEST_REDIS_URL = servers.redisUrl;
  const { startVitest } = await import('vitest/node');
  const vitest = await startVitest([], {
    config: false,
    root,
    include: SUITES,
    environment: 'node',
    watch: false,
    reporters: ['default'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  });
  // One line per store and kit: each top-level suite of the file is one store's testStore run
  // (its cases counted in its test's meta, storeCases), or one store's other cases.
  const modules = vitest.state.getTestModules();
  const suites = modules.flatMap((module) => [...module.children.suites()]);
  if (!suites.length) failed = true;
  const width = Math.max(0, ...suites.map((suite) => suite.name.length));
  console.log('');
  for (const module of modules) {
    if (module.children.size) continue;
    failed = true; // the file did not load (its error is above)
    console.log(`${module.moduleId.slice(root.length)}  FAIL (did not load)`);
  }
  for (const suite of suites) {
    const tests = [...suite.children.allTests()];
    const bad = tests.filter((test) => test.result().state === 'failed').length;
    const skipped = tests.filter((test) => test.result().state === 'skipped').length;
    // The suite's own time (its setup and close hooks included), else the sum of its tests'.
    const ms = suite.task.result?.duration ?? tests.reduce((sum, test) => sum + (test.diagnostic()?.duration ?? 0), 0);
    const ok = !bad && suite.state() !== 'failed';
    if (!ok) failed = true;
    console.log(
      `${suite.name.padEnd(width)}  ${ok ? 'pass' : 'FAIL'}  ${(ms / 1000).toFixed(1).padStart(5)} s  (${counts(tests, ok, bad, skipped)})`,
    );
  }
  if (process.exitCode || vitest.state.getCountOfFailedTests() > 0) failed = true;
  await vitest.close();
} catch (error) {
  failed = true;
  console.error(error instanceof Error ? (error.stderr?.toString() || '') + error.message : error);
} finally {
  stopServers();
}
console.log(`test:stores ${failed ? 'FAILED' : 'passed'} in ${seconds(started)}`);
process.exit(failed ? 1 : 0);
