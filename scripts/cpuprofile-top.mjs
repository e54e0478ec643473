// Top self-time functions of a V8 .cpuprofile (from `node --cpu-prof`), e.g.
//   npm exec -- node scripts/cpuprofile-top.mjs /tmp/prof/*.cpuprofile [count]
// Self time is summed per function (name + file + line: two anonymous functions of one
// file stay apart) over every profile given, then the top entries are printed with their
// share of all samples and of the busy (non-idle) samples, followed by self time per file.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const count = /^\d+$/.test(args.at(-1) ?? '') ? Number(args.pop()) : 25;
if (args.length === 0) {
  console.error('usage: node scripts/cpuprofile-top.mjs <file.cpuprofile>... [count]');
  process.exit(2);
}

/** A short place for a script url: repo-relative, or `pkg/…` inside node_modules. */
function place(url) {
  if (!url) return '';
  if (url.startsWith('node:')) return url;
  let path = url;
  try {
    if (url.startsWith('file:')) path = fileURLToPath(url);
  } catch {
    return url;
  }
  const inModules = path.lastIndexOf('node_modules/');
  return inModules >= 0 ? path.slice(inModules + 'node_modules/'.length) : relative(process.cwd(), path) || path;
}

const byFunction = new Map();
const byFile = new Map();
let total = 0;
let idle = 0;
for (const file of args) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const nodes = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const { samples, timeDeltas } = profile;
  // A sample lasts until the next one (as DevTools counts it); the last one until endTime.
  let at = profile.startTime;
  const stamps = timeDeltas.map((d) => (at += d));
  for (let i = 0; i < samples.length; i++) {
    const us = (i + 1 < stamps.length ? stamps[i + 1] : profile.endTime) - stamps[i];
    if (!(us > 0)) continue;
    const frame = nodes.get(samples[i]);
    const name = frame.functionName || '(anonymous)';
    const where = place(frame.url);
    const key = `${name}\t${where}${where ? `:${frame.lineNumber + 1}` : ''}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    const fileKey = where || name;
    byFile.set(fileKey, (byFile.get(fileKey) ?? 0) + us);
    total += us;
    if (name === '(idle)') idle += us;
  }
}

const pct = (us, of) => `${((100 * us) / of).toFixed(1)}%`.padStart(6);
const ms = (us) => `${(us / 1000).toFixed(1)} ms`.padStart(11);
const busy = total - idle;
console.log(`${args.length} profile(s): ${(total / 1000).toFixed(0)} ms sampled, ${(busy / 1000).toFixed(0)} ms busy (not idle)\n`);
console.log(`top ${count} by self time     self   of all  of busy  function  (file:line)`);
const top = [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, count);
top.forEach(([key, us], i) => {
  const [name, where] = key.split('\t');
  const ofBusy = name === '(idle)' ? '     -' : pct(us, busy);
  console.log(`${String(i + 1).padStart(3)}. ${ms(us)} ${pct(us, total)}  ${ofBusy}  ${name}  ${where}`);
});
console.log('\nself time by file (top 15):');
for (const [file, us] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 15)) {
  console.log(`  ${ms(us)} ${pct(us, total)}  ${file}`);
}
