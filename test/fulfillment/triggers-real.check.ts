// The triggers on real engines (`npm run test:stores`, scripts/stores.mjs, beside
// stores-real.check.ts): pg-boss 12 on PostgreSQL with postgresStore, BullMQ 6 on Redis with
// redisStore, queueTrigger on PostgreSQL. pg-boss: a delivery whose transaction rolls back
// leaves no job and no row; a web process SIGKILLed between the inbox insert (its job sent in
// that transaction) and the COMMIT leaves neither, and a committed delivery always has its
// job; pg-boss's worker calling process(id) fulfils. Each trigger: the engine delivering the
// same job 3 times (the worker failing it twice after processing) fulfils once. Not a
// *.test.ts: plain `npm test` never runs it.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Queue, Worker } from 'bullmq';
import { build } from 'esbuild';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { VerifiedTransaction } from '../../src/index.js';
import { createFulfillment, queueTrigger, type FulfillmentTrigger } from '../../src/fulfillment.js';
import { bullmqTrigger } from '../../src/fulfillment-bullmq.js';
import { pgBossTrigger } from '../../src/fulfillment-pg-boss.js';
import { postgresStore } from '../../src/fulfillment/postgres.js';
import { redisStore } from '../../src/fulfillment/redis.js';
import type { FulfillmentStore } from '../../src/fulfillment/store.js';
import { signWebhook } from '../../src/testing.js';
import type { TriggerChild } from './trigger-child.js';

const { BP_TEST_PG_URL: pgUrl, BP_TEST_REDIS_URL: redisUrl } = process.env;
if (!pgUrl || !redisUrl) throw new Error('run by `npm run test:stores`: it starts the servers and sets BP_TEST_PG_URL, BP_TEST_REDIS_URL');

const root = fileURLToPath(new URL('../../', import.meta.url));
const SECRET = 'whsec_test_triggers_real';
const QUEUE = 'business-payments-inbox';
const fresh = (what: string) => `${what}_${crypto.randomUUID().replaceAll('-', '')}`;

async function delivery(id: string) {
  const payload = {
    id,
    type: 'payment.completed',
    api_version: '2024-06-01',
    created_at: new Date().toISOString(),
    data: { trx_id: `TRX-${id}`, merchant_ref: `order-${id}`, status: 'completed', amount: { value: 25, currency: 'USD' } },
  };
  const { body, headers } = await signWebhook({ secret: SECRET, payload, environment: 'sandbox' });
  return { payload: body, headers };
}

/** A kit with `trigger` on `store`; what onPaid ran for. */
function kit(store: FulfillmentStore<unknown>, trigger: FulfillmentTrigger) {
  const paid: string[] = [];
  const tx = (trx_id: string) =>
    ({ trx_id, status: 'success', amount: 25, currency: 'USD', fee: 0, net_amount: 25 }) as VerifiedTransaction;
  const fulfillment = createFulfillment({
    environment: 'sandbox',
    secret: SECRET,
    client: { environment: 'sandbox', payments: { verify: async (trxId) => tx(trxId), list: async function* () {} } },
    store,
    trigger,
    onPaid: (t) => void paid.push(t.trx_id),
  });
  return { fulfillment, paid };
}

