// The chaos proof of business-payments/billing: one live subscription per customer at the
// service, and access exactly while a period is paid, in a hostile world.
//
//   npm run test:billing-chaos   (builds, then runs this on dist/ through the package's self-reference)
//
// One column per store: postgresStore over a pg Pool and redisStore over node-redis, on
// throwaway servers (Debian's packages, scripts/db-servers.mjs) on loopback ports. The same run
// for each:
//   1. Subscribe. BILLING_CHAOS_CUSTOMERS customers (default 150; 85 % on the paying test phone,
//      15 % on the insufficient-funds one) each click "Subscribe" twice at once, the two clicks
//      in two of BILLING_CHAOS_WORKERS worker processes (scripts/billing-chaos-worker.mjs, 4),
//      and a fifth of them a third time from the same process. One customer in 12 carries a kill
//      point (both its clicks do), where the worker SIGKILLs itself: right after the record (nothing sent), as the
//      create's request is about to leave (its send counted), or once the sandbox answered the
//      create (the subscription made, not recorded). A dead worker's unfinished clicks are
//      clicked again in another process, as a customer would after an error page.
//   2. A year on the test clock. The sandbox runs on this process's createTestClock() (and so
//      do the kit's clock and the webhook verification), advanced 6 h at a time through 365 days: the first charges, monthly
//      renewals and dunning (1 and 2 days after a failure, then suspended) each at its time.
//      Every webhook is verified on the same clock, then held: each round the held events are
//      shuffled, 20 % delivered twice, 12 % lost for good (left to reconcile), and handed to
//      billing.handleEvent; one whose subscription is not recorded yet waits for the next round
//      (as an inbox retries it). A fifth of customers cancel: half at a random time, half at the
//      very time a renewal is due, the cancel racing the sandbox's charge (the clock's advance
//      and the cancel at once). The service goes on charging a cancelled subscription (the API has no cancel).
//      reconcile() runs every 10 days (the cron) and after the year.
//   3. The checks, after each reconcile: the truth is the sandbox's own records (its
//      subscriptions and invoices; which customer made a subscription is the Idempotency-Key
//      of the request that made it, noted as the sandbox writes the row), never the kit's.
//
// The table per column: customers, clicks, kills by point, clicks that threw, subscriptions
// at the service, customers with two live subscriptions at the service (must be 0), records
// past the first (sub:…:2: must be 0), events delivered / duplicated / lost / retried, invoices
// paid and failed, cancels (and how many raced a renewal), invoices charged after a cancel and
// how many were reported (onChargedAfterCancel: each exactly once), reconcile's changes,
// customer-checks, access without a paid period (must be 0), paid periods without access
// (must be 0), final states, wall time. Exit 1 on any violation, or when the attribution of
// subscriptions to keys fails. Every child and server is stopped whatever happens.
//
// Sizes (env): BILLING_CHAOS_CUSTOMERS (150), BILLING_CHAOS_WORKERS (4), BILLING_CHAOS_COLUMNS
// (a comma list: postgres,redis).
import { AsyncLocalStorage } from 'node:async_hooks';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { PaymentsClient } from 'business-payments';
import { createBilling } from 'business-payments/billing';
import { postgresStore } from 'business-payments/fulfillment/postgres';
import { redisStore } from 'business-payments/fulfillment/redis';
import { createMockService, createTestClock, TEST_PHONE_NUMBERS } from 'business-payments/testing';
import { verifyWebhook } from 'business-payments/webhooks';
import pg from 'pg';
import { createClient } from 'redis';
import { chaosClock, childProcesses, printTable, runColumns } from './chaos-kit.mjs';

