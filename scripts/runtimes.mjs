// The runtime matrix (CI): the packed tarball, installed as a user installs it, on every
// runtime our users deploy to. Each runtime runs test/runtimes/check.mjs: a signed create and
// verify against the local sandbox over a socket, an API error class, and verifyWebhook on a
// good and a tampered delivery; then the same runtime against a sandbox playing the earlier
// generation: initiate, verify pending and paid, create → RouteNotSupportedError,
// generation() → 'earlier', the sandbox's own IPN through verifyWebhook and the fulfillment
// kit. One line per runtime; exit 1 if any failed.
//
//   npm run test:runtimes                 build, pack, run every runtime
//   node scripts/runtimes.mjs --tarball X run on a given tarball (e.g. an older release)
//   node scripts/runtimes.mjs --only node20,workerd --verbose   (each check's result too)
//
// The runtimes (Node 20.19 and 22.12, Deno, Bun, workerd) are pinned in
// test/runtimes/package.json and installed into .cache/runtimes on first use, not by the root
// `npm ci`. Node 24 is the one running this script; Chromium is Debian's /usr/bin/chromium.
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
// Debian's chromium and the flags every browser check here uses (one place: the console test's).
import { LAUNCH } from '../test/browser/console-flow.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const matrixDir = join(root, 'test/runtimes');
// Installed outside test/ (a node_modules there would be walked by every tool that reads tests).
const installDir = join(root, '.cache/runtimes');
const bin = (name) => join(installDir, 'node_modules/.bin', name);
const argv = process.argv.slice(2);
const flag = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const only = flag('--only')?.split(',');
const started = performance.now();

// 1. Runtimes, pinned (exact versions and their own lockfile). `npm install`, not `npm ci`:
// the registry holds only some platforms' optional binaries (@deno/*), so a lockfile made on
// one platform never satisfies `npm ci`'s sync check; install still follows the lock.
if (
  !existsSync(bin('deno')) ||
  readFileSync(join(installDir, 'package.json'), 'utf8') !== readFileSync(join(matrixDir, 'package.json'), 'utf8')
) {
  mkdirSync(installDir, { recursive: true });
  for (const file of ['package.json', 'package-lock.json']) copyFileSync(join(matrixDir, file), join(installDir, file));
  run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: installDir });
}

// 2. The tarball, installed into a fresh project as a user would.
const work = mkdtempSync(join(tmpdir(), 'bp-matrix-'));
let tarball = flag('--tarball');
if (!tarball) {
  // --ignore-scripts: `npm run test:runtimes` has just built dist/ (prepack would build it again).
  run('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', work], { cwd: root });
  tarball = join(
    work,
    readdirSync(work).find((f) => f.endsWith('.tgz')),
  );
}
const app = join(work, 'app');
run('mkdir', ['-p', app]);
writeFileSync(
  join(app, 'package.json'),
  JSON.stringify({ name: 'matrix-app', private: true, type: 'module', dependencies: { 'business-payments': `file:${tarball}` } }),
);
run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: app });
for (const file of ['check.mjs', 'esm.mjs', 'cjs.cjs', 'page.mjs', 'worker.mjs']) copyFileSync(join(matrixDir, file), join(app, file));
const version = JSON.parse(
  execFileSync('node', ['-p', 'JSON.stringify(require("business-payments/package.json").version)'], { cwd: app, encoding: 'utf8' }),
);

