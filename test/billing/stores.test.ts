// The subscription record conformance suite (testStore(…, { kit: 'billing' }), business-payments/testing)
// on memorySubscriptions (the reference), on postgresStore(…).subscriptions over PGlite (a real
// Postgres in WASM: as the single connection it is, and behind a one-connection pool), and on
// redisStore(…).subscriptions over a fake Redis that runs the semantics of its Lua scripts on
// Maps (so what is checked here is the client glue: keys, arguments, replies). The scripts
// themselves run on real PostgreSQL and Redis servers in `npm run test:stores`
// (test/fulfillment/stores-real.check.ts). Then what is particular to each.
import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, test } from 'vitest';
import { memoryStore, memorySubscriptions } from '../../src/billing/memory.js';
import { POSTGRES_STORE_SQL, postgresStore, type PostgresQueryable, type SubscriptionStore } from '../../src/fulfillment-postgres.js';
import { redisStore, type IORedisClientLike, type NodeRedisClientLike } from '../../src/fulfillment-redis.js';
import { recordOf } from '../../src/store-check/subscriptions.js';
import { testStore, type BillingCheckOptions, type StoreReport } from '../../src/testing.js';
import { onePool } from '../support/pglite-pool.js';

// One PGlite for the whole file (it takes seconds to start); every case uses keys of its own.
let started: Promise<PGlite> | undefined;
const pglite = () => (started ??= PGlite.create());
afterAll(async () => void (await (await started)?.close()), 30_000);

/** Every billing case passed, none skipped (they all apply to every store). */
const passesAll = (report: StoreReport) => {
  expect(report.failed).toEqual([]);
  expect(report.skipped).toEqual([]);
  expect(report.passed).toHaveLength(10);
  expect(report.kit).toBe('billing');
};
/** testStore on `make()`'s instance, another instance made by `make` for each one a case needs. */
const check = async (make: () => SubscriptionStore, options: Partial<BillingCheckOptions> = {}) =>
  passesAll(await testStore(make(), { kit: 'billing', another: make, ...options }));

describe("testStore: the SDK's subscription stores pass it", () => {
  test('memory (one instance)', async () => {
    passesAll(await testStore(memorySubscriptions(), { kit: 'billing' }));
  });

  test('postgres over PGlite (one connection)', async () => {
    const db = await pglite();
    await check(() => postgresStore(db).subscriptions!);
  }, 60_000);

  test('postgres over PGlite behind a pool: every connection checked out came back', async () => {
    const pool = onePool(await pglite());
    await check(() => postgresStore(pool, { table: 'bp_subs_pooled' }).subscriptions!);
    expect(pool.stats.connects).toBeGreaterThan(50);
    expect(pool.stats.out).toBe(0);
  }, 60_000);
});

// A key's cluster hash tag: what is between its first `{` and the next `}`, when not empty.
const slotOf = (key: string) => /^[^{]*\{([^}]+)\}/.exec(key)?.[1] ?? key;
const bytewise = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * A Redis of hashes and sorted sets (score 0: lex order, byte-wise, as ZRANGEBYLEX reads it).
 * `eval` picks the subscriptions' script by its text and runs its semantics; a script it does
 * not know, or keys in more than one cluster slot, fail as Redis would fail them.
 */
