// The chaos proof of business-payments/billing: one live subscription per customer at the
// service, and access exactly while a period is paid, in a hostile world.
//
//   npm run test:billing-chaos   (builds, then runs this on dist/ through the package's self-reference)
//
// One column per store: postgresStore over a pg Pool and redisStore over node-redis, on
// throwaway servers (Debian's packages, scripts/db-servers.mjs) on loopback ports. One clock for
// everything: createTestClock() here drives the sandbox (createMockService({ clock }): its first
// charges, renewals, dunning and webhook deliveries each run at their time), the kits here
// (`now`), the webhook verification, and the workers (each command carries the clock's time: their
// kit and client read it, so the sandbox keeps its default 300 s signature tolerance). The same
// run for each column:
//   1. Sign-up. BILLING_CHAOS_CUSTOMERS customers (default 120) in waves of 15, half a day apart on
//      the clock (so renewals fall at every hour of the month). Each clicks "Subscribe" twice at
//      once, the two clicks in two of BILLING_CHAOS_WORKERS worker processes
//      (scripts/billing-chaos-worker.mjs, default 4; 2 warm spares replace the dead), a fifth a
//      third time from the same process. One customer in 10 carries a kill point (both its clicks
//      do) where the worker SIGKILLs itself: right after the record (nothing sent), as the create's
//      request is about to leave (its send counted), or once the sandbox answered (the
//      subscription made, not recorded). A dead worker's unfinished clicks are clicked again in its
//      replacement, as a customer would after an error page. While a wave is in flight the clock
//      moves a second at a time and events are handed in (an invoice.paid may come before its
//      create's answer is recorded: it waits, as an inbox retries it); the cron's reconcile() after
//      each wave replays a create whose answer died with its worker.
//   2. A year on the clock, 6 h at a time. Phones by cohort: most pay every month; 10 % fail their
//      first charge (insufficient funds, declined, no answer: dunned 1 and 2 days later, then
//      suspended); 15 % pay, then one renewal fails once or twice and the dunning retry is paid
//      (past_due within and past the grace, then active again); 15 % pay, then their wallet runs dry
//      for good (the renewal fails 3 times: suspended). The sandbox picks a push's outcome by the
//      subscription's test phone, so a cohort's phone is switched on the sandbox's row at its month
//      (the only thing this run writes into the sandbox). Every webhook is verified on the clock,
//      then held: 12 % lost for good (left to reconcile), 20 % delivered twice, 15 % of copies held
//      back 1 to 8 rounds (up to 2 days: out of order across periods), each round's shuffled and
//      handed to billing.handleEvent six at a time on two kits (two store connections, as two
//      webhook processes). A fifth of customers cancel: half at a random time, half at the very
//      millisecond a renewal opens or its charge is answered (± 1 ms), the cancel racing the charge
//      and the delivery of its invoice.paid. The service goes on charging (the API has no cancel):
//      a renewal paid after a cancel must be reported once and never extend access.
//      reconcile() runs every 10 days (the cron, while a round of webhooks is handed in) and after
//      the year (every held copy handed in first); after each, 4 customers with a live record
//      click "Subscribe" again on a kit here (nothing may be sent: created false, no new subscription).
//   3. The checks. The truth is the sandbox's own records: its subscriptions and invoices, and
//      which customer made a subscription (the Idempotency-Key of the request that made it, noted
//      as the sandbox writes the row), never the kit's. Every 2 days: no access without a paid
//      period (a paid invoice covering now, not paid after the customer's cancel nor refunded as
//      charged after it; or a failing renewal within the grace, not cancelled nor suspended: sound
//      while events are lost or late, since the grace ends before the sandbox's suspension). After
//      each reconcile, also: no customer with two live (not suspended) subscriptions at the
//      service, no paid period without access, and each cancel recorded at the time it was made.
//      At the end: each invoice paid after its customer's cancel reported to onChargedAfterCancel
//      exactly once (and on the record's chargedAfterCancel), nothing else reported; every
//      subscription at the service held by a record, and no event left that no record takes.
//
// The table per column: customers and cohorts, clicks, kills by point, clicks that threw, late clicks,
// subscriptions at the service, customers with two live subscriptions there (must be 0), second
// records (must be 0), events handed in / duplicated / lost / held back, retries (no record yet /
// contention), invoices paid / uncollectible, phones switched, cancels (racing a renewal),
// invoices charged after a cancel / reported exactly once (must be equal), refunded though paid
// before the cancel (the kit had not seen it: at the race itself, or its event lost: told apart,
// not a violation), reconcile's changes, customer checks, access without a paid period (must be
// 0), paid periods without access (must be 0), final states, wall time. Exit 1 on any violation,
// or when the attribution of subscriptions to keys fails, or a kill point never fired. Every
// child and server is stopped whatever happens.
//
// Sizes (env): BILLING_CHAOS_CUSTOMERS (120), BILLING_CHAOS_WORKERS (4), BILLING_CHAOS_COLUMNS
// (a comma list: postgres,redis).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PaymentsClient } from 'business-payments';
import { createBilling } from 'business-payments/billing';
import { postgresStore } from 'business-payments/fulfillment/postgres';
import { redisStore } from 'business-payments/fulfillment/redis';
import { createMockService, createTestClock, TEST_PHONE_NUMBERS } from 'business-payments/testing';
import { verifyWebhook } from 'business-payments/webhooks';
import pg from 'pg';
import { createClient } from 'redis';
import { chaosClock, childProcesses, printTable, runColumns, servedIdempotencyKey } from './chaos-kit.mjs';

