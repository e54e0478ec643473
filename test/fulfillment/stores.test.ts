// The store conformance suite (./conformance.ts) on memoryStore and on postgresStore over
// PGlite (a real Postgres in WASM, in memory): once as the single connection it is (claims
// queued), once behind a one-connection pool (the Pool path: a connection checked out per
// claim). Then what is particular to postgresStore. On real PostgreSQL and Redis servers:
// stores-real.check.ts, run by `npm run test:stores`.
import { PGlite } from '@electric-sql/pglite';
import { bundleEntry } from '../support/bundle.js';
import type pg from 'pg';
import { afterAll, describe, expect, test } from 'vitest';
import { POSTGRES_STORE_SQL, postgresStore, type PostgresQueryable } from '../../src/fulfillment-postgres.js';
import { memoryStore, type FulfillmentStore, type StoreClaim } from '../../src/fulfillment/store.js';
import { runStoreConformance } from './conformance.js';

// One PGlite for the whole file (it takes seconds to start); every case uses keys of its own.
let started: Promise<PGlite> | undefined;
const pglite = () => (started ??= PGlite.create());
afterAll(async () => void (await (await started)?.close()), 30_000);

/**
 * A pool of PGlite's one connection, handed out in turns as pg's Pool hands out connections:
 * `connect()` → a client with `query` and `release(destroy?)`; `query` checks one out for a
 * statement. Counts what is out, so the cases can check every connection came back.
 */
function onePool(db: PGlite) {
  let tail = Promise.resolve();
  const stats = { out: 0, destroyed: 0, connects: 0 };
  const connect = async () => {
    let free!: () => void;
    const previous = tail;
    tail = previous.then(() => new Promise<void>((resolve) => (free = resolve)));
    await previous;
    stats.connects++;
    stats.out++;
    let released = false;
    return {
      query: (text: string, values?: unknown[]) => (released ? Promise.reject(new Error('used after release')) : db.query(text, values)),
      release(destroy?: boolean) {
        if (released) throw new Error('released twice');
        released = true;
        stats.out--;
        if (destroy) stats.destroyed++;
        free();
      },
    };
  };
  const query = async (text: string, values?: unknown[]) => {
    const client = await connect();
    try {
      return await client.query(text, values);
    } finally {
      client.release();
    }
  };
  return { connect, query, stats };
}

runStoreConformance('memory', async () => ({ makeStore: () => memoryStore(), shared: false, close: async () => {} }));

runStoreConformance(
  'postgres over PGlite (one connection: claims queued)',
  async () => {
    const db = await pglite();
    return { makeStore: () => postgresStore(db), transactionalDb: db, close: async () => {} };
  },
  { db: true },
);

const pooled = { pool: undefined as ReturnType<typeof onePool> | undefined };
runStoreConformance(
  'postgres over PGlite behind a pool (a connection per claim)',
  async () => {
    const pool = (pooled.pool = onePool(await pglite()));
    return { makeStore: () => postgresStore(pool, { table: 'bp_pooled' }), transactionalDb: pool, close: async () => {} };
  },
  { db: true },
);

test('the pool path returned every connection it checked out', () => {
  expect(pooled.pool?.stats.connects).toBeGreaterThan(50);
  expect(pooled.pool?.stats.out).toBe(0);
});

