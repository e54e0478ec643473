// Triggers (createFulfillment({ trigger })): the merchant's queue engine wakes the inbox, its
// worker calls fulfillment.process(id). Here without servers: queueTrigger on the memory store
// (what process answers, a job delivered 3 times fulfils once, nothing processed in the request's
// process, a send that fails answered 500 and sent again on the next delivery), bullmqTrigger on
// a fake Queue (its job ids, deduplicated as BullMQ does), pgBossTrigger on PGlite with a stand-in
// boss whose insert runs on the connection it is given (the job commits or rolls back with the
// inbox row). pg-boss on PostgreSQL and BullMQ on Redis: triggers-real.check.ts (test:stores).
import { PGlite } from '@electric-sql/pglite';
import type { Queue } from 'bullmq';
import type { PgBoss } from 'pg-boss';
import { afterAll, afterEach, describe, expect, expectTypeOf, test, vi } from 'vitest';
import type { VerifiedTransaction } from '../../src/index.js';
import { createFulfillment, memoryStore, queueTrigger, type FulfillmentOptions, type FulfillmentTrigger } from '../../src/fulfillment.js';
import { bullmqTrigger } from '../../src/fulfillment-bullmq.js';
import { pgBossTrigger, type PgBossSender } from '../../src/fulfillment-pg-boss.js';
import { postgresStore } from '../../src/fulfillment-postgres.js';
import { ConfigurationError } from '../../src/index.js';
import { signWebhook } from '../../src/testing.js';
import { onePool } from '../support/pglite-pool.js';
import { fakeClient } from '../support/fulfillment-client.js';

const SECRET = 'whsec_test_triggers';

// A failed send is logged (console.error) as a handler's failure is: kept out of the output.
afterEach(() => void vi.restoreAllMocks());
const quiet = () => vi.spyOn(console, 'error').mockImplementation(() => {});

const tx = (trx_id: string): VerifiedTransaction =>
  ({ trx_id, status: 'success', amount: 25, currency: 'USD', fee: 0, net_amount: 25 }) as VerifiedTransaction;

async function delivery(id: string, trxId = `TRX-${id}`) {
  const payload = {
    id,
    type: 'payment.completed',
    api_version: '2024-06-01',
    created_at: new Date().toISOString(),
    data: { trx_id: trxId, merchant_ref: `order-${id}`, status: 'completed', amount: { value: 25, currency: 'USD' } },
  };
  const { body, headers } = await signWebhook({ secret: SECRET, payload, environment: 'sandbox' });
  return { payload: body, headers };
}

/** A kit with `trigger` on `store` (memory, on a clock the test moves); `onPaid` fails `failures` times first. */
function kit(trigger: FulfillmentTrigger, overrides: Partial<FulfillmentOptions> = {}, failures = 0) {
  let now = 0;
  const store = memoryStore({ now: () => now });
  const { client, verify } = fakeClient(tx);
  const paid: string[] = [];
  let calls = 0;
  const fulfillment = createFulfillment({
    environment: 'sandbox',
    secret: SECRET,
    client,
    store,
    trigger,
    onPaid: (t) => {
      if (++calls <= failures) throw new Error(`ERP down (${calls})`);
      paid.push(t.trx_id);
    },
    retryDelay: () => 10_000,
    ...overrides,
  });
  return { fulfillment, store, paid, verify, elapse: (ms: number) => void (now += ms) };
}

/** A push queue that keeps its messages. */
function pushQueue() {
  const messages: Array<{ id: string }> = [];
  let failing = false;
  const send = async (message: { id: string }) => {
    if (failing) throw new Error('queue unavailable');
    messages.push(message);
  };
  return { messages, trigger: queueTrigger({ send }), fail: (on: boolean) => void (failing = on) };
}