function fakeRedis() {
  const hashes = new Map<string, Map<string, string>>();
  const zsets = new Map<string, Set<string>>();
  const hash = (key: string) => hashes.get(key) ?? hashes.set(key, new Map()).get(key)!;
  const hget = (key: string, field: string) => hashes.get(key)?.get(field) ?? null;
  const calls: Array<{ keys: string[]; args: string[] }> = [];
  // Each script's semantics: KEYS and ARGV as the real script reads them. Which is which, by a
  // piece of its text (bind before field: its text holds field's).
  const scripts: Array<[string, (keys: string[], args: string[]) => unknown]> = [
    [
      "'HGET',KEYS[1],'record') if v",
      ([record, all], [key, version, json]) => {
        const found = hget(record!, 'record');
        if (found !== null) return found;
        hash(record!).set('version', version!).set('record', json!);
        (zsets.get(all!) ?? zsets.set(all!, new Set()).get(all!)!).add(key!);
        return null;
      },
    ],
    [
      "'HGET',KEYS[1],'version')",
      ([record], [version, json, previous]) => {
        const old = hashes.get(record!);
        if (old?.get('version') !== previous) return 0;
        old!.set('version', version!).set('record', json!);
        return 1;
      },
    ],
    [
      "'ZRANGEBYLEX'",
      ([all, prefix], [from, count]) => {
        expect(from === '-' || from!.startsWith('(')).toBe(true);
        return [...(zsets.get(all!) ?? [])]
          .sort(bytewise)
          .filter((member) => from === '-' || bytewise(member, from!.slice(1)) > 0)
          .slice(0, Number(count))
          .map((member) => hget(prefix + member, 'record'));
      },
    ],
    [
      "'HSETNX'",
      ([ids], [subscriptionId, key]) => {
        if (hget(ids!, subscriptionId!) === null) hash(ids!).set(subscriptionId!, key!);
        return hget(ids!, subscriptionId!);
      },
    ],
    ["return redis.call('HGET',KEYS[1],ARGV[1])", ([key], [field]) => hget(key!, field!)],
  ];
  function evalScript(script: string, keys: string[], args: string[]): unknown {
    const run = scripts.find(([sign]) => script.includes(sign))?.[1] ?? expect.fail(`the fake does not know this script: ${script}`);
    if (new Set(keys.map(slotOf)).size > 1) throw new Error(`CROSSSLOT Keys in request don't hash to the same slot: ${keys.join(' ')}`);
    for (const arg of [...keys, ...args]) expect(typeof arg).toBe('string');
    calls.push({ keys, args });
    return run(keys, args);
  }
  return { hashes, zsets, calls, evalScript };
}

type Fake = ReturnType<typeof fakeRedis>;
// Strings as Buffers, in arrays too: a node-redis type mapping.
const asBuffers = (reply: unknown): unknown =>
  typeof reply === 'string' ? Buffer.from(reply) : Array.isArray(reply) ? reply.map(asBuffers) : reply;
const nodeRedis = (redis: Fake, map = (reply: unknown) => reply) =>
  ({
    sendCommand: () => Promise.reject(new Error('the store uses eval')),
    eval: async (script: string, options: { keys: string[]; arguments: string[] }) =>
      map(redis.evalScript(script, options.keys, options.arguments)),
    get: async () => null,
  }) satisfies NodeRedisClientLike;
const ioredis = (redis: Fake) =>
  ({
    call: () => Promise.reject(new Error('the store uses eval')),
    eval: async (script: string, numKeys: number, ...rest: string[]) =>
      redis.evalScript(script, rest.slice(0, numKeys), rest.slice(numKeys)),
    get: async () => null,
  }) satisfies IORedisClientLike;

describe("testStore: the SDK's subscription stores pass it (redis over a fake Redis)", () => {
  test('node-redis client, Buffer replies', async () => {
    const redis = fakeRedis();
    await check(() => redisStore(nodeRedis(redis, asBuffers)).subscriptions!);
  });

  test('ioredis client', async () => {
    const redis = fakeRedis();
    await check(() => redisStore(ioredis(redis), { prefix: 'shop:' }).subscriptions!);
  });
});

test('memoryStore() of the billing kit has its subscription records', async () => {
  const store = memoryStore();
  expect(store.durable).toBe(false);
  expect(await store.subscriptions.add(recordOf('k'))).toEqual({ record: recordOf('k'), created: true });
});