/** Waits (polling every 20 ms, at most `ms`) until `check` holds. */
async function until(check: () => boolean | Promise<boolean>, ms = 15_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A worker's handler: process(id), then fail the job the first `fails` times (the engine delivers it again). */
function redelivering(process: (id: string) => Promise<string>, fails: number) {
  const results: string[] = [];
  return {
    results,
    handle: async (id: string) => {
      const result = await process(id);
      results.push(result);
      if (result === 'retry' || result === 'busy') throw new Error(`inbox ${id}: ${result}`);
      if (results.length <= fails) throw new Error(`the worker died before the ack (${results.length})`);
    },
  };
}

describe('pg-boss (PostgreSQL server): the job in the inbox row transaction', () => {
  const pool = new pg.Pool({ connectionString: pgUrl, max: 6 });
  const boss = new PgBoss({ connectionString: pgUrl });
  const table = fresh('bp_pgboss');
  const store = postgresStore(pool, { table });
  boss.on('error', () => {});
  beforeAll(async () => {
    await boss.start();
    await boss.createQueue(QUEUE, { retryLimit: 5, retryDelay: 0 });
  }, 60_000);
  afterAll(async () => {
    await boss.stop({ graceful: false });
    await pool.end();
  }, 30_000);
  const jobs = async (id: string) => (await boss.findJobs<{ id: string }>(QUEUE, { data: { id } })).length;
  const row = async (id: string) => store.inbox!.get!(id);

  test('a transaction that rolls back after the job was sent leaves no job and no row; a committed one has both', async () => {
    const real = pgBossTrigger(boss);
    const failing: FulfillmentTrigger = {
      send: real.send,
      sendInTransaction: async (db, id) => {
        await real.sendInTransaction!(db, id);
        throw new Error('after the job, before the COMMIT');
      },
    };
    const id = fresh('evt_rollback');
    const { fulfillment } = kit(store, failing);
    const quiet = console.error;
    console.error = () => {};
    const answer = await fulfillment.handleWebhook(await delivery(id)).finally(() => (console.error = quiet));
    expect(answer.status).toBe(500);
    expect(await jobs(id)).toBe(0);
    expect(await row(id)).toBeUndefined();
    // The service delivers again: recorded, with its job.
    expect((await kit(store, real).fulfillment.handleWebhook(await delivery(id))).status).toBe(200);
    expect(await jobs(id)).toBe(1);
    expect(await row(id)).toMatchObject({ state: 'pending' });
  });

  test('a web process SIGKILLed between the insert (job sent) and the COMMIT leaves neither; a committed delivery has its job', async () => {
    const script = await childScript();
    const run = async (id: string, hold: boolean) => {
      const setup: TriggerChild = { url: pgUrl, table, queue: QUEUE, secret: SECRET, delivery: await delivery(id), hold };
      const child = spawn(process.execPath, [script, JSON.stringify(setup)], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise((resolve) => child.on('exit', resolve));
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).on('line', resolve);
        child.on('exit', () => reject(new Error(`the child exited: ${stderr}`)));
      });
      if (hold) {
        expect(line).toBe('SENT');
        // Inside the transaction: neither the row nor the job is visible to anyone else yet.
        expect(await jobs(id)).toBe(0);
        expect(await row(id)).toBeUndefined();
        child.kill('SIGKILL');
      }
      await exited;
      return line;
    };
    const killed = fresh('evt_killed');
    await run(killed, true);
    // The server rolls the dead connection's transaction back: no job, no row, ever.
    await until(
      async () =>
        (await pool.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = $1', ['idle in transaction'])).rows[0].n === 0,
    );
    expect(await jobs(killed)).toBe(0);
    expect(await row(killed)).toBeUndefined();
    const committed = fresh('evt_committed');
    expect(await run(committed, false)).toBe('ANSWER 200');
    expect(await jobs(committed)).toBe(1);
    expect(await row(committed)).toMatchObject({ state: 'pending' });
  }, 60_000);

  test("pg-boss's worker calls process(id): fulfilled; the job delivered 3 times (failed twice after processing) fulfils once", async () => {
    // A queue of its own (named by the option), retried at once.
    const queue = fresh('bp_work');
    await boss.createQueue(queue, { retryLimit: 5, retryDelay: 0 });
    const { fulfillment, paid } = kit(store, pgBossTrigger(boss, { queue }));
    const worker = redelivering((id) => fulfillment.process(id), 2);
    const workerId = await boss.work<{ id: string }>(queue, { pollingIntervalSeconds: 0.5 }, async ([job]) => worker.handle(job!.data.id));
    const id = fresh('evt_worked');
    expect((await fulfillment.handleWebhook(await delivery(id))).status).toBe(200);
    await until(() => worker.results.length >= 3);
    expect(worker.results).toEqual(['done', 'done', 'done']);
    expect(paid).toEqual([`TRX-${id}`]);
    await boss.offWork(queue, { id: workerId });
    expect(await row(id)).toMatchObject({ state: 'done' });
  }, 60_000);
});

describe('BullMQ (Redis server)', () => {
  const url = new URL(redisUrl);
  const connection = { host: url.hostname, port: Number(url.port), maxRetriesPerRequest: null };
  const name = fresh('bp-bullmq');
  const queue = new Queue(name, { connection, defaultJobOptions: { attempts: 5, backoff: { type: 'fixed', delay: 10 } } });
  const redis = createClient({ url: redisUrl });
  let worker: Worker | undefined;
  afterAll(async () => {
    await worker?.close();
    await queue.obliterate({ force: true });
    await queue.close();
    await redis.quit();
  }, 30_000);

  test("BullMQ's worker calls process(id): the job delivered 3 times fulfils once; a delivery woken twice is one job", async () => {
    await redis.connect();
    const { fulfillment, paid } = kit(redisStore(redis, { prefix: `${name}:` }), bullmqTrigger(queue));
    const handler = redelivering((id) => fulfillment.process(id), 2);
    const id = fresh('evt_bull');
    // Delivered twice by the service before any worker ran: one job.
    for (let i = 0; i < 2; i++) expect((await fulfillment.handleWebhook(await delivery(id))).status).toBe(200);
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 1 });
    expect((await queue.getJob(`inbox-${id}`))?.data).toEqual({ id });
    worker = new Worker<{ id: string }>(name, async (job) => handler.handle(job.data.id), { connection });
    await until(() => handler.results.length >= 3);
    await until(async () => (await queue.getJobCounts('completed')).completed === 1);
    expect(handler.results).toEqual(['done', 'done', 'done']);
    expect(paid).toEqual([`TRX-${id}`]);
  }, 60_000);
});

describe('queueTrigger (a push queue, PostgreSQL server)', () => {
  const pool = new pg.Pool({ connectionString: pgUrl, max: 6 });
  afterAll(() => pool.end());

  test('the message delivered 3 times, twice at once, fulfils once', async () => {
    const messages: Array<{ id: string }> = [];
    const { fulfillment, paid } = kit(
      postgresStore(pool, { table: fresh('bp_push') }),
      queueTrigger({ send: async (message) => void messages.push(message) }),
    );
    const id = fresh('evt_push');
    expect((await fulfillment.handleWebhook(await delivery(id))).status).toBe(200);
    expect(messages).toEqual([{ id }]);
    const first = await Promise.all([fulfillment.process(id), fulfillment.process(id)]);
    expect(first).toContain('done');
    expect(first.every((result) => result === 'done' || result === 'busy')).toBe(true);
    expect(await fulfillment.process(id)).toBe('done');
    expect(paid).toEqual([`TRX-${id}`]);
  }, 30_000);
});

let bundled: Promise<string> | undefined;
/** trigger-child.ts bundled once (the source as it is; pg and pg-boss from node_modules). */
const childScript = () =>
  (bundled ??= (async () => {
    const outfile = join(root, '.cache/triggers/child.mjs');
    await build({
      entryPoints: [join(root, 'test/fulfillment/trigger-child.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      packages: 'external',
      outfile,
      logLevel: 'error',
    });
    return outfile;
  })());