describe('queueTrigger: the push queue wakes the worker', () => {
  test('a delivery sends { id } once it is recorded, and nothing runs in the request; process(id) fulfils', async () => {
    const queue = pushQueue();
    const { fulfillment, paid, store } = kit(queue.trigger);
    expect((await fulfillment.handleWebhook(await delivery('evt_1'))).status).toBe(200);
    expect(queue.messages).toEqual([{ id: 'evt_1' }]);
    // Nothing processed it in the request's process, nor after (no soon, no timers).
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(paid).toEqual([]);
    expect(await store.inbox!.get!('evt_1')).toMatchObject({ id: 'evt_1', state: 'pending', attempts: 0 });
    expect(await fulfillment.process('evt_1')).toBe('done');
    expect(paid).toEqual(['TRX-evt_1']);
  });

  test('the job delivered 3 more times is answered from the store: onPaid ran once, one verify', async () => {
    const queue = pushQueue();
    const { fulfillment, paid, verify } = kit(queue.trigger);
    await fulfillment.handleWebhook(await delivery('evt_2'));
    const results = [];
    for (const { id } of [...queue.messages, ...queue.messages, ...queue.messages]) results.push(await fulfillment.process(id));
    expect(results).toEqual(['done', 'done', 'done']);
    expect(paid).toEqual(['TRX-evt_2']);
    expect(verify).toHaveBeenCalledTimes(1);
    // At the same moment, 3 at once: one runs, the others are busy or done; fulfilled once.
    await fulfillment.handleWebhook(await delivery('evt_3'));
    const together = await Promise.all([1, 2, 3].map(() => fulfillment.process('evt_3')));
    expect(together.filter((result) => result === 'done').length).toBeGreaterThanOrEqual(1);
    expect(together.every((result) => result === 'done' || result === 'busy')).toBe(true);
    expect(paid).toEqual(['TRX-evt_2', 'TRX-evt_3']);
  });

  test('retry until due (busy before it), then done; dead after maxAttempts; unknown for no record', async () => {
    const queue = pushQueue();
    const { fulfillment, paid, elapse, store } = kit(queue.trigger, { maxAttempts: 3 }, 1);
    await fulfillment.handleWebhook(await delivery('evt_4'));
    expect(await fulfillment.process('evt_4')).toBe('retry');
    expect(await store.inbox!.get!('evt_4')).toMatchObject({ state: 'pending', attempts: 1, error: 'ERP down (1)' });
    // The engine came back before the kit's retryDelay: not due yet.
    expect(await fulfillment.process('evt_4')).toBe('busy');
    elapse(10_000);
    expect(await fulfillment.process('evt_4')).toBe('done');
    expect(paid).toEqual(['TRX-evt_4']);
    expect(await fulfillment.process('no-such-record')).toBe('unknown');

    const dying = kit(pushQueue().trigger, { maxAttempts: 2 }, 5);
    await dying.fulfillment.handleWebhook(await delivery('evt_5'));
    expect(await dying.fulfillment.process('evt_5')).toBe('retry');
    dying.elapse(10_000);
    expect(await dying.fulfillment.process('evt_5')).toBe('dead');
    expect(await dying.fulfillment.process('evt_5')).toBe('dead');
    expect(dying.paid).toEqual([]);
  });

  test('a send that fails answers 500; the service delivers again: the record is there, pending, and is sent then', async () => {
    const queue = pushQueue();
    const { fulfillment, store } = kit(queue.trigger);
    queue.fail(true);
    const logged = quiet();
    const refused = await fulfillment.handleWebhook(await delivery('evt_6'));
    expect(refused.status).toBe(500);
    expect(String(logged.mock.calls[0]?.[1])).toContain('queue unavailable');
    expect(await store.inbox!.get!('evt_6')).toMatchObject({ state: 'pending' });
    queue.fail(false);
    expect((await fulfillment.handleWebhook(await delivery('evt_6'))).status).toBe(200);
    expect(queue.messages).toEqual([{ id: 'evt_6' }]);
    expect(await fulfillment.process('evt_6')).toBe('done');
    // Delivered again once done: no job (nothing to wake).
    expect((await fulfillment.handleWebhook(await delivery('evt_6'))).status).toBe(200);
    expect(queue.messages).toEqual([{ id: 'evt_6' }]);
  });

  test('a trigger needs the inbox: inbox: false is a ConfigurationError', () => {
    const { client } = fakeClient(tx);
    const options = { environment: 'sandbox', secret: SECRET, client, onPaid: () => {}, trigger: pushQueue().trigger } as const;
    expect(() => createFulfillment({ ...options, inbox: false })).toThrow(ConfigurationError);
    expect(() => createFulfillment({ ...options, inbox: false })).toThrow('createFulfillment({ trigger }): needs the inbox');
    // The memory store's inbox is on with a trigger.
    expect(createFulfillment(options).store.inbox).toBeDefined();
  });
});

test("the engines' own objects are what the triggers take (checked by tsc: the types of pg-boss 12 and BullMQ 6)", () => {
  expectTypeOf<PgBoss>().toExtend<PgBossSender>();
  expectTypeOf<Queue>().toExtend<Parameters<typeof bullmqTrigger>[0]>();
});

describe('bullmqTrigger', () => {
  /** A Queue as BullMQ's add behaves: a job id already added adds nothing. */
  function fakeQueue() {
    const jobs = new Map<string, { name: string; data: { id: string } }>();
    const queue = {
      add: async (name: string, data: { id: string }, opts: { jobId: string }) => {
        if (/^\d+$/.test(opts.jobId) || opts.jobId.includes(':')) throw new Error(`BullMQ refuses the job id ${opts.jobId}`);
        if (!jobs.has(opts.jobId)) jobs.set(opts.jobId, { name, data });
        return { id: opts.jobId };
      },
    };
    return { jobs, queue };
  }

  test('a job { id } with a stable job id BullMQ accepts; redelivered 3 times, fulfilled once', async () => {
    const { jobs, queue } = fakeQueue();
    const { fulfillment, paid } = kit(bullmqTrigger(queue));
    // An IPN's record id holds colons: its job id does not.
    await fulfillment.handleWebhook(await delivery('evt_7'));
    await bullmqTrigger(queue).send('ipn:TRX-9:payment.completed');
    expect([...jobs.keys()]).toEqual(['inbox-evt_7', 'inbox-ipn%3ATRX-9%3Apayment.completed']);
    expect(jobs.get('inbox-evt_7')).toEqual({ name: 'inbox', data: { id: 'evt_7' } });
    const job = jobs.get('inbox-evt_7')!;
    expect(await Promise.all([1, 2, 3].map(async () => fulfillment.process(job.data.id)))).toContain('done');
    expect(await fulfillment.process(job.data.id)).toBe('done');
    expect(paid).toEqual(['TRX-evt_7']);
  });
});

