// The tests that run a whole compiler, linter or doc generator over the repository (ESLint
// type-aware, tsc on the consumer file and on the docs' samples, typedoc, the API report's
// compiler pass, redocly): `npm run test:tooling`, in .ci/run after `npm test`. Kept out of
// `npm test` (vitest.config.ts excludes them), which is the inner loop; `npm run lint` and
// `npm run typecheck` cover most of the same ground while you work.
import { defineConfig } from 'vitest/config';
import base, { TOOLING_TESTS } from './vitest.config.js';

const { projects: _projects, ...common } = base.test ?? {};

export default defineConfig({
  ...base,
  test: {
    ...common,
    include: [...TOOLING_TESTS],
    // Files share their worker (as in vitest.config.ts): TypeScript and ESLint load once per worker.
    isolate: false,
    setupFiles: ['test/shared-worker.ts'],
    // Each starts a compiler or a linter cold (seconds of CPU), and the files run side by side:
    // on a loaded 2-core machine the first lint of a snippet alone took over 5 s.
    testTimeout: 120_000,
  },
});