// 3. The sandbox of this checkout (not the tarball's: an old tarball is tested against today's server).
const { createMockService, signWebhook } = await import(join(root, 'dist/testing.js'));
const mock = createMockService({ rateLimitPerMinute: 1_000_000 });
const server = await mock.listen({ port: 0 });
const webhook = await signWebhook({
  secret: mock.credentials.webhookSecret,
  payload: {
    id: 'evt_matrix',
    type: 'payment.completed',
    api_version: '2024-06-01',
    created_at: new Date().toISOString(),
    data: { trx_id: 'TRXMATRIX', amount: { value: 25, currency: 'USD' } },
  },
});
// The earlier generation (docs/generations.md): a second sandbox playing it, and the runner's
// helper for the steps a runtime cannot take itself (check.mjs, checkEarlier): the trx_id of a
// payment as the sandbox's records show it (initiate answers none), the customer paying
// (mock.completeCheckout), and the IPN the sandbox delivered to <control>/ipn.
const earlierMock = createMockService({ generation: 'earlier', rateLimitPerMinute: 1_000_000 });
const earlierServer = await earlierMock.listen({ port: 0 });
const control = await startControl(earlierMock);
const input = {
  baseUrl: server.url,
  credentials: mock.credentials.sandbox,
  webhook: { ...webhook, secret: mock.credentials.webhookSecret },
  earlier: { baseUrl: earlierServer.url, credentials: earlierMock.credentials.sandbox, control: control.url },
};

function startControl(service) {
  const ipns = new Map(); // trx_id -> { body, headers } as delivered
  const cors = {
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Allow-Methods': 'POST',
    'Access-Control-Allow-Headers': 'content-type',
  };
  const site = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const text = Buffer.concat(chunks).toString('utf8');
    const reply = (status, value) => res.writeHead(status, { ...cors, 'Content-Type': 'application/json' }).end(JSON.stringify(value));
    if (req.method === 'OPTIONS') return res.writeHead(204, cors).end();
    try {
      const { pathname } = new URL(req.url, 'http://control');
      if (pathname === '/ipn') {
        const headers = {};
        for (const name of ['content-type', 'x-signature', 'x-environment', 'user-agent']) headers[name] = req.headers[name];
        ipns.set(JSON.parse(text).data.trx_id, { body: text, headers });
        return reply(200, { ok: true });
      }
      const asked = JSON.parse(text || '{}');
      if (pathname === '/trx') {
        const row = [...service.state.payments.values()].find((p) => p.merchant_ref === asked.ref);
        return reply(row ? 200 : 404, { trx_id: row?.trx_id ?? null });
      }
      if (pathname === '/complete') {
        await service.completeCheckout(asked.trx_id, 'success'); // resolves after the IPN's attempt
        return reply(200, { ipn: ipns.get(asked.trx_id) ?? null });
      }
      reply(404, { error: 'no such control route' });
    } catch (error) {
      reply(500, { error: String(error?.message ?? error) });
    }
  });
  return new Promise((resolve) =>
    site.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${site.address().port}`, close: () => site.close() })),
  );
}

const { build } = await import('esbuild');
const bundle = async (entry, format, conditions) =>
  (
    await build({
      entryPoints: [join(app, entry)],
      bundle: true,
      write: false,
      format,
      platform: 'browser',
      conditions,
      target: 'es2022',
      logLevel: 'silent',
    })
  ).outputFiles[0].text;

// 4. The runtimes. Each returns check()'s { ok, steps } or throws with what went wrong.
const nodeAt = (path) => async () => {
  const esm = await child(path, ['esm.mjs']);
  const cjs = await child(path, ['cjs.cjs']);
  return {
    ok: esm.ok && cjs.ok,
    steps: [
      ...esm.steps.map((s) => ({ ...s, name: `import: ${s.name}` })),
      ...cjs.steps.map((s) => ({ ...s, name: `require: ${s.name}` })),
    ],
  };
};
const RUNTIMES = {
  node20: {
    label: () => `node ${version_(join(installDir, 'node_modules/node20/bin/node'))}`,
    run: nodeAt(join(installDir, 'node_modules/node20/bin/node')),
  },
  'node22.3': {
    label: () => `node ${version_(join(installDir, 'node_modules/node22-3/bin/node'))}`,
    run: nodeAt(join(installDir, 'node_modules/node22-3/bin/node')),
  },
  node22: {
    label: () => `node ${version_(join(installDir, 'node_modules/node22/bin/node'))}`,
    run: nodeAt(join(installDir, 'node_modules/node22/bin/node')),
  },
  node24: { label: () => `node ${process.versions.node}`, run: nodeAt(process.execPath) },
  deno: {
    label: () => execFileSync(bin('deno'), ['--version'], { encoding: 'utf8' }).split('\n')[0].split(' (')[0],
    run: () =>
      withSandboxBin(child(bin('deno'), ['run', '--allow-net', '--allow-env', '--allow-read', 'esm.mjs']), bin('deno'), ['run', '-A']),
  },
  bun: {
    label: () => `bun ${execFileSync(bin('bun'), ['--version'], { encoding: 'utf8' }).trim()}`,
    run: () => withSandboxBin(child(bin('bun'), ['esm.mjs']), bin('bun'), []),
  },
  'edge-runtime': {
    label: () => 'edge-runtime (@edge-runtime/vm)',
    run: async () => {
      const { EdgeVM } = await import('@edge-runtime/vm');
      const vm = new EdgeVM();
      vm.evaluate(await bundle('page.mjs', 'iife', ['edge-light', 'worker', 'browser']));
      return vm.evaluate('__matrix')(input);
    },
  },
  workerd: {
    label: () => `workerd ${execFileSync(bin('workerd'), ['--version'], { encoding: 'utf8' }).trim().replace('workerd ', '')} (miniflare)`,
    run: async () => {
      const { Miniflare } = await import(join(installDir, 'node_modules/miniflare/dist/src/index.js'));
      // The newest date the registry's workerd accepts.
      const mf = new Miniflare({
        modules: true,
        script: await bundle('worker.mjs', 'esm', ['workerd', 'worker', 'browser']),
        compatibilityDate: '2026-05-03',
      });
      try {
        const response = await mf.dispatchFetch('http://matrix.local/', { method: 'POST', body: JSON.stringify(input) });
        const text = await response.text();
        if (response.status !== 200) throw new Error(`the Worker answered ${response.status}: ${text.slice(0, 300)}`);
        return JSON.parse(text);
      } finally {
        await mf.dispose();
      }
    },
  },
  chromium: {
    label: () => execFileSync('/usr/bin/chromium', ['--version'], { encoding: 'utf8' }).trim().split(' built')[0],
    run: async () => {
      const script = await bundle('page.mjs', 'iife', ['browser']);
      // The page comes from its own origin: calls to the sandbox are cross-origin (CORS), as in a real app.
      const site = createServer((req, res) => {
        if (req.url === '/matrix.js') res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(script);
        else res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><script src="/matrix.js"></script>');
      });
      await new Promise((resolve) => site.listen(0, '127.0.0.1', resolve));
      const { chromium } = await import('playwright-core');
      const browser = await chromium.launch(LAUNCH);
      try {
        const page = await browser.newPage();
        const errors = [];
        page.on('pageerror', (error) => errors.push(error.message));
        await page.goto(`http://127.0.0.1:${site.address().port}/`);
        await page
          .waitForFunction(() => typeof globalThis.__matrix === 'function', null, { timeout: 10_000 })
          .catch(() => {
            throw new Error(`the bundle did not load: ${errors.join('; ') || 'no error reported'}`);
          });
        return await page.evaluate((value) => globalThis.__matrix({ ...value, browser: true }), input);
      } finally {
        await browser.close();
        site.close();
      }
    },
  },
};

