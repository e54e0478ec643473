// `engines.node`, proven exact on the packed tarball (CI). For every major line the range
// admits, its lowest release must run the whole package: every package the tarball installs
// admits it in its own engines (no EBADENGINE), every entry loads with require() and with
// import and works (scripts/engines-probe.mjs), and so does the bin. Just below
// each floor of the range, the release must fail, or the range leaves out a Node that works.
// Each release is the `node` npm package, installed with `npm install --prefix
// .cache/engines/<version> node@<version>` on first use. One line per release; exit 1 if any
// line is wrong.
//
//   npm run test:engines                                 build, pack, every release
//   node scripts/engines-check.mjs --versions 20.15.1,22.3.0   only these (no registry look-up)
//   node scripts/engines-check.mjs --tarball X --verbose       another tarball; each step's result
import { execFileSync, spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { planVersions, satisfies } from './engines-range.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const argv = process.argv.slice(2);
const flag = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const verbose = argv.includes('--verbose');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const range = manifest.engines.node;
const started = performance.now();

// 1. Which releases: from the flag, or from the range and the `node` package's versions.
let plan;
const only = flag('--versions')?.split(',');
if (only) {
  const admitted = only.filter((v) => satisfies(v, range));
  plan = {
    lowest: admitted.map((version) => ({ version, why: 'admitted' })),
    below: only.filter((v) => !admitted.includes(v)).map((version) => ({ version, why: 'not admitted' })),
  };
} else {
  const published = JSON.parse(execFileSync('npm', ['view', 'node', 'versions', '--json'], { encoding: 'utf8' }));
  plan = planVersions(range, published);
}
console.log(`engines.node ${JSON.stringify(range)}: ${plan.lowest.length} releases must pass, ${plan.below.length} must fail`);

// 2. The tarball, installed into a fresh project as a user would (by the toolchain's npm).
const work = mkdtempSync(join(tmpdir(), 'bp-engines-'));
let tarball = flag('--tarball');
if (!tarball) {
  execFileSync('npm', ['pack', '--silent', '--pack-destination', work], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  tarball = join(
    work,
    readdirSync(work).find((f) => f.endsWith('.tgz')),
  );
}
const app = join(work, 'app');
mkdirSync(app);
writeFileSync(
  join(app, 'package.json'),
  JSON.stringify({ name: 'engines-app', private: true, dependencies: { 'business-payments': `file:${tarball}` } }),
);
execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: app, stdio: ['ignore', 'ignore', 'inherit'] });
copyFileSync(join(root, 'scripts/engines-probe.mjs'), join(app, 'probe.mjs'));
const cli = join(app, 'node_modules/business-payments/dist/cli.js');
const version = JSON.parse(readFileSync(join(app, 'node_modules/business-payments/package.json'), 'utf8')).version;
// What the tarball brings along, with each package's own engines.node: a Node that any of
// them refuses is one where `npm install business-payments` warns EBADENGINE (and fails
// with engine-strict). The package's own range is the one under test, so it is left out.
const installed = installedEngines(join(app, 'node_modules')).filter((p) => !p.name.startsWith('business-payments@'));

// 3. Each release: install once into .cache/engines, then the probes and the bin.
let wrong = 0;
for (const [expected, entries] of [
  ['pass', plan.lowest],
  ['fail', plan.below],
]) {
  for (const { version: node, why } of entries) {
    const t0 = performance.now();
    const bin = installNode(node);
    const results = [installCheck(node), probe(bin, 'require'), probe(bin, 'import'), binChecks(bin)];
    const failed = results.flatMap((r) => r.steps.filter((s) => !s.ok).map((s) => `${r.name}: ${s.name}: ${s.detail}`));
    const passed = failed.length === 0;
    const counts = results.map((r) => `${r.name} ${r.steps.filter((s) => s.ok).length}/${r.steps.length}`).join(' · ');
    const seconds = `${((performance.now() - t0) / 1000).toFixed(1)} s`;
    let line;
    if (expected === 'pass') {
      line = `${passed ? '✓' : '✗'} node ${node.padEnd(8)} ${why.padEnd(22)} ${counts}  ${seconds}`;
      if (!passed) line += `\n    ${failed.join('\n    ')}`;
    } else {
      // Below the range: it must fail somewhere, or engines.node should admit it.
      line = passed
        ? `✗ node ${node.padEnd(8)} ${why}: everything passes, so engines.node leaves out a Node that works`
        : `✓ node ${node.padEnd(8)} ${why}: fails, as engines.node says (${failed[0]})`;
    }
    if (passed !== (expected === 'pass')) wrong++;
    console.log(line);
    if (verbose)
      for (const r of results) for (const s of r.steps) console.log(`      ${s.ok ? '✓' : '✗'} ${r.name}: ${s.name}  ${s.detail}`);
  }
}
rmSync(work, { recursive: true, force: true });
console.log(
  wrong
    ? `${wrong} release(s) disagree with engines.node ${JSON.stringify(range)}`
    : `engines.node ${JSON.stringify(range)} holds, in ${Math.round((performance.now() - started) / 1000)} s`,
);
process.exit(wrong ? 1 : 0);

