// One handler process of the chaos proof (scripts/chaos.mjs): the fulfillment kit over the
// shared store, behind a node:http endpoint, as a merchant would run it, in a hostile world.
//
//   POST /ipn              → handleWebhook (with `x-chaos-die-after-ack: 1` the process
//                            SIGKILLs itself once the 2xx is sent: after the ack, before the
//                            recorded delivery is processed)
//   GET  /return?trx=&ref= → verify + handleVerified (the return page; the trx_id and ref stand
//                            for the merchant's own records)
//   POST /drain            → drain() until nothing is due, then the inbox's pending/dead counts
//   POST /reconcile?since= → reconcile
//
// With the inbox on, every process runs a `work({ signal })` loop beside its endpoint, so a
// delivery whose process died after the ack is processed by a survivor (or the restarted one).
//
// The world it meets (env): onPaid stalls, some of them longer than the lease
// (CHAOS_LONG_STALL_P, 2-4 s against CHAOS_LEASE_MS); a verify that answers about another
// payment for a share of calls (CHAOS_SWAP_SHARE: a proxy's cache gone wrong; the answer is
// marked `chaos_swapped_for`, so a fulfilment on it is seen); and, when its GO line says
// `steps`, a wall clock (Date) that jumps by up to ±CHAOS_CLOCK_MAX_MS every second or two
// (leases and due times are monotonic or the servers': nothing may change).
//
// It starts as a standby (its modules loaded) and becomes the handler on a port when the parent
// writes `GO <port> <clock>` on its stdin, so a restart after a kill takes the parent's pause,
// not seconds of loading on a busy machine.
//
// It prints `READY`, `ACK <status> <ms>` per delivery (its answer time, here), `INPAID <trx>` / `OUTPAID <trx>` around the window where onPaid has written
// its fulfilment and may stall (the parent SIGKILLs it there), `SWAP`, `STEP`, `LONG` and
// `DYING <trx>` as they happen. onPaid, onDuplicatePayment and onFailed record (order_ref,
// trx_id): on Postgres through ctx.db (commits with the claim), on Redis in lists; every onPaid
// run also logs `start`/`end <order> <pid> <run>` in the Redis list chaos:log (Redis's own
// order), where the parent finds runs of one order that overlapped.
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { PaymentsClient } from 'business-payments';
import { createFulfillment } from 'business-payments/fulfillment';
import { postgresStore } from 'business-payments/fulfillment/postgres';
import { redisStore } from 'business-payments/fulfillment/redis';
import pg from 'pg';
import { createClient } from 'redis';

