// The chaos proof of business-payments/fulfillment: every paid order fulfilled once, on the
// right payment, never by two runs at once, in a hostile world.
//
//   npm run test:chaos      (builds, then runs this on dist/ through the package's self-reference)
//
// One column per store × inbox: postgresStore over a pg Pool (onPaid writing through ctx.db)
// and redisStore over node-redis (onPaid appending to a Redis list outside the claim), each
// with the inbox on (the default: ack at once, process after, a `work()` loop in every
// handler, a final `drain()`) and off (`inbox: false`: processed inside the request). The
// sandbox (this process, 127.0.0.1, retry schedule × 0.001) takes orders paid through
// `newAttempt` references (`<order>~a<n>`): most orders one attempt, some a failed attempt then
// another, and some two attempts that are both paid (the second must reach
// onDuplicatePayment, never onPaid). Every payment's ipn_url is a front proxy here; it forwards
// each delivery to one of 4 handler processes (scripts/chaos-handler.mjs, round-robin) and a
// deliberate duplicate to another one, and drops every attempt for 5% of the payments (only
// reconcile finds those). Settled 70/30 paid/failed with completeCheckout while return-page
// calls (verify + handleVerified) race the deliveries. Meanwhile:
// - handlers are SIGKILLed mid-onPaid at random and restarted on their port;
// - some deliveries make their handler SIGKILL itself right after its 2xx, before the
//   recorded delivery is processed (no duplicate copy for those): with the inbox on, the
//   survivors' work() loops (or the final drain) must process it, never only reconcile;
// - the lease is cut to CHAOS_LEASE_MS (1.5 s) and some onPaid runs stall 2-4 s: renewal must
//   hold the claim (no second run, concurrent or after);
// - two of the four handlers run with a wall clock that jumps by up to ±4 minutes every second
//   or two (leases and due times are monotonic or the servers': nothing may change);
// - the handlers' verify answers about another payment for a share of calls (10%): nothing
//   may be fulfilled on such an answer.
// Then (inbox on) drain() on one handler, reconcile({ since, olderThan: 0 }) until it has
// nothing left, and the count, per order: fulfilled twice, missed, wrong order (onPaid's
// order_ref is not the order the payment was made for, or it ran on a swapped verify answer),
// concurrent (two onPaid runs of one order overlapping in time, from start/end markers in
// Redis's own order), and the second payments routed to onDuplicatePayment. Throwaway
// PostgreSQL and Redis servers (Debian's packages, scripts/db-servers.mjs) on loopback ports;
// every server and child stopped whatever happens. Exit 1 on: Postgres: any double, missed,
// wrong order or concurrent run; Redis: any concurrent run, missed or wrong order (a re-run
// after a kill inside onPaid is documented there: counted, allowed unless it overlapped); on
// both, a failed payment fulfilled or never reported to onFailed, a second payment of a paid
// order that reached neither onPaid nor onDuplicatePayment, a right price sent to onMismatch,
// and (inbox on) a delivery acknowledged by a process that died that the inbox did not process
// (reconcile had to). The handlers' own answer times (p50 / p99 of their 2xx) are in the table.
//
// Then twice more on Postgres (inbox on, and off) against a sandbox playing the earlier
// generation (docs/generations.md): payments made with payments.initiate (whose answer has no trx_id),
// the IPN signed with the API secret and sent once: never re-sent after a non-2xx or a refused
// connection. Its dropped deliveries are both kinds: the proxy answering 500, and an ipn_url
// nothing listens on (refused). The same world otherwise, and reconcile walks the store's
// remembered trx_ids there (no payment list). What is knowable differs: a payment whose IPN
// never reached a handler and whose return page never answered is unknown to the merchant on
// this generation (nothing else carries its trx_id), so those are counted apart
// ("unknowable"), never as misses. The return page is given the trx_id here: on this
// generation a real one learns it only from the merchant's records (the success_redirect
// carries nothing), so it stands for any path that brings a known trx_id to handleVerified. A
// customer whose return page errored (its handler killed) reloads it once, on another handler.
//
// Sizes (env): CHAOS_PAYMENTS (per current-generation column, default 400),
// CHAOS_EARLIER_PAYMENTS (400), CHAOS_KILLS (mid-onPaid kills per column, 8), CHAOS_ACK_KILLS
// (after-ack kills per column, 6), CHAOS_LEASE_MS (1500), CHAOS_SWAP_SHARE (0.1),
// CHAOS_LONG_STALL_P (0.05), CHAOS_COLUMNS (a comma list of column names to run, e.g.
// `postgres,redis-no-inbox`; default all).
import { spawn } from 'node:child_process';
import { createServer, request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import { PaymentsClient } from 'business-payments';
import { createFulfillment } from 'business-payments/fulfillment';
import { postgresStore } from 'business-payments/fulfillment/postgres';
import { redisStore } from 'business-payments/fulfillment/redis';
import { createMockService } from 'business-payments/testing';
import pg from 'pg';
import { createClient } from 'redis';
import { chaosClock, childProcesses, printTable, runColumns } from './chaos-kit.mjs';
import { freePort } from './db-servers.mjs';

const env = process.env;
const PAYMENTS = Number(env.CHAOS_PAYMENTS ?? 400);
const EARLIER_PAYMENTS = Number(env.CHAOS_EARLIER_PAYMENTS ?? 400);
const HANDLERS = 4;
const STEPPED_CLOCKS = new Set([1, 3]); // handler 0 runs drain and reconcile on a true clock
const PAID_SHARE = 0.7;
const DUP_SHARE = 0.08; // orders paid twice, by two attempts
const RETRY_SHARE = 0.08; // orders whose first attempt failed, then another attempt
const DROP_SHARE = 0.05;
const RETURN_SHARE = 0.5;
const KILLS_PER_RUN = Number(env.CHAOS_KILLS ?? 8);
const ACK_KILLS_PER_RUN = Number(env.CHAOS_ACK_KILLS ?? 6);
const LEASE_MS = Number(env.CHAOS_LEASE_MS ?? 1500);
const SWAP_SHARE = env.CHAOS_SWAP_SHARE ?? '0.1';
const LONG_STALL_P = env.CHAOS_LONG_STALL_P ?? '0.05';
const TIME_SCALE = 0.001;
const COLUMNS = [
  { name: 'postgres', kind: 'postgres', inbox: true },
  { name: 'postgres-no-inbox', kind: 'postgres', inbox: false },
  { name: 'redis', kind: 'redis', inbox: true },
  { name: 'redis-no-inbox', kind: 'redis', inbox: false },
  { name: 'postgres-earlier', kind: 'postgres', inbox: true, earlier: true },
  { name: 'postgres-earlier-no-inbox', kind: 'postgres', inbox: false, earlier: true },
].filter((c) => !env.CHAOS_COLUMNS || env.CHAOS_COLUMNS.split(',').includes(c.name));
const HANDLER_SCRIPT = fileURLToPath(new URL('./chaos-handler.mjs', import.meta.url));
const { seconds, sleep, log, pick } = chaosClock();
const percentile = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN);

