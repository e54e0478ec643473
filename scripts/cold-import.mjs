// Cold-import cost: wall time of `node -e ""` against `node` importing an entry, in fresh
// processes, interleaved (bare, then each entry, per run) so machine noise hits all alike.
// Prints the time each import adds (median of RUNS); with `--vs <entry>` it also prints the
// ratio of each other entry's added time to that one's (median of per-run ratios).
//
//   node scripts/cold-import.mjs dist/webhooks.js dist/webhooks.cjs
//   node scripts/cold-import.mjs --vs stripe dist/index.js     (main entry vs stripe-node)
//
// An entry is a file (dist/index.js, a .cjs is require()d) or a package name (stripe,
// openai), imported as its users would. Env: COLD_RUNS (default 15), COLD_MAX_RATIO (with
// --vs: exit 1 when a ratio is above it).
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';

const RUNS = Number(process.env.COLD_RUNS ?? 15);
const args = process.argv.slice(2);
const vsAt = args.indexOf('--vs');
const versus = vsAt >= 0 ? args.splice(vsAt, 2)[1] : undefined;
const entries = args.length ? args : ['dist/webhooks.js', 'dist/webhooks.cjs', 'dist/index.js'];
if (versus) entries.push(versus);

function time(args) {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited ${result.status}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** node arguments that load `entry` the way its users do. */
function loader(entry) {
  const isFile = /\.(c|m)?js$/.test(entry) || entry.startsWith('.') || entry.startsWith('/');
  if (entry.endsWith('.cjs')) return ['-e', `require(${JSON.stringify(entry.startsWith('/') ? entry : `./${entry}`)})`];
  const specifier = isFile ? pathToFileURL(entry).href : entry;
  return ['--input-type=module', '-e', `await import(${JSON.stringify(specifier)})`];
}

const added = Object.fromEntries(entries.map((e) => [e, []]));
time(['-e', '']); // warm the file cache
for (const entry of entries) time(loader(entry));
for (let i = 0; i < RUNS; i++) {
  const bare = time(['-e', '']);
  for (const entry of entries) added[entry].push(time(loader(entry)) - bare);
}
for (const entry of entries) {
  console.log(`${entry.padEnd(20)} import adds ${median(added[entry]).toFixed(1)} ms (median of ${RUNS} fresh processes)`);
}
if (versus) {
  const limit = process.env.COLD_MAX_RATIO ? Number(process.env.COLD_MAX_RATIO) : undefined;
  let over = false;
  for (const entry of entries.filter((e) => e !== versus)) {
    const ratio = median(added[entry].map((ms, i) => ms / added[versus][i]));
    const verdict = limit === undefined ? '' : ratio <= limit ? `  (limit ${limit}: ok)` : `  (limit ${limit}: OVER)`;
    if (limit !== undefined && ratio > limit) over = true;
    console.log(`${entry} / ${versus}: ${ratio.toFixed(2)}${verdict}`);
  }
  process.exit(over ? 1 : 0);
}
