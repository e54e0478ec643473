// One process of the sale simulation (scripts/sale.mjs): a merchant's web process (SALE_ROLE
// `web`: checkouts, the webhook, the return page) or its one worker (`worker`: what wakes the
// inbox in this column), the fulfillment kit over the column's PostgreSQL store, as a merchant
// would run them. Every process's client shares the store's request budget.
//
//   POST /checkout {order}  → newAttempt + payments.create (the merchant's call: a 429 is
//                              answered `{ refused: true }`, counted by the parent)
//   POST /webhook           → handleWebhook (recorded in the inbox, then answered)
//   GET  /return?trx=&ref=  → fulfillment.outcome(trx, { merchantRef: ref, wait }) (the docs' return page)
//   POST /push {id}         → (worker, push column) process(id): 2xx done, 503 try again
//
// The trigger (SALE_TRIGGER): `poll` (web processes process what they recorded at once, the
// worker runs work()), `pg-boss` (the job sent in the inbox row's transaction; the worker
// runs boss.work), `bullmq` (a Queue in every web process; a Worker here), `push`
// (queueTrigger posting `{ id }` to the parent's push queue, which posts it to this worker).
// onPaid records (order_ref, trx_id, at) through ctx.db: it commits with the claim.
// It prints `READY` once it listens.
import { createServer } from 'node:http';
import { PaymentsClient } from 'business-payments';
import { createFulfillment, queueTrigger } from 'business-payments/fulfillment';
import { postgresStore } from 'business-payments/fulfillment/postgres';
import pg from 'pg';

const env = process.env;
const role = env.SALE_ROLE; // 'web' | 'worker'
const trigger = env.SALE_TRIGGER; // 'poll' | 'pg-boss' | 'bullmq' | 'push'
const creds = JSON.parse(env.SALE_CREDS);
const queueName = 'business-payments-inbox';

// A verify waiting for room in the budget holds its claim's connection: the pool is sized for
// the requests in flight, and the budget's own queries (each second per waiting call).
const pool = new pg.Pool({ connectionString: env.SALE_PG_URL, max: 16 });
pool.on('error', () => {});
const store = postgresStore(pool);
const warnings = [];
const client = new PaymentsClient({
  environment: 'sandbox',
  ...creds,
  webhookSecret: undefined,
  baseUrl: env.SALE_SANDBOX_URL,
  requestBudget: store.budget,
  logger: { debug() {}, info() {}, warn: (line) => warnings.push(line), error: (line) => warnings.push(line) },
});

// ---- the trigger of this column ----
let engine;
let kitTrigger;
if (trigger === 'pg-boss') {
  const [{ PgBoss }, { pgBossTrigger }] = await Promise.all([import('pg-boss'), import('business-payments/fulfillment/pg-boss')]);
  // Only the worker supervises and migrates (the parent made the schema and the queue first).
  const worker = role === 'worker';
  engine = new PgBoss({ connectionString: env.SALE_PG_URL, max: 3, supervise: worker, schedule: false, migrate: false });
  engine.on('error', () => {});
  await engine.start();
  kitTrigger = pgBossTrigger(engine, { queue: queueName });
} else if (trigger === 'bullmq') {
  const [{ Queue }, { bullmqTrigger }] = await Promise.all([import('bullmq'), import('business-payments/fulfillment/bullmq')]);
  const { hostname, port } = new URL(env.SALE_REDIS_URL);
  engine = { connection: { host: hostname, port: Number(port), maxRetriesPerRequest: null } };
  // A job that throws ('busy', 'retry') is tried again on a backoff no shorter than the kit's
  // retryDelay, at least its maxAttempts times (as the docs say).
  const defaultJobOptions = { attempts: 12, backoff: { type: 'exponential', delay: 5_000 }, removeOnComplete: 1_000 };
  if (role === 'web') kitTrigger = bullmqTrigger(new Queue(queueName, { connection: engine.connection, defaultJobOptions }));
} else if (trigger === 'push') {
  kitTrigger = queueTrigger({
    send: async (message) => {
      const res = await fetch(env.SALE_QUEUE_URL, { method: 'POST', body: JSON.stringify(message) });
      if (!res.ok) throw new Error(`push queue answered ${res.status}`);
    },
  });
}

