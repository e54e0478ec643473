import { defineConfig, type Options } from 'tsup';
import list from './entries.json' with { type: 'json' };

const { entries, bin } = list;

// The entries (entries.json): built together, or each on its own ("build": "apart").
const together = entries.filter((entry) => entry.build === undefined);
const apart = entries.filter((entry) => entry.build === 'apart');

// The CLI's own imports of the public entries (`../index.js` from src/cli/, say) stay imports
// of the package (resolved by Node's self-reference), so dist/cli.js holds only the CLI and
// uses the public API.
const PUBLIC_ENTRIES = new Map(entries.map((entry) => [entry.source.replace(/^src\/(.*)\.ts$/, '../$1.js'), entry.specifier]));

export default defineConfig([
  {
    entry: Object.fromEntries(together.map((entry) => [entry.dist, entry.source])),
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
  // Each entry built apart (`business-payments/doctor`), with the package itself external, so
  // the doctor's contract check's zod JSON Schema code never lands in the main entry's chunks,
  // and the client and error classes it uses are the main entry's own.
  ...apart.map((entry): Options => ({
    entry: { [entry.dist]: entry.source },
    format: ['esm', 'cjs'],
    dts: true,
    clean: false,
    sourcemap: true,
    target: 'es2022',
    platform: 'neutral',
    external: ['business-payments', /^business-payments\//],
    noExternal: ['zod'],
    treeshake: true,
  })),
  {
    // The bin (`business-payments`): ESM for Node only, with the shebang on this file alone.
    entry: { [bin.dist]: bin.source },
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
          build.onResolve({ filter: /^\.\.\/[\w-]+\.js$/ }, (args) => {
            const specifier = PUBLIC_ENTRIES.get(args.path);
            return specifier && /[\\/]src[\\/]cli[\\/]/.test(args.importer) ? { path: specifier, external: true } : undefined;
          });
        },
      },
    ],
  },
]);
