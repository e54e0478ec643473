// The chaos proof of business-payments/payouts: every payout intent sent at most once, never
// lost, and settled or handed to a person, in a hostile world.
//
//   npm run test:payout-chaos   (builds, then runs this on dist/ through the package's self-reference)
//
// One column per store: postgresStore over a pg Pool, redisStore over node-redis, on throwaway
// servers (Debian's packages, scripts/db-servers.mjs) on loopback ports; and a third column,
// "resolver clock 25 h behind" (postgresStore), where C's resolvers keep the real clock while
// the sandbox's jumps 25 h: their clock says every intent was sent minutes ago, and only the
// service's (its Date) says the keys are forgotten. The same run for each:
// PAYOUT_CHAOS_INTENTS intents (default 200): unique amounts (100 + i/100), except
// PAYOUT_CHAOS_PAIRS pairs (default 10) of intents with one amount between them (500 + j), for
// the list's "never guess a match twice". The sandbox runs here on 127.0.0.1 (mock.listen), on a
// clock `Date.now() + offset`, its rate limit raised, the wallet ample, and its signature
// tolerance widened to 3 days: the workers sign with the real clock while the sandbox's jumps.
// PAYOUT_CHAOS_WORKERS (4) worker processes (scripts/payout-chaos-worker.mjs) take keys from
// the queue here (a few in flight each, over stdin) and call `payouts.send()` on the column's
// store; 10% of the keys are handed to two workers at once. Warm spares replace dead workers.
//
//   A. The main batch (80%): 8% of keys carry a kill point, where their worker SIGKILLs itself:
//      after the record (`add`), after the take (the send recorded, no request yet), a few ms
//      into the request, or once the sandbox answered and before the kit reads the answer.
//      A dead worker's unfinished keys (the one it died on too) go back to the queue, to be
//      sent again by another process. Answers are lost (15%: the payout made, its key's answer
//      kept, the connection reset), and the sandbox's answer switches in phases: normal,
//      INPROGRESS then SUCCESS, AMBIGUOUS then SUCCESS, INPROGRESS then FAILED, AMBIGUOUS then
//      FAILED (settling 2 s later), normal.
//   B. resolve() inside the key window (settleAfter 0), from two processes at once.
//   A'. The late batch (20%, half the pairs): 40% of keys carry a kill point (after the record,
//      after the take, after the answer), 40% of answers lost; the key a worker died on is left
//      as the kill left it (never sent again before the jump).
//   C. The sandbox's clock jumps 25 h (it forgets every Idempotency-Key; its due settlements
//      run) and so does the kit's (createPayouts `now`; in the third column it does not, 25 h
//      behind): resolve() past the window (two processes at once, then one) must never send
//      an intent again: a `pending` one (never sent) is sent, one with a payout id is
//      retrieved, one without is looked for in the list (a unique amount matches, a pair's
//      may not: needs_review). New payouts answer AMBIGUOUS
//      (settling 2 s later) and 15% of answers are lost. Rounds until nothing is open (at
//      most 5), the sandbox's due work run between them.
//
// Which key made which payout: the sandbox's own records do not say (a payout row has no
// Idempotency-Key, and a lost answer leaves the caller nothing). So this process wraps
// node:http's createServer (before mock.listen, which looks node:http up at run time) so that
// each request is handled inside an AsyncLocalStorage scope holding its Idempotency-Key
// header, and wraps `set` of mock.state.payouts (the live Map the service writes a new payout
// to, synchronously inside the request) to note the key of the request that made each payout.
// Exact, whatever the amounts and whether the answer was lost; checked on every run: a payout
// with no key noted, or whose amount is not its key's, fails the run.
//
// The table per column: intents; sends handed out; kills by point; lost answers; payouts made,
// per key (max, must be ≤ 1) and keys paid twice (must be 0); intents lost (a key handed out
// with no intent in the store: must be 0); the final states; intents left open (must be 0:
// only needs_review may be left, each printed with its note); how intents were matched; list
// guesses that took another key's payout (must be 0: a match is taken only when no other open
// intent could be its); reviews whose note names the clock (inside the window a clock that
// disagrees with the service's never re-sends: expected in the third column only); resolve
// rounds; wall time. Exit 1 on: a key with two payouts, a lost
// intent, an intent left pending/unknown/in_progress/ambiguous, a list guess that took another
// key's payout, a `sent` intent whose payoutId is not a payout the sandbox made with its amount
// (or not SUCCESS), two intents holding one payoutId, a `failed` intent whose own key made a
// SUCCESS payout, an intent of a unique amount left for review though its key's payout is in
// the list (unless its note names the clock), a review naming the clock in the first two
// columns, a send() that threw, or the attribution above failing. Every child and server is stopped whatever happens.
//
// Sizes (env): PAYOUT_CHAOS_INTENTS (200), PAYOUT_CHAOS_WORKERS (4), PAYOUT_CHAOS_PAIRS (10),
// PAYOUT_CHAOS_COLUMNS (a comma list: postgres,redis,behind).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PaymentsClient } from 'business-payments';
import { postgresStore } from 'business-payments/fulfillment/postgres';
import { redisStore } from 'business-payments/fulfillment/redis';
import { createPayouts } from 'business-payments/payouts';
import { createMockService } from 'business-payments/testing';
import pg from 'pg';
import { createClient } from 'redis';
import { chaosClock, childProcesses, printTable, runColumns, servedIdempotencyKey } from './chaos-kit.mjs';

