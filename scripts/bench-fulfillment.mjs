// The fulfillment kit's answer time (a benchmark, not a test): how long the service waits for
// a webhook delivery's answer when onPaid takes 5 s. With a durable store the kit records the
// delivery in its inbox and answers at once, whatever the handlers cost; the goal is p50 and
// p99 under 50 ms on Postgres on this machine.
//
//   npm run bench:fulfillment      (builds, then runs this on dist/)
//
// A throwaway PostgreSQL server (scripts/db-servers.mjs), postgresStore over a pg Pool, a
// node:http server wrapping `fulfillment.handleWebhook({ payload, headers })`, and deliveries
// signed with `signWebhook` (business-payments/testing), each a new payment on an attempt
// reference (`order-<i>~a1`, so the kit claims the order too), sent at a steady rate as the
// service sends them (open loop: one every 1/BENCH_RATE s, whatever the answers). The client is
// a fake whose verify answers success at once, so the figures are the kit's and the store's.
// Three runs, each on a pool of its own:
// - inbox on, pg's default pool size (BENCH_POOL_MAX, 10): a merchant's first setup;
// (every pool opened in full before its run and kept open, as a server's is once warm)
// - inbox on, a pool large enough for every onPaid in flight (2 connections each: the payment's
//   claim and its order's): the answer's own cost;
// - `inbox: false` (BENCH_DELIVERIES_OFF, 10, at 2/s, on the large pool): each answer waits for
//   its onPaid, for comparison.
// A delivery unanswered after BENCH_TIMEOUT_MS (10 s) counts as "no answer" at that time, and a
// run stops sending after 16 of those. Prints p50 / p99 / max, what became of the onPaid runs,
// and whether the goal is met; exits 0 (a benchmark), 1 only when it could not run.
import { createServer, request, Agent } from 'node:http';
import { createFulfillment } from 'business-payments/fulfillment';
import { postgresStore } from 'business-payments/fulfillment/postgres';
import { signWebhook } from 'business-payments/testing';
import pg from 'pg';
import { startDbServers } from './db-servers.mjs';

const env = process.env;
const DELIVERIES = Number(env.BENCH_DELIVERIES ?? 200);
const RATE = Number(env.BENCH_RATE ?? 20); // deliveries per second
const DELIVERIES_OFF = Number(env.BENCH_DELIVERIES_OFF ?? 10);
const RATE_OFF = Number(env.BENCH_RATE_OFF ?? 2);
const POOL_MAX = Number(env.BENCH_POOL_MAX ?? 10);
const ON_PAID_MS = Number(env.BENCH_ON_PAID_MS ?? 5000);
const TIMEOUT_MS = Number(env.BENCH_TIMEOUT_MS ?? 10_000);
const WARMUP = 5; // unmeasured: the first creates the tables
const GOAL_MS = 50;
const SECRET = 'whsec_bench_fulfillment_0123456789';
const started = performance.now();
const seconds = (from) => `${((performance.now() - from) / 1000).toFixed(1)} s`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

// The service's side of verify, answered at once: every payment paid, 25 USD.
const client = {
  environment: 'sandbox',
  payments: {
    verify: async (trx_id) => ({ trx_id, status: 'success', amount: 25, fee: 0, net_amount: 25, currency: 'USD' }),
    list: async function* () {},
  },
};

// One run: the kit behind node:http, `count` deliveries at `rate` per second, each timed.
async function measure({ label, pool, inbox, count, rate, run }) {
  const paid = { started: 0, done: 0 };
  const kit = createFulfillment({
    environment: 'sandbox',
    secret: SECRET,
    client,
    store: postgresStore(pool),
    inbox,
    onPaid: async () => {
      paid.started++;
      await sleep(ON_PAID_MS); // a slow ERP, an e-mail provider timing out
      paid.done++;
    },
  });
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const { status, body } = await kit.handleWebhook({ payload: Buffer.concat(chunks), headers: req.headers });
      res.writeHead(status, { 'content-type': 'application/json' }).end(body);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  const agent = new Agent({ keepAlive: true });
  let unanswered = 0;
  const deliver = async (i) => {
    const trx = `TRX${run}${String(i).padStart(6, '0')}`;
    const payload = {
      id: `evt_${trx}`,
      type: 'payment.completed',
      api_version: '2024-06-01',
      created_at: new Date().toISOString(),
      data: { trx_id: trx, merchant_ref: `order-${run}-${i}~a1`, status: 'completed', amount: { value: 25, currency: 'USD' } },
    };
    const { body, headers } = await signWebhook({ secret: SECRET, payload, environment: 'sandbox' });
    const t0 = performance.now();
    const status = await new Promise((resolve) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/webhooks', headers, agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      });
      req.setTimeout(TIMEOUT_MS, () => req.destroy(new Error('timeout')));
      req.on('error', (error) => resolve(error.message === 'timeout' ? (unanswered++, 'no answer') : (error.code ?? error.message)));
      req.end(body);
    });
    return { ms: performance.now() - t0, status };
  };
  // Open loop: delivery i leaves at i / rate s, whatever became of the ones before.
  const send = async (from, n) => {
    const t0 = performance.now();
    const out = [];
    for (let i = 0; i < n && unanswered < 16; i++) {
      await sleep(Math.max(0, t0 + (i * 1000) / rate - performance.now()));
      out.push(deliver(from + i));
    }
    return Promise.all(out);
  };
  await send(0, WARMUP);
  const t0 = performance.now();
  const answers = await send(WARMUP, count);
  const statuses = new Map();
  for (const a of answers) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
  const ms = answers.map((a) => a.ms).sort((a, b) => a - b);
  const result = {
    label,
    rate,
    count: answers.length,
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
    max: ms.at(-1),
    statuses: [...statuses].map(([s, n]) => `${n}×${s}`).join(' '),
  };
  // What became of the work, one onPaid's time after the last answer at most.
  const until = performance.now() + ON_PAID_MS + 1000;
  while (paid.done < answers.length + WARMUP && performance.now() < until) await sleep(100);
  result.processed = `${paid.done} of ${answers.length + WARMUP} onPaid runs finished (${paid.started} started) ${seconds(t0)} after the first measured delivery`;
  agent.destroy();
  server.closeAllConnections?.();
  await new Promise((resolve) => server.close(resolve));
  return result;
}

