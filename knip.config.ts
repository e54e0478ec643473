// knip (`npm run lint:unused`): unused files, exports and dependencies. knip reads the scripts
// from package.json and the tests from vitest's configs; the package's entries and its bin come
// from entries.json, their one list (knip reads tsup.config.ts's `entry` from its text, where they
// are computed from that list). Listed below besides is what runs without being imported.
import type { KnipConfig } from 'knip';
import list from './entries.json' with { type: 'json' };

const config: KnipConfig = {
  workspaces: {
    '.': {
      entry: [
        // The package's entries and its bin.
        ...list.entries.map((entry) => entry.source),
        list.bin.source,
        // Run as programs: by npm scripts, by each other (child processes, workers), by hand.
        'scripts/**/*.{ts,mjs,js,cjs}',
        // Run by test/examples and the docs (each is a program of its own).
        'examples/**/*.{ts,mjs}',
        // Loaded by path, not imported: the CLI's payout fixtures, a child process, the runtime
        // matrix's checks (scripts/runtimes.mjs), the browser test's page.
        'test/fixtures/**/*.{ts,mjs}',
        'test/support/*.mjs',
        'test/runtimes/*.{mjs,cjs}',
        'test/browser/*.ts',
        // Run apart from `npm test`: the store suite on real servers (`npm run test:stores`), and
        // the merchant's file that test/types/types.test.ts compiles with tsc.
        'test/fulfillment/stores-real.check.ts',
        'test/fulfillment/triggers-real.check.ts',
        'test/types/consumer.ts',
      ],
      project: ['src/**/*.ts', 'scripts/**/*.{ts,mjs,js,cjs}', 'examples/**/*.{ts,mjs}', 'test/**/*.{ts,mjs,cjs}'],
      ignoreDependencies: [
        // test/testing/mock-service/openapi-lint.test.ts runs its bin through require.resolve().
        '@redocly/cli',
        // test/webhooks/verify.test.ts compares with the Request of the very @edge-runtime/vm
        // installed: it comes with that package (listed), at the version it pins.
        '@edge-runtime/primitives',
      ],
    },
    // The Next.js example: a package of its own (built by scripts/nextjs-check.mjs); knip's
    // Next.js plugin knows its entries (app/**/page.tsx, route.ts, next.config.mjs…).
    'examples/nextjs': {
      // Installed only where the example is built: `next` runs its scripts, react-dom is Next's.
      ignoreBinaries: ['next'],
      ignoreDependencies: ['react-dom'],
    },
  },
  // Tools of the machine, not packages: scripts/db-servers.mjs (PostgreSQL), test/cli/sign.test.ts.
  ignoreBinaries: ['pg_config', 'openssl'],
};

export default config;