const env = process.env;
const INTENTS = Number(env.PAYOUT_CHAOS_INTENTS ?? 200);
const WORKERS = Number(env.PAYOUT_CHAOS_WORKERS ?? 4);
const PAIRS = Number(env.PAYOUT_CHAOS_PAIRS ?? 10);
const LATE_SHARE = 0.2;
const KILL_SHARE = 0.08;
const LATE_KILL_SHARE = 0.4;
const DUP_SHARE = 0.1;
const LOSE = 0.15;
const LATE_LOSE = 0.4;
const SETTLE_MS = 2000;
const JUMP_MS = 25 * 3_600_000;
const IN_FLIGHT = 4; // sends in flight per worker
const SPARES = 2;
const COLUMNS = ['postgres', 'redis', 'behind'].filter((c) => !env.PAYOUT_CHAOS_COLUMNS || env.PAYOUT_CHAOS_COLUMNS.split(',').includes(c));
const WORKER_SCRIPT = fileURLToPath(new URL('./payout-chaos-worker.mjs', import.meta.url));
const OPEN = ['pending', 'unknown', 'in_progress', 'ambiguous'];
const { seconds, sleep, log, pick } = chaosClock();
const round2 = (n) => Math.round(n * 100) / 100;

if (INTENTS < 4 * PAIRS + 10) {
  console.error(`PAYOUT_CHAOS_INTENTS must be at least 4 × PAYOUT_CHAOS_PAIRS + 10 (${4 * PAIRS + 10})`);
  process.exit(1);
}

// ---- which Idempotency-Key made each payout (see the header) ----
const servedKey = servedIdempotencyKey();

// ---- the children, stopped whatever happens ----
const { children, killChildren } = childProcesses();

