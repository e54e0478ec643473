// The chaos proof of business-payments/fulfillment: every paid order fulfilled exactly once.
//
//   npm run test:chaos      (builds, then runs this on dist/ through the package's self-reference)
//
// Once per store (postgresStore over a pg Pool, onPaid writing through ctx.db; redisStore over
// node-redis, onPaid appending to a Redis list outside the claim): the sandbox (this process,
// 127.0.0.1, retry schedule × 0.001) creates 1,000 hosted payments whose ipn_url is a front
// proxy here; it forwards each delivery to one of 4 handler processes (scripts/chaos-handler.mjs,
// round-robin) and a deliberate duplicate to another one, and drops every attempt for 5% of the
// payments (only reconcile finds those). Settled 70/30 paid/failed with completeCheckout while
// return-page calls (verify + handleVerified) race the deliveries, and handlers are SIGKILLed
// mid-onPaid at random and restarted on their port. Then reconcile({ since, olderThan: 0 }) on
// one handler, and the count. Throwaway PostgreSQL and Redis servers (Debian's packages, as in
// scripts/db-servers.mjs) on loopback ports; every server and child stopped whatever happens.
// Exit 1 on a double or missed fulfilment where the store promises none (Postgres: none at
// all; Redis: no concurrent double, no missed one).
//
// Then once more on Postgres against a sandbox playing the earlier generation
// (docs/generations.md): payments made with payments.initiate (whose answer has no trx_id),
// the IPN signed with the API secret and sent once: never re-sent after a non-2xx or a refused
// connection. Its dropped deliveries are both kinds: the proxy answering 500, and an ipn_url
// nothing listens on (refused). The same duplicates, racing return pages, SIGKILLs mid-onPaid
// and reconcile, which walks the store's remembered trx_ids there (no payment list). What is
// knowable differs: a payment whose IPN never reached a handler and whose return page never
// answered is unknown to the merchant on this generation (nothing else carries its trx_id), so
// those are counted apart ("unknowable"), never as misses, and only a double fulfilment of one
// fails the run. Every payment whose trx_id reached the kit (an IPN a handler answered, or a
// return page answered 200) must be fulfilled (or failed) exactly once. The return page is
// given the trx_id here: on this generation a real one learns it only from the merchant's
// records (the success_redirect carries nothing), so it stands for any path that brings a
// known trx_id to handleVerified. A customer whose return page errored (its handler killed)
// reloads it once, on another handler.
import { spawn } from 'node:child_process';
import { createServer, request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import { PaymentsClient } from 'business-payments';
import { createMockService } from 'business-payments/testing';
import pg from 'pg';
import { createClient } from 'redis';
import { freePort, startDbServers } from './db-servers.mjs';

const PAYMENTS = Number(process.env.CHAOS_PAYMENTS ?? 1000);
const EARLIER_PAYMENTS = Number(process.env.CHAOS_EARLIER_PAYMENTS ?? 1000);
const HANDLERS = 4;
const PAID_SHARE = 0.7;
const DROP_SHARE = 0.05;
const RETURN_SHARE = 0.5;
const KILLS_PER_RUN = Number(process.env.CHAOS_KILLS ?? 12);
const LEASE_MS = Number(process.env.CHAOS_LEASE_MS ?? 4000); // a lower one (below the 150–600 ms stalls) shows the overlap check at work
const TIME_SCALE = 0.001;
const HANDLER_SCRIPT = fileURLToPath(new URL('./chaos-handler.mjs', import.meta.url));
const started = performance.now();
const seconds = (from) => `${((performance.now() - from) / 1000).toFixed(1)} s`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (line) => console.log(`[${seconds(started).padStart(7)}] ${line}`);

// ---- the servers (scripts/db-servers.mjs) and the handler children, stopped whatever happens ----
const children = new Set();
function killChildren() {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      // gone
    }
  }
}

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
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.on('timeout', () => req.destroy());
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

