import { defineConfig } from 'tsup';

// The CLI's own imports of the public entries stay imports of the package (resolved by
// Node's self-reference), so dist/cli.js holds only the CLI and uses the public API.
const PUBLIC_ENTRIES: Record<string, string> = {
  '../index.js': 'business-payments',
  '../webhooks.js': 'business-payments/webhooks',
  '../testing.js': 'business-payments/testing',
  '../doctor.js': 'business-payments/doctor',
};

export default defineConfig([
  {
    entry: {
      index: 'src/index.ts',
      webhooks: 'src/webhooks.ts',
      testing: 'src/testing.ts',
      fulfillment: 'src/fulfillment.ts',
      'fulfillment/postgres': 'src/fulfillment-postgres.ts',
      'fulfillment/redis': 'src/fulfillment-redis.ts',
      payouts: 'src/payouts.ts',
    },
    format: ['esm', 'cjs'],
    dts: true,
    // The builds write to dist/ at once, so none cleans it: `npm run build` empties it first.
    clean: false,
    sourcemap: true,
    target: 'es2022',
    platform: 'neutral',
    // ky and zod are bundled in (only the parts used): a cold import then parses one file
    // instead of ky's and zod's ~100 modules (zod's entry alone loads every locale), which
    // is what serverless functions pay on each cold start. zod stays a dependency for the
    // .d.ts (which names zod/mini's types); ky is a dev dependency, since nothing outside dist/
    // loads it and its engines (Node >= 22) would refuse installs on the Node 20 we support.
    noExternal: ['ky', 'zod'],
    splitting: true,
    treeshake: true,
    // Syntax-only minification (semantics kept; names and whitespace stay readable): the
    // smaller code it leaves is what the tree-shaking pass and an app's bundler then work on.
    minifySyntax: true,
  },
  {
    // `business-payments/doctor`: built apart, with the package itself external, so the
    // contract check's zod JSON Schema code never lands in the main entry's chunks, and the
    // client and error classes it uses are the main entry's own.
    entry: { doctor: 'src/doctor.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    clean: false,
    sourcemap: true,
    target: 'es2022',
    platform: 'neutral',
    external: ['business-payments', /^business-payments\//],
    noExternal: ['zod'],
    treeshake: true,
  },
  {
    // bin `business-payments`: ESM for Node only, with the shebang on this file alone.
    entry: { cli: 'src/cli/bin.ts' },
    format: ['esm'],
    dts: false,
    clean: false,
    sourcemap: true,
    target: 'node22',
    platform: 'node',
    banner: { js: '#!/usr/bin/env node' },
    external: ['business-payments', /^business-payments\//],
    esbuildPlugins: [
      {
        name: 'cli-uses-public-entries',
        setup(build) {
          build.onResolve({ filter: /^\.\.\/(index|webhooks|testing|doctor)\.js$/ }, (args) =>
            /[\\/]src[\\/]cli[\\/]/.test(args.importer) ? { path: PUBLIC_ENTRIES[args.path]!, external: true } : undefined,
          );
        },
      },
    ],
  },
]);
