// Size check: min+gzip bytes of each entry with everything it imports (ky and zod
// included), as a bundler would ship it. Prints figures; fails when the webhooks entry,
// which serverless functions load cold, is over its budget (2,950 B, a ratchet: the promise is 3 kB, the aim 2,900 B).
import { build } from 'esbuild';
import { gzipSync } from 'node:zlib';

const BUDGET = { webhooks: 2_950 };
let over = false;
for (const name of ['index', 'webhooks', 'testing']) {
  const result = await build({
    entryPoints: [`dist/${name}.js`],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
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
