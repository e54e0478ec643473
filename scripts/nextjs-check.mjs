// The Next.js example as a merchant runs it (CI): examples/nextjs with the packed tarball,
// `next build` with no BUSINESS_PAYMENTS_* variables set, `next start` against the local
// sandbox, then in headless Chromium the server action (Pay → the sandbox's hosted checkout
// → paid → the thanks page, and the sandbox's webhook answered 200 by the node route), and
// `business-payments trigger` deliveries to the node and edge webhook routes.
//
//   npm run test:nextjs    (builds and packs first)
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
// Debian's chromium and the flags every browser check here uses (one place: the console test's).
import { LAUNCH } from '../test/browser/console-flow.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const started = performance.now();
const work = mkdtempSync(join(tmpdir(), 'bp-nextjs-'));
execFileSync('npm', ['pack', '--silent', '--pack-destination', work], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
const tarball = join(
  work,
  readdirSync(work).find((f) => f.endsWith('.tgz')),
);

const app = join(work, 'app');
cpSync(join(root, 'examples/nextjs'), app, { recursive: true, filter: (src) => !/[\\/](node_modules|\.next)([\\/]|$)/.test(src) });
const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'));
manifest.dependencies['business-payments'] = `file:${tarball}`;
writeFileSync(join(app, 'package.json'), JSON.stringify(manifest, null, 2));
execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: app, stdio: ['ignore', 'ignore', 'inherit'] });

const lines = [];
const report = (ok, what, detail = '') => {
  lines.push(ok);
  console.log(`${ok ? '✓' : '✗'} next.js: ${what}${detail ? `  ${detail}` : ''}`);
};
const next = join(app, 'node_modules/next/dist/bin/next');
// The build must not need credentials: none of ours reach it.
const buildEnv = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('BUSINESS_PAYMENTS_')));
buildEnv.NEXT_TELEMETRY_DISABLED = '1';
const t0 = performance.now();
const build = spawnSync(process.execPath, [next, 'build'], { cwd: app, env: buildEnv, encoding: 'utf8' });
report(
  build.status === 0,
  'next build with no BUSINESS_PAYMENTS_* set',
  `${((performance.now() - t0) / 1000).toFixed(0)} s${build.status === 0 ? '' : `\n${(build.stdout + build.stderr).split('\n').slice(-25).join('\n')}`}`,
);

const { createMockService } = await import(join(root, 'dist/testing.js'));
const mock = createMockService();
const sandbox = await mock.listen({ port: 0 });
const port = 3000 + Math.floor(Math.random() * 2000);
const shop = `http://127.0.0.1:${port}`;
const { merchantKey, apiKey, apiSecret } = mock.credentials.sandbox;
const server =
  build.status === 0
    ? spawn(process.execPath, [next, 'start', '-p', String(port), '-H', '127.0.0.1'], {
        cwd: app,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          ...buildEnv,
          BUSINESS_PAYMENTS_ENVIRONMENT: 'sandbox',
          BUSINESS_PAYMENTS_BASE_URL: sandbox.url,
          BUSINESS_PAYMENTS_MERCHANT_KEY: merchantKey,
          BUSINESS_PAYMENTS_API_KEY: apiKey,
          BUSINESS_PAYMENTS_API_SECRET: apiSecret,
          BUSINESS_PAYMENTS_WEBHOOK_SECRET: mock.credentials.webhookSecret,
          SHOP_ORIGIN: shop,
        },
      })
    : undefined;
let serverLog = '';
server?.stdout.on('data', (d) => (serverLog += d));
server?.stderr.on('data', (d) => (serverLog += d));

try {
  if (server) {
    await until(async () => (await fetch(`${shop}/`).catch(() => undefined))?.ok === true, 30_000, 'next start');
    await serverAction();
    for (const route of ['payments', 'payments-edge']) trigger(route);
  }
} catch (error) {
  report(false, 'run', `${error.message}\n${serverLog.split('\n').slice(-15).join('\n')}`);
} finally {
  server?.kill();
  await mock.close();
}
console.log(`next.js example: ${lines.every(Boolean) ? 'passed' : 'FAILED'} in ${((performance.now() - started) / 1000).toFixed(0)} s`);
process.exit(lines.length > 0 && lines.every(Boolean) ? 0 : 1);

// Pay through the page's server action in a real browser, then on the sandbox's checkout.
async function serverAction() {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch(LAUNCH);
  try {
    const page = await browser.newPage();
    await page.goto(`${shop}/`);
    await Promise.all([
      page.waitForURL((url) => url.href.startsWith(`${sandbox.url}/checkout/`), { timeout: 20_000 }),
      page.getByRole('button', { name: 'Pay 25.00 USD' }).click(),
    ]);
    report(true, 'server action created a checkout and redirected to it', new URL(page.url()).pathname.split('/').slice(0, 3).join('/'));
    await Promise.all([
      page.waitForURL((url) => url.href.startsWith(`${shop}/orders/`), { timeout: 20_000 }),
      page.getByRole('button', { name: /^Pay / }).click(),
    ]);
    await page.getByText('Thank you').waitFor();
    await until(() => mock.state.deliveries.length > 0, 10_000, 'the webhook attempt');
    const delivery = mock.state.deliveries.at(-1);
    report(
      delivery.status === 200,
      'paid; the sandbox webhook was answered by the node route',
      `${delivery.type} → HTTP ${delivery.status}`,
    );
  } finally {
    await browser.close();
  }
}

// A signed test delivery from the CLI, as a merchant sends one.
function trigger(route) {
  const result = spawnSync(
    process.execPath,
    [
      join(root, 'dist/cli.js'),
      'trigger',
      'payment.completed',
      '--url',
      `${shop}/api/webhooks/${route}`,
      '--secret',
      mock.credentials.webhookSecret,
    ],
    { encoding: 'utf8' },
  );
  report(
    result.status === 0,
    `business-payments trigger → /api/webhooks/${route} (${route.endsWith('edge') ? 'edge' : 'node'} runtime)`,
    (result.stdout + result.stderr).trim().split('\n')[0],
  );
}

async function until(predicate, ms, what) {
  const deadline = Date.now() + ms;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