// ---- the servers (scripts/db-servers.mjs) and the handler children, stopped whatever happens ----
const { children, killChildren } = childProcesses();

// ---- small HTTP helpers ----
function post(port, path, body, headers, timeoutMs = 15_000) {
  return new Promise((resolve) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path, method: body == null ? 'GET' : 'POST', headers, timeout: timeoutMs },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
        res.on('error', () => resolve({ status: 0, body: '' }));
      },
    );
    req.on('error', (error) => resolve({ status: 0, body: '', error: error.code ?? error.message }));
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.end(body);
  });
}
const readBody = (req) =>
  new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
const listen = (server) => new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));

// ---- the handler processes: started, restarted after any death (down 0.1-0.5 s), counted ----
// Each process is spawned as a standby (it loads its modules, seconds on a busy machine) and
// made the handler on a port by a `GO <port> <clock>` line; warm standbys are kept, so a
// restart takes the pause chosen here rather than the machine's load.
const SPARES = 2;
function handlerFleet({ kind, inbox, urls, sandbox, creds, redis, stats }) {
  const ports = [];
  const handlers = []; // { child, inPaid: Set, alive, ready, exited }
  const restarting = [];
  const spares = [];
  let closing = false;
  const spawnStandby = () => {
    const child = spawn(process.execPath, [HANDLER_SCRIPT], {
      env: {
        ...process.env,
        CHAOS_STORE: kind,
        CHAOS_INBOX: inbox ? 'on' : 'off',
        CHAOS_PG_URL: urls.pgUrl,
        CHAOS_REDIS_URL: urls.redisUrl,
        CHAOS_SANDBOX_URL: sandbox.url,
        CHAOS_CREDS: JSON.stringify(creds),
        CHAOS_LEASE_MS: String(LEASE_MS),
        CHAOS_SWAP_SHARE: SWAP_SHARE,
        CHAOS_LONG_STALL_P: LONG_STALL_P,
      },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    children.add(child);
    child.once('exit', () => children.delete(child));
    child.stdin.on('error', () => {}); // a standby that died (its exit is what counts)
    return child;
  };
  const start = (i) => {
    while (spares.length && (spares[0].exitCode !== null || spares[0].signalCode !== null)) spares.shift();
    const child = spares.shift() ?? spawnStandby();
    while (!closing && spares.length < SPARES) spares.push(spawnStandby()); // the next restarts'
    const h = { child, inPaid: new Set(), alive: true };
    child.stdin.write(`GO ${ports[i]} ${STEPPED_CLOCKS.has(i) ? 'steps' : 'true'}\n`);
    h.ready = new Promise((resolve, reject) => {
      let buffer = '';
      child.stdout.on('data', (data) => {
        buffer += data;
        let nl;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          const [what, arg, more] = line.split(' ');
          if (what === 'READY') {
            resolve();
          } else if (what === 'ACK') {
            if (arg >= 200 && arg < 300) stats.ackMs.push(Number(more));
          } else if (what === 'INPAID') h.inPaid.add(arg);
          else if (what === 'OUTPAID') h.inPaid.delete(arg);
          else if (what === 'SWAP') stats.swapped++;
          else if (what === 'STEP') stats.clockSteps++;
          else if (what === 'LONG') stats.longStalls++;
          else if (what === 'DYING') stats.ackKilled.add(arg);
          else if (line) console.log(`handler ${i}: ${line}`);
        }
      });
      child.once('exit', () => reject(new Error(`handler ${i} exited before READY`)));
    });
    h.ready.catch(() => {});
    h.exited = new Promise((resolve) => child.once('exit', resolve));
    child.once('exit', () => {
      h.alive = false;
      const died = performance.now();
      // Its runs end here, whoever killed it (the killer and a self-kill mark it before, too).
      void redis.rPush('chaos:log', `killed ${child.pid}`).catch(() => {});
      if (closing) return;
      restarting[i] = (async () => {
        await sleep(100 + Math.random() * 400); // down for a moment: deliveries to it fail and are retried
        if (closing) return;
        stats.restarts++;
        await start(i).ready.catch(() => {});
        stats.downMs.push(performance.now() - died);
      })().finally(() => (restarting[i] = undefined));
    });
    handlers[i] = h;
    return h;
  };
  return {
    ports,
    handlers,
    async start() {
      for (let i = 0; i < HANDLERS; i++) ports.push(await freePort());
      for (let i = 0; i < HANDLERS; i++) start(i);
      await Promise.all(handlers.map((h) => h.ready));
    },
    /** Every handler up (restarts done). */
    async settled() {
      const deadline = performance.now() + 60_000;
      while (restarting.some(Boolean) || handlers.some((h) => !h.alive)) {
        if (performance.now() > deadline) throw new Error('a handler process does not start again (see its output above)');
        await Promise.all(restarting.filter(Boolean));
        await Promise.all(handlers.filter((h) => h.alive).map((h) => h.ready.catch(() => {})));
        await sleep(10);
      }
    },
    async close() {
      closing = true;
      for (const child of spares) child.kill('SIGKILL');
      for (const h of handlers) {
        if (!h.alive) continue;
        h.child.kill('SIGKILL');
        await h.exited;
      }
    },
  };
}

// ---- one column ----
async function run({ name, kind, inbox, earlier = false }, urls) {
  const runStarted = performance.now();
  const payments = earlier ? EARLIER_PAYMENTS : PAYMENTS;
  log(`--- ${name} ---`);
  const db = new pg.Pool({ connectionString: urls.pgUrl, max: 5 });
  db.on('error', () => {});
  const redis = await createClient({ url: urls.redisUrl }).connect();
  await db.query(
    'DROP TABLE IF EXISTS chaos_fulfilments, chaos_failures, chaos_duplicates, chaos_mismatches, business_payments_fulfillment, business_payments_fulfillment_open, business_payments_fulfillment_inbox',
  );
  for (const table of ['chaos_fulfilments', 'chaos_failures', 'chaos_duplicates', 'chaos_mismatches']) {
    await db.query(
      `CREATE TABLE ${table} (id serial PRIMARY KEY, order_ref text, trx_id text NOT NULL, pid int, source text, swapped text, at timestamptz DEFAULT clock_timestamp())`,
    );
  }
  await redis.flushAll();

  const mock = createMockService({ timeScale: TIME_SCALE, rateLimitPerMinute: 1e9, ...(earlier ? { generation: 'earlier' } : {}) });
  const sandbox = await mock.listen({ port: 0 });
  // On the earlier generation `webhookSecret` is the API secret, which signs its IPN: the handlers' kit takes it.
  const creds = mock.credentials.sandbox;
  // The sandbox's limit is raised for the run: the client's polling budget with it.
  const client = new PaymentsClient({ environment: 'sandbox', ...creds, baseUrl: sandbox.url, pollingBudget: 1e9 });
  // The merchant's checkout: attempts counted in the store the handlers share.
  const store = kind === 'postgres' ? postgresStore(db) : redisStore(redis);
  const checkout = createFulfillment({
    environment: 'sandbox',
    secret: creds.webhookSecret,
    client,
    store,
    onPaid: () => {
      throw new Error('the checkout process settles nothing');
    },
  });

  const stats = {
    deliveries: 0,
    duplicates: 0,
    dropped: 0,
    droppedPayments: 0,
    kills: 0,
    killedInPaid: 0,
    ackKillMarks: 0,
    ackKilled: new Set(),
    longStalls: 0,
    clockSteps: 0,
    swapped: 0,
    returns: 0,
    reloads: 0,
    reloadWhy: new Map(),
    proxyErrors: new Map(),
    restarts: 0,
    refused: 0,
    ackMs: [],
    downMs: [],
  };
  // Per trx_id: a handler answered one of its deliveries (the kit had it in hand).
  const ipnReached = new Set();
  const fleet = handlerFleet({ kind, inbox, urls, sandbox, creds, redis, stats });
  await fleet.start();
  const { ports, handlers } = fleet;
  let stopping = false;

  // The payments, planned per order: its attempts' outcomes.
  const orders = [];
  const orderCount = Math.round(payments / (1 + DUP_SHARE + RETRY_SHARE));
  const tag = `${kind === 'postgres' ? 'pg' : 'rd'}${earlier ? 'e' : ''}${inbox ? 'i' : 'n'}`;
  for (let i = 0; orders.length < orderCount; i++) {
    const paid = () => (Math.random() < PAID_SHARE ? 'success' : 'failed');
    const roll = Math.random();
    const plan = roll < DUP_SHARE ? ['success', 'success'] : roll < DUP_SHARE + RETRY_SHARE ? ['failed', paid()] : [paid()];
    orders.push({ id: `chaos-${tag}-o${i}`, amount: 10 + (i % 50), plan });
  }
  const pay = new Map(); // trx_id → { order, ref, outcome }
  const outcomeOfRef = new Map();
  const dropped = new Set();

  // The front proxy: each delivery to one handler (round-robin) and a duplicate to another; a
  // few paid ones, without a copy, to a handler told to die right after its 2xx.
  const paidExpected = orders.reduce((n, o) => n + o.plan.filter((p) => p === 'success').length, 0);
  const ackKillP = Math.min(1, (3 * ACK_KILLS_PER_RUN) / Math.max(1, paidExpected));
  let rr = 0;
  const copies = [];
  const proxy = createServer(async (req, res) => {
    const payload = await readBody(req);
    let trx;
    try {
      trx = JSON.parse(payload.toString()).data?.trx_id;
    } catch {
      // not JSON: forwarded as is
    }
    stats.deliveries++;
    if (trx && dropped.has(trx)) {
      stats.dropped++;
      res.writeHead(500).end('{"dropped":true}');
      return;
    }
    const headers = { ...req.headers };
    delete headers.host;
    delete headers.connection;
    headers['content-length'] = String(payload.length);
    const first = rr++ % HANDLERS;
    // A mark is spent only when the handler answered 2xx (and so died).
    const die = !stopping && stats.ackKillMarks < ACK_KILLS_PER_RUN && pay.get(trx)?.outcome === 'success' && Math.random() < ackKillP;
    let main;
    if (die) {
      stats.ackKillMarks++;
      main = await post(ports[first], '/ipn', payload, { ...headers, 'x-chaos-die-after-ack': '1' });
      if (!(main.status >= 200 && main.status < 300)) stats.ackKillMarks--;
    } else {
      // The copy goes on in the background: the service hears the main answer alone.
      const other = (first + 1 + Math.floor(Math.random() * (HANDLERS - 1))) % HANDLERS;
      stats.duplicates++;
      copies.push(post(ports[other], '/ipn', payload, headers).then((copy) => void (copy.status && trx && ipnReached.add(trx))));
      main = await post(ports[first], '/ipn', payload, headers);
    }
    if (main.status === 0) stats.proxyErrors.set(main.error, (stats.proxyErrors.get(main.error) ?? 0) + 1);
    if (trx && main.status) ipnReached.add(trx);
    res.writeHead(main.status || 502, { 'content-type': 'application/json' }).end(main.body || '{"error":"handler unreachable"}');
  });
  const proxyPort = await listen(proxy);

  // Kills: a random handler that is inside onPaid now, at random moments; its runs marked
  // ended first (in Redis's order), then SIGKILL; the fleet restarts it.
  const killer = (async () => {
    while (!stopping) {
      await sleep(700 + Math.random() * 1300); // spread over the run: the standbys are warm again by the next
      if (stopping || stats.kills >= KILLS_PER_RUN) continue;
      const candidates = handlers.filter((h) => h.alive && h.inPaid.size > 0);
      if (!candidates.length) continue;
      const h = pick(candidates);
      await redis.rPush('chaos:log', `killed ${h.child.pid}`);
      stats.killedInPaid += h.inPaid.size;
      h.child.kill('SIGKILL');
      await h.exited;
      stats.kills++;
    }
  })();

  // The payments: every one on a newAttempt reference of its order.
  const since = Date.now() - 1000;
  const refusedUrl = `http://127.0.0.1:${await freePort()}/ipn`;
  const refusedRefs = new Set();
  const jobs = orders.flatMap((order) => order.plan.map((outcome) => ({ order, outcome })));
  let nextJob = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (nextJob < jobs.length) {
        const { order, outcome } = jobs[nextJob++];
        const { ref_trx, idempotencyKey } = await checkout.newAttempt(order.id);
        outcomeOfRef.set(ref_trx, { order: order.id, outcome });
        if (earlier) {
          // Earlier generation: the drops decided up front, half of them an ipn_url nothing listens on.
          const refused = Math.random() < DROP_SHARE / 2;
          if (refused) refusedRefs.add(ref_trx);
          // No idempotency there, and no trx_id in the answer: the IPN brings it to the merchant.
          const session = await client.payments.initiate({
            payment_amount: order.amount,
            currency_code: 'USD',
            ref_trx,
            description: `Chaos order ${order.id}`,
            customer_name: 'Zoë Mwinyi',
            ipn_url: refused ? refusedUrl : `http://127.0.0.1:${proxyPort}/ipn`,
            success_redirect: `https://shop.example.com/orders/${ref_trx}/thanks`,
            cancel_redirect: `https://shop.example.com/orders/${ref_trx}/thanks`,
          });
          if (session.data?.trx_id) throw new Error(`initiate answered a trx_id on the earlier generation: ${session.data.trx_id}`);
          continue;
        }
        const payment = await client.payments.create(
          { payment_amount: order.amount, currency_code: 'USD', ref_trx, ipn_url: `http://127.0.0.1:${proxyPort}/ipn` },
          { idempotencyKey },
        );
        pay.set(payment.trx_id, { ref: ref_trx, ...outcomeOfRef.get(ref_trx) });
      }
    }),
  );
  // The sandbox's side (its records) knows each earlier-generation payment's trx_id.
  if (earlier)
    for (const row of mock.state.payments.values()) pay.set(row.trx_id, { ref: row.merchant_ref, ...outcomeOfRef.get(row.merchant_ref) });
  const trxs = [...pay.keys()].sort(() => Math.random() - 0.5); // settled in any order: two attempts of an order race
  log(`${trxs.length} payments created for ${orders.length} orders (${seconds(runStarted)})`);
  for (const trx of trxs) {
    if (refusedRefs.has(pay.get(trx).ref)) dropped.add(trx);
    else if (Math.random() < (earlier ? DROP_SHARE / 2 : DROP_SHARE)) dropped.add(trx);
  }
  stats.droppedPayments = dropped.size;
  stats.refused = refusedRefs.size;

  // Settle them, with return-page calls racing the deliveries.
  const returns = [];
  const returnOk = new Set(); // trx_ids a return page reported to the kit (answered 200)
  let settleIndex = 0;
  await Promise.all(
    Array.from({ length: 12 }, async () => {
      while (settleIndex < trxs.length) {
        const trx = trxs[settleIndex++];
        const done = mock.completeCheckout(trx, pay.get(trx).outcome);
        if (Math.random() < RETURN_SHARE) {
          stats.returns++;
          const h = Math.floor(Math.random() * HANDLERS);
          const page = (port) => post(port, `/return?trx=${encodeURIComponent(trx)}&ref=${encodeURIComponent(pay.get(trx).ref)}`);
          returns.push(
            sleep(Math.random() * 30)
              .then(() => page(ports[h]))
              .then(async (answer) => {
                // Earlier generation: a customer whose page errored (its handler killed) reloads it once, on another handler.
                if (earlier && answer.status !== 200) {
                  stats.reloads++;
                  const why = answer.status ? `${answer.status} ${answer.body.slice(0, 40)}` : `no answer (${answer.error})`;
                  stats.reloadWhy.set(why, (stats.reloadWhy.get(why) ?? 0) + 1);
                  await sleep(200);
                  answer = await page(ports[(h + 1) % HANDLERS]);
                }
                if (answer.status === 200) returnOk.add(trx);
              }),
          );
        }
        await done;
      }
    }),
  );
  await Promise.all(returns);
  log(`${trxs.length} payments settled (${seconds(runStarted)})`);

  // Wait for every event to be delivered or abandoned (dropped ones: 5 attempts, ~2.7 s here; earlier generation: one attempt).
  const deadline = Date.now() + 60_000;
  while (mock.state.events.some((e) => e.status === 'pending') && Date.now() < deadline) await sleep(200);
  const pendingEvents = mock.state.events.filter((e) => e.status === 'pending').length;
  const abandoned = mock.state.events.filter((e) => e.status === 'abandoned').length;
  stopping = true;
  await killer;
  await Promise.all(copies);
  await fleet.settled();
  log(`deliveries settled: ${abandoned} events abandoned, ${pendingEvents} still pending (${seconds(runStarted)})`);

  // Claims of killed holders run out with their lease (Redis), inbox records taken by a dead
  // process with theirs; then the inbox drained, then the sweep.
  await sleep(LEASE_MS + 500);
  let drained = '-';
  if (inbox) {
    const answer = await post(ports[0], '/drain?ms=30000', '', {}, 60_000);
    const report = JSON.parse(answer.body || '{}');
    log(`drain: ${answer.status} ${JSON.stringify({ ...report, dead: report.dead?.length })}`);
    for (const dead of (report.dead ?? []).slice(0, 5)) log(`  dead: ${dead}`);
    drained =
      answer.status === 200 ? `${report.processed} (${report.dead.length} dead, ${report.pending} pending)` : `answered ${answer.status}`;
  }
  const settledBeforeReconcile = await fulfilmentsByTrx(kind, db, redis);
  const reconciles = [];
  let walked = 'list';
  for (let round = 0; round < 8; round++) {
    const answer = await post(ports[0], `/reconcile?since=${since}`, '', {}, 120_000);
    const report = JSON.parse(answer.body || '{}');
    if (answer.status !== 200) log(`reconcile answered ${answer.status}: ${answer.body}`);
    else reconciles.push(report);
    if (report.walked) walked = report.walked;
    log(
      `reconcile: ${JSON.stringify({ ...report, errors: report.errors?.length, unknown: report.unknown?.length, review: report.review?.length })}`,
    );
    for (const e of report.errors?.slice(0, 3) ?? []) log(`  error ${e.trx_id}: ${e.message}`);
    if (answer.status === 200 && !report.busy && !report.errors?.length && !report.pending) break;
    await sleep(Math.min(LEASE_MS, 1000));
  }

  // The count.
  const rows = await handlerRecords(kind, db, redis);
  const concurrent = overlaps(await redis.lRange('chaos:log', 0, -1));
  // Earlier generation: a payment whose trx_id never reached the kit (no IPN a handler answered,
  // no return page answered) is unknowable there; counted apart, never as a miss.
  const unknowable = new Set(earlier ? trxs.filter((t) => !ipnReached.has(t) && !returnOk.has(t)) : []);
  const c = count({ orders, pay, rows, unknowable });
  // After-ack kills: who settled the payment the dead process had acknowledged.
  const ackKilledBy = { inbox: 0, 'return page': 0, reconcile: 0, none: 0 };
  for (const trx of stats.ackKilled) {
    const source = settledBeforeReconcile.get(trx) ?? (c.settledBy.get(trx) ? 'reconcile' : 'none');
    ackKilledBy[source === 'webhook' ? 'inbox' : source === 'verified' ? 'return page' : source]++;
  }
  if (c.missed.length || c.wrong.length) await explain({ store, c, pay, lines: await redis.lRange('chaos:log', 0, -1) });

  const proxyClosed = new Promise((r) => proxy.close(r));
  proxy.closeAllConnections?.();
  await proxyClosed;
  await fleet.close();
  await sandbox.close();
  await mock.close();
  await redis.quit();
  await db.end();

  const ack = stats.ackMs.sort((a, b) => a - b);
  const row = {
    column: name,
    payments: `${trxs.length} (${orders.length} orders)`,
    'paid / failed': `${c.paidTrx} / ${c.failedTrx}`,
    deliveries: stats.deliveries,
    'duplicate copies': stats.duplicates,
    dropped: earlier
      ? `${stats.dropped} (${stats.droppedPayments - stats.refused}) + ${stats.refused} refused`
      : `${stats.dropped} (${stats.droppedPayments} payments)`,
    returns: earlier ? `${stats.returns} (${stats.reloads} reloaded)` : stats.returns,
    'ack p50 / p99': ack.length ? `${percentile(ack, 50).toFixed(0)} / ${percentile(ack, 99).toFixed(0)} ms` : '-',
    'kills mid-onPaid': `${stats.kills} (${stats.killedInPaid} runs)`,
    'restarts (down for)': `${stats.restarts} (${(stats.downMs.reduce((a, b) => a + b, 0) / Math.max(1, stats.downMs.length) / 1000).toFixed(1)} s)`,
    'unreachable (proxy)':
      [...stats.proxyErrors].map(([k, v]) => `${v} ${{ ECONNREFUSED: 'refused', ECONNRESET: 'reset' }[k] ?? k}`).join(', ') || 0,
    'kills after ack': stats.ackKilled.size,
    '… settled by': `${ackKilledBy.inbox}/${ackKilledBy['return page']}/${ackKilledBy.reconcile}/${ackKilledBy.none}`,
    'onPaid > lease': stats.longStalls,
    'clock steps': stats.clockSteps,
    'verify swapped': stats.swapped,
    'orders paid': c.paidOrders,
    'fulfilled once': c.once,
    'fulfilled twice': c.twice.length,
    missed: c.missed.length,
    'wrong order': c.wrong.length,
    concurrent: concurrent.length,
    'dup → onDuplicatePayment': `${c.dupRouted} / ${c.dupExpected}`,
    'dup not routed': c.dupMissing.length,
    'dup routed twice': c.dupTwice,
    'price mismatches': c.mismatches,
    'failed fulfilled': c.failedFulfilled,
    'onFailed twice': c.failedTwice,
    'onFailed never': c.failedMissing,
    drained,
    'reconcile paid/failed': `${reconciles.reduce((s, r) => s + (r.paid ?? 0), 0)}/${reconciles.reduce((s, r) => s + (r.failed ?? 0), 0)} (${reconciles.length} runs)`,
    'reconcile walked': walked,
    'unknowable (paid)': earlier ? `${unknowable.size} (${c.unknowablePaid})` : '-',
    time: seconds(runStarted),
  };
  const problems = [];
  const sample = (list) => (list.length ? `: ${list.slice(0, 5).join(', ')}${list.length > 5 ? ', …' : ''}` : '');
  if (trxs.length !== jobs.length) problems.push(`${trxs.length} payments created, not ${jobs.length}`);
  if (c.missed.length)
    problems.push(
      `${c.missed.length} paid orders never fulfilled${earlier ? ' (a trx_id of theirs had reached the kit)' : ''}${sample(c.missed)}`,
    );
  if (c.wrong.length) problems.push(`${c.wrong.length} fulfilments of the wrong order${sample(c.wrong)}`);
  if (c.failedFulfilled) problems.push(`${c.failedFulfilled} failed payments fulfilled`);
  if (c.failedMissing) problems.push(`${c.failedMissing} failed payments never reached onFailed`);
  if (c.dupMissing.length)
    problems.push(
      `${c.dupMissing.length} second payments of a paid order reached neither onPaid nor onDuplicatePayment${sample(c.dupMissing)}`,
    );
  if (c.mismatches) problems.push(`${c.mismatches} payments of the right price reached onMismatch`);
  if (concurrent.length) problems.push(`${concurrent.length} onPaid runs overlapped another run of their order${sample(concurrent)}`);
  if (inbox && ackKilledBy.reconcile + ackKilledBy.none)
    problems.push(
      `${ackKilledBy.reconcile + ackKilledBy.none} deliveries acknowledged by a process that died were not processed from the inbox`,
    );
  if (kind === 'postgres') {
    if (c.twice.length)
      problems.push(`${c.twice.length} orders fulfilled twice (Postgres promises exactly once through ctx.db)${sample(c.twice)}`);
    if (c.dupTwice) problems.push(`${c.dupTwice} duplicate payments recorded twice through ctx.db`);
    if (c.failedTwice) problems.push(`${c.failedTwice} failed payments recorded twice through ctx.db`);
  } else if (c.twice.length) {
    log(
      `redis: ${c.twice.length} orders ran onPaid twice, never at once (a kill inside onPaid, then the lease ran out: allowed, the store documents it)`,
    );
  }
  if (earlier) {
    const answers = new Map();
    for (const d of mock.state.deliveries) {
      const key = d.status ?? d.error ?? 'none';
      answers.set(key, (answers.get(key) ?? 0) + 1);
    }
    log(`earlier generation: IPN attempts answered ${JSON.stringify(Object.fromEntries(answers))}`);
    if (stats.reloads) log(`earlier generation: return pages reloaded after ${JSON.stringify(Object.fromEntries(stats.reloadWhy))}`);
    log(
      `earlier generation: ${unknowable.size} payments unknowable to the merchant (IPN never reached a handler, no return page answered; ${c.unknowablePaid} of them paid), ${c.unknowableSettled} of those settled anyway`,
    );
  }
  return { row, problems };
}

