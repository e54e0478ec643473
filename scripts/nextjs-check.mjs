// The Next.js example as a merchant runs it (CI): examples/nextjs with the packed tarball,
// `next build` with no BUSINESS_PAYMENTS_* variables set, `next start` against the local
// sandbox, then in headless Chromium the server action (Pay → the sandbox's hosted checkout →
// paid → the return page), where the return page and the sandbox's webhook to the node route
// race to report the payment and the order is fulfilled exactly once; then
// `business-payments trigger` deliveries: a duplicate (200, still once) and a bad signature
// (401) to both routes, and on the edge route a declined payment settled by its webhook.
// Then the same app once more against a sandbox playing the earlier generation
// (docs/generations.md), BUSINESS_PAYMENTS_WEBHOOK_SECRET being the API secret there: the server
// action initiates (no payments.create there), the IPN reaches the node route before the
// customer is sent back (the order fulfilled once, for its gross), and `trigger --format legacy`
// deliveries signed with the API secret: a duplicate (200, still once) and a forgery (401) to
// both routes, and on the edge route a cancelled payment whose IPN runs onFailed once.
//
//   npm run test:nextjs    (builds and packs first)
import { execFile, execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
// Debian's chromium and the flags every browser check here uses (one place: the console test's).
import { LAUNCH } from '../test/browser/console-flow.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const started = performance.now();
const work = mkdtempSync(join(tmpdir(), 'bp-nextjs-'));
// --ignore-scripts: `npm run test:nextjs` has just built dist/ (prepack would build it again).
execFileSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', work], {
  cwd: root,
  stdio: ['ignore', 'ignore', 'inherit'],
});
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
// The pass running: 'current' or 'earlier', its sandbox and `next start`.
let generation = 'current';
let mock;
let sandbox;
let shop;
let serverLog = '';
const report = (ok, what, detail = '') => {
  lines.push(ok);
  const label = generation === 'earlier' ? 'next.js (earlier generation)' : 'next.js';
  console.log(`${ok ? '✓' : '✗'} ${label}: ${what}${detail ? `  ${detail}` : ''}`);
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
const logs = [];
for (const pass of ['current', 'earlier']) {
  if (build.status !== 0) break;
  generation = pass;
  const before = lines.length;
  await run(pass);
  if (!lines.slice(before).every(Boolean)) logs.push(`next start's log (${pass} generation):\n${serverLog}`);
}
for (const log of logs) console.log(log);
console.log(`next.js example: ${lines.every(Boolean) ? 'passed' : 'FAILED'} in ${((performance.now() - started) / 1000).toFixed(0)} s`);
process.exit(lines.length > 0 && lines.every(Boolean) ? 0 : 1);

// One pass: a sandbox of that generation, `next start` against it, the checkout in Chromium,
// trigger deliveries to both routes.
async function run(pass) {
  const earlier = pass === 'earlier';
  const t1 = performance.now();
  mock = createMockService(earlier ? { generation: 'earlier' } : {});
  sandbox = await mock.listen({ port: 0 });
  // Not one of the ports browsers refuse (the fetch spec's bad ports: Next.js refuses them too).
  let port;
  do port = 3000 + Math.floor(Math.random() * 2000);
  while ([3659, 4045, 4190].includes(port));
  shop = `http://127.0.0.1:${port}`;
  serverLog = '';
  const { merchantKey, apiKey, apiSecret, webhookSecret } = mock.credentials.sandbox;
  const server = spawn(process.execPath, [next, 'start', '-p', String(port), '-H', '127.0.0.1'], {
    cwd: app,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...buildEnv,
      BUSINESS_PAYMENTS_ENVIRONMENT: 'sandbox',
      BUSINESS_PAYMENTS_BASE_URL: sandbox.url,
      BUSINESS_PAYMENTS_MERCHANT_KEY: merchantKey,
      BUSINESS_PAYMENTS_API_KEY: apiKey,
      BUSINESS_PAYMENTS_API_SECRET: apiSecret,
      // The earlier generation signs its IPN with the API secret (the sandbox's webhookSecret there).
      BUSINESS_PAYMENTS_WEBHOOK_SECRET: webhookSecret,
      SHOP_ORIGIN: shop,
    },
  });
  server.stdout.on('data', (d) => (serverLog += d));
  server.stderr.on('data', (d) => (serverLog += d));
  try {
    await until(async () => (await fetch(`${shop}/`).catch(() => undefined))?.ok === true, 30_000, 'next start');
    const { orderId, trxId } = await serverAction();
    await duplicateAndForgery('payments', {
      type: 'payment.completed',
      data: earlier ? { trx_id: trxId, ref_trx: orderId, amount: 25, currency_code: 'USD' } : { trx_id: trxId, merchant_ref: orderId },
      handled: () => fulfilled(orderId),
    });
    await edgeRoute();
  } catch (error) {
    report(false, 'run', `${error.message}\n${serverLog.split('\n').slice(-15).join('\n')}`);
  } finally {
    server.kill();
    await mock.close();
  }
  console.log(`  (${pass} generation: ${((performance.now() - t1) / 1000).toFixed(0)} s)`);
}

