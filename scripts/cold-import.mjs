// Cold-import cost: median wall time of `node -e ""` against `node` importing an entry, 15
// runs each, interleaved so machine noise hits both alike. Prints the difference.
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';

const RUNS = 15;
const entries = process.argv.slice(2).length ? process.argv.slice(2) : ['dist/webhooks.js', 'dist/webhooks.cjs', 'dist/index.js'];

function time(args) {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited ${result.status}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

for (const entry of entries) {
  const url = pathToFileURL(entry).href;
  const load = entry.endsWith('.cjs') ? ['-e', `require(${JSON.stringify(entry.startsWith('/') ? entry : `./${entry}`)})`] : ['--input-type=module', '-e', `await import(${JSON.stringify(url)})`];
  const bare = [];
  const loaded = [];
  time(['-e', '']); // warm the file cache
  for (let i = 0; i < RUNS; i++) {
    bare.push(time(['-e', '']));
    loaded.push(time(load));
  }
  const b = median(bare);
  const l = median(loaded);
  console.log(`${entry.padEnd(20)} bare ${b.toFixed(1)} ms  with import ${l.toFixed(1)} ms  added ${(l - b).toFixed(1)} ms (median of ${RUNS})`);
}
