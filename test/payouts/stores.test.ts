// The payout intent conformance suite (testStore, business-payments/testing) on memoryIntents (the reference), on
// postgresStore(…).payouts over PGlite (a real Postgres in WASM: as the single connection it
// is, and behind a one-connection pool), and on redisStore(…).payouts over a fake Redis that
// runs the semantics of its Lua scripts on Maps (so what is checked here is the client glue:
// keys, arguments, replies). The scripts themselves run on real PostgreSQL and Redis servers in
// `npm run test:stores` (test/fulfillment/stores-real.check.ts). Then what is particular to each.
import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, test } from 'vitest';
import { POSTGRES_STORE_SQL, postgresStore, type PostgresQueryable } from '../../src/fulfillment-postgres.js';
import { redisStore, type IORedisClientLike, type NodeRedisClientLike } from '../../src/fulfillment-redis.js';
import { memoryIntents, memoryStore, type PayoutIntentStore } from '../../src/payouts/store.js';
import { intentOf } from '../../src/store-check/intents.js';
import { testStore, type PayoutsCheckOptions, type StoreReport } from '../../src/testing.js';
import { onePool } from '../support/pglite-pool.js';

// One PGlite for the whole file (it takes seconds to start); every case uses keys of its own.
let started: Promise<PGlite> | undefined;
const pglite = () => (started ??= PGlite.create());
afterAll(async () => void (await (await started)?.close()), 30_000);

/** Every payout case passed, none skipped (the payout kit's cases all apply to every store). */
const passesAll = (report: StoreReport) => {
  expect(report.failed).toEqual([]);
  expect(report.skipped).toEqual([]);
  expect(report.passed).toHaveLength(10);
};
/** testStore on `make()`'s instance, another instance made by `make` for each one a case needs. */
const check = async (make: () => PayoutIntentStore, options: Partial<PayoutsCheckOptions> = {}) =>
  passesAll(await testStore(make(), { kit: 'payouts', another: make, ...options }));

describe("testStore: the SDK's payout intent stores pass it", () => {
  test('memory (one instance)', async () => {
    passesAll(await testStore(memoryIntents(), { kit: 'payouts' }));
  });

  test('postgres over PGlite (one connection)', async () => {
    const db = await pglite();
    await check(() => postgresStore(db).payouts!);
  }, 60_000);

  test('postgres over PGlite behind a pool: every connection checked out came back', async () => {
    const pool = onePool(await pglite());
    await check(() => postgresStore(pool, { table: 'bp_intents_pooled' }).payouts!);
    expect(pool.stats.connects).toBeGreaterThan(50);
    expect(pool.stats.out).toBe(0);
  }, 60_000);
});

// A key's cluster hash tag: what is between its first `{` and the next `}`, when not empty.
const slotOf = (key: string) => /^[^{]*\{([^}]+)\}/.exec(key)?.[1] ?? key;
const bytewise = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * A Redis of hashes and sorted sets (score 0: lex order, byte-wise, as ZRANGEBYLEX reads it).
 * `eval` picks the intents' script by its text and runs its semantics; a script it does not
 * know, or keys in more than one cluster slot, fail as Redis would fail them.
 */