// ---- the workers: a slot per worker, warm spares to replace the dead ----
function workerFleet({ kind, urls, sandbox, creds, on }) {
  const slots = [];
  const spares = [];
  let closing = false;
  let commands = 0;
  const waiting = new Map(); // command id → { resolve, reject, w }
  const spawnOne = () => {
    const child = spawn(process.execPath, [WORKER_SCRIPT], {
      env: {
        ...process.env,
        PC_STORE: kind,
        PC_PG_URL: urls.pgUrl,
        PC_REDIS_URL: urls.redisUrl,
        PC_SANDBOX_URL: sandbox.url,
        PC_CREDS: JSON.stringify(creds),
      },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    children.add(child);
    child.stdin.on('error', () => {}); // a worker that died (its exit is what counts)
    const w = { child, alive: true, isReady: false, inflight: new Map(), dying: undefined };
    w.ready = new Promise((resolve, reject) => {
      let buffer = '';
      child.stdout.on('data', (data) => {
        buffer += data;
        for (let nl; (nl = buffer.indexOf('\n')) >= 0;) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          const [what, a = '', b] = line.split(' ');
          const rest = line.slice(what.length + a.length + 2);
          if (what === 'READY') {
            w.isReady = true;
            resolve();
          } else if (what === 'DONE') on.done(w, a, b);
          else if (what === 'DYING') {
            w.dying = { key: a, point: b };
            on.dying(w, a, b);
          } else if (what === 'REPORT' || (what === 'ERROR' && waiting.has(a))) {
            const wait = waiting.get(a);
            waiting.delete(a);
            if (what === 'REPORT') wait?.resolve(JSON.parse(rest));
            else wait?.reject(new Error(`worker: ${rest}`));
          } else if (what === 'ERROR') on.error(w, a, rest);
          else if (line) console.log(`worker ${child.pid}: ${line}`);
        }
      });
      child.once('exit', () => reject(new Error('a worker exited before READY')));
    });
    w.ready.catch(() => {});
    w.exited = new Promise((resolve) => child.once('exit', resolve));
    child.once('exit', () => {
      children.delete(child);
      w.alive = false;
      for (const [id, wait] of waiting) {
        if (wait.w !== w) continue;
        waiting.delete(id);
        wait.reject(new Error(`worker ${child.pid} died during ${id}`));
      }
      if (closing) return;
      const slot = slots.indexOf(w);
      if (slot >= 0) {
        slots[slot] = takeSpare();
        void slots[slot].ready.then(
          () => on.ready(),
          () => {},
        );
      }
      on.exit(w);
    });
    return w;
  };
  const takeSpare = () => {
    while (spares.length && !spares[0].alive) spares.shift();
    const w = spares.shift() ?? spawnOne();
    while (!closing && spares.length < SPARES) spares.push(spawnOne());
    return w;
  };
  return {
    async start() {
      for (let i = 0; i < WORKERS; i++) slots.push(spawnOne());
      while (spares.length < SPARES) spares.push(spawnOne());
      await Promise.all(slots.map((w) => w.ready));
    },
    /** The workers up and ready now. */
    active: () => slots.filter((w) => w.alive && w.isReady),
    send(w, line) {
      w.child.stdin.write(`${line}\n`);
    },
    /** A command with an answer (RESOLVE) on a ready worker. */
    async command(w, words) {
      const id = `c${++commands}`;
      const answer = new Promise((resolve, reject) => waiting.set(id, { resolve, reject, w }));
      w.child.stdin.write(`${words[0]} ${id} ${words.slice(1).join(' ')}\n`);
      return answer;
    },
    /** Every slot's worker alive and ready (replacements started). */
    async settled() {
      const deadline = performance.now() + 60_000;
      while (slots.some((w) => !w.alive || !w.isReady)) {
        if (performance.now() > deadline) throw new Error('a worker does not start (see its output above)');
        await Promise.all(slots.map((w) => w.ready.catch(() => {})));
        await sleep(10);
      }
    },
    async close() {
      closing = true;
      for (const w of [...slots, ...spares]) {
        if (!w.alive) continue;
        w.child.kill('SIGKILL');
        await w.exited;
      }
    },
  };
}

// ---- one column ----
async function run(column, urls) {
  const runStarted = performance.now();
  log(`--- ${column} ---`);
  // The third column: postgres, its resolvers' clock 25 h behind the sandbox's after the jump.
  const behind = column === 'behind';
  const kind = behind ? 'postgres' : column;
  const stats = {
    handed: 0,
    dupSends: 0,
    requeued: 0,
    kills: { record: 0, taken: 0, inflight: 0, sent: 0 },
    lost: 0,
    sendErrors: [],
    resolveB: '',
    roundsC: 0,
    resolveErrors: 0,
  };

  // The stores: the column's, fresh.
  let db;
  let redis;
  let store;
  if (kind === 'postgres') {
    db = new pg.Pool({ connectionString: urls.pgUrl, max: 4 });
    db.on('error', () => {});
    await db.query('DROP TABLE IF EXISTS business_payments_fulfillment_payouts, business_payments_fulfillment_payout_ids');
    store = postgresStore(db);
  } else {
    redis = await createClient({ url: urls.redisUrl }).connect();
    await redis.flushAll();
    store = redisStore(redis);
  }
  await store.payouts.list('pending', 1); // the tables made once, before the workers race to

  // The sandbox, on a clock that jumps; the key that made each payout noted.
  const offset = { ms: 0 };
  const mock = createMockService({
    now: () => Date.now() + offset.ms,
    rateLimitPerMinute: 100_000,
    toleranceSeconds: 3 * 86_400,
    onRequest: (entry) => void (entry.status === 0 && stats.lost++),
    payoutBehaviour: { answer: 'normal', settleAs: 'SUCCESS', settleAfterMs: SETTLE_MS, loseAnswer: LOSE },
  });
  mock.state.merchants[0].currencies.TZS.balance = 1e9;
  const madeFor = new Map(); // payout id → { key, answered }
  let lastUnsettled = 0; // when (performance.now()) the last INPROGRESS / AMBIGUOUS payout was made
  const rows = mock.state.payouts;
  const setRow = rows.set;
  rows.set = function (id, row) {
    if (!this.has(id)) madeFor.set(id, { key: servedKey(), answered: row.status });
    if (row.status === 'INPROGRESS' || row.status === 'AMBIGUOUS') lastUnsettled = performance.now();
    return setRow.call(this, id, row);
  };
  const sandbox = await mock.listen({ port: 0 });
  const creds = mock.credentials.sandbox;

  // The plan: keys, amounts, batches, kill points, duplicates.
  const tag = behind ? 'bh' : kind === 'postgres' ? 'pg' : 'rd';
  const plan = [];
  const singles = INTENTS - 2 * PAIRS;
  for (let i = 0; i < singles; i++) plan.push({ key: `${tag}-${String(i).padStart(4, '0')}`, amount: round2(100 + i / 100) });
  const latePairs = Math.ceil(PAIRS / 2);
  for (let j = 0; j < PAIRS; j++) {
    for (const side of ['a', 'b']) plan.push({ key: `${tag}-p${j}${side}`, amount: 500 + j, pair: j, late: j >= PAIRS - latePairs });
  }
  const lateSingles = Math.max(0, Math.round(INTENTS * LATE_SHARE) - 2 * latePairs);
  for (const job of plan
    .filter((j) => j.pair === undefined)
    .sort(() => Math.random() - 0.5)
    .slice(0, lateSingles))
    job.late = true;
  for (const job of plan) {
    const [share, points] = job.late
      ? [LATE_KILL_SHARE, ['record', 'taken', 'sent']]
      : [KILL_SHARE, ['record', 'taken', 'inflight', 'sent']];
    job.point = Math.random() < share ? pick(points) : '-';
    job.dup = Math.random() < DUP_SHARE;
  }
  const amountOf = new Map(plan.map((j) => [j.key, j.amount]));
  const main = plan.filter((j) => !j.late).sort(() => Math.random() - 0.5);
  const late = plan.filter((j) => j.late).sort(() => Math.random() - 0.5);

  // ---- the batch runner: keys handed out, a dead worker's unfinished keys queued again ----
  let batch; // { queue, finished, total, late, phases, handedFirst, resolve }
  const pump = () => {
    if (!batch) return;
    for (const w of fleet.active()) {
      while (w.inflight.size < IN_FLIGHT && batch.queue.length) {
        const job = batch.queue.shift();
        if (batch.finished.has(job.key)) continue;
        if (!job.again) {
          const done = batch.handedFirst++ / batch.total;
          while (batch.phases.length && batch.phases[0][0] <= done) mock.payoutBehaviour(batch.phases.shift()[1]);
        }
        give(w, job, job.again ? '-' : job.point);
        if (job.dup && !job.again) {
          const others = fleet.active().filter((o) => o !== w && !o.inflight.has(job.key));
          if (others.length) {
            give(pick(others), job, '-');
            stats.dupSends++;
          }
        }
      }
    }
    if (batch.finished.size === batch.total && fleet.active().every((w) => w.inflight.size === 0) && !batch.queue.length) {
      batch.resolve();
    }
  };
  const give = (w, job, point) => {
    w.inflight.set(job.key, job);
    stats.handed++;
    fleet.send(w, `SEND ${job.key} ${job.amount} ${point}`);
  };
  const fleet = workerFleet({
    kind,
    urls,
    sandbox,
    creds,
    on: {
      ready: () => pump(),
      done(w, key) {
        w.inflight.delete(key);
        batch?.finished.add(key);
        pump();
      },
      dying(w, key, point) {
        stats.kills[point]++;
      },
      error(w, key, message) {
        w.inflight.delete(key);
        stats.sendErrors.push(`${key}: ${message}`);
        batch?.finished.add(key);
        pump();
      },
      exit(w) {
        if (!batch) return;
        for (const [key, job] of w.inflight) {
          if (batch.finished.has(key)) continue;
          // The late batch: the key its worker died on is left as the kill left it.
          if (batch.late && w.dying?.key === key) batch.finished.add(key);
          else {
            batch.queue.unshift({ ...job, again: true });
            stats.requeued++;
          }
        }
        w.inflight.clear();
        pump();
      },
    },
  });
  await fleet.start();
  log(`${WORKERS} workers and ${SPARES} spares up (${seconds(runStarted)})`);
  const runBatch = (jobs, { late: isLate, phases }) =>
    new Promise((resolve) => {
      batch = { queue: [...jobs], finished: new Set(), total: jobs.length, late: isLate, phases: [...phases], handedFirst: 0, resolve };
      pump();
    }).then(() => (batch = undefined));

  // A resolve round on `processes` workers at once; the kit's clock at Date.now() + offsetMs.
  const resolveRound = async (offsetMs, processes) => {
    await fleet.settled();
    const reports = await Promise.all(
      fleet
        .active()
        .slice(0, processes)
        .map((w) => fleet.command(w, ['RESOLVE', offsetMs])),
    );
    const changed = reports.flatMap((r) => r.changed);
    for (const r of reports) {
      stats.resolveErrors += r.errors.length;
      for (const e of r.errors.slice(0, 3)) log(`  resolve error ${e.key}: ${e.error}`);
    }
    const moves = new Map();
    for (const c of changed) moves.set(`${c.from}→${c.to}`, (moves.get(`${c.from}→${c.to}`) ?? 0) + 1);
    const open = Math.min(...reports.map((r) => r.open));
    log(`  resolve ×${processes}: ${changed.length} changes ${JSON.stringify(Object.fromEntries(moves))}, ${open} open`);
    return { changes: changed.length, open };
  };

  // A. The main batch, the sandbox's answer switching in phases.
  await runBatch(main, {
    late: false,
    phases: [
      [0, { answer: 'normal', loseAnswer: LOSE }],
      [0.3, { answer: 'INPROGRESS', settleAs: 'SUCCESS' }],
      [0.5, { answer: 'AMBIGUOUS', settleAs: 'SUCCESS' }],
      [0.65, { answer: 'INPROGRESS', settleAs: 'FAILED' }],
      [0.75, { answer: 'AMBIGUOUS', settleAs: 'FAILED' }],
      [0.85, { answer: 'normal', settleAs: 'SUCCESS' }],
    ],
  });
  log(`main batch: ${main.length} keys sent (${seconds(runStarted)})`);

  // B. Inside the key window, from two processes at once, once the main batch's payouts settled.
  mock.payoutBehaviour({ answer: 'normal', loseAnswer: LOSE });
  await sleep(Math.max(0, lastUnsettled + SETTLE_MS + 200 - performance.now()));
  const b = await resolveRound(0, 2);
  stats.resolveB = `${b.changes} changes, ${b.open} open`;

  // A'. The late batch: more kills, more lost answers; the killed keys left as they are.
  await runBatch(late, {
    late: true,
    phases: [
      [0, { answer: 'INPROGRESS', settleAs: 'SUCCESS', loseAnswer: LATE_LOSE }],
      [0.5, { answer: 'normal' }],
    ],
  });
  const openBeforeJump = (await Promise.all(OPEN.map((s) => store.payouts.list(s, 100_000)))).flat().length;
  log(`late batch: ${late.length} keys sent; ${openBeforeJump} intents open before the jump (${seconds(runStarted)})`);

  // C. 25 h later: the sandbox forgot every key; its due settlements run; resolve past the window.
  offset.ms += JUMP_MS;
  await mock.runDue();
  mock.payoutBehaviour({ answer: 'AMBIGUOUS', settleAs: 'SUCCESS', loseAnswer: LOSE });
  for (let round = 1; round <= 5; round++) {
    stats.roundsC = round;
    const c = await resolveRound(behind ? 0 : offset.ms, round === 1 ? 2 : 1);
    if (!c.open) break;
    await sleep(SETTLE_MS + 200);
    await mock.runDue();
  }
  await fleet.close();
  await mock.runDue();

  // ---- the count ----
  const kit = createPayouts({ client: new PaymentsClient({ environment: 'sandbox', ...creds, baseUrl: sandbox.url }), store });
  const intents = await kit.intents({ limit: 1_000_000 });
  const byKey = new Map(intents.map((i) => [i.key, i]));
  const payoutsOf = new Map(); // key → payout ids it made
  const unattributed = [];
  const wrongAmount = [];
  for (const [id, { key }] of madeFor) {
    if (!key || !amountOf.has(key)) {
      unattributed.push(id);
      continue;
    }
    payoutsOf.set(key, [...(payoutsOf.get(key) ?? []), id]);
    if (rows.get(id)?.amount !== amountOf.get(key)) wrongAmount.push(`${id} (${rows.get(id)?.amount}, key ${key})`);
  }
  const twice = [...payoutsOf].filter(([, ids]) => ids.length > 1);
  const maxPerKey = Math.max(0, ...[...payoutsOf.values()].map((ids) => ids.length));
  const lostIntents = plan.filter((j) => !byKey.has(j.key)).map((j) => j.key);
  const states = {};
  for (const i of intents) states[i.state] = (states[i.state] ?? 0) + 1;
  const leftOpen = intents.filter((i) => OPEN.includes(i.state));
  const review = intents.filter((i) => i.state === 'needs_review');
  const matched = { answer: 0, retrieve: 0, list: 0 };
  const holders = new Map();
  const badSent = [];
  const wrongGuess = [];
  const paidButFailed = [];
  const unmatched = [];
  const clockReviews = [];
  const pairKeys = new Set(plan.filter((j) => j.pair !== undefined).map((j) => j.key));
  for (const i of intents) {
    if (i.payoutId) holders.set(i.payoutId, [...(holders.get(i.payoutId) ?? []), i.key]);
    if (i.state === 'sent' || i.state === 'failed') matched[i.matchedBy] = (matched[i.matchedBy] ?? 0) + 1;
    if (i.state === 'sent') {
      const row = rows.get(i.payoutId ?? '');
      if (!row || row.amount !== i.amount || row.status !== 'SUCCESS')
        badSent.push(`${i.key} holds ${i.payoutId} (${row ? `${row.amount} ${row.status}` : 'no such payout'})`);
    }
    const made = madeFor.get(i.payoutId ?? '');
    if (i.matchedBy === 'list' && made && made.key !== i.key)
      wrongGuess.push(`${i.key} (${i.state}) took ${made.key}'s payout ${i.payoutId}`);
    // Inside the window, a clock that disagrees with the service's is for a person: never a re-send.
    const forClock = i.state === 'needs_review' && /clock/i.test(i.note ?? '');
    if (forClock) clockReviews.push(`${i.key}: ${i.note}`);
    // An amount no other intent has: its payout, when one was made, is the list's one match.
    else if (i.state === 'needs_review' && !pairKeys.has(i.key) && payoutsOf.get(i.key)?.length)
      unmatched.push(`${i.key}: ${payoutsOf.get(i.key).join(', ')} (${i.note})`);
    if (i.state === 'failed' && (payoutsOf.get(i.key) ?? []).some((id) => rows.get(id)?.status === 'SUCCESS'))
      paidButFailed.push(`${i.key}: its payout ${payoutsOf.get(i.key).join(', ')} is SUCCESS`);
  }
  const shared = [...holders].filter(([, keys]) => keys.length > 1).map(([id, keys]) => `${id}: ${keys.join(', ')}`);
  const answered = { INPROGRESS: 0, AMBIGUOUS: 0 };
  for (const { answered: a } of madeFor.values()) if (a in answered) answered[a]++;

  await sandbox.close();
  await mock.close();
  await redis?.quit();
  await db?.end();

  const row = {
    column: behind ? 'resolver clock 25 h behind' : kind,
    intents: `${plan.length} (${main.length} + ${late.length} late; ${PAIRS} pairs)`,
    'sends handed out': `${stats.handed} (${stats.dupSends} twice at once, ${stats.requeued} again)`,
    'kills record/taken/inflight/sent': Object.values(stats.kills).join('/'),
    'lost answers': stats.lost,
    'INPROGRESS / AMBIGUOUS answers': `${answered.INPROGRESS} / ${answered.AMBIGUOUS}`,
    'payouts made': madeFor.size,
    'payouts per key (max)': maxPerKey,
    'keys paid twice': twice.length,
    'payouts unattributed': unattributed.length,
    'intents lost': lostIntents.length,
    'open before the jump': openBeforeJump,
    'sent / failed / needs_review': `${states.sent ?? 0} / ${states.failed ?? 0} / ${states.needs_review ?? 0}`,
    'left open': leftOpen.length,
    'matched answer/retrieve/list': `${matched.answer}/${matched.retrieve}/${matched.list}`,
    'list guesses, wrong key': wrongGuess.length,
    'reviews naming the clock': clockReviews.length,
    'resolve in window': stats.resolveB,
    'resolve rounds past it': stats.roundsC,
    'resolve errors (retried)': stats.resolveErrors,
    time: seconds(runStarted),
  };
  const problems = [];
  const sample = (list) => (list.length ? `: ${list.slice(0, 5).join('; ')}${list.length > 5 ? '; …' : ''}` : '');
  if (twice.length)
    problems.push(`${twice.length} keys made more than one payout${sample(twice.map(([k, ids]) => `${k}: ${ids.join(', ')}`))}`);
  if (lostIntents.length) problems.push(`${lostIntents.length} intents lost${sample(lostIntents)}`);
  if (leftOpen.length) problems.push(`${leftOpen.length} intents left open${sample(leftOpen.map((i) => `${i.key} ${i.state}`))}`);
  if (wrongGuess.length) problems.push(`${wrongGuess.length} list guesses took another key's payout${sample(wrongGuess)}`);
  if (badSent.length) problems.push(`${badSent.length} sent intents without their payout${sample(badSent)}`);
  if (shared.length) problems.push(`${shared.length} payouts held by two intents${sample(shared)}`);
  if (unmatched.length)
    problems.push(`${unmatched.length} intents of a unique amount left for review though their payout is in the list${sample(unmatched)}`);
  // The clocks of the other columns agree with the sandbox's: a review for the clock is a fault there.
  if (!behind && clockReviews.length) problems.push(`${clockReviews.length} intents for review naming the clock${sample(clockReviews)}`);
  if (paidButFailed.length) problems.push(`${paidButFailed.length} failed intents whose key was paid${sample(paidButFailed)}`);
  if (stats.sendErrors.length) problems.push(`${stats.sendErrors.length} send() calls threw${sample(stats.sendErrors)}`);
  if (unattributed.length)
    problems.push(`${unattributed.length} payouts made by no key of the plan (attribution broken)${sample(unattributed)}`);
  if (wrongAmount.length)
    problems.push(`${wrongAmount.length} payouts whose amount is not their key's (attribution broken)${sample(wrongAmount)}`);
  const notes = [
    ...review.map((i) => {
      const made = payoutsOf.get(i.key) ?? [];
      const note = i.note.replace(/ Look it up on the dashboard;.*$/, ' (Look it up…)');
      return `${i.key} (${i.amount}): ${note} [made for its key: ${made.length ? made.map((id) => `${id} ${rows.get(id)?.status}`).join(', ') : 'no payout'}]`;
    }),
  ];
  return { row, problems, notes, wrongGuess };
}

const { failed, results } = await runColumns({ name: 'test:payout-chaos', columns: COLUMNS, run, killChildren, log });
printTable(results.map((r) => r.row));
for (const r of results) {
  if (r.notes.length) console.log(`\n${r.row.column}: needs_review`);
  for (const note of r.notes) console.log(`  ${note}`);
  for (const guess of r.wrongGuess) console.log(`  list guess: ${guess}`);
}
console.log(`test:payout-chaos ${failed ? 'FAILED' : 'passed'} in ${seconds()}`);
process.exit(failed ? 1 : 0);
