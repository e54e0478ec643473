// Size check: min+gzip bytes of each entry with everything it imports (ky and zod
// included), as a bundler would ship it for a browser (esbuild, platform browser). Prints
// figures; fails when an entry is over its budget: `import { PaymentsClient }` 25 kB; the
// webhooks entry, which serverless functions load cold, 2,950 B (a ratchet: the promise is
// 3 kB, the aim 2,900 B).
import { build } from 'esbuild';
import { gzipSync } from 'node:zlib';

const BUDGET = { client: 25_000, webhooks: 2_950 };
let over = false;
// `client` is what an app that makes calls ships: the client and what it reaches.
const ENTRIES = {
  client: "export { PaymentsClient } from './dist/index.js';",
  index: "export * from './dist/index.js';",
  webhooks: "export * from './dist/webhooks.js';",
  testing: "export * from './dist/testing.js';",
};
for (const [name, contents] of Object.entries(ENTRIES)) {
  const result = await build({
    stdin: { contents, resolveDir: process.cwd(), loader: 'js' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'error',
  });
  const code = result.outputFiles[0].contents;
  const gz = gzipSync(code, { level: 9 }).length;
  const budget = BUDGET[name];
  const verdict = budget === undefined ? '' : gz <= budget ? `  (budget ${budget}: ok)` : `  (budget ${budget}: OVER)`;
  if (budget !== undefined && gz > budget) over = true;
  console.log(`${name.padEnd(9)} ${String(code.length).padStart(7)} B min  ${String(gz).padStart(6)} B min+gzip${verdict}`);
}
process.exit(over ? 1 : 0);