function fakeRedis() {
  const hashes = new Map<string, Map<string, string>>();
  const zsets = new Map<string, Set<string>>();
  const hash = (key: string) => hashes.get(key) ?? hashes.set(key, new Map()).get(key)!;
  const hget = (key: string, field: string) => hashes.get(key)?.get(field) ?? null;
  const zadd = (key: string, member: string) => void (zsets.get(key) ?? zsets.set(key, new Set()).get(key)!).add(member);
  const calls: Array<{ keys: string[]; args: string[] }> = [];
  // Each script's semantics: KEYS and ARGV as the real script reads them. Which is which, by a
  // piece of its text (bind before field: its text holds field's).
  const scripts: Array<[string, (keys: string[], args: string[]) => unknown]> = [
    [
      "'HGET',KEYS[1],'intent') if v",
      ([intent, set], [key, state, version, json]) => {
        const found = hget(intent!, 'intent');
        if (found !== null) return found;
        hash(intent!).set('state', state!).set('version', version!).set('intent', json!);
        zadd(set!, key!);
        return null;
      },
    ],
    [
      "'HMGET',KEYS[1],'state','version'",
      ([intent, sets, set], [key, state, version, json, previous]) => {
        const old = hashes.get(intent!);
        if (old?.get('version') !== previous) return 0;
        zsets.get(sets! + old!.get('state'))?.delete(key!);
        old!.set('state', state!).set('version', version!).set('intent', json!);
        zadd(set!, key!);
        return 1;
      },
    ],
    [
      "'ZRANGEBYLEX'",
      ([set, prefix], [from, count]) => {
        expect(from === '-' || from!.startsWith('(')).toBe(true);
        return [...(zsets.get(set!) ?? [])]
          .sort(bytewise)
          .filter((member) => from === '-' || bytewise(member, from!.slice(1)) > 0)
          .slice(0, Number(count))
          .map((member) => hget(prefix + member, 'intent'));
      },
    ],
    [
      "'HSETNX'",
      ([ids], [payoutId, key]) => {
        if (hget(ids!, payoutId!) === null) hash(ids!).set(payoutId!, key!);
        return hget(ids!, payoutId!);
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

describe("testStore: the SDK's payout intent stores pass it (redis over a fake Redis)", () => {
  test('node-redis client, Buffer replies', async () => {
    const redis = fakeRedis();
    await check(() => redisStore(nodeRedis(redis, asBuffers)).payouts!);
  });

  test('ioredis client', async () => {
    const redis = fakeRedis();
    await check(() => redisStore(ioredis(redis), { prefix: 'shop:' }).payouts!);
  });
});

test('memoryStore() has its payout intents', async () => {
  const store = memoryStore().payouts!;
  expect(await store.add(intentOf('k'))).toEqual({ intent: intentOf('k'), created: true });
});

describe('postgresStore payout intents', () => {
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

  test('created on first use as POSTGRES_STORE_SQL says: _payouts (key COLLATE "C", state, version, data) and _payout_ids', async () => {
    const db = await pglite();
    await postgresStore(db, { table: 'bp_intents_created' }).payouts!.get('x');
    await db.exec(POSTGRES_STORE_SQL.replaceAll('business_payments_fulfillment', 'bp_intents_by_hand'));
    for (const suffix of ['_payouts', '_payout_ids']) {
      expect(await columns(db, `bp_intents_created${suffix}`)).toEqual(await columns(db, `bp_intents_by_hand${suffix}`));
    }
    expect(await columns(db, 'bp_intents_created_payouts')).toEqual([
      { column_name: 'key', data_type: 'text', is_nullable: 'NO', collation_name: 'C' },
      { column_name: 'state', data_type: 'text', is_nullable: 'NO', collation_name: null },
      { column_name: 'version', data_type: 'integer', is_nullable: 'NO', collation_name: null },
      { column_name: 'data', data_type: 'text', is_nullable: 'NO', collation_name: null },
    ]);
    expect(await indexes(db, 'bp_intents_created_payouts')).toEqual([
      'CREATE UNIQUE INDEX bp_intents_created_payouts_pkey ON public.bp_intents_created_payouts USING btree (key)',
      'CREATE INDEX bp_intents_created_payouts_state ON public.bp_intents_created_payouts USING btree (state, key)',
    ]);
    expect((await columns(db, 'bp_intents_created_payout_ids')).map((column) => (column as { column_name: string }).column_name)).toEqual([
      'payout_id',
      'key',
    ]);
  });

  test('list reads the (state, key) index in order: no sort, however many rows', async () => {
    const db = await pglite();
    const store = postgresStore(db, { table: 'bp_intents_plan' }).payouts!;
    await store.add(intentOf('a'));
    await db.exec('SET enable_seqscan = off');
    try {
      const plan = await db.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT data FROM bp_intents_plan_payouts WHERE state = $1 AND key > $3 ORDER BY key LIMIT $2`,
        ['pending', 10, 'a'],
      );
      const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
      expect(text).toContain('bp_intents_plan_payouts_state');
      expect(text).not.toContain('Sort');
    } finally {
      await db.exec('RESET enable_seqscan');
    }
  });

  test('createTable: false with POSTGRES_STORE_SQL run by hand (schema-qualified): the intents work', async () => {
    const db = await pglite();
    await db.query('CREATE SCHEMA IF NOT EXISTS shop', []);
    const sql = POSTGRES_STORE_SQL.replaceAll('business_payments_fulfillment', 'shop.bp_intents');
    await db.exec(sql);
    await db.exec(sql); // a migration run again changes nothing
    expect(await indexes(db, 'bp_intents_payouts')).toContain(
      'CREATE INDEX "shop.bp_intents_payouts_state" ON shop.bp_intents_payouts USING btree (state, key)',
    );
    const store = postgresStore(db, { table: 'shop.bp_intents', createTable: false }).payouts!;
    expect((await store.add(intentOf('k1'))).created).toBe(true);
    expect(await store.swap({ ...intentOf('k1'), version: 2, state: 'sent' })).toBe(true);
    expect(await store.list('sent', 10)).toEqual([{ ...intentOf('k1'), version: 2, state: 'sent' }]);
    expect(await store.bind('po_1', 'k1')).toBe('k1');
    expect(await store.owner('po_1')).toBe('k1');
    expect((await db.query('SELECT key, state, version FROM shop.bp_intents_payouts', [])).rows).toEqual([
      { key: 'k1', state: 'sent', version: 2 },
    ]);
  });

  test('a store created before the payout tables gains them on first use; its outcomes and inbox stay', async () => {
    const db = await pglite();
    const before = POSTGRES_STORE_SQL.split(';')
      .filter((statement) => !statement.includes('_payout'))
      .join(';');
    expect(before).toContain('_inbox');
    await db.exec(before.replaceAll('business_payments_fulfillment', 'bp_before_payouts'));
    await db.query(`INSERT INTO bp_before_payouts (key, outcome) VALUES ('payment:T1', 'paid')`, []);
    await db.query(`INSERT INTO bp_before_payouts_inbox (id, event) VALUES ('E1', '{}')`, []);
    const store = postgresStore(db, { table: 'bp_before_payouts' });
    expect(await store.payouts!.add(intentOf('k'))).toEqual({ intent: intentOf('k'), created: true });
    expect(await store.outcome('payment:T1')).toBe('paid');
    expect(await store.inbox!.take(60_000)).toMatchObject({ id: 'E1' });
    expect(await store.payouts!.bind('po', 'k')).toBe('k');
  });

  test('the intent is stored as the JSON text of what was given (state and version beside it)', async () => {
    const db = await pglite();
    const intent = intentOf('json', { amount: 0.1 + 0.2, note: 'lone \ud800' });
    await postgresStore(db, { table: 'bp_intents_json' }).payouts!.add(intent);
    expect((await db.query('SELECT key, state, version, data FROM bp_intents_json_payouts', [])).rows).toEqual([
      { key: 'json', state: 'pending', version: 1, data: JSON.stringify(intent) },
    ]);
  });
});

describe('redisStore payout intents', () => {
  test('keys under the prefix and {payouts} (one slot), the JSON as given, no expiry whatever keepDoneMs', async () => {
    const redis = fakeRedis();
    const store: PayoutIntentStore = redisStore(nodeRedis(redis), { prefix: 'shop:', keepDoneMs: 1000 }).payouts!;
    const intent = intentOf('K1', { amount: 1e-7 });
    await store.add(intent);
    expect(redis.calls.at(-1)).toEqual({
      keys: ['shop:{payouts}:i:K1', 'shop:{payouts}:s:pending'],
      args: ['K1', 'pending', '1', JSON.stringify(intent)],
    });
    const moved = { ...intent, version: 2, state: 'unknown' as const };
    expect(await store.swap(moved)).toBe(true);
    expect(redis.calls.at(-1)).toEqual({
      keys: ['shop:{payouts}:i:K1', 'shop:{payouts}:s:', 'shop:{payouts}:s:unknown'],
      args: ['K1', 'unknown', '2', JSON.stringify(moved), '1'],
    });
    expect(Object.fromEntries(redis.hashes.get('shop:{payouts}:i:K1')!)).toEqual({
      state: 'unknown',
      version: '2',
      intent: JSON.stringify(moved),
    });
    expect(redis.zsets.get('shop:{payouts}:s:pending')?.size).toBe(0);
    expect([...redis.zsets.get('shop:{payouts}:s:unknown')!]).toEqual(['K1']);
    await store.list('unknown', 10.7, 'K0');
    expect(redis.calls.at(-1)).toEqual({ keys: ['shop:{payouts}:s:unknown', 'shop:{payouts}:i:'], args: ['(K0', '10'] });
    await store.list('unknown', Infinity);
    expect(redis.calls.at(-1)?.args).toEqual(['-', String(2 ** 31)]);
    const sent = redis.calls.length;
    expect(await store.list('unknown', 0)).toEqual([]);
    expect(redis.calls).toHaveLength(sent);
    await store.bind('po_1', 'K1');
    expect(redis.calls.at(-1)).toEqual({ keys: ['shop:{payouts}:ids'], args: ['po_1', 'K1'] });
    expect(Object.fromEntries(redis.hashes.get('shop:{payouts}:ids')!)).toEqual({ po_1: 'K1' });
    // Every key written is in the {payouts} slot.
    expect(new Set([...redis.hashes.keys(), ...redis.zsets.keys()].map(slotOf))).toEqual(new Set(['payouts']));
  });
});