// What the handlers recorded: onPaid, onFailed, onDuplicatePayment, onMismatch runs, each
// { order_ref, trx_id, source, swapped } (Postgres: committed with their claim; Redis: every run).
async function handlerRecords(kind, db, redis) {
  const out = {};
  for (const what of ['fulfilments', 'failures', 'duplicates', 'mismatches']) {
    if (kind === 'postgres') {
      out[what] = (await db.query(`SELECT order_ref, trx_id, source, swapped FROM chaos_${what} ORDER BY id`)).rows;
    } else {
      const list = { fulfilments: 'fulfilled', failures: 'failed', duplicates: 'duplicates', mismatches: 'mismatches' }[what];
      out[what] = (await redis.lRange(`chaos:${list}`, 0, -1)).map((line) => {
        const [order_ref, trx_id, , source, swapped] = line.split(' ');
        return { order_ref: order_ref === '-' ? null : order_ref, trx_id, source, swapped: swapped === '-' ? null : swapped };
      });
    }
  }
  return out;
}

// trx_id → the source of its first onPaid / onDuplicatePayment / onFailed record, so far.
async function fulfilmentsByTrx(kind, db, redis) {
  const rows = await handlerRecords(kind, db, redis);
  const by = new Map();
  for (const r of [...rows.fulfilments, ...rows.duplicates, ...rows.failures]) if (!by.has(r.trx_id)) by.set(r.trx_id, r.source);
  return by;
}