// A standby: its modules load and its kit is made before the parent's `GO <port> <clock>` line
// (stdin) makes it the handler on that port: a restart then takes the parent's pause, not the
// seconds of loading a busy machine takes.
const go = new Promise((resolve) => {
  const lines = createInterface({ input: process.stdin });
  lines.once('line', (line) => (lines.close(), resolve(line.split(' ').slice(1))));
});
const env = process.env;
const kind = env.CHAOS_STORE; // 'postgres' | 'redis'
const inboxOn = env.CHAOS_INBOX !== 'off';
const stallP = Number(env.CHAOS_STALL_P ?? '0.2');
const longStallP = Number(env.CHAOS_LONG_STALL_P ?? '0.05');
const swapShare = Number(env.CHAOS_SWAP_SHARE ?? '0.1');
const lease = Number(env.CHAOS_LEASE_MS ?? '1500');
const clockMax = Number(env.CHAOS_CLOCK_MAX_MS ?? '240000');
const creds = JSON.parse(env.CHAOS_CREDS);
const say = (line) => process.stdout.write(`${line}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- the client: the real one, behind a verify that sometimes answers about another payment ----
const real = new PaymentsClient({ environment: 'sandbox', ...creds, baseUrl: env.CHAOS_SANDBOX_URL, maxRetries: 2 });
const answered = []; // recent verify answers (others' answers to hand out), paid ones first picked
const client = {
  environment: 'sandbox',
  payments: {
    async verify(trxId) {
      const tx = await real.payments.verify(trxId);
      const others = answered.filter((a) => a.trx_id !== tx.trx_id);
      if (answered.push(tx) > 200) answered.shift();
      if (!others.length || Math.random() >= swapShare) return tx;
      // Asked about A, answered B (B's real answer, a paid one where there is one): the kit
      // must refuse it; the mark lets onPaid see that it was given one.
      const paid = others.filter((a) => a.status === 'success');
      const pool = paid.length ? paid : others;
      say('SWAP');
      return { ...pool[Math.floor(Math.random() * pool.length)], chaos_swapped_for: trxId };
    },
    list: (params) => real.payments.list(params),
  },
  // The kits' seam, passed on as a merchant's wrapper passes it: without it the kit could not
  // tell the earlier generation's missing payment list (reconcile walks the store there).
  unsupported: (error) => real.unsupported(error),
};

// ---- the store and the handlers ----
const log = await createClient({ url: env.CHAOS_REDIS_URL }).connect(); // chaos:log, and Redis's lists
const pool = new pg.Pool({ connectionString: env.CHAOS_PG_URL, max: 20 });
pool.on('error', () => {});
let store;
let record; // (table, tx, ctx) → records one handler run where the store keeps it
if (kind === 'postgres') {
  store = postgresStore(pool);
  record = (table, tx, { db, source }) =>
    db.query(`INSERT INTO ${table} (order_ref, trx_id, pid, source, swapped) VALUES ($1, $2, $3, $4, $5)`, [
      tx.order_ref ?? null,
      tx.trx_id,
      process.pid,
      source,
      tx.chaos_swapped_for ?? null,
    ]);
} else {
  store = redisStore(log);
  record = (table, tx, { source }) =>
    log.rPush(table, [tx.order_ref ?? '-', tx.trx_id, process.pid, source, tx.chaos_swapped_for ?? '-'].join(' '));
}

const stall = async () => {
  const roll = Math.random();
  if (roll < longStallP) {
    say('LONG');
    return sleep(2000 + Math.random() * 2000); // longer than the lease: renewal must hold it
  }
  if (roll < longStallP + stallP) return sleep(150 + Math.random() * 450);
};

async function onPaid(tx, ctx) {
  if (tx.status !== 'success') throw new Error(`onPaid with status ${tx.status}`);
  const run = randomUUID();
  const order = tx.order_ref ?? `-${tx.trx_id}`;
  // Start / end markers in one list, in Redis's own order: the parent finds overlaps.
  await log.rPush('chaos:log', `start ${order} ${process.pid} ${run}`);
  await record(kind === 'postgres' ? 'chaos_fulfilments' : 'chaos:fulfilled', tx, ctx);
  say(`INPAID ${tx.trx_id}`);
  await stall();
  await log.rPush('chaos:log', `end ${order} ${process.pid} ${run}`);
  say(`OUTPAID ${tx.trx_id}`);
}

// The order's price: its number is in its reference (`<column>-o<i>`, 10 + i % 50 USD).
const price = (order) => {
  const i = /-o(\d+)$/.exec(order ?? '')?.[1];
  return i === undefined ? undefined : { amount: 10 + (Number(i) % 50), currency: 'USD' };
};

const kit = createFulfillment({
  environment: 'sandbox',
  secret: creds.webhookSecret,
  client,
  store,
  lease,
  inbox: inboxOn,
  // 0.1-0.2 s × attempts, not the default 10 s × 2^n: retries happen within the run.
  retryDelay: (attempts) => 100 * attempts + Math.random() * 100,
  expect: (tx) => price(tx.order_ref),
  onPaid,
  onFailed: (tx, ctx) => record(kind === 'postgres' ? 'chaos_failures' : 'chaos:failed', tx, ctx),
  onDuplicatePayment: (tx, ctx) => record(kind === 'postgres' ? 'chaos_duplicates' : 'chaos:duplicates', tx, ctx),
  onMismatch: (tx, ctx) => record(kind === 'postgres' ? 'chaos_mismatches' : 'chaos:mismatches', tx, ctx),
});

const body = (req) =>
  new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
const send = (res, status, text) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(text);
};

// After the ack, before the processing: the marker first (Redis's order: every run this process
// starts from here on is dead with it), then SIGKILL.
async function dieAfterAck(res, trx) {
  await new Promise((resolve) => (res.writableFinished ? resolve() : res.once('finish', resolve)));
  await log.rPush('chaos:log', `killed ${process.pid}`).catch(() => {});
  say(`DYING ${trx}`);
  process.kill(process.pid, 'SIGKILL');
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  try {
    if (req.method === 'POST' && url.pathname === '/ipn') {
      const t0 = performance.now();
      const payload = await body(req);
      const { status, body: text } = await kit.handleWebhook({ payload, headers: req.headers });
      send(res, status, text);
      say(`ACK ${status} ${(performance.now() - t0).toFixed(1)}`);
      if (req.headers['x-chaos-die-after-ack'] && status >= 200 && status < 300) {
        await dieAfterAck(res, JSON.parse(payload.toString()).data?.trx_id);
      }
      return;
    }
    if (url.pathname === '/return') {
      const trx = url.searchParams.get('trx');
      const tx = await client.payments.verify(trx);
      // The merchant's page checks what the kit cannot see here: the answer is about its payment.
      if (tx.trx_id !== trx) return send(res, 502, JSON.stringify({ error: `verify(${trx}) answered for ${tx.trx_id}` }));
      const result = await kit.handleVerified(tx, { merchantRef: url.searchParams.get('ref') ?? undefined });
      return send(res, 200, JSON.stringify({ result }));
    }
    if (req.method === 'POST' && url.pathname === '/drain') {
      const report = { processed: 0, done: 0, retried: 0, dead: 0 };
      const deadline = performance.now() + Number(url.searchParams.get('ms') ?? 20_000);
      for (;;) {
        const r = await kit.drain();
        for (const k of Object.keys(report)) report[k] += r[k];
        const pending = await kit.inbox({ state: 'pending', limit: 10_000 });
        report.pending = pending.length;
        if (!pending.length || performance.now() > deadline) break;
        await sleep(100); // records due later (backoff) or taken by a dead process (its lease)
      }
      report.dead = (await kit.inbox({ state: 'dead', limit: 10_000 })).map((r) => `${r.id}: ${r.error}`);
      report.review = (await kit.inbox({ state: 'review', limit: 10_000 })).length;
      return send(res, 200, JSON.stringify(report));
    }
    if (req.method === 'POST' && url.pathname === '/reconcile') {
      const report = await kit.reconcile({ since: Number(url.searchParams.get('since')), olderThan: 0 });
      return send(res, 200, JSON.stringify(report));
    }
    send(res, 404, '{}');
  } catch (error) {
    send(res, 500, JSON.stringify({ error: String(error?.message ?? error) }));
  }
});
server.keepAliveTimeout = 1000;

// ---- the clock: with `steps`, Date (now() and new Date()) jumps while we run ----
// Within ±4 min by default: the webhook window and the service's request-signature tolerance
// are 300 s, so a larger step only gets deliveries refused (401) and calls refused, which
// tests nothing here. performance.now() and timers are untouched: they are monotonic.
function stepTheClock() {
  const RealDate = Date;
  let offset = 0;
  class SteppedDate extends RealDate {
    constructor(...args) {
      if (args.length) super(...args);
      else super(RealDate.now() + offset);
    }
    static now() {
      return RealDate.now() + offset;
    }
  }
  globalThis.Date = SteppedDate;
  const step = () => {
    offset = Math.round((Math.random() * 2 - 1) * clockMax);
    say(`STEP ${offset}`);
    setTimeout(step, 500 + Math.random() * 1500).unref();
  };
  step();
}

// ---- on the parent's GO: this port, this clock, the worker loop beside the endpoint (whatever a
// dead process left in the inbox), and the endpoint ----
const [port, clock] = await go;
if (clock === 'steps') stepTheClock();
if (inboxOn) void kit.work({ signal: new AbortController().signal, idleMs: 250 });
server.listen(Number(port), '127.0.0.1', () => say('READY'));