const kit = createFulfillment({
  environment: 'sandbox',
  secret: creds.webhookSecret,
  client,
  store,
  // onPaid is one insert: a killed process keeps others out of its claims and inbox records for
  // 30 s, not the default 5 minutes.
  lease: 30_000,
  ...(kitTrigger ? { trigger: kitTrigger } : {}),
  onPaid: (tx, { db }) =>
    db.query('INSERT INTO sale_fulfilled (order_ref, trx_id, at) VALUES ($1, $2, $3)', [tx.order_ref, tx.trx_id, Date.now()]),
});

// ---- the worker: what wakes the inbox ----
const stop = new AbortController();
if (role === 'worker') {
  if (trigger === 'poll') void kit.work({ signal: stop.signal });
  if (trigger === 'pg-boss') {
    await engine.work(queueName, { batchSize: 1, localConcurrency: 4, pollingIntervalSeconds: 0.5 }, ([job]) => settleJob(job.data.id));
  }
  if (trigger === 'bullmq') {
    const { Worker } = await import('bullmq');
    const worker = new Worker(queueName, (job) => settleJob(job.data.id), { connection: engine.connection, concurrency: 4 });
    worker.on('error', () => {});
  }
}

// An engine retries a job whose handler throws: 'busy' (another process holds it) and 'retry'
// (it failed, due again later) are thrown; 'done', 'dead' and 'unknown' are answered.
async function settleJob(id) {
  const result = await kit.process(id);
  if (result === 'busy' || result === 'retry') throw new Error(`inbox record ${id}: ${result}`);
  return result;
}

// ---- the endpoints ----
const body = async (req) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
};
const json = (res, status, value) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));

async function checkout(req, res) {
  const { order } = JSON.parse(await body(req));
  const attempt = await kit.newAttempt(order);
  try {
    const payment = await client.payments.create(
      { payment_amount: 25, currency_code: 'USD', ref_trx: attempt.ref_trx, ipn_url: env.SALE_IPN_URL },
      { idempotencyKey: attempt.idempotencyKey },
    );
    json(res, 200, { trx_id: payment.trx_id, ref_trx: attempt.ref_trx });
  } catch (error) {
    // The merchant's own call refused by the service's rate limit: what the budget must prevent.
    if (error?.status === 429) return json(res, 200, { refused: true });
    throw error;
  }
}

async function route(req, res) {
  const url = new URL(req.url, 'http://sale.test');
  if (req.method === 'POST' && url.pathname === '/checkout') return checkout(req, res);
  if (req.method === 'POST' && url.pathname === '/webhook') {
    const answer = await kit.handleWebhook({ payload: await body(req), headers: req.headers });
    return res.writeHead(answer.status).end();
  }
  if (req.method === 'GET' && url.pathname === '/return') {
    const { trx, ref } = Object.fromEntries(url.searchParams);
    const outcome = await kit.outcome(trx, { merchantRef: ref, wait: 10_000 });
    return json(res, 200, { outcome });
  }
  if (req.method === 'POST' && url.pathname === '/push') {
    const { id } = JSON.parse(await body(req));
    const result = await kit.process(id);
    return res.writeHead(result === 'busy' || result === 'retry' ? 503 : 200).end(result);
  }
  if (req.method === 'GET' && url.pathname === '/warnings') return json(res, 200, warnings);
  res.writeHead(404).end();
}

const server = createServer((req, res) => {
  route(req, res).catch((error) => {
    if (!res.headersSent) json(res, 500, { error: String(error?.message ?? error) });
  });
});
server.listen(Number(env.SALE_PORT), '127.0.0.1', () => process.stdout.write('READY\n'));