const env = process.env;
const CUSTOMERS = Number(env.BILLING_CHAOS_CUSTOMERS ?? 150);
const WORKERS = Math.max(2, Number(env.BILLING_CHAOS_WORKERS ?? 4));
const COLUMNS = ['postgres', 'redis'].filter((c) => !env.BILLING_CHAOS_COLUMNS || env.BILLING_CHAOS_COLUMNS.split(',').includes(c));
const WORKER_SCRIPT = fileURLToPath(new URL('./billing-chaos-worker.mjs', import.meta.url));
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const MONTH = 30 * DAY; // the sandbox's month
const GRACE = 3 * DAY; // the kit's default
const STEP = 6 * HOUR;
const RECONCILE_EVERY = 10 * DAY;
const FAILING_SHARE = 0.15;
const CANCEL_SHARE = 0.2;
const DUPLICATE = 0.2;
const LOSE = 0.12;
const FIRST_PUSH = 5_000; // the sandbox answers a first push 5 s after the create
const { seconds, log } = chaosClock();
const shuffle = (list) => {
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [list[i], list[j]] = [list[j], list[i]];
  }
  return list;
};

// ---- which Idempotency-Key made each subscription (see the header) ----
const requestKey = new AsyncLocalStorage();
const createServer = http.createServer;
http.createServer = function (...args) {
  const at = args.findIndex((arg) => typeof arg === 'function');
  if (at >= 0) {
    const listener = args[at];
    args[at] = (req, res) => requestKey.run(req.headers['idempotency-key'] ?? null, () => listener(req, res));
  }
  return createServer.apply(this, args);
};

const { children, killChildren } = childProcesses();