describe('pgBossTrigger on postgresStore (PGlite): the job in the inbox row transaction', () => {
  let started: Promise<PGlite> | undefined;
  const pglite = () => (started ??= PGlite.create());
  afterAll(async () => void (await (await started)?.close()), 30_000);

  /** A boss whose send inserts a job row through options.db (its own connection without one); `failNext` throws after the insert. */
  function standInBoss(db: PGlite) {
    const sent: Array<{ name: string; data: { id: string }; inTransaction: boolean }> = [];
    let failNext = false;
    const boss: PgBossSender = {
      async send(name, data, options) {
        const run = options?.db ? (text: string, values: unknown[]) => options.db!.executeSql(text, values) : db.query.bind(db);
        await run('INSERT INTO boss_jobs (name, data) VALUES ($1, $2)', [name, JSON.stringify(data)]);
        sent.push({ name, data, inTransaction: !!options?.db });
        if (failNext) throw ((failNext = false), new Error('the job insert failed'));
        return 'job-id';
      },
    };
    return { boss, sent, fail: () => void (failNext = true) };
  }

  test('committed: the row and its job; rolled back: neither; a job delivered 3 times fulfils once', async () => {
    const db = await pglite();
    await db.query('CREATE TABLE IF NOT EXISTS boss_jobs (name text, data text)');
    const pool = onePool(db);
    const { boss, sent, fail } = standInBoss(db);
    const store = postgresStore(pool, { table: 'bp_triggers' });
    const { client } = fakeClient(tx);
    const paid: string[] = [];
    const fulfillment = createFulfillment({
      environment: 'sandbox',
      secret: SECRET,
      client,
      store,
      trigger: pgBossTrigger(boss),
      onPaid: (t) => void paid.push(t.trx_id),
    });
    const jobs = async () => (await db.query<{ data: string }>('SELECT data FROM boss_jobs ORDER BY data')).rows.map((row) => row.data);

    expect((await fulfillment.handleWebhook(await delivery('evt_pg1'))).status).toBe(200);
    expect(sent).toEqual([{ name: 'business-payments-inbox', data: { id: 'evt_pg1' }, inTransaction: true }]);
    expect(await jobs()).toEqual(['{"id":"evt_pg1"}']);

    // The job's insert ran, then the send failed: the transaction rolled back, no row, no job.
    fail();
    quiet();
    expect((await fulfillment.handleWebhook(await delivery('evt_pg2'))).status).toBe(500);
    expect(await jobs()).toEqual(['{"id":"evt_pg1"}']);
    expect(await store.inbox!.get!('evt_pg2')).toBeUndefined();
    // Delivered again: recorded with its job.
    expect((await fulfillment.handleWebhook(await delivery('evt_pg2'))).status).toBe(200);
    expect(await jobs()).toEqual(['{"id":"evt_pg1"}', '{"id":"evt_pg2"}']);

    for (let i = 0; i < 3; i++) expect(await fulfillment.process('evt_pg1')).toBe('done');
    expect(await fulfillment.process('evt_pg2')).toBe('done');
    expect(paid).toEqual(['TRX-evt_pg1', 'TRX-evt_pg2']);
    expect(pool.stats.out).toBe(0);
    // The queue is yours to name.
    await pgBossTrigger(boss, { queue: 'payments' }).send('evt_x');
    expect(sent.at(-1)).toEqual({ name: 'payments', data: { id: 'evt_x' }, inTransaction: false });
  }, 60_000);

  test('on one connection (PGlite itself), the add with its job runs in the queue of that connection', async () => {
    const db = await pglite();
    await db.query('CREATE TABLE IF NOT EXISTS boss_jobs (name text, data text)');
    const { boss, sent } = standInBoss(db);
    const store = postgresStore(db, { table: 'bp_triggers_one' });
    expect(await store.inbox!.add('one', '{}', undefined, (q) => pgBossTrigger(boss).sendInTransaction!(q, 'one').then(() => {}))).toBe(
      true,
    );
    // Existing: the callback does not run.
    expect(await store.inbox!.add('one', '{}', undefined, () => Promise.reject(new Error('ran')))).toBe(false);
    expect(sent.map((job) => job.data.id)).toEqual(['one']);
    expect(await store.inbox!.get!('one')).toMatchObject({ id: 'one', state: 'pending', attempts: 0, event: '{}' });
    expect(await store.inbox!.get!('none')).toBeUndefined();
  }, 60_000);
});
