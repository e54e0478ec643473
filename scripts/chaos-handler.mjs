// One handler process of the chaos proof (scripts/chaos.mjs): the fulfillment kit over the
// shared store, behind a node:http endpoint. POST /ipn → handleWebhook; GET /return?trx= →
// verify + handleVerified (the return page); POST /reconcile?since= → reconcile. It prints
// `READY`, and `INPAID <trx>` / `OUTPAID <trx>` around the window where onPaid has written its
// fulfilment and may stall (the parent SIGKILLs it there).
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { PaymentsClient } from 'business-payments';
import { createFulfillment } from 'business-payments/fulfillment';

const env = process.env;
const kind = env.CHAOS_STORE; // 'postgres' | 'redis'
const port = Number(env.CHAOS_PORT);
const stallP = Number(env.CHAOS_STALL_P ?? '0.2');
const lease = Number(env.CHAOS_LEASE_MS ?? '4000');
const creds = JSON.parse(env.CHAOS_CREDS);
const say = (line) => process.stdout.write(`${line}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const stall = () => (Math.random() < stallP ? sleep(150 + Math.random() * 450) : undefined);

const client = new PaymentsClient({ environment: 'sandbox', ...creds, baseUrl: env.CHAOS_SANDBOX_URL, maxRetries: 2 });

const pg = (await import('pg')).default;
const pool = new pg.Pool({ connectionString: env.CHAOS_PG_URL, max: 20 });
pool.on('error', () => {});
let store, onPaid, onFailed, redis;
if (kind === 'postgres') {
  const { postgresStore } = await import('business-payments/fulfillment/postgres');
  store = postgresStore(pool);
  onPaid = async (tx, { db, source }) => {
    if (tx.status !== 'success') throw new Error(`onPaid with status ${tx.status}`);
    await db.query('INSERT INTO chaos_fulfilments (trx_id, pid, source) VALUES ($1, $2, $3)', [tx.trx_id, process.pid, source]);
    say(`INPAID ${tx.trx_id}`);
    await stall();
    say(`OUTPAID ${tx.trx_id}`);
  };
  onFailed = async (tx, { db }) => {
    await db.query('INSERT INTO chaos_failures (trx_id, pid) VALUES ($1, $2)', [tx.trx_id, process.pid]);
  };
} else {
  const { createClient } = await import('redis');
  const { redisStore } = await import('business-payments/fulfillment/redis');
  redis = await createClient({ url: env.CHAOS_REDIS_URL }).connect();
  store = redisStore(redis);
  onPaid = async (tx, { source }) => {
    if (tx.status !== 'success') throw new Error(`onPaid with status ${tx.status}`);
    const run = randomUUID();
    // Start / end markers in one list, in Redis's own order: the parent finds overlaps.
    await redis.rPush('chaos:log', `start ${tx.trx_id} ${process.pid} ${run}`);
    await redis.rPush('chaos:fulfilled', `${tx.trx_id} ${process.pid} ${source}`);
    say(`INPAID ${tx.trx_id}`);
    await stall();
    await redis.rPush('chaos:log', `end ${tx.trx_id} ${process.pid} ${run}`);
    say(`OUTPAID ${tx.trx_id}`);
  };
  onFailed = async (tx) => {
    await redis.rPush('chaos:failed', `${tx.trx_id} ${process.pid}`);
  };
}

const kit = createFulfillment({ environment: 'sandbox', secret: creds.webhookSecret, client, store, lease, onPaid, onFailed });

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

const server = createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  try {
    if (req.method === 'POST' && url.pathname === '/ipn') {
      const payload = await body(req);
      const { status, body: text } = await kit.handleWebhook({ payload, headers: req.headers });
      return send(res, status, text);
    }
    if (url.pathname === '/return') {
      const trx = url.searchParams.get('trx');
      const tx = await client.payments.verify(trx);
      const result = await kit.handleVerified(tx, { merchantRef: url.searchParams.get('ref') ?? undefined });
      return send(res, 200, JSON.stringify({ result }));
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
server.listen(port, '127.0.0.1', () => say('READY'));