// The `node` package installs the real binary with its install script, which npm 11 runs
// only for packages that package.json's allowScripts names.
function installNode(node) {
  const prefix = join(root, '.cache/engines', node);
  const bin = join(prefix, 'node_modules/node/bin/node');
  if (existsSync(bin) && spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout.trim() === `v${node}`) return bin;
  rmSync(prefix, { recursive: true, force: true });
  mkdirSync(prefix, { recursive: true });
  writeFileSync(join(prefix, 'package.json'), JSON.stringify({ private: true, allowScripts: { node: true } }));
  execFileSync('npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel=error', `node@${node}`], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const got = spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout?.trim();
  if (got !== `v${node}`) throw new Error(`npm install node@${node} gave ${got ?? 'no node binary'}`);
  return bin;
}

function installedEngines(modules) {
  const found = [];
  for (const name of readdirSync(modules)) {
    if (name.startsWith('.')) continue;
    if (name.startsWith('@')) {
      for (const scoped of readdirSync(join(modules, name))) found.push(...packageEngines(join(modules, name, scoped)));
    } else found.push(...packageEngines(join(modules, name)));
  }
  return found;
}

function packageEngines(dir) {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const nested = existsSync(join(dir, 'node_modules')) ? installedEngines(join(dir, 'node_modules')) : [];
  return [{ name: `${pkg.name}@${pkg.version}`, range: pkg.engines?.node }, ...nested];
}

function installCheck(node) {
  const steps = installed.map(({ name, range }) => {
    if (range === undefined) return { name, ok: true, detail: 'no engines.node' };
    try {
      return { name, ok: satisfies(node, range), detail: `engines.node ${range}` };
    } catch (error) {
      return { name, ok: false, detail: `engines.node ${range}: ${error.message}` };
    }
  });
  return { name: 'install', ok: steps.every((s) => s.ok), steps };
}

function probe(bin, mode) {
  const result = spawnSync(bin, ['probe.mjs', mode], { cwd: app, encoding: 'utf8', timeout: 60_000 });
  try {
    return { name: mode, ...JSON.parse(result.stdout.trim().split('\n').at(-1)) };
  } catch {
    const why =
      result.error?.message ??
      (result.stderr
        .trim()
        .split('\n')
        .find((l) => /Error/.test(l)) ||
        `exit ${result.status}`);
    return { name: mode, ok: false, steps: [{ name: 'run', ok: false, detail: why }] };
  }
}

// The bin as `npx business-payments` runs it, on this release: --version, sign (checked
// against node:crypto here), and the sandbox up on a port.
function binChecks(bin) {
  const steps = [];
  const run = (args) => spawnSync(bin, [cli, ...args], { cwd: app, encoding: 'utf8', timeout: 30_000 });
  const v = run(['--version']);
  steps.push({ name: '--version', ok: v.status === 0 && v.stdout === `${version}\n`, detail: (v.stdout + v.stderr).trim() });
  const signed = run(['sign', '--method', 'GET', '--path', '/api/v1/balance', '--secret', 's3cret', '--timestamp', '1700000000']);
  const expectedSig = createHmac('sha256', 's3cret').update('1700000000.GET./api/v1/balance.').digest('hex');
  const sig = /^X-Signature: sha256=([0-9a-f]{64})$/m.exec(signed.stdout)?.[1];
  steps.push({ name: 'sign', ok: signed.status === 0 && sig === expectedSig, detail: sig ?? signed.stderr.trim() });
  steps.push(sandboxStarts(bin));
  return { name: 'bin', ok: steps.every((s) => s.ok), steps };
}

function sandboxStarts(bin) {
  // Synchronous on purpose (the loop above is): wait in a child for the banner, then stop it.
  const watcher = `
    const { spawn } = require('node:child_process');
    const child = spawn(${JSON.stringify(bin)}, [${JSON.stringify(cli)}, 'sandbox', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let said = false;
    const done = (ok) => { if (said) return; said = true; child.kill(); console.log(JSON.stringify({ ok, out: out.trim().split('\\n')[0] })); };
    child.stdout.on('data', (d) => { out += d; if (/running at http:/.test(out)) done(true); });
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', () => done(false));
    setTimeout(() => done(false), 15000).unref();
  `;
  const result = spawnSync(process.execPath, ['-e', watcher], { encoding: 'utf8', timeout: 30_000 });
  try {
    const { ok, out } = JSON.parse(result.stdout.trim().split('\n')[0]);
    return { name: 'sandbox', ok, detail: out };
  } catch {
    return { name: 'sandbox', ok: false, detail: result.stderr.trim() || `exit ${result.status}` };
  }
}
