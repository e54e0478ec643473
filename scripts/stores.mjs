// The fulfillment stores on real servers (CI): the conformance suite
// (test/fulfillment/conformance.ts) for postgresStore over a `pg` Pool on a PostgreSQL server,
// and redisStore over node-redis and over ioredis on a Redis server, and the SIGSTOP cases
// (test/fulfillment/sigstop.ts: a real process holding a claim, paused for twice its lease while
// another process handles the same delivery; about 4 s a store). Both servers are
// throwaways: fresh data directories under the temp dir, loopback ports picked free, started
// here and stopped (directories removed) whatever happens. One line per store; exit 1 if any
// failed.
//
//   npm run test:stores
//
// The servers: scripts/db-servers.mjs (Debian's postgresql and redis-server packages).
import { fileURLToPath } from 'node:url';
import { startDbServers } from './db-servers.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const SUITE = 'test/fulfillment/stores-real.check.ts';
const started = performance.now();
const seconds = (from) => `${((performance.now() - from) / 1000).toFixed(1)} s`;

let failed = false;
let stopServers = () => {};
try {
  const servers = await startDbServers({ name: 'test:stores' });
  stopServers = servers.stop;

  // The suite, in this process's vitest: only the real-server file (it is not a *.test.ts, so
  // plain `npm test` never picks it up), no global setup (it needs no package build).
  process.env.BP_TEST_PG_URL = servers.pgUrl;
  process.env.BP_TEST_REDIS_URL = servers.redisUrl;
  const { startVitest } = await import('vitest/node');
  const vitest = await startVitest([], {
    config: false,
    root,
    include: [SUITE],
    environment: 'node',
    watch: false,
    reporters: ['default'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  });
  // One line per store: each top-level suite of the file is one store's conformance run (or
  // one store's SIGSTOP case).
  const modules = vitest.state.getTestModules();
  const suites = modules.flatMap((module) => [...module.children.suites()]);
  if (!suites.length) failed = true;
  const label = (name) => name.replace(/^store conformance: /, '');
  const width = Math.max(0, ...suites.map((suite) => label(suite.name).length));
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
    const counts = ok
      ? `${tests.length - skipped} passed${skipped ? `, ${skipped} not applicable` : ''}`
      : `${bad} of ${tests.length} failed${bad ? '' : ' (a hook)'}`;
    console.log(`${label(suite.name).padEnd(width)}  ${ok ? 'pass' : 'FAIL'}  ${(ms / 1000).toFixed(1).padStart(5)} s  (${counts})`);
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