// onPaid runs of one order that overlapped in time: a start while another run of the order is
// open. A `killed <pid>` marker (written before the SIGKILL, and again once it exited) ends
// that process's open runs, and any it starts after the marker.
function overlaps(lines) {
  const open = new Map(); // order → Map(run → pid)
  const dead = new Set();
  const found = [];
  for (const line of lines) {
    const [what, a, b, c] = line.split(' ');
    if (what === 'killed') {
      dead.add(a);
      for (const runs of open.values()) for (const [run, pid] of runs) if (pid === a) runs.delete(run);
    } else if (what === 'start' && !dead.has(b)) {
      const runs = open.get(a) ?? new Map();
      if (runs.size) found.push(a);
      runs.set(c, b);
      open.set(a, runs);
    } else if (what === 'end') open.get(a)?.delete(c);
  }
  return found;
}

// The count, per order and per payment.
function count({ orders, pay, rows, unknowable }) {
  const knowable = (t) => !unknowable.has(t);
  const byOrder = new Map(orders.map((o) => [o.id, { paid: [], failed: [], fulfilled: [], routed: [] }]));
  for (const [trx, p] of pay) byOrder.get(p.order)[p.outcome === 'success' ? 'paid' : 'failed'].push(trx);
  const wrong = [];
  let failedFulfilled = 0;
  const settledBy = new Map();
  for (const r of rows.fulfilments) {
    const p = pay.get(r.trx_id);
    settledBy.set(r.trx_id, r.source);
    if (!p || r.order_ref !== p.order || r.swapped) {
      wrong.push(
        `${r.trx_id} of ${p?.order ?? '?'} as ${r.order_ref ?? 'no order'}${r.swapped ? ` on verify(${r.swapped})` : ''} (${r.source})`,
      );
    }
    if (p?.outcome === 'failed') failedFulfilled++;
    if (p) byOrder.get(p.order).fulfilled.push(r.trx_id);
  }
  const routedCount = new Map();
  for (const r of rows.duplicates) {
    const p = pay.get(r.trx_id);
    settledBy.set(r.trx_id, r.source);
    routedCount.set(r.trx_id, (routedCount.get(r.trx_id) ?? 0) + 1);
    if (!p || r.order_ref !== p.order || r.swapped)
      wrong.push(`duplicate ${r.trx_id} of ${p?.order ?? '?'} as ${r.order_ref ?? 'no order'}`);
    if (p) byOrder.get(p.order).routed.push(r.trx_id);
  }
  const failures = new Map();
  for (const r of rows.failures) {
    settledBy.set(r.trx_id, r.source);
    failures.set(r.trx_id, (failures.get(r.trx_id) ?? 0) + 1);
  }
  const mismatched = new Set(rows.mismatches.map((r) => r.trx_id));
  let paidOrders = 0;
  let once = 0;
  let dupExpected = 0;
  const twice = [];
  const missed = [];
  const dupMissing = [];
  for (const [order, o] of byOrder) {
    const paid = o.paid.filter(knowable);
    if (o.fulfilled.length >= 2) twice.push(order);
    if (!paid.length) continue;
    paidOrders++;
    if (o.fulfilled.length === 1) once++;
    if (!o.fulfilled.length) missed.push(order);
    dupExpected += paid.length - 1;
    // Every other paid payment of a fulfilled order: to onDuplicatePayment (or onMismatch).
    if (o.fulfilled.length)
      for (const t of paid) if (!o.fulfilled.includes(t) && !o.routed.includes(t) && !mismatched.has(t)) dupMissing.push(t);
  }
  const failedTrx = [...pay].filter(([, p]) => p.outcome === 'failed').map(([t]) => t);
  const paidTrx = [...pay].filter(([, p]) => p.outcome === 'success').map(([t]) => t);
  return {
    paidTrx: paidTrx.length,
    failedTrx: failedTrx.length,
    paidOrders,
    once,
    twice,
    missed,
    wrong,
    dupExpected,
    dupRouted: routedCount.size,
    dupTwice: [...routedCount.values()].filter((n) => n > 1).length,
    dupMissing,
    mismatches: rows.mismatches.length,
    failedFulfilled,
    failedTwice: [...failures.values()].filter((n) => n > 1).length,
    failedMissing: failedTrx.filter((t) => knowable(t) && !failures.get(t)).length,
    unknowablePaid: paidTrx.filter((t) => unknowable.has(t)).length,
    unknowableSettled: [...unknowable].filter((t) => settledBy.has(t)).length,
    settledBy,
  };
}