// Pay through the page's server action in a real browser, then on the sandbox's checkout; the
// return page and the webhook both report the payment: the order is fulfilled once.
async function serverAction() {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch(LAUNCH);
  try {
    const page = await browser.newPage();
    await page.goto(`${shop}/`);
    // The current generation's link is /checkout/{trx}?…; the earlier one's the real product's
    // /payment/checkout?expires&token&signature, which hides the trx_id.
    const checkoutPath = generation === 'earlier' ? '/payment/checkout?' : '/checkout/';
    await Promise.all([
      page.waitForURL((url) => url.href.startsWith(`${sandbox.url}${checkoutPath}`), { timeout: 20_000 }),
      page.getByRole('button', { name: 'Pay 25.00 USD' }).click(),
    ]);
    // The trx_id from the sandbox's own records (this harness's view), found by the link the
    // customer was sent to: never read from the link, which on the earlier generation does not carry it.
    const trxId = [...mock.state.payments.values()].find((row) => new URL(row.payment_url).href === new URL(page.url()).href)?.trx_id;
    report(
      typeof trxId === 'string',
      `server action created the order and its checkout (${generation === 'earlier' ? 'payments.initiate' : 'payments.create'}), and redirected to it`,
      `${new URL(page.url()).pathname} (${trxId})`,
    );
    await Promise.all([
      page.waitForURL((url) => url.href.startsWith(`${shop}/orders/`), { timeout: 20_000 }),
      page.getByRole('button', { name: /^Pay / }).click(),
    ]);
    const orderId = decodeURIComponent(new URL(page.url()).pathname.split('/')[2]);
    await page.getByRole('heading', { name: 'Thank you' }).waitFor();
    const shown = (await page.locator('main p').first().textContent()) ?? '';
    await until(() => fulfilled(orderId) > 0, 10_000, `order ${orderId} fulfilled`);
    await until(() => deliveriesOf(trxId).length > 0, 10_000, 'the webhook attempt');
    const statuses = deliveriesOf(trxId).map((d) => d.status);
    // Current: the webhook answers 200, or 409 while the return page holds the claim (delivered
    // again later). Earlier: the IPN is sent before the customer is redirected, and the kit
    // acknowledges it (200, or 202 once its trx_id is recorded) since it is never sent again.
    const answers = generation === 'earlier' ? [200, 202] : [200, 409];
    const fulfilledLine = serverLog.split('\n').find((line) => line.includes(`order ${orderId} fulfilled`)) ?? '';
    report(
      fulfilled(orderId) === 1 &&
        statuses.length > 0 &&
        statuses.every((s) => answers.includes(s)) &&
        fulfilledLine.includes(`(${trxId}, 25 USD)`) &&
        (generation !== 'earlier' || /is paid/.test(shown)),
      generation === 'earlier'
        ? 'paid (initiate); the IPN reached the node route before the return page; the order was fulfilled once, for 25 USD'
        : 'paid; return page and webhook raced; the order was fulfilled once',
      `page: "${shown.trim()}"; ${generation === 'earlier' ? 'IPN' : 'webhook'} → HTTP ${statuses.join(', ')}; fulfilled ${fulfilled(orderId)}×`,
    );
    return { orderId, trxId };
  } finally {
    await browser.close();
  }
}