// The bin's sandbox on this runtime (its service runs in a worker thread, whose API differs
// between runtimes): it starts, answers over its socket, and stops with exit 0 on SIGINT; and
// the same with --generation earlier (whose unsigned call is that generation's 401).
async function withSandboxBin(checks, command, args) {
  const [result, ...bins] = await Promise.all([checks, sandboxBin(command, args, 'current'), sandboxBin(command, args, 'earlier')]);
  return { ok: result.ok && bins.every((b) => b.ok), steps: [...result.steps, ...bins] };
}

function sandboxBin(command, args, generation) {
  const cli = join(app, 'node_modules/business-payments/dist/cli.js');
  const earlier = generation === 'earlier';
  const name = `${earlier ? 'earlier: ' : ''}bin: sandbox${earlier ? ' --generation earlier' : ''} starts, answers, stops on SIGINT`;
  const expected = earlier ? '401 Unauthorized' : '401 Invalid API credentials';
  return new Promise((resolve) => {
    const proc = spawn(command, [...args, cli, 'sandbox', '--json', '--port', '0', '--generation', generation], {
      cwd: app,
      env: { ...process.env, NO_COLOR: '1' },
    });
    let out = '';
    let err = '';
    let status;
    const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
    proc.stderr.on('data', (d) => (err += d));
    proc.stdout.on('data', async (d) => {
      out += d;
      if (status !== undefined || !out.includes('\n')) return;
      status = null;
      try {
        const { baseUrl } = JSON.parse(out.slice(0, out.indexOf('\n')));
        const res = await fetch(`${baseUrl}/api/v1/site-info`, { headers: { Accept: 'application/json' } });
        status = `${res.status} ${(await res.json()).error}`;
      } catch (error) {
        status = String(error?.message ?? error);
      }
      proc.kill('SIGINT');
    });
    proc.on('close', (code) => {
      clearTimeout(timer);
      const ok = code === 0 && status === expected && err.includes('sandbox stopped');
      resolve({ name, ok, detail: `unsigned site-info: ${status}; exit ${code}${ok ? '' : `; stderr: ${err.trim().slice(0, 200)}`}` });
    });
  });
}