const env = process.env;
const CUSTOMERS = Math.max(30, Number(env.BILLING_CHAOS_CUSTOMERS ?? 120));
const WORKERS = Math.max(2, Number(env.BILLING_CHAOS_WORKERS ?? 4));
const SPARES = 2;
const WAVE = 15;
const COLUMNS = ['postgres', 'redis'].filter((c) => !env.BILLING_CHAOS_COLUMNS || env.BILLING_CHAOS_COLUMNS.split(',').includes(c));
const WORKER_SCRIPT = fileURLToPath(new URL('./billing-chaos-worker.mjs', import.meta.url));
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const MONTH = 30 * DAY; // the sandbox's month
const YEAR = 365 * DAY;
const GRACE = 3 * DAY; // the kit's default
const STEP = 6 * HOUR;
const WAVE_GAP = 12 * HOUR;
const CHECK_EVERY = 2 * DAY;
const RECONCILE_EVERY = 10 * DAY;
const PUSH = 5_000; // the sandbox answers a push 5 s after it leaves (a no-answer phone: 60 s)
const LOSE = 0.12;
const DUPLICATE = 0.2;
const HOLD_BACK = 0.15;
const HANDLERS = 6;
const CANCEL_SHARE = 0.2;
const COHORTS = { fails: 0.1, recovers: 0.15, lapses: 0.15 }; // the rest pay every month
const FAILING = [TEST_PHONE_NUMBERS.insufficientFunds, TEST_PHONE_NUMBERS.declined, TEST_PHONE_NUMBERS.timeout];
const POINTS = ['record', 'create', 'answer'];
const TERMS = 'Clinic Pro: TZS 30,000 every month, charged by USSD push to this number until you cancel.'; // as the workers show it
const { seconds, sleep, log, pick } = chaosClock();
const shuffle = (list) => {
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [list[i], list[j]] = [list[j], list[i]];
  }
  return list;
};
const iso = (ms) => new Date(ms).toISOString();

// ---- which Idempotency-Key made each subscription: each request handled in a scope holding its key ----
const servedKey = servedIdempotencyKey();

const { children, killChildren } = childProcesses();

