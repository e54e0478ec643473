import { defineConfig } from 'tsup';

// The CLI's own imports of the public entries stay imports of the package (resolved by
// Node's self-reference), so dist/cli.js holds only the CLI and uses the public API.
const PUBLIC_ENTRIES: Record<string, string> = {
  '../index.js': 'business-payments',
  '../webhooks.js': 'business-payments/webhooks',
  '../testing.js': 'business-payments/testing',
};

export default defineConfig([
  {
    entry: {
      index: 'src/index.ts',
      webhooks: 'src/webhooks.ts',
      testing: 'src/testing.ts',
    },
    format: ['esm', 'cjs'],
    dts: true,
    // Both builds write to dist/ at once: this one must not clean away the CLI's files.
    clean: ['!cli.js', '!cli.js.map'],
    sourcemap: true,
    target: 'es2022',
    platform: 'neutral',
    // ky and zod are bundled in (only the parts used): a cold import then parses one file
    // instead of ky's and zod's ~100 modules (zod's entry alone loads every locale), which
    // is what serverless functions pay on each cold start. They stay dependencies for the
    // .d.ts (which names zod/mini's types) and for users who use them directly.
    noExternal: ['ky', 'zod'],
    splitting: true,
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
          build.onResolve({ filter: /^\.\.\/(index|webhooks|testing)\.js$/ }, (args) =>
            /[\\/]src[\\/]cli[\\/]/.test(args.importer) ? { path: PUBLIC_ENTRIES[args.path]!, external: true } : undefined,
          );
        },
      },
    ],
  },
]);