describe('postgresStore subscription records', () => {
  const columns = async (db: PostgresQueryable, table: string) =>
    (
      await db.query(
        `SELECT column_name, data_type, is_nullable, collation_name FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position`,
        [table],
      )
    ).rows;
  const indexes = async (db: PostgresQueryable, table: string) =>
    (await db.query(`SELECT indexdef FROM pg_indexes WHERE tablename = $1 ORDER BY indexname`, [table])).rows.map(
      (row) => (row as { indexdef: string }).indexdef,
    );

  test('created on first use as POSTGRES_STORE_SQL says: _subscriptions (key COLLATE "C", version, data) and _subscription_ids', async () => {
    const db = await pglite();
    await postgresStore(db, { table: 'bp_subs_created' }).subscriptions!.get('x');
    await db.exec(POSTGRES_STORE_SQL.replaceAll('business_payments_fulfillment', 'bp_subs_by_hand'));
    for (const suffix of ['_subscriptions', '_subscription_ids']) {
      expect(await columns(db, `bp_subs_created${suffix}`)).toEqual(await columns(db, `bp_subs_by_hand${suffix}`));
    }
    expect(await columns(db, 'bp_subs_created_subscriptions')).toEqual([
      { column_name: 'key', data_type: 'text', is_nullable: 'NO', collation_name: 'C' },
      { column_name: 'version', data_type: 'integer', is_nullable: 'NO', collation_name: null },
      { column_name: 'data', data_type: 'text', is_nullable: 'NO', collation_name: null },
    ]);
    expect(await indexes(db, 'bp_subs_created_subscriptions')).toEqual([
      'CREATE UNIQUE INDEX bp_subs_created_subscriptions_pkey ON public.bp_subs_created_subscriptions USING btree (key)',
    ]);
    expect(await columns(db, 'bp_subs_created_subscription_ids')).toEqual([
      { column_name: 'subscription_id', data_type: 'text', is_nullable: 'NO', collation_name: null },
      { column_name: 'key', data_type: 'text', is_nullable: 'NO', collation_name: null },
    ]);
  });

  test('list reads the key index in order: no sort, however many rows', async () => {
    const db = await pglite();
    const store = postgresStore(db, { table: 'bp_subs_plan' }).subscriptions!;
    await store.add(recordOf('a'));
    await db.exec('SET enable_seqscan = off');
    try {
      const plan = await db.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT data FROM bp_subs_plan_subscriptions WHERE key > $2 ORDER BY key LIMIT $1`,
        [10, 'a'],
      );
      const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
      expect(text).toContain('bp_subs_plan_subscriptions_pkey');
      expect(text).not.toContain('Sort');
    } finally {
      await db.exec('RESET enable_seqscan');
    }
  });

  test('createTable: false with POSTGRES_STORE_SQL run by hand (schema-qualified): the records work', async () => {
    const db = await pglite();
    await db.query('CREATE SCHEMA IF NOT EXISTS shop', []);
    const sql = POSTGRES_STORE_SQL.replaceAll('business_payments_fulfillment', 'shop.bp_subs');
    await db.exec(sql);
    await db.exec(sql); // a migration run again changes nothing
    const store = postgresStore(db, { table: 'shop.bp_subs', createTable: false }).subscriptions!;
    expect((await store.add(recordOf('sub:c:p:1'))).created).toBe(true);
    const active = { ...recordOf('sub:c:p:1'), version: 2, state: 'active' as const, subscriptionId: 'sub_1' };
    expect(await store.swap(active)).toBe(true);
    expect(await store.list(10)).toEqual([active]);
    expect(await store.bind('sub_1', 'sub:c:p:1')).toBe('sub:c:p:1');
    expect(await store.owner('sub_1')).toBe('sub:c:p:1');
    expect((await db.query('SELECT key, version FROM shop.bp_subs_subscriptions', [])).rows).toEqual([{ key: 'sub:c:p:1', version: 2 }]);
  });

  test('a store created before the subscription tables gains them on first use; its outcomes, inbox and payouts stay', async () => {
    const db = await pglite();
    const before = POSTGRES_STORE_SQL.split(';')
      .filter((statement) => !statement.includes('_subscription'))
      .join(';');
    expect(before).toContain('_payout_ids');
    await db.exec(before.replaceAll('business_payments_fulfillment', 'bp_before_subs'));
    await db.query(`INSERT INTO bp_before_subs (key, outcome) VALUES ('payment:T1', 'paid')`, []);
    await db.query(`INSERT INTO bp_before_subs_inbox (id, event) VALUES ('E1', '{}')`, []);
    await db.query(`INSERT INTO bp_before_subs_payout_ids (payout_id, key) VALUES ('po_1', 'k')`, []);
    const store = postgresStore(db, { table: 'bp_before_subs' });
    expect(await store.subscriptions!.add(recordOf('k'))).toEqual({ record: recordOf('k'), created: true });
    expect(await store.outcome('payment:T1')).toBe('paid');
    expect(await store.inbox!.take(60_000)).toMatchObject({ id: 'E1' });
    expect(await store.payouts!.owner('po_1')).toBe('k');
    expect(await store.subscriptions!.bind('sub_1', 'k')).toBe('k');
  });

  test('the record is stored as the JSON text of what was given (version beside it)', async () => {
    const db = await pglite();
    const record = recordOf('json', { termsShown: 'lone \ud800', paid: [{ invoice: 'inv_1', start: 0.5, end: 2 ** 60 }] });
    await postgresStore(db, { table: 'bp_subs_json' }).subscriptions!.add(record);
    expect((await db.query('SELECT key, version, data FROM bp_subs_json_subscriptions', [])).rows).toEqual([
      { key: 'json', version: 1, data: JSON.stringify(record) },
    ]);
  });
});

describe('redisStore subscription records', () => {
  test('keys under the prefix and {billing} (one slot), the JSON as given', async () => {
    const redis = fakeRedis();
    const store = redisStore(nodeRedis(redis), { prefix: 'shop:', keepDoneMs: 1000 }).subscriptions!;
    const record = recordOf('sub:c:p:1', { paid: [{ invoice: 'inv_1', start: 0.5, end: 1e21 }] });
    await store.add(record);
    expect(redis.calls.at(-1)).toEqual({
      keys: ['shop:{billing}:r:sub:c:p:1', 'shop:{billing}:keys'],
      args: ['sub:c:p:1', '1', JSON.stringify(record)],
    });
    const active = { ...record, version: 2, state: 'active' as const };
    expect(await store.swap(active)).toBe(true);
    expect(redis.calls.at(-1)).toEqual({ keys: ['shop:{billing}:r:sub:c:p:1'], args: ['2', JSON.stringify(active), '1'] });
    expect(Object.fromEntries(redis.hashes.get('shop:{billing}:r:sub:c:p:1')!)).toEqual({ version: '2', record: JSON.stringify(active) });
    expect([...redis.zsets.get('shop:{billing}:keys')!]).toEqual(['sub:c:p:1']);
    await store.list(10.7, 'sub:c');
    expect(redis.calls.at(-1)).toEqual({ keys: ['shop:{billing}:keys', 'shop:{billing}:r:'], args: ['(sub:c', '10'] });
    await store.list(Infinity);
    expect(redis.calls.at(-1)?.args).toEqual(['-', String(2 ** 31)]);
    const sent = redis.calls.length;
    expect(await store.list(0)).toEqual([]);
    expect(redis.calls).toHaveLength(sent);
    await store.bind('sub_1', 'sub:c:p:1');
    expect(redis.calls.at(-1)).toEqual({ keys: ['shop:{billing}:ids'], args: ['sub_1', 'sub:c:p:1'] });
    expect(Object.fromEntries(redis.hashes.get('shop:{billing}:ids')!)).toEqual({ sub_1: 'sub:c:p:1' });
    // Every key written is in the {billing} slot.
    expect(new Set([...redis.hashes.keys(), ...redis.zsets.keys()].map(slotOf))).toEqual(new Set(['billing']));
  });
});