// ---- the workers: each click a SUB line; a dead worker's clicks go to a fresh one ----
function fleet({ kind, urls, sandboxUrl, creds, plan, stats }) {
  const slots = [];
  const pending = new Map(); // click id → { customer, phone, slot, resolve }
  const start = (index) => {
    const child = spawn(process.execPath, [WORKER_SCRIPT], {
      env: {
        ...env,
        BC_STORE: kind,
        BC_PG_URL: urls.pgUrl,
        BC_REDIS_URL: urls.redisUrl,
        BC_CREDS: JSON.stringify(creds),
        BC_SANDBOX_URL: sandboxUrl,
        BC_PLAN: plan,
      },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    children.add(child);
    const slot = { child };
    slot.ready = new Promise((resolve) => (slot.setReady = resolve));
    slots[index] = slot;
    let buffer = '';
    child.stdout.on('data', (chunk) => {
      buffer += chunk;
      for (let nl; (nl = buffer.indexOf('\n')) >= 0;) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        const [what, id, ...rest] = line.split(' ');
        if (what === 'READY') slot.setReady();
        else if (what === 'DYING') {
          stats.kills[rest[0]] = (stats.kills[rest[0]] ?? 0) + 1;
          if (pending.has(id)) pending.get(id).point = '-'; // its point spent: clicked again without one
        } else if (what === 'DONE' || what === 'ERROR') {
          const click = pending.get(id);
          pending.delete(id);
          if (what === 'ERROR') stats.threw.push(`${click?.customer}: ${rest.join(' ')}`);
          click?.resolve();
        }
      }
    });
    child.on('exit', () => {
      children.delete(child);
      if (slots[index] !== slot) return;
      // Its unfinished clicks: clicked again in the fresh worker, as the customer would (the one
      // it died on without its kill point; the others, other customers' clicks in flight, keep theirs).
      const fresh = start(index);
      for (const [id, click] of pending) if (click.slot === slot) void fresh.ready.then(() => send(fresh, id, click, click.point));
    });
    return slot;
  };
  const send = (slot, id, click, point) => {
    click.slot = slot;
    click.point = point;
    pending.set(id, click);
    slot.child.stdin.write(`SUB ${id} ${click.customer} ${click.phone} ${point}\n`);
  };
  for (let i = 0; i < WORKERS; i++) start(i);
  let next = 0;
  return {
    ready: () => Promise.all(slots.map((slot) => slot.ready)),
    click: (worker, customer, phone, point = '-') =>
      new Promise((resolve) => {
        stats.clicks++;
        send(slots[worker % WORKERS], `c${next++}`, { customer, phone, resolve }, point);
      }),
    close: () => {
      for (const slot of slots.splice(0)) slot.child.stdin.end();
    },
  };
}

async function openStore(kind, urls) {
  if (kind === 'postgres') {
    const pool = new pg.Pool({ connectionString: urls.pgUrl, max: 8 });
    pool.on('error', () => {});
    return { store: postgresStore(pool), close: () => pool.end() };
  }
  const redis = await createClient({ url: urls.redisUrl }).connect();
  return { store: redisStore(redis), close: () => redis.quit() };
}

async function run(kind, urls) {
  const began = performance.now();
  const problems = [];
  const stats = { clicks: 0, kills: {}, threw: [], delivered: 0, duplicated: 0, lost: 0, retried: 0, cancels: 0, raced: 0 };
  const clock = createTestClock(); // starts at the real time: the workers' signatures are fresh
  const { now } = clock;
  const held = []; // verified events waiting for their round
  const mock = createMockService({
    clock,
    toleranceSeconds: 400 * 86_400, // the workers sign with the real clock while this one runs a year
    rateLimitPerMinute: 1e9,
    fetch: async (_url, init) => {
      const payload = String(init?.body);
      const event = await verifyWebhook({ payload, headers: init?.headers, secret, now });
      held.push(event);
      return new Response(null, { status: 200 });
    },
  });
  // Every subscription's events to this process (the merchant's webhook URL on the dashboard).
  mock.state.merchants[0].defaultWebhookUrl = 'https://clinic.example.test/webhooks';
  const madeBy = new Map(); // subscription id → the Idempotency-Key of the request that made it
  const rows = mock.state.subscriptions;
  const setRow = rows.set;
  rows.set = function (id, row) {
    if (!this.has(id)) madeBy.set(id, requestKey.getStore());
    return setRow.call(this, id, row);
  };
  const secret = mock.credentials.sandbox.webhookSecret;
  const { webhookSecret: _, ...creds } = mock.credentials.sandbox;
  const sandbox = await mock.listen({ port: 0 });
  const client = new PaymentsClient({ environment: 'sandbox', ...creds, baseUrl: sandbox.url, now, maxRetries: 0, pollingBudget: 1e9 });
  const plan = (await client.billing.plans.create({ name: `Clinic ${kind}`, amount: 30_000, currency: 'TZS', interval: 'month' }))
    .plan_code;
  const { store, close } = await openStore(kind, urls);
  const reported = new Map(); // invoice → times onChargedAfterCancel was called
  const billing = createBilling({
    client,
    store,
    now,
    grace: GRACE,
    onChargedAfterCancel: (_record, invoice) => void reported.set(invoice.invoice, (reported.get(invoice.invoice) ?? 0) + 1),
  });

  // ---- 1. the double clicks, from two processes at once, some killed ----
  const tag = kind === 'postgres' ? 'pg' : 'rd';
  const customers = Array.from({ length: CUSTOMERS }, (_, i) => ({
    id: `${tag}-clinic-${String(i).padStart(4, '0')}`,
    phone: Math.random() < FAILING_SHARE ? TEST_PHONE_NUMBERS.insufficientFunds : TEST_PHONE_NUMBERS.success,
    // One in 12 (8 %), the three points in turn.
    kill: i % 12 === 3 ? ['record', 'create', 'answer'][Math.floor(i / 12) % 3] : '-',
  }));
  const workers = fleet({ kind, urls, sandboxUrl: sandbox.url, creds, plan, stats });
  await workers.ready();
  await Promise.all(
    customers.map((c, i) => {
      // Both clicks carry the customer's kill point: whichever process records, sends or reads the answer dies there.
      const clicks = [workers.click(i, c.id, c.phone, c.kill), workers.click(i + 1, c.id, c.phone, c.kill)];
      if (i % 5 === 0) clicks.push(workers.click(i, c.id, c.phone));
      return Promise.all(clicks);
    }),
  );
  workers.close();
  log(
    `${kind}: ${stats.clicks} clicks for ${CUSTOMERS} customers, kills ${JSON.stringify(stats.kills)}, ${mock.state.subscriptions.size} subscriptions at the service`,
  );

  // ---- 2. a year, 6 h at a time: renewals, dunning, events shuffled, duplicated and lost, cancels racing renewals ----
  const T0 = now();
  const cancels = shuffle([...customers])
    .slice(0, Math.round(CUSTOMERS * CANCEL_SHARE))
    .map((c, i) => ({
      customer: c.id,
      at: i % 2 ? T0 + Math.random() * 330 * DAY : T0 + (1 + Math.floor(Math.random() * 10)) * MONTH + FIRST_PUSH,
      races: i % 2 === 0,
    }))
    .sort((a, b) => a.at - b.at);
  const deliver = async () => {
    const round = held.splice(0);
    for (const event of round.slice()) {
      if (Math.random() >= DUPLICATE) continue;
      round.push(event); // delivered twice
      stats.duplicated++;
    }
    for (const event of shuffle(round)) {
      if (Math.random() < LOSE) {
        stats.lost++;
        continue;
      }
      try {
        await billing.handleEvent(event);
        stats.delivered++;
      } catch (error) {
        if (error?.code !== 'unknown_subscription') throw error;
        stats.retried++;
        held.push(event); // its create's answer not recorded yet: the inbox tries again
      }
    }
  };
  const checks = { customers: 0, accessWithoutPaid: [], paidWithoutAccess: [], twoLive: new Set() };
  let changed = 0;
  const reconcileAndCheck = async () => {
    await deliver();
    const report = await billing.reconcile();
    changed += report.changed.length;
    for (const e of report.errors) problems.push(`reconcile error ${e.key}: ${e.message}`);
    await check(checks, { mock, billing, madeBy, plan, customers, now: now() });
  };
  let nextReconcile = T0 + RECONCILE_EVERY;
  for (const end = T0 + 365 * DAY; now() < end;) {
    const to = Math.min(end, now() + STEP);
    while (cancels.length && cancels[0].at <= to) {
      const cancel = cancels.shift();
      stats.cancels++;
      if (cancel.races) stats.raced++;
      // Up to just before the cancel; then the cancel and what falls due at its time (a
      // renewal's charge, for a racing one) at once.
      await clock.advance(Math.max(0, cancel.at - 1 - now()));
      await Promise.all([clock.advance(1), billing.cancel(cancel.customer, plan)]);
    }
    await clock.advance(to - now());
    await deliver();
    if (now() >= nextReconcile) {
      nextReconcile += RECONCILE_EVERY;
      await reconcileAndCheck();
    }
  }
  await reconcileAndCheck();

  // ---- 3. what the sandbox says, against what the kit did ----
  const invoices = [...mock.state.invoices.values()].filter((inv) => inv.plan_code === plan);
  const records = await billing.subscriptions({ limit: 100_000 });
  const second = records.filter((r) => r.n > 1).length;
  let afterCancel = 0;
  let unreported = 0;
  for (const record of records.filter((r) => r.cancel)) {
    for (const inv of invoices.filter((i) => i.subscription === record.subscriptionId && i.status === 'paid')) {
      if (Date.parse(inv.period_start) < record.cancel.paidThrough) continue;
      afterCancel++;
      if (reported.get(inv.id) !== 1 && !record.chargedAfterCancel.includes(inv.id)) unreported++;
    }
  }
  const twice = [...reported.values()].filter((n) => n > 1).length;
  const unattributed = [...madeBy.entries()].filter(
    ([id, key]) => mock.state.subscriptions.get(id)?.plan_code === plan && typeof key !== 'string',
  );
  const states = {};
  for (const r of records) states[r.state] = (states[r.state] ?? 0) + 1;
  if (checks.twoLive.size)
    problems.push(`customers with two live subscriptions at the service: ${[...checks.twoLive].slice(0, 5).join(', ')}`);
  if (second) problems.push(`${second} records past the first (a second subscription made)`);
  if (checks.accessWithoutPaid.length) problems.push(`access without a paid period: ${checks.accessWithoutPaid.slice(0, 5).join('; ')}`);
  if (checks.paidWithoutAccess.length) problems.push(`paid periods without access: ${checks.paidWithoutAccess.slice(0, 5).join('; ')}`);
  if (unreported) problems.push(`${unreported} invoices charged after a cancel never reported`);
  if (twice) problems.push(`${twice} invoices reported twice to onChargedAfterCancel`);
  if (unattributed.length) problems.push(`${unattributed.length} subscriptions with no Idempotency-Key noted (the attribution failed)`);
  if (records.length !== CUSTOMERS) problems.push(`${records.length} records for ${CUSTOMERS} customers`);
  for (const point of ['record', 'create', 'answer'])
    if (!stats.kills[point]) problems.push(`no worker was killed at ${point}: the run proves nothing there`);
  await close();
  await sandbox.close();
  await mock.close();
  const row = {
    column: kind,
    customers: CUSTOMERS,
    'clicks (2 processes each)': stats.clicks,
    'kills record/create/answer': ['record', 'create', 'answer'].map((p) => stats.kills[p] ?? 0).join('/'),
    'clicks that threw': stats.threw.length,
    'subscriptions at the service': [...mock.state.subscriptions.values()].filter((s) => s.plan_code === plan).length,
    'customers with 2 live (must be 0)': checks.twoLive.size,
    'second records (must be 0)': second,
    'events handled/dup/lost/retried': `${stats.delivered}/${stats.duplicated}/${stats.lost}/${stats.retried}`,
    'invoices paid/uncollectible': `${invoices.filter((i) => i.status === 'paid').length}/${invoices.filter((i) => i.status === 'uncollectible').length}`,
    'cancels (racing a renewal)': `${stats.cancels} (${stats.raced})`,
    'charged after cancel/reported': `${afterCancel}/${afterCancel - unreported}`,
    'reported twice (must be 0)': twice,
    'reconcile changes': changed,
    'customer checks': checks.customers,
    'access w/o paid period (0)': checks.accessWithoutPaid.length,
    'paid period w/o access (0)': checks.paidWithoutAccess.length,
    'final states': Object.entries(states)
      .map(([s, n]) => `${s} ${n}`)
      .join(', '),
    'wall time': seconds(began),
  };
  for (const line of stats.threw.slice(0, 5)) log(`${kind}: a click threw (clicked again by the customer's other click): ${line}`);
  return { row, problems };
}

/**
 * Each customer against the sandbox's records at `now`: its live subscriptions (made with its
 * key, not suspended), and whether a paid period covers now (one starting before the
 * cancel's paidThrough, when it cancelled), or a failing renewal is within the grace.
 */
async function check(checks, { mock, billing, madeBy, plan, customers, now }) {
  const subs = [...mock.state.subscriptions.values()].filter((s) => s.plan_code === plan);
  const invoices = [...mock.state.invoices.values()].filter((i) => i.plan_code === plan && i.status === 'paid');
  for (const { id: customer } of customers) {
    checks.customers++;
    const mine = subs.filter((s) => madeBy.get(s.id)?.startsWith(`sub:${customer}:`));
    if (mine.filter((s) => s.status !== 'suspended').length > 1) checks.twoLive.add(customer);
    const access = await billing.entitlement(customer, plan);
    const cancel = access.subscription?.cancel;
    const periods = invoices
      .filter((i) => mine.some((s) => s.id === i.subscription))
      .map((i) => ({ start: Date.parse(i.period_start), end: Date.parse(i.period_end) }))
      .filter((p) => !cancel || p.start < cancel.paidThrough);
    const suspended = mine.some((s) => s.status === 'suspended');
    const covered = periods.some((p) => p.start <= now && now < p.end);
    const through = Math.max(0, ...periods.map((p) => p.end));
    const graced = !cancel && !suspended && now < through + GRACE;
    if (access.active && !covered && !graced)
      checks.accessWithoutPaid.push(`${customer} at ${new Date(now).toISOString()} (${access.state})`);
    if (!access.active && covered && !suspended)
      checks.paidWithoutAccess.push(`${customer} at ${new Date(now).toISOString()} (${access.state})`);
  }
}

const { failed, results } = await runColumns({ name: 'test:billing-chaos', columns: COLUMNS, run, killChildren, log });
printTable(results.map((r) => r.row));
console.log(
  failed
    ? '\nbilling chaos: FAILED'
    : '\nbilling chaos: every column held (0 double subscriptions, 0 access without a paid period, 0 paid periods without access)',
);
process.exit(failed ? 1 : 0);