function version_(path) {
  return execFileSync(path, ['--version'], { encoding: 'utf8' }).trim().replace(/^v/, '');
}

// A runtime in its own process, the check's input in MATRIX_INPUT; the last stdout line is the result.
function child(command, args) {
  return new Promise((resolve, reject) => {
    const proc = spawn(command, args, { cwd: app, env: { ...process.env, MATRIX_INPUT: JSON.stringify(input), NO_COLOR: '1' } });
    let out = '';
    let err = '';
    proc.stdout.on('data', (d) => (out += d));
    proc.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
    proc.on('error', reject);
    proc.on('close', (code) => {
      clearTimeout(timer);
      const last = out.trim().split('\n').at(-1) ?? '';
      try {
        return resolve(JSON.parse(last));
      } catch {
        const why = err.split('\n').find((line) => /Error|error:/.test(line)) ?? err.trim().split('\n')[0] ?? '';
        reject(new Error(`exit ${code}: ${why.trim().slice(0, 300) || last.slice(0, 300)}`));
      }
    });
  });
}

function run(command, args, options = {}) {
  execFileSync(command, args, { stdio: ['ignore', 'ignore', 'inherit'], ...options });
}

console.log(
  `runtime matrix: business-payments ${version} (${tarball.split('/').at(-1)}) against the sandbox at ${server.url} (current generation) and ${earlierServer.url} (earlier generation)`,
);
let failed = 0;
try {
  for (const [name, runtime] of Object.entries(RUNTIMES)) {
    if (only && !only.includes(name)) continue;
    const t0 = performance.now();
    let label = name;
    let result;
    try {
      label = runtime.label();
      result = await runtime.run();
    } catch (error) {
      result = { ok: false, steps: [{ name: 'run', ok: false, detail: error?.message ?? String(error) }] };
    }
    const seconds = ((performance.now() - t0) / 1000).toFixed(1);
    const bad = result.steps.filter((s) => !s.ok);
    if (!result.ok || bad.length) failed++;
    if (argv.includes('--verbose')) for (const s of result.steps) console.log(`    ${s.ok ? '✓' : '✗'} ${s.name}: ${s.detail}`);
    const earlier = result.steps.filter((s) => s.name.includes('earlier: ')).length;
    console.log(
      `${result.ok && !bad.length ? '✓' : '✗'} ${label.padEnd(34)} ${String(result.steps.length).padStart(2)} checks (${String(earlier).padStart(2)} earlier generation)  ${seconds.padStart(5)} s${bad.length ? `  ${bad[0].name}: ${bad[0].detail}` : ''}`,
    );
  }
} finally {
  await mock.close();
  await earlierMock.close();
  control.close();
}
console.log(`${failed ? `${failed} runtime(s) failed` : 'every runtime passed'} in ${((performance.now() - started) / 1000).toFixed(0)} s`);
process.exit(failed ? 1 : 0);