// For a bug report: what the store says about each missed order's payments.
async function explain({ store, c, pay, lines }) {
  for (const order of c.missed.slice(0, 5)) {
    const attempts = [...pay].filter(([, p]) => p.order === order);
    const facts = [];
    for (const [trx, p] of attempts)
      facts.push(`${trx} (${p.ref}, ${p.outcome}): payment:${trx} = ${await store.outcome(`payment:${trx}`)}`);
    // Its onPaid runs (chaos:log), and whether their process was killed afterwards.
    const runs = lines
      .filter((l) => l.split(' ')[1] === order)
      .map((l) => {
        const pid = l.split(' ')[2];
        return `${l.split(' ')[0]} pid ${pid}${lines.includes(`killed ${pid}`) ? ' (killed later)' : ''}`;
      });
    log(
      `  missed ${order}: order:${order} = ${await store.outcome(`order:${order}`)}; ${facts.join('; ')}; runs: ${runs.join(', ') || 'none'}`,
    );
  }
}

const { failed, results } = await runColumns({
  name: 'test:chaos',
  pgOptions: '-c max_connections=200',
  columns: COLUMNS,
  run,
  killChildren,
  log,
});
if (results.length) {
  printTable(results.map((r) => r.row));
  console.log(
    "\n'… settled by': who settled the payments whose handler died right after its 2xx: inbox (work/drain) / return page / reconcile / nobody.",
  );
}
console.log(`test:chaos ${failed ? 'FAILED' : 'passed'} in ${seconds()}`);
process.exit(failed ? 1 : 0);