describe('postgresStore', () => {
  const won = (result: Awaited<ReturnType<FulfillmentStore['claim']>>): StoreClaim => {
    if (!('claimed' in result)) throw new Error(`expected a won claim, got ${JSON.stringify(result)}`);
    return result.claimed;
  };
  const columns = async (db: PostgresQueryable, table: string) =>
    (
      await db.query(
        `SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position`,
        [table],
      )
    ).rows;

  test('creates its table on first use, as POSTGRES_STORE_SQL says', async () => {
    const db = await pglite();
    await postgresStore(db, { table: 'bp_created' }).outcome('x');
    // Two statements (the outcomes and the _open table): exec, not a prepared query.
    await db.exec(POSTGRES_STORE_SQL.replaceAll('business_payments_fulfillment', 'bp_by_hand'));
    expect(await columns(db, 'bp_created')).toEqual(await columns(db, 'bp_by_hand'));
    expect(await columns(db, 'bp_created')).toEqual([
      { column_name: 'key', data_type: 'text', is_nullable: 'NO', column_default: null },
      { column_name: 'outcome', data_type: 'text', is_nullable: 'NO', column_default: null },
      { column_name: 'completed_at', data_type: 'timestamp with time zone', is_nullable: 'NO', column_default: 'now()' },
    ]);
    const { rows } = await db.query(`SELECT indexdef FROM pg_indexes WHERE tablename = 'bp_created'`, []);
    expect(rows).toEqual([{ indexdef: expect.stringContaining('UNIQUE INDEX bp_created_pkey ON public.bp_created USING btree (key)') }]);
    expect(await columns(db, 'bp_created_open')).toEqual(await columns(db, 'bp_by_hand_open'));
    expect(await columns(db, 'bp_created_open')).toEqual([
      { column_name: 'key', data_type: 'text', is_nullable: 'NO', column_default: null },
      { column_name: 'seq', data_type: 'bigint', is_nullable: 'NO', column_default: null },
      { column_name: 'noted_at', data_type: 'timestamp with time zone', is_nullable: 'NO', column_default: 'now()' },
    ]);
  });

  test('first uses at once, from several stores, create the table once; a schema-qualified name works', async () => {
    const db = await pglite();
    await db.query('CREATE SCHEMA IF NOT EXISTS shop', []);
    const pool = onePool(db);
    const stores = [1, 2, 3, 4].map(() => postgresStore(pool, { table: 'shop.fulfilled' }));
    // Each completes as it wins: the pool has one connection, which a claim holds until it ends.
    await Promise.all(stores.map(async (store, i) => won(await store.claim(`k${i}`, 60_000)).complete('paid')));
    expect((await db.query(`SELECT count(*)::int AS n FROM shop.fulfilled`, [])).rows).toEqual([{ n: 4 }]);
  });

  test('createTable: false never creates it: the driver error says the table is missing', async () => {
    const db = await pglite();
    const store = postgresStore(db, { table: 'bp_missing', createTable: false });
    await expect(store.outcome('x')).rejects.toThrow(/bp_missing.*does not exist/);
    await expect(store.claim('x', 60_000)).rejects.toThrow(/bp_missing.*does not exist/);
    // The failed claim left no transaction open: the connection serves the next one.
    await db.exec(POSTGRES_STORE_SQL.replaceAll('business_payments_fulfillment', 'bp_missing'));
    await won(await store.claim('x', 60_000)).complete('paid');
    expect(await store.outcome('x')).toBe('paid');
  });

  test('table must be an SQL name', () => {
    for (const table of ['', '1st', 'a b', 'x; DROP TABLE y', '"quoted"', 'a.b.c', 'a-b', 'a$$b']) {
      expect(() => postgresStore({ query: async () => ({ rows: [] }) }, { table })).toThrow(/table must be an SQL name/);
    }
    expect(() => postgresStore({ query: async () => ({ rows: [] }) }, { table: 'public.fulfilled_2' })).not.toThrow();
  });

  test('a claim ended refuses db queries and a second end; a failed statement in the handler leaves nothing recorded', async () => {
    const db = await pglite();
    const store = postgresStore(db);
    const claim = won(await store.claim('ended', 60_000));
    const claimDb = claim.db as PostgresQueryable;
    expect((await claimDb.query('SELECT 1 AS one', [])).rows).toEqual([{ one: 1 }]);
    await claim.complete('paid');
    await expect(claimDb.query('SELECT 1', [])).rejects.toThrow(/the claim on 'ended' has ended/);
    await expect(claim.complete('again')).rejects.toThrow(/has ended/);
    await claim.release(); // a no-op now
    expect(await store.outcome('ended')).toBe('paid');

    // The handler's statement failed (and it swallowed the error): the transaction is aborted,
    // so complete fails instead of recording an outcome without the handler's writes.
    const failed = won(await store.claim('aborted', 60_000));
    await (failed.db as PostgresQueryable).query('SELECT * FROM no_such_table', []).catch(() => {});
    await expect(failed.complete('paid')).rejects.toThrow(/aborted/);
    expect(await store.outcome('aborted')).toBeUndefined();
    await won(await store.claim('aborted', 60_000)).release();
  });

  test('a pg Client (connect() opens it) and a client checked out of a pool are used as one connection', async () => {
    const db = await pglite();
    const refuse = () => Promise.reject(new Error('connect() must not be called'));
    for (const client of [
      { connectionParameters: {}, connect: refuse, query: (text: string, values?: unknown[]) => db.query(text, values) },
      { release: () => {}, connect: refuse, query: (text: string, values?: unknown[]) => db.query(text, values) },
    ]) {
      const store = postgresStore(client);
      await won(await store.claim(`one-${crypto.randomUUID()}`, 60_000)).complete('paid');
    }
  });

  test('a driver error propagates as the driver threw it; a failed ROLLBACK destroys the pooled connection', async () => {
    const db = await pglite();
    const pool = onePool(db);
    const failing = {
      connect: async () => {
        const client = await pool.connect();
        return {
          ...client,
          query: (text: string, values?: unknown[]) =>
            text === 'ROLLBACK' ? Promise.reject(new Error('gone')) : client.query(text, values),
        };
      },
      query: pool.query,
    };
    const store = postgresStore(failing);
    const claim = won(await store.claim('destroyed', 60_000));
    const destroyed = pool.stats.destroyed;
    await claim.release();
    expect(pool.stats.destroyed).toBe(destroyed + 1);
    const boom = Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' });
    const down = postgresStore({ query: () => Promise.reject(boom) });
    await expect(down.outcome('x')).rejects.toBe(boom);
  });

  test('the entry is small and standalone: no driver, no node built-in, no ky', async () => {
    const { inputs, gzipBytes } = await bundleEntry('src/fulfillment-postgres.ts');
    expect(inputs).toEqual(['src/fulfillment-postgres.ts', 'src/fulfillment/postgres.ts']);
    // 1,536 until the `_open` table (remember/unsettled, for the earlier generation's reconcile).
    expect(gzipBytes).toBeLessThan(1664);
  });

  test('pg and PGlite clients type-check as the store client', () => {
    const typed = (pool: pg.Pool, client: pg.Client, lite: PGlite) => [postgresStore(pool), postgresStore(client), postgresStore(lite)];
    expect(typeof typed).toBe('function');
  });
});