// ---- the workers: a slot per worker, warm spares to replace the dead; each click a SUB line ----
function fleet({ kind, urls, sandboxUrl, creds, plan, stats, now }) {
  const slots = [];
  const spares = [];
  const pending = new Map(); // click id → { customer, phone, point, worker, resolve }
  let closing = false;
  let next = 0;
  const spawnOne = () => {
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
    child.stdin.on('error', () => {}); // a worker that died: its exit is what counts
    const worker = { child, alive: true };
    worker.ready = new Promise((resolve) => (worker.setReady = resolve));
    let buffer = '';
    child.stdout.on('data', (chunk) => {
      buffer += chunk;
      for (let nl; (nl = buffer.indexOf('\n')) >= 0;) {
        const [what, id, ...rest] = buffer.slice(0, nl).split(' ');
        buffer = buffer.slice(nl + 1);
        if (what === 'READY') worker.setReady();
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
    child.once('exit', () => {
      children.delete(child);
      worker.alive = false;
      const slot = slots.indexOf(worker);
      if (closing || slot < 0) return;
      // Its unfinished clicks (other customers' too) clicked again in the spare that takes its place.
      slots[slot] = takeSpare();
      for (const [id, click] of pending) if (click.worker === worker) dispatch(slot, id, click);
    });
    return worker;
  };
  const takeSpare = () => {
    while (spares.length && !spares[0].alive) spares.shift();
    const worker = spares.shift() ?? spawnOne();
    while (!closing && spares.length < SPARES) spares.push(spawnOne());
    return worker;
  };
  // To the slot's worker once it is ready (another, if it died meanwhile), at the clock's time then.
  const dispatch = (slot, id, click) => {
    const worker = slots[slot];
    click.worker = worker;
    pending.set(id, click);
    void worker.ready.then(() => {
      if (!worker.alive) return slots[slot] !== worker && click.worker === worker && dispatch(slot, id, click);
      worker.child.stdin.write(`SUB ${id} ${click.customer} ${click.phone} ${click.point} ${now()}\n`);
    });
  };
  return {
    async start() {
      for (let i = 0; i < WORKERS; i++) slots.push(spawnOne());
      while (spares.length < SPARES) spares.push(spawnOne());
      await Promise.all([...slots, ...spares].map((worker) => worker.ready));
    },
    click: (worker, customer, phone, point = '-') =>
      new Promise((resolve) => {
        stats.clicks++;
        dispatch(worker % WORKERS, `c${next++}`, { customer, phone, point, resolve });
      }),
    close: () => {
      closing = true;
      for (const worker of [...slots.splice(0), ...spares.splice(0)]) worker.child.stdin.end();
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

// ---- the webhook inbox: verified deliveries held, lost, duplicated, held back, shuffled, handed in ----
function inbox({ kits, stats }) {
  const held = []; // { event, wait: rounds left }
  const arrive = (event) => {
    stats.events++;
    if (Math.random() < LOSE) return void stats.lost++;
    const copies = Math.random() < DUPLICATE ? 2 : 1;
    stats.duplicated += copies - 1;
    for (let i = 0; i < copies; i++) {
      const wait = Math.random() < HOLD_BACK ? 1 + Math.floor(Math.random() * 8) : 0;
      if (wait) stats.heldBack++;
      held.push({ event, wait });
    }
  };
  const handle = async ({ event }) => {
    try {
      await pick(kits).handleEvent(event);
      stats.handled++;
    } catch (error) {
      // No record holds its subscription yet (its create's answer not recorded), or the record
      // kept changing under it: the inbox tries it again next round.
      if (error?.code !== 'unknown_subscription' && error?.code !== 'contention') throw error;
      stats.retried[error.code === 'contention' ? 1 : 0]++;
      held.push({ event, wait: 0 });
    }
  };
  // One round: the copies due now (all, when flushing), shuffled, six handlers at once.
  const deliver = async (flush = false) => {
    const due = [];
    for (const copy of held.splice(0)) (flush || copy.wait-- <= 0 ? due : held).push(copy);
    shuffle(due);
    await Promise.all(
      Array.from({ length: HANDLERS }, async () => {
        for (let copy; (copy = due.shift());) await handle(copy);
      }),
    );
  };
  return {
    arrive,
    deliver,
    /** Every copy still held handed in (those no record takes retried a few rounds); resolves how many were left. */
    async flush() {
      for (let round = 0; held.length && round < 20; round++) await deliver(true);
      return held.length;
    },
  };
}

/** The customers: cohort, first phone, the phone switch (month, phone, failed attempts before recovering), kill point. */
function makeCustomers(tag) {
  const cohorts = [];
  for (const [cohort, share] of Object.entries(COHORTS)) cohorts.push(...Array(Math.round(CUSTOMERS * share)).fill(cohort));
  while (cohorts.length < CUSTOMERS) cohorts.push('pays');
  shuffle(cohorts);
  return cohorts.map((cohort, i) => ({
    id: `${tag}-clinic-${String(i).padStart(4, '0')}`,
    cohort,
    phone: cohort === 'fails' ? FAILING[i % 3] : TEST_PHONE_NUMBERS.success,
    // The renewal that fails (1 to 10), and by which phone; a recovering one pays on retry 1 or 2.
    month: 1 + Math.floor(Math.random() * 10),
    failPhone: FAILING[Math.floor(i / 3) % 3],
    failAttempts: 1 + (i % 2),
    switched: cohort === 'recovers' || cohort === 'lapses' ? 'not yet' : 'never',
    kill: i % 10 === 3 ? POINTS[Math.floor(i / 10) % 3] : '-',
  }));
}

/** The column's world: clock, sandbox (its deliveries verified into the inbox), plan, kits, truth. */
async function setUp(kind, urls, problems) {
  const clock = createTestClock(); // starts at the real time
  const { now } = clock;
  const stats = { clicks: 0, kills: {}, threw: [], events: 0, handled: 0, duplicated: 0, lost: 0, heldBack: 0, retried: [0, 0] };
  Object.assign(stats, { switched: 0, cancels: 0, raced: 0, changed: 0, customers: 0, lateClicks: 0 });
  let box;
  const mock = createMockService({
    clock,
    rateLimitPerMinute: 1e9,
    fetch: async (_url, init) => {
      const payload = String(init?.body);
      const event = await verifyWebhook({ payload, headers: init?.headers, secret, now }).catch((error) => {
        problems.push(`a delivery failed verification on the clock: ${error?.message}`);
      });
      if (event) box.arrive(event);
      return new Response(null, { status: event ? 200 : 400 });
    },
  });
  // Every subscription's events to this process (the merchant's webhook URL on the dashboard).
  mock.state.merchants[0].defaultWebhookUrl = 'https://clinic.example.test/webhooks';
  const madeBy = new Map(); // subscription id → the Idempotency-Key of the request that made it
  const rows = mock.state.subscriptions;
  const setRow = rows.set;
  rows.set = function (id, row) {
    if (!this.has(id)) madeBy.set(id, servedKey());
    return setRow.call(this, id, row);
  };
  const secret = mock.credentials.sandbox.webhookSecret;
  const { webhookSecret: _, ...creds } = mock.credentials.sandbox;
  const sandbox = await mock.listen({ port: 0 });
  const client = new PaymentsClient({ environment: 'sandbox', ...creds, baseUrl: sandbox.url, now, maxRetries: 0, pollingBudget: 1e9 });
  const plan = (await client.billing.plans.create({ name: `Clinic ${kind}`, amount: 30_000, currency: 'TZS', interval: 'month' }))
    .plan_code;
  const reported = new Map(); // invoice → times onChargedAfterCancel was called (on either kit)
  const onChargedAfterCancel = (_record, invoice) => void reported.set(invoice.invoice, (reported.get(invoice.invoice) ?? 0) + 1);
  const stores = [await openStore(kind, urls), await openStore(kind, urls)];
  const kits = stores.map(({ store }) => createBilling({ client, store, now, grace: GRACE, onChargedAfterCancel }));
  box = inbox({ kits, stats });
  const close = async () => {
    for (const s of stores) await s.close();
    await sandbox.close();
    await mock.close();
  };
  return { clock, now, mock, madeBy, sandbox, creds, plan, kits, reported, stats, box, close, cancelled: new Map() };
}

/** 1. The sign-up waves: double (and triple) clicks from two processes, kills, the clock moving meanwhile. */
async function signUp(world, kind, urls, customers) {
  const { clock, now, box, kits, stats } = world;
  const workers = fleet({ kind, urls, sandboxUrl: world.sandbox.url, creds: world.creds, plan: world.plan, stats, now });
  await workers.start();
  for (let from = 0; from < customers.length; from += WAVE) {
    let inFlight = true;
    const wave = Promise.all(
      customers.slice(from, from + WAVE).map((c, j) => {
        const i = from + j;
        // Both clicks carry the customer's kill point: whichever process records, sends or reads the answer dies there.
        const clicks = [workers.click(i, c.id, c.phone, c.kill), workers.click(i + 1, c.id, c.phone, c.kill)];
        if (i % 5 === 0) clicks.push(workers.click(i, c.id, c.phone));
        return Promise.all(clicks);
      }),
    ).finally(() => (inFlight = false));
    // At most ~20 clock seconds a real second: a worker signs with the time its click was sent,
    // well inside the sandbox's 300 s tolerance even on a loaded machine.
    while (inFlight) {
      await clock.advance(1_000);
      await box.deliver();
      await sleep(50);
    }
    await wave;
    // The cron, a few minutes on: a create sent and never answered (its worker killed) is replayed.
    await clock.advance(2 * MINUTE);
    await box.deliver();
    stats.changed += (await kits[0].reconcile()).changed.length;
    await clock.advance(WAVE_GAP - 2 * MINUTE);
    await box.deliver();
  }
  workers.close();
  log(
    `${kind}: ${stats.clicks} clicks for ${CUSTOMERS} customers, kills ${JSON.stringify(stats.kills)}, ${world.madeBy.size} subscriptions`,
  );
}

/** The sandbox's rows of a customer's subscriptions (by the key that made them) and its paid invoices by subscription. */
function truthIndex({ mock, madeBy, plan }) {
  const subsOf = new Map();
  for (const [id, key] of madeBy) {
    const row = mock.state.subscriptions.get(id);
    if (row?.plan_code !== plan || typeof key !== 'string') continue;
    const customer = key.split(':')[1];
    subsOf.set(customer, [...(subsOf.get(customer) ?? []), row]);
  }
  const paidOf = new Map();
  for (const inv of mock.state.invoices.values())
    if (inv.plan_code === plan && inv.status === 'paid') paidOf.set(inv.subscription, [...(paidOf.get(inv.subscription) ?? []), inv]);
  return { subsOf, paidOf };
}

/**
 * Each customer against the sandbox at now: access without a paid period always; when `full`
 * (the kit just reconciled), also two live subscriptions, a paid period without access and the
 * cancel as recorded. A paid invoice counts unless it was paid after the customer's cancel or
 * was reported as charged after it (refunded).
 */
async function check(world, customers, checks, full) {
  const { kits, reported, cancelled } = world;
  const at = world.now();
  const { subsOf, paidOf } = truthIndex(world);
  const judge = async (c) => {
    world.stats.customers++;
    const subs = subsOf.get(c.id) ?? [];
    const access = await kits[1].entitlement(c.id, world.plan);
    const record = access.subscription;
    const made = cancelled.get(c.id);
    // The kit's cancel time; the one made here if the record lost it (that is reported below).
    const cancel = record?.cancel?.at ?? (made?.had ? made.calledAt : undefined);
    const refunded = new Set(record?.chargedAfterCancel ?? []);
    const paid = subs.flatMap((s) => paidOf.get(s.id) ?? []);
    for (const inv of paid) if (reported.has(inv.id)) refunded.add(inv.id);
    const counting = paid
      .filter((inv) => !refunded.has(inv.id) && (cancel === undefined || Date.parse(inv.paid_at) <= cancel))
      .map((inv) => ({ start: Date.parse(inv.period_start), end: Date.parse(inv.period_end) }));
    const suspended = subs.some((s) => s.status === 'suspended');
    const covered = counting.some((p) => p.start <= at && at < p.end);
    const through = Math.max(0, ...counting.map((p) => p.end));
    const graced = cancel === undefined && !suspended && through > 0 && at < through + GRACE;
    const what = `${c.id} (${c.cohort}) at ${iso(at)}: ${access.state}`;
    if (access.active && !covered && !graced) checks.accessWithoutPaid.push(what);
    if (!full) return;
    if (subs.filter((s) => s.status !== 'suspended').length > 1) checks.twoLive.add(c.id);
    if (!access.active && covered && !suspended) checks.paidWithoutAccess.push(what);
    if (made?.had && !(record?.cancel?.at >= made.calledAt && cancel <= made.doneAt))
      checks.cancels.push(`${what}: cancel at ${record?.cancel?.at} not as made`);
    if (made && !made.had && made.state !== 'ended') checks.cancels.push(`${what}: the cancel left a ${made.state} record as it was`);
  };
  const queue = [...customers];
  await Promise.all(
    Array.from({ length: 6 }, async () => {
      for (let c; (c = queue.shift());) await judge(c);
    }),
  );
}

/** The phone switches of the cohorts: dry from their month's renewal on; a recovering one paid again after its failed attempts. */
function switchPhones(world, customers) {
  const { subsOf } = truthIndex(world);
  for (const c of customers) {
    const sub = subsOf.get(c.id)?.find((s) => s.status !== 'suspended');
    if (!sub || c.switched === 'never' || c.switched === 'back') continue;
    if (c.switched === 'not yet' && world.now() >= world.T0 + (c.month - 0.5) * MONTH) {
      sub.customer_phone = c.failPhone;
      c.switched = 'dry';
      world.stats.switched++;
    } else if (c.switched === 'dry' && c.cohort === 'recovers') {
      const inv = world.mock.state.invoices.get(sub.latest_invoice);
      if (inv?.status !== 'open' || inv.attempt_count < c.failAttempts || !inv.next_attempt_at) continue;
      sub.customer_phone = TEST_PHONE_NUMBERS.success; // topped up before the next retry
      c.switched = 'back';
    }
  }
}

/** The cancels: half at a random time, half on a renewal (it opens, or its charge is answered, ± 1 ms), armed a month before. */
function planCancels(world, customers) {
  return shuffle([...customers])
    .slice(0, Math.round(CUSTOMERS * CANCEL_SHARE))
    .map((c, i) =>
      i % 2
        ? { c, at: world.T0 + Math.random() * 330 * DAY, races: false }
        : { c, armAt: world.T0 + (0.4 + Math.floor(Math.random() * 10)) * MONTH, offset: pick([-1, 0, 1, PUSH - 1, PUSH, PUSH + 1]) },
    );
}

// A racing cancel's time: its subscription's next renewal (the end of its paid period) plus the offset.
function arm(world, cancel) {
  const sub = truthIndex(world).subsOf.get(cancel.c.id)?.[0];
  const end = sub?.status === 'active' ? Date.parse(sub.current_period_end) + cancel.offset : NaN;
  cancel.races = end > world.now();
  cancel.at = cancel.races ? end : world.now() + Math.random() * MONTH;
}

// One cancel: the clock to just before it, then the cancel, what falls due at its time (a
// renewal's charge or answer) and the delivery of what that sent, all at once.
async function cancelNow(world, cancel) {
  const { clock, now, stats } = world;
  await clock.advance(Math.max(0, cancel.at - 1 - now()));
  const calledAt = now();
  const [, record] = await Promise.all([clock.advance(1).then(() => world.box.deliver()), world.kits[0].cancel(cancel.c.id, world.plan)]);
  // `had`: the kit took it (a record already ended, by a suspension, has nothing to cancel).
  world.cancelled.set(cancel.c.id, { calledAt, doneAt: now(), had: record?.cancel !== undefined, state: record?.state });
  stats.cancels++;
  if (cancel.races) stats.raced++;
}

/** A few customers with a live record (and no cancel to come) click "Subscribe" again: nothing may be sent. */
async function lateClicks(world, customers, cancels, checks) {
  const cancelling = new Set(cancels.map((x) => x.c));
  for (const c of shuffle(customers.filter((x) => !cancelling.has(x))).slice(0, 4)) {
    const { state } = await world.kits[1].entitlement(c.id, world.plan);
    if (!['pending', 'active', 'past_due'].includes(state)) continue;
    const made = world.madeBy.size;
    const { created } = await world.kits[1].subscribe({
      customer: c.id,
      plan_code: world.plan,
      customer_phone: c.phone,
      terms_shown: TERMS,
    });
    world.stats.lateClicks++;
    if (created || world.madeBy.size !== made) checks.errors.push(`${c.id} (${state}) clicked again: a new subscription`);
  }
}

/** 2. The year, 6 h at a time: phones switched, cancels, events handed in, checks, the cron's reconcile. */
async function year(world, customers, checks) {
  const { clock, now, box, kits, stats } = world;
  const cancels = planCancels(world, customers);
  const reconcileAndCheck = async (flush = false) => {
    if (flush) checks.unplaced = await box.flush();
    // The cron while webhooks come in: reconcile and a round of deliveries at once.
    const [report] = await Promise.all([kits[0].reconcile(), flush ? undefined : box.deliver()]);
    stats.changed += report.changed.length;
    for (const e of report.errors) checks.errors.push(`reconcile error ${e.key}: ${e.message}`);
    await lateClicks(world, customers, cancels, checks);
    await check(world, customers, checks, true);
  };
  let nextCheck = now() + CHECK_EVERY;
  let nextReconcile = now() + RECONCILE_EVERY;
  for (const end = world.T0 + YEAR; now() < end;) {
    const to = Math.min(end, now() + STEP);
    for (const cancel of cancels) if (cancel.armAt !== undefined && cancel.at === undefined && cancel.armAt <= to) arm(world, cancel);
    const due = cancels.filter((x) => x.at !== undefined && x.at <= to && !x.done).sort((a, b) => a.at - b.at);
    for (const cancel of due) {
      await cancelNow(world, cancel);
      cancel.done = true;
    }
    await clock.advance(to - now());
    switchPhones(world, customers);
    await box.deliver();
    if (now() >= nextReconcile) {
      nextReconcile += RECONCILE_EVERY;
      await reconcileAndCheck();
    } else if (now() >= nextCheck) {
      nextCheck += CHECK_EVERY;
      await check(world, customers, checks, false);
    }
  }
  await reconcileAndCheck(true);
}

/** 3. The invoices paid after a cancel against what was reported, and the table's row. */
async function tally(world, kind, customers, checks, began) {
  const { mock, plan, reported, cancelled, stats } = world;
  const problems = [];
  const invoices = [...mock.state.invoices.values()].filter((inv) => inv.plan_code === plan);
  const records = await world.kits[0].subscriptions({ limit: 100_000 });
  const onRecords = new Set(records.flatMap((r) => r.chargedAfterCancel));
  const { subsOf, paidOf } = truthIndex(world);
  let after = 0;
  let reportedOnce = 0;
  const before = { race: 0, unseen: [] };
  for (const r of records.filter((x) => x.cancel)) {
    for (const inv of (subsOf.get(r.customer) ?? []).flatMap((s) => paidOf.get(s.id) ?? [])) {
      const paidAt = Date.parse(inv.paid_at);
      if (paidAt > r.cancel.at) {
        after++;
        if (reported.get(inv.id) === 1 && onRecords.has(inv.id)) reportedOnce++;
        else
          problems.push(
            `${inv.id} of ${r.customer}, paid ${iso(paidAt)} after the cancel at ${iso(r.cancel.at)}: reported ${reported.get(inv.id) ?? 0} times`,
          );
      } else if (reported.has(inv.id)) {
        // Paid before the cancel, but the kit had not seen it yet (the race's own delivery, or its event lost or held back).
        if (r.cancel.at - paidAt < 1_000) before.race++;
        else before.unseen.push(`${r.customer}: ${inv.id} paid ${((r.cancel.at - paidAt) / HOUR).toFixed(1)} h before the cancel`);
      }
    }
  }
  for (const [inv, n] of reported)
    if (n !== 1 || !onRecords.has(inv)) problems.push(`${inv} reported ${n} times (on a record: ${onRecords.has(inv)})`);
  for (const inv of onRecords) if (!reported.has(inv)) problems.push(`${inv} on a record's chargedAfterCancel, never reported`);
  const second = records.filter((r) => r.n > 1).length;
  const bound = new Set(records.map((r) => r.subscriptionId));
  const orphans = [...mock.state.subscriptions.values()].filter((s) => s.plan_code === plan && !bound.has(s.id));
  if (orphans.length)
    problems.push(`${orphans.length} subscriptions at the service no record holds: ${orphans.map((s) => s.id).join(', ')}`);
  if (checks.unplaced) problems.push(`${checks.unplaced} events no record would take after the year`);
  const unattributed = [...world.madeBy].filter(
    ([id, key]) => mock.state.subscriptions.get(id)?.plan_code === plan && typeof key !== 'string',
  );
  const states = {};
  for (const r of records) states[r.state] = (states[r.state] ?? 0) + 1;
  const some = (list) => list.slice(0, 5).join('; ');
  if (checks.twoLive.size) problems.push(`customers with two live subscriptions at the service: ${some([...checks.twoLive])}`);
  if (second) problems.push(`${second} records past the first (a second subscription made)`);
  if (checks.accessWithoutPaid.length) problems.push(`access without a paid period: ${some(checks.accessWithoutPaid)}`);
  if (checks.paidWithoutAccess.length) problems.push(`paid periods without access: ${some(checks.paidWithoutAccess)}`);
  if (checks.cancels.length) problems.push(`cancels not recorded as made: ${some(checks.cancels)}`);
  if (checks.errors.length) problems.push(`reconcile errors or late clicks that subscribed: ${some(checks.errors)}`);
  if (unattributed.length) problems.push(`${unattributed.length} subscriptions with no Idempotency-Key noted (the attribution failed)`);
  if (records.length !== CUSTOMERS) problems.push(`${records.length} records for ${CUSTOMERS} customers`);
  if (cancelled.size !== stats.cancels) problems.push(`${stats.cancels} cancels made, ${cancelled.size} customers`);
  for (const point of POINTS) if (!stats.kills[point]) problems.push(`no worker was killed at ${point}: the run proves nothing there`);
  for (const line of before.unseen.slice(0, 3)) log(`${kind}: refunded as charged after the cancel, though paid before it: ${line}`);
  for (const line of stats.threw.slice(0, 5)) log(`${kind}: a click threw (the customer's other click went on): ${line}`);
  const count = (status) => invoices.filter((i) => i.status === status).length;
  const row = {
    column: kind,
    customers: CUSTOMERS,
    'cohorts fails/recovers/lapses': Object.keys(COHORTS)
      .map((c) => customers.filter((x) => x.cohort === c).length)
      .join('/'),
    'clicks (2 processes each)': stats.clicks,
    'kills record/create/answer': POINTS.map((p) => stats.kills[p] ?? 0).join('/'),
    'clicks that threw': stats.threw.length,
    'late clicks on a live record': stats.lateClicks,
    'subscriptions at the service': [...mock.state.subscriptions.values()].filter((s) => s.plan_code === plan).length,
    'customers with 2 live (must be 0)': checks.twoLive.size,
    'second records (must be 0)': second,
    'events in/dup/lost/held back': `${stats.handled}/${stats.duplicated}/${stats.lost}/${stats.heldBack}`,
    'retried: no record yet/contention': stats.retried.join('/'),
    'invoices paid/uncollectible': `${count('paid')}/${count('uncollectible')}`,
    'phones switched dry': stats.switched,
    'cancels (racing a renewal)': `${stats.cancels} (${stats.raced})`,
    'charged after cancel/reported once': `${after}/${reportedOnce}`,
    'refunded, paid before cancel (race/unseen)': `${before.race}/${before.unseen.length}`,
    'reconcile changes': stats.changed,
    'customer checks': stats.customers,
    'access w/o paid period (0)': checks.accessWithoutPaid.length,
    'paid period w/o access (0)': checks.paidWithoutAccess.length,
    'final states': Object.entries(states)
      .map(([s, n]) => `${s} ${n}`)
      .join(', '),
    'wall time': seconds(began),
  };
  return { row, problems };
}

async function run(kind, urls) {
  const began = performance.now();
  const setupProblems = [];
  const world = await setUp(kind, urls, setupProblems);
  const customers = makeCustomers(kind === 'postgres' ? 'pg' : 'rd');
  const checks = { accessWithoutPaid: [], paidWithoutAccess: [], twoLive: new Set(), cancels: [], errors: [] };
  try {
    world.T0 = world.now();
    await signUp(world, kind, urls, customers);
    await year(world, customers, checks);
    const result = await tally(world, kind, customers, checks, began);
    result.problems.unshift(...setupProblems);
    return result;
  } finally {
    await world.close();
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