// ---- one run ----
async function run(kind, urls, generation = 'current') {
  const runStarted = performance.now();
  const earlier = generation === 'earlier';
  const payments = earlier ? EARLIER_PAYMENTS : PAYMENTS;
  log(`--- ${kind}${earlier ? ' (earlier generation)' : ''} ---`);
  const db = new pg.Pool({ connectionString: urls.pgUrl, max: 5 });
  db.on('error', () => {});
  const redis = await createClient({ url: urls.redisUrl }).connect();
  await db.query('DROP TABLE IF EXISTS chaos_fulfilments, chaos_failures, business_payments_fulfillment');
  await db.query(
    'CREATE TABLE chaos_fulfilments (id serial PRIMARY KEY, trx_id text NOT NULL, pid int, source text, at timestamptz DEFAULT clock_timestamp())',
  );
  await db.query('CREATE TABLE chaos_failures (id serial PRIMARY KEY, trx_id text NOT NULL, pid int)');
  await redis.flushAll();

  const mock = createMockService({ timeScale: TIME_SCALE, rateLimitPerMinute: 1e9, ...(earlier ? { generation: 'earlier' } : {}) });
  const sandbox = await mock.listen({ port: 0 });
  // On the earlier generation `webhookSecret` is the API secret, which signs its IPN: the handlers' kit takes it.
  const creds = mock.credentials.sandbox;
  const client = new PaymentsClient({ environment: 'sandbox', ...creds, baseUrl: sandbox.url });

  const stats = {
    deliveries: 0,
    duplicates: 0,
    dropped: 0,
    droppedPayments: 0,
    kills: 0,
    killedInPaid: 0,
    returns: 0,
    reloads: 0,
    reloadWhy: new Map(),
    proxyErrors: 0,
    restarts: 0,
    refused: 0,
  };
  // Per trx_id: a handler answered one of its deliveries (the kit had it in hand).
  const ipnReached = new Set();
  const ports = [];
  for (let i = 0; i < HANDLERS; i++) ports.push(await freePort());
  const handlers = []; // { child, inPaid: Set, ready }
  let stopping = false;

  function startHandler(i) {
    const child = spawn(process.execPath, [HANDLER_SCRIPT], {
      env: {
        ...process.env,
        CHAOS_STORE: kind,
        CHAOS_PORT: String(ports[i]),
        CHAOS_PG_URL: urls.pgUrl,
        CHAOS_REDIS_URL: urls.redisUrl,
        CHAOS_SANDBOX_URL: sandbox.url,
        CHAOS_CREDS: JSON.stringify(creds),
        CHAOS_LEASE_MS: String(LEASE_MS),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.add(child);
    const h = { child, inPaid: new Set(), alive: true };
    h.ready = new Promise((resolve, reject) => {
      let buffer = '';
      child.stdout.on('data', (data) => {
        buffer += data;
        let nl;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          if (line === 'READY') resolve();
          else if (line.startsWith('INPAID ')) h.inPaid.add(line.slice(7));
          else if (line.startsWith('OUTPAID ')) h.inPaid.delete(line.slice(8));
          else if (line) console.log(`handler ${i}: ${line}`);
        }
      });
      child.once('exit', () => reject(new Error(`handler ${i} exited before READY`)));
    });
    h.ready.catch(() => {});
    h.exited = new Promise((resolve) => child.once('exit', resolve));
    child.once('exit', () => {
      h.alive = false;
      children.delete(child);
    });
    handlers[i] = h;
    return h;
  }
  for (let i = 0; i < HANDLERS; i++) startHandler(i);
  await Promise.all(handlers.map((h) => h.ready));

  // The front proxy: each delivery to one handler (round-robin) and a duplicate to another.
  let dropped; // set below, once the payments are made
  let rr = 0;
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
    const other = (first + 1 + Math.floor(Math.random() * (HANDLERS - 1))) % HANDLERS;
    stats.duplicates++;
    const [main, copy] = await Promise.all([post(ports[first], '/ipn', payload, headers), post(ports[other], '/ipn', payload, headers)]);
    if (main.status === 0) stats.proxyErrors++;
    if (trx && (main.status || copy.status)) ipnReached.add(trx);
    res.writeHead(main.status || 502, { 'content-type': 'application/json' }).end(main.body || '{"error":"handler unreachable"}');
  });
  const proxyPort = await listen(proxy);

  // Kills: a random handler that is inside onPaid now, at random moments; restarted on its port.
  const killer = (async () => {
    while (!stopping) {
      await sleep(200 + Math.random() * 600);
      if (stopping || stats.kills >= KILLS_PER_RUN) continue;
      const candidates = handlers.map((h, i) => [h, i]).filter(([h]) => h.alive && h.inPaid.size > 0);
      if (!candidates.length) continue;
      const [h, i] = candidates[Math.floor(Math.random() * candidates.length)];
      stats.killedInPaid += h.inPaid.size;
      h.child.kill('SIGKILL');
      await h.exited;
      stats.kills++;
      if (kind === 'redis') await redis.rPush('chaos:log', `killed ${h.child.pid}`);
      await sleep(100 + Math.random() * 400); // down for a moment: deliveries to it fail and are retried
      if (stopping) break;
      const next = startHandler(i);
      await next.ready.catch(() => {});
      stats.restarts++;
    }
  })();

  // 1,000 hosted payments.
  const since = Date.now() - 1000;
  const trxs = [];
  const refs = new Map();
  const outcomes = new Map();
  dropped = new Set();
  // Earlier generation: the drops decided up front, half of them an ipn_url nothing listens on.
  const refusedUrl = `http://127.0.0.1:${await freePort()}/ipn`;
  const refusedRefs = new Set();
  let nextIndex = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (nextIndex < payments) {
        const i = nextIndex++;
        const ref = `chaos-${kind}${earlier ? '-earlier' : ''}-${i}`;
        if (earlier) {
          const refused = Math.random() < DROP_SHARE / 2;
          if (refused) refusedRefs.add(ref);
          // No idempotency there, and no trx_id in the answer: the IPN brings it to the merchant.
          const session = await client.payments.initiate({
            payment_amount: 10 + (i % 50),
            currency_code: 'USD',
            ref_trx: ref,
            description: `Chaos order ${i}`,
            customer_name: 'Zoë Mwinyi',
            ipn_url: refused ? refusedUrl : `http://127.0.0.1:${proxyPort}/ipn`,
            success_redirect: `https://shop.example.com/orders/${ref}/thanks`,
            cancel_redirect: `https://shop.example.com/orders/${ref}/thanks`,
          });
          if (session.data?.trx_id) throw new Error(`initiate answered a trx_id on the earlier generation: ${session.data.trx_id}`);
          continue;
        }
        const payment = await client.payments.create(
          { payment_amount: 10 + (i % 50), currency_code: 'USD', ref_trx: ref, ipn_url: `http://127.0.0.1:${proxyPort}/ipn` },
          { idempotencyKey: ref },
        );
        trxs.push(payment.trx_id);
        refs.set(payment.trx_id, ref);
      }
    }),
  );
  // The sandbox's side (its records) knows each earlier-generation payment's trx_id.
  if (earlier) {
    for (const row of mock.state.payments.values()) {
      trxs.push(row.trx_id);
      refs.set(row.trx_id, row.merchant_ref);
    }
  }
  log(`${trxs.length} payments created (${seconds(runStarted)})`);
  for (const trx of trxs) {
    outcomes.set(trx, Math.random() < PAID_SHARE ? 'success' : 'failed');
    if (refusedRefs.has(refs.get(trx))) dropped.add(trx);
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
        const done = mock.completeCheckout(trx, outcomes.get(trx));
        if (Math.random() < RETURN_SHARE) {
          stats.returns++;
          const h = Math.floor(Math.random() * HANDLERS);
          const page = (port) => post(port, `/return?trx=${encodeURIComponent(trx)}&ref=${refs.get(trx)}`);
          returns.push(
            sleep(Math.random() * 30)
              .then(() => page(ports[h]))
              .then(async (answer) => {
                // Earlier generation: a customer whose page errored (its handler killed) reloads it once, on another handler.
                if (earlier && answer.status !== 200) {
                  stats.reloads++;
                  const why = answer.status ? `${answer.status} ${answer.body.slice(0, 80)}` : 'no answer';
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
  for (let i = 0; i < HANDLERS; i++) if (!handlers[i].alive) await startHandler(i).ready;
  log(`deliveries settled: ${abandoned} events abandoned, ${pendingEvents} still pending (${seconds(runStarted)})`);

  // Claims of killed holders run out with their lease (Redis); then the sweep.
  await sleep(LEASE_MS + 500);
  const reconciles = [];
  let walked = 'list';
  for (let round = 0; round < 3; round++) {
    const answer = await post(ports[0], `/reconcile?since=${since}`, '', {}, 120_000);
    const report = JSON.parse(answer.body || '{}');
    if (answer.status !== 200) log(`reconcile answered ${answer.status}: ${answer.body}`);
    else reconciles.push(report);
    if (report.walked) walked = report.walked;
    log(`reconcile: ${JSON.stringify({ ...report, errors: report.errors?.length })}`);
    if (answer.status === 200 && !report.busy && !report.errors?.length && !report.pending) break;
    await sleep(LEASE_MS);
  }

  // The count.
  const paid = trxs.filter((t) => outcomes.get(t) === 'success');
  const failed = trxs.filter((t) => outcomes.get(t) === 'failed');
  const count = new Map();
  let failedFulfilled = 0;
  const failuresRecorded = new Map();
  let concurrent = 0;
  if (kind === 'postgres') {
    for (const row of (await db.query('SELECT trx_id, count(*)::int AS n FROM chaos_fulfilments GROUP BY trx_id')).rows)
      count.set(row.trx_id, row.n);
    for (const row of (await db.query('SELECT trx_id, count(*)::int AS n FROM chaos_failures GROUP BY trx_id')).rows)
      failuresRecorded.set(row.trx_id, row.n);
  } else {
    for (const line of await redis.lRange('chaos:fulfilled', 0, -1)) {
      const trx = line.split(' ')[0];
      count.set(trx, (count.get(trx) ?? 0) + 1);
    }
    for (const line of await redis.lRange('chaos:failed', 0, -1)) {
      const trx = line.split(' ')[0];
      failuresRecorded.set(trx, (failuresRecorded.get(trx) ?? 0) + 1);
    }
    // Overlapping onPaid runs of one trx_id: a start while another run of it is open, a run
    // ending when its process was killed (the `killed` marker comes after the process exited).
    const open = new Map(); // trx -> Map(run -> pid)
    for (const line of await redis.lRange('chaos:log', 0, -1)) {
      const [what, a, b, c] = line.split(' ');
      if (what === 'killed') {
        for (const runs of open.values()) for (const [run, pid] of runs) if (pid === a) runs.delete(run);
      } else if (what === 'start') {
        const runs = open.get(a) ?? new Map();
        if (runs.size) concurrent++;
        runs.set(c, b);
        open.set(a, runs);
      } else if (what === 'end') open.get(a)?.delete(c);
    }
  }
  for (const trx of failed) if (count.get(trx)) failedFulfilled++;
  // Earlier generation: a payment whose trx_id never reached the kit (no IPN a handler answered,
  // no return page answered) is unknowable there; counted apart, never as a miss.
  const unknowable = new Set(earlier ? trxs.filter((t) => !ipnReached.has(t) && !returnOk.has(t)) : []);
  const knowable = (t) => !unknowable.has(t);
  const once = paid.filter((t) => count.get(t) === 1).length;
  const twice = paid.filter((t) => (count.get(t) ?? 0) >= 2).length;
  const never = paid.filter((t) => knowable(t) && !count.get(t)).length;
  const failedRecordedTwice = [...failuresRecorded.values()].filter((n) => n > 1).length;
  const failedMissing = failed.filter((t) => knowable(t) && !failuresRecorded.get(t)).length;
  const unknowablePaid = paid.filter((t) => unknowable.has(t));
  const unknowableSettled = [...unknowable].filter((t) => count.get(t) || failuresRecorded.get(t)).length;
  const unknown = [...count.keys()].filter((t) => !outcomes.has(t)).length;

  const proxyClosed = new Promise((r) => proxy.close(r));
  proxy.closeAllConnections?.();
  await proxyClosed;
  for (const h of handlers) {
    if (!h.alive) continue;
    h.child.kill('SIGKILL');
    await h.exited;
  }
  await sandbox.close();
  await mock.close();
  await redis.quit();
  await db.end();

  const row = {
    store: earlier ? `${kind} (earlier)` : kind,
    payments: trxs.length,
    paid: paid.length,
    failed: failed.length,
    deliveries: stats.deliveries,
    duplicates: stats.duplicates,
    dropped: earlier
      ? `${stats.dropped} (${stats.droppedPayments - stats.refused}) + ${stats.refused} refused`
      : `${stats.dropped} (${stats.droppedPayments} payments)`,
    returns: earlier ? `${stats.returns} (${stats.reloads} reloaded)` : stats.returns,
    kills: stats.kills,
    'onPaid runs killed': stats.killedInPaid,
    once,
    twice,
    never,
    concurrent: kind === 'redis' ? concurrent : '-',
    'failed fulfilled': failedFulfilled,
    'onFailed twice': failedRecordedTwice,
    'onFailed never': failedMissing,
    'reconcile paid/failed': `${reconciles.reduce((s, r) => s + (r.paid ?? 0), 0)}/${reconciles.reduce((s, r) => s + (r.failed ?? 0), 0)}`,
    'reconcile walked': walked,
    'unknowable (paid)': earlier ? `${unknowable.size} (${unknowablePaid.length})` : '-',
    'unknowable settled': earlier ? unknowableSettled : '-',
    time: seconds(runStarted),
  };
  const problems = [];
  if (trxs.length !== payments) problems.push(`${trxs.length} payments created, not ${payments}`);
  if (never) problems.push(`${never} paid payments never fulfilled${earlier ? ' (their trx_id had reached the kit)' : ''}`);
  if (earlier && walked !== 'store') problems.push(`reconcile walked ${walked}, not the store`);
  if (failedFulfilled) problems.push(`${failedFulfilled} failed payments fulfilled`);
  if (unknown) problems.push(`${unknown} fulfilments of unknown trx_ids`);
  if (failedMissing) problems.push(`${failedMissing} failed payments never reached onFailed`);
  if (kind === 'postgres' && twice) problems.push(`${twice} paid payments fulfilled twice (Postgres promises exactly once through ctx.db)`);
  if (kind === 'postgres' && failedRecordedTwice) problems.push(`${failedRecordedTwice} failed payments recorded twice through ctx.db`);
  if (kind === 'redis' && concurrent) problems.push(`${concurrent} concurrent onPaid runs of one trx_id (Redis promises none)`);
  if (kind === 'redis' && twice)
    log(`redis: ${twice} paid payments ran onPaid twice (a kill inside onPaid, then the lease ran out: allowed, the store documents it)`);
  if (earlier) {
    const answers = new Map();
    for (const d of mock.state.deliveries) {
      const key = d.status ?? d.error ?? 'none';
      answers.set(key, (answers.get(key) ?? 0) + 1);
    }
    log(`earlier generation: IPN attempts answered ${JSON.stringify(Object.fromEntries(answers))}`);
    if (stats.reloads) log(`earlier generation: return pages reloaded after ${JSON.stringify(Object.fromEntries(stats.reloadWhy))}`);
  }
  if (earlier)
    log(
      `earlier generation: ${unknowable.size} payments unknowable to the merchant (IPN never reached a handler, no return page answered; ${unknowablePaid.length} of them paid), ${unknowableSettled} of those settled anyway (their trx_id was remembered before a handler died)`,
    );
  return { row, problems };
}

let failed = false;
let stopServers = () => {};
const rows = [];
try {
  const servers = await startDbServers({ name: 'test:chaos', pgOptions: '-c max_connections=200', log });
  servers.onStop(killChildren);
  stopServers = servers.stop;
  const urls = servers;
  for (const [kind, generation] of [
    ['postgres', 'current'],
    ['redis', 'current'],
    ['postgres', 'earlier'],
  ]) {
    const { row, problems } = await run(kind, urls, generation);
    rows.push(row);
    for (const p of problems) console.error(`FAIL ${row.store}: ${p}`);
    if (problems.length) failed = true;
  }
} catch (error) {
  failed = true;
  console.error(error instanceof Error ? (error.stderr?.toString() || '') + (error.stack ?? error.message) : error);
} finally {
  killChildren();
  stopServers();
}
if (rows.length) {
  const keys = Object.keys(rows[0]);
  const width = Math.max(...keys.map((k) => k.length));
  console.log('');
  console.log(`${''.padEnd(width)}  ${rows.map((r) => String(r.store).padStart(22)).join('')}`);
  for (const key of keys.slice(1)) console.log(`${key.padEnd(width)}  ${rows.map((r) => String(r[key]).padStart(22)).join('')}`);
}
console.log(`test:chaos ${failed ? 'FAILED' : 'passed'} in ${seconds(started)}`);
process.exit(failed ? 1 : 0);
