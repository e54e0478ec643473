import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import list from './entries.json' with { type: 'json' };

/**
 * Tests that run a whole compiler, linter or doc generator (seconds of CPU each): ESLint with
 * type information, tsc on the consumer file and on the docs' samples, typedoc, the API
 * report, redocly. `npm run test:tooling` (vitest.tooling.config.ts) runs them, in .ci/run;
 * `npm test` leaves them out.
 */
export const TOOLING_TESTS = [
  'test/testing/independence.test.ts', // ESLint (type-aware) over src/testing
  'test/types/types.test.ts', // tsc: the consumer file
  'test/package/typedoc-modules.test.ts', // typedoc
  'test/package/api-report.test.ts', // the API report: the compiler over the built .d.ts
  'test/package/entry-exports.test.ts', // the compiler over the built .d.ts: each entry's values against its run-time exports
  'test/fulfillment/docs-sample.test.ts', // tsc: docs/fulfillment*.md's samples (then runs them)
  'test/payouts/docs.test.ts', // tsc: docs/payouts.md's samples (then runs them)
  'test/testing/mock-service/openapi-lint.test.ts', // redocly lint
] as const;

/**
 * Tests that need a fresh worker process of their own. read-body.test.ts: its children report
 * their peak RSS (resourceUsage().maxRSS), which Linux carries over from the parent at fork, so
 * a worker grown by earlier files would count against the child's budget.
 */
export const OWN_PROCESS_TESTS = ['test/internal/read-body.test.ts'] as const;

export default defineConfig({
  resolve: {
    // Examples import the package by name: test them against the source, not a stale dist/.
    // Each specifier of entries.json exactly (letters, digits, `-` and `/`: test/package/entries.test.ts).
    alias: list.entries.map((entry) => ({
      find: new RegExp(`^${entry.specifier}$`),
      replacement: fileURLToPath(new URL(`./${entry.source}`, import.meta.url)),
    })),
  },
  test: {
    // The package is built once, before any test, when a test of the run uses it (the bin, demo
    // and read-body tests): test/global-setup.ts.
    globalSetup: ['test/global-setup.ts'],
    environment: 'node',
    restoreMocks: true,
    unstubEnvs: true,
    unstubGlobals: true,
    // Every core: the tests wait on sockets, child processes and the build as much as they
    // compute (vitest's default leaves one core idle: a single worker on two cores).
    maxWorkers: availableParallelism(),
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: ['**/node_modules/**', ...TOOLING_TESTS, ...OWN_PROCESS_TESTS],
          // A worker runs file after file (no process per file: about half the suite's CPU went
          // on starting workers and importing the same modules again). test/shared-worker.ts puts
          // back what a file may leave changed in the process (env, cwd, fake timers) before the next.
          isolate: false,
          setupFiles: ['test/shared-worker.ts'],
        },
      },
      { extends: true, test: { name: 'isolated', include: [...OWN_PROCESS_TESTS], isolate: true } },
    ],
  },
});