// The same payment delivered again (the CLI signs it as the service does): 200, and no
// second fulfilment; signed with another secret: 401.
async function duplicateAndForgery(route, { type, data, handled }) {
  const runtime = route.endsWith('edge') ? 'edge' : 'node';
  const legacy = generation === 'earlier' ? ' --format legacy' : '';
  const again = await trigger(route, { type, data });
  await new Promise((resolve) => setTimeout(resolve, 500));
  report(
    again.status === 0 && / 200 /.test(again.first) && handled() === 1,
    `business-payments trigger${legacy} → /api/webhooks/${route} (${runtime} runtime): the same payment again is 200, handled once`,
    `${again.first}; handled ${handled()}×`,
  );
  const forged = await trigger(route, { type, data, secret: 'test_secret_not_the_secret' });
  report(forged.status === 1 && / 401 /.test(forged.first), `… signed with another secret: 401 (${runtime} runtime)`, forged.first);
}

// The edge route: its isolate shares no memory with the node side (the example's README says
// so), so it is given a payment of its own: one the customer declines. Its webhook reaches the
// edge route, which verifies it with the service (the client on the edge runtime) and runs
// onFailed once.
async function edgeRoute() {
  const earlier = generation === 'earlier';
  const { PaymentsClient } = await import(join(root, 'dist/index.js'));
  const { webhookSecret: _secret, ...credentials } = mock.credentials.sandbox;
  const client = new PaymentsClient({ environment: 'sandbox', ...credentials, baseUrl: sandbox.url });
  const ref = `edge-check-${Date.now()}`;
  const ipn_url = `${shop}/api/webhooks/payments-edge`;
  let trxId;
  if (earlier) {
    // initiate answers no trx_id: the sandbox's record has it (the IPN brings it to the merchant).
    await client.payments.initiate({
      payment_amount: 25,
      currency_code: 'USD',
      ref_trx: ref,
      description: 'Edge check',
      ipn_url,
      success_redirect: `${shop}/`,
      cancel_redirect: `${shop}/`,
    });
    trxId = [...mock.state.payments.values()].find((p) => p.merchant_ref === ref).trx_id;
  } else {
    trxId = (await client.payments.create({ payment_amount: 25, currency_code: 'USD', ref_trx: ref, ipn_url }, { idempotencyKey: ref }))
      .trx_id;
  }
  await mock.completeCheckout(trxId, 'failed');
  await until(() => deliveriesOf(trxId).length > 0, 10_000, 'the edge webhook attempt');
  await until(() => logged(`payment ${trxId} failed`) > 0, 10_000, 'onFailed on the edge route');
  const statuses = deliveriesOf(trxId).map((d) => d.status);
  report(
    statuses.join() === '200' && logged(`payment ${trxId} failed`) === 1,
    earlier
      ? 'a cancelled payment: its IPN → the edge route, verified with the service, onFailed once'
      : 'a declined payment: its webhook → the edge route, verified with the service, onFailed once',
    `payment.failed → HTTP ${statuses.join(', ')}`,
  );
  await duplicateAndForgery('payments-edge', {
    type: 'payment.failed',
    data: earlier ? { trx_id: trxId, ref_trx: ref, amount: 25, currency_code: 'USD' } : { trx_id: trxId, merchant_ref: ref },
    handled: () => logged(`payment ${trxId} failed`),
  });
}

// A signed test delivery from the CLI, as a merchant sends one.
// On the earlier generation, the IPN form (--format legacy) signed with the API secret.
async function trigger(route, { type, data, secret = mock.credentials.webhookSecret }) {
  const url = `${shop}/api/webhooks/${route}`;
  const args = [join(root, 'dist/cli.js'), 'trigger', type, '--url', url, '--secret', secret, '--data', JSON.stringify(data)];
  if (generation === 'earlier') args.push('--format', 'legacy');
  // Not spawnSync: the sandbox answering the route's verify call runs in this process.
  return new Promise((resolve) => {
    execFile(process.execPath, args, { encoding: 'utf8' }, (error, stdout, stderr) => {
      resolve({ status: error ? (error.code ?? 1) : 0, first: (stdout + stderr).trim().split('\n')[0] });
    });
  });
}

function deliveriesOf(trxId) {
  const ids = new Set(mock.state.events.filter((e) => e.payload.data?.trx_id === trxId).map((e) => e.id));
  return mock.state.deliveries.filter((d) => ids.has(d.eventId));
}

// How many server log lines say this (the example's orders log each fulfilment).
function logged(text) {
  return serverLog.split('\n').filter((line) => line.includes(text)).length;
}

function fulfilled(orderId) {
  return logged(`order ${orderId} fulfilled`);
}

async function until(predicate, ms, what) {
  const deadline = Date.now() + ms;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