let stop = () => {};
let failed = false;
try {
  // Enough connections for every onPaid in flight at the rate (2 each), and some.
  const big = Number(env.BENCH_BIG_POOL_MAX ?? Math.ceil(2 * RATE * (ON_PAID_MS / 1000) * 1.1) + 20);
  const servers = await startDbServers({
    name: 'bench:fulfillment',
    pgOptions: `-c max_connections=${POOL_MAX + 2 * big + 20}`,
    log: () => {},
  });
  stop = servers.stop;
  const pools = [];
  // Warm, as a server's pool is after its first minutes: every connection open (a new one is a
  // fork on the server, neither the kit's cost nor the store's), and kept open.
  const poolOf = async (max) => {
    const pool = new pg.Pool({ connectionString: servers.pgUrl, max, min: max, idleTimeoutMillis: 0 });
    pool.on('error', () => {});
    pools.push(pool);
    for (const connection of await Promise.all(Array.from({ length: max }, () => pool.connect()))) connection.release();
    return pool;
  };
  console.log(
    `bench:fulfillment: onPaid ${ON_PAID_MS / 1000} s; postgresStore over a pg Pool; attempt references (a claim on the payment and on its order); verify answered at once`,
  );
  const results = [
    await measure({
      label: `inbox on, pool ${POOL_MAX}`,
      pool: await poolOf(POOL_MAX),
      inbox: true,
      count: DELIVERIES,
      rate: RATE,
      run: 'A',
    }),
    await measure({ label: `inbox on, pool ${big}`, pool: await poolOf(big), inbox: true, count: DELIVERIES, rate: RATE, run: 'B' }),
    await measure({
      label: `inbox: false, pool ${big}`,
      pool: await poolOf(big),
      inbox: false,
      count: DELIVERIES_OFF,
      rate: RATE_OFF,
      run: 'C',
    }),
  ];
  const width = Math.max(...results.map((r) => r.label.length)) + 2;
  const f = (v) => `${v.toFixed(1)} ms`.padStart(11);
  console.log('');
  console.log(
    `${''.padEnd(width)}${'sent'.padStart(6)}${'rate'.padStart(7)}${'p50'.padStart(11)}${'p99'.padStart(11)}${'max'.padStart(11)}  answers`,
  );
  for (const r of results) {
    console.log(
      `${r.label.padEnd(width)}${String(r.count).padStart(6)}${`${r.rate}/s`.padStart(7)}${f(r.p50)}${f(r.p99)}${f(r.max)}  ${r.statuses}`,
    );
  }
  console.log('');
  for (const r of results) console.log(`${r.label}: ${r.processed}`);
  console.log('');
  for (const r of results.slice(0, 2)) {
    const met = r.p50 < GOAL_MS && r.p99 < GOAL_MS && r.count === DELIVERIES && r.statuses === `${DELIVERIES}×200`;
    console.log(
      `goal (inbox on: p50 and p99 < ${GOAL_MS} ms, all ${DELIVERIES} answered 200), ${r.label}: ${met ? 'MET' : 'NOT MET'} (p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, ${r.statuses})`,
    );
  }
  // A stuck pool never ends: its connections are abandoned with the server.
  await Promise.race([Promise.all(pools.map((p) => p.end())), sleep(1000)]);
} catch (error) {
  failed = true;
  console.error(error instanceof Error ? (error.stderr?.toString() || '') + (error.stack ?? error.message) : error);
} finally {
  stop();
}
console.log(`bench:fulfillment ${failed ? 'could not run' : 'done'} in ${seconds(started)}`);
process.exit(failed ? 1 : 0);
