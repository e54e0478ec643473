// The store conformance suite (testStore, business-payments/testing) on memoryStore and on
// postgresStore over PGlite (a real Postgres in WASM, in memory): once as the single connection
// it is (claims queued), once behind a one-connection pool (the Pool path: a connection checked
// out per claim). Then what is particular to postgresStore. On real PostgreSQL and Redis
// servers: stores-real.check.ts, run by `npm run test:stores`.
import { PGlite } from '@electric-sql/pglite';
import { bundleEntry } from '../support/bundle.js';
import { onePool } from '../support/pglite-pool.js';
import { skipReasons } from '../store-check/reasons.js';
import type pg from 'pg';
import { afterAll, describe, expect, test, vi } from 'vitest';
import { POSTGRES_STORE_SQL, postgresStore, type PostgresQueryable } from '../../src/fulfillment-postgres.js';
import { memoryStore, type FulfillmentStore, type StoreClaim } from '../../src/fulfillment/store.js';
import { testStore } from '../../src/testing.js';

// One PGlite for the whole file (it takes seconds to start); every case uses keys of its own.
let started: Promise<PGlite> | undefined;
const pglite = () => (started ??= PGlite.create());
afterAll(async () => void (await (await started)?.close()), 30_000);

describe("testStore: the SDK's fulfilment stores pass it", () => {
  test('memory (one instance, its clock moved on)', async () => {
    // Its clock injected: the cases move it on instead of waiting out leases in real time.
    let now = performance.now();
    const report = await testStore(memoryStore({ now: () => now }), { kit: 'fulfillment', elapse: (ms) => void (now += ms) });
    expect(report.failed).toEqual([]);
    expect(skipReasons(report)).toEqual(['another', 'kill', 'transactionalDb', 'transactionalDb']);
    expect(report.passed).toHaveLength(15);
  });

  test('postgres over PGlite (one connection: claims queued)', async () => {
    const db = await pglite();
    const report = await testStore(postgresStore(db), { kit: 'fulfillment', another: () => postgresStore(db), transactionalDb: db });
    expect(report.failed).toEqual([]);
    expect(skipReasons(report)).toEqual(['kill']);
    expect(report.passed).toHaveLength(18);
  }, 120_000);

  test('postgres over PGlite behind a pool (a connection per claim): every connection checked out came back', async () => {
    const pool = onePool(await pglite());
    const store = () => postgresStore(pool, { table: 'bp_pooled' });
    const report = await testStore(store(), { kit: 'fulfillment', another: store, transactionalDb: pool });
    expect(report.failed).toEqual([]);
    expect(skipReasons(report)).toEqual(['kill']);
    expect(report.passed).toHaveLength(18);
    expect(pool.stats.connects).toBeGreaterThan(50);
    expect(pool.stats.out).toBe(0);
  }, 120_000);
});

describe("testStore: the SDK's budget stores pass it", () => {
  test('postgres over PGlite (store.budget: one connection, then a pool)', async () => {
    const db = await pglite();
    const single = await testStore(postgresStore(db).budget!, { kit: 'budget', another: () => postgresStore(db).budget! });
    expect(single.failed).toEqual([]);
    expect(single.passed).toHaveLength(5);
    const pool = onePool(db);
    const pooled = () => postgresStore(pool, { table: 'bp_pooled' }).budget!;
    const report = await testStore(pooled(), { kit: 'budget', another: pooled });
    expect(report.failed).toEqual([]);
    expect(report.passed).toHaveLength(5);
    expect(pool.stats.out).toBe(0);
  }, 120_000);
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
    ).rows as Array<{ column_name: string }>;
  const indexes = async (db: PostgresQueryable, table: string) =>
    (await db.query(`SELECT indexdef FROM pg_indexes WHERE tablename = $1 ORDER BY indexname`, [table])).rows.map(
      (row) => (row as { indexdef: string }).indexdef,
    );
  const INBOX_COLUMNS = ['id', 'seq', 'state', 'event', 'attempts', 'error', 'due', 'token', 'received_at'];

  test('creates its table on first use, as POSTGRES_STORE_SQL says', async () => {
    const db = await pglite();
    await postgresStore(db, { table: 'bp_created' }).outcome('x');
    // Several statements (the outcomes, _open and _inbox tables, the inbox's index): exec, not a prepared query.
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
    expect(await columns(db, 'bp_created_inbox')).toEqual(await columns(db, 'bp_by_hand_inbox'));
    expect((await columns(db, 'bp_created_inbox')).map((column) => column.column_name)).toEqual(INBOX_COLUMNS);
    expect(await indexes(db, 'bp_created_inbox')).toEqual([
      `CREATE INDEX bp_created_inbox_due ON public.bp_created_inbox USING btree (due, seq) WHERE (state = 'pending'::text)`,
      'CREATE UNIQUE INDEX bp_created_inbox_pkey ON public.bp_created_inbox USING btree (id)',
    ]);
  });

  test('an existing store without the _inbox table gains it on first use; its outcomes stay', async () => {
    const db = await pglite();
    // The schema before the inbox: the outcomes and _open tables only.
    const before = POSTGRES_STORE_SQL.split(';').slice(0, 2).join(';');
    expect(before).not.toContain('_inbox');
    await db.exec(before.replaceAll('business_payments_fulfillment', 'bp_before_inbox'));
    await db.query(`INSERT INTO bp_before_inbox (key, outcome) VALUES ('payment:T1', 'paid')`, []);
    const store = postgresStore(db, { table: 'bp_before_inbox' });
    expect(await store.inbox!.add('E1', '{"id":"E1"}')).toBe(true);
    expect(await store.outcome('payment:T1')).toBe('paid');
    expect(await store.claim('payment:T1', 60_000)).toEqual({ done: 'paid' });
    expect((await columns(db, 'bp_before_inbox_inbox')).map((column) => column.column_name)).toEqual(INBOX_COLUMNS);
    expect(await indexes(db, 'bp_before_inbox_inbox')).toHaveLength(2);
    expect(await store.inbox!.take(60_000)).toMatchObject({ id: 'E1', event: '{"id":"E1"}', attempts: 0 });
  });

  test('createTable: false with POSTGRES_STORE_SQL run by hand (a schema-qualified name): the inbox and attempt work', async () => {
    const db = await pglite();
    await db.query('CREATE SCHEMA IF NOT EXISTS shop', []);
    const sql = POSTGRES_STORE_SQL.replaceAll('business_payments_fulfillment', 'shop.bp_migrated');
    await db.exec(sql);
    await db.exec(sql); // a migration run again changes nothing
    // The index lives in its table's schema; its quoted name holds the dot.
    expect(await indexes(db, 'bp_migrated_inbox')).toEqual([
      'CREATE UNIQUE INDEX bp_migrated_inbox_pkey ON shop.bp_migrated_inbox USING btree (id)',
      `CREATE INDEX "shop.bp_migrated_inbox_due" ON shop.bp_migrated_inbox USING btree (due, seq) WHERE (state = 'pending'::text)`,
    ]);
    const store = postgresStore(db, { table: 'shop.bp_migrated', createTable: false });
    const inbox = store.inbox!;
    expect(await inbox.add('E1', '{}')).toBe(true);
    expect(await inbox.add('E1', '{}')).toBe(false);
    const lease = (await inbox.take(60_000)) ?? expect.fail('not taken');
    expect(lease).toMatchObject({ id: 'E1', state: 'pending', attempts: 0, error: undefined });
    expect(typeof lease.at).toBe('number');
    expect(await inbox.finish(lease, { state: 'dead', attempts: 1, error: 'ERP down' })).toBe(true);
    expect(await inbox.list('dead', 10)).toEqual([{ id: 'E1', state: 'dead', event: '{}', attempts: 1, error: 'ERP down', at: lease.at }]);
    expect(await inbox.replay('E1')).toBe(true);
    expect(await inbox.take(60_000, 'E1')).toMatchObject({ id: 'E1', attempts: 0, error: undefined });
    expect([await store.attempt!('order-1'), await store.attempt!('order-1')]).toEqual([1, 2]);
    expect(await store.outcome('attempts:order-1')).toBe('2');
  });

  test('renew: true while the claim is open; false once it ended, or once its pooled connection reported its end', async () => {
    const pool = onePool(await pglite());
    const listeners: Array<() => void> = [];
    // A pool whose connections report their end with an 'error' event, as pg's do.
    const reporting = {
      query: pool.query,
      connect: async () => ({
        ...(await pool.connect()),
        on: (_: 'error', listener: () => void) => void listeners.push(listener),
        removeListener: (_: 'error', listener: () => void) => void listeners.splice(listeners.indexOf(listener), 1),
      }),
    };
    const store = postgresStore(reporting, { table: 'bp_renew' });
    const lost = won(await store.claim('lost', 60_000));
    expect(await lost.renew!()).toBe(true);
    for (const listener of listeners) listener();
    expect(await lost.renew!()).toBe(false);
    await lost.release();
    expect(listeners).toEqual([]);
    const ended = won(await store.claim('ended', 60_000));
    expect(await ended.renew!()).toBe(true);
    await ended.complete('paid');
    expect(await ended.renew!()).toBe(false);
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
    for (const kind of [{ connectionParameters: {} }, { release: vi.fn() }]) {
      // Every statement the store sends through the client, in order.
      const sent: Array<{ text: string; values: string }> = [];
      const connect = vi.fn(() => Promise.reject(new Error('connect() must not be called')));
      const client = {
        ...kind,
        connect,
        query: (text: string, values?: unknown[]) => (sent.push({ text, values: JSON.stringify(values ?? []) }), db.query(text, values)),
      };
      const store = postgresStore(client);
      const [a, b] = [`one-a-${crypto.randomUUID()}`, `one-b-${crypto.randomUUID()}`];
      const first = won(await store.claim(a, 60_000));
      // A claim of another key meanwhile waits for the connection: it starts when the first ends.
      let second: Awaited<ReturnType<FulfillmentStore['claim']>> | undefined;
      const waiting = store.claim(b, 60_000).then((result) => (second = result));
      const claimDb = first.db as PostgresQueryable; // the connection, in the claim's transaction
      await claimDb.query('SELECT 1 AS mine', []);
      await claimDb.query('SELECT 1 AS mine', []);
      expect(second).toBeUndefined();
      await first.complete('paid');
      await won(await waiting).complete('paid');

      expect(connect).not.toHaveBeenCalled();
      if ('release' in kind) expect(kind.release).not.toHaveBeenCalled(); // the caller's to give back
      // One transaction at a time on the connection: the first claim's whole (its db's
      // statements inside it), then the second claim's first statement, and its transaction.
      const firstOfB = sent.findIndex((statement) => statement.values.includes(b));
      const marks: Array<[RegExp, string]> = [
        [/^BEGIN\b/, 'BEGIN'],
        [/^(COMMIT|ROLLBACK)\b/, 'END'],
        [/AS mine$/, 'db'],
      ];
      const course = sent.flatMap(({ text }, i) => {
        const mark = marks.find(([pattern]) => pattern.test(text))?.[1] ?? (i === firstOfB ? 'b' : undefined);
        return mark ? [mark] : [];
      });
      expect(course).toEqual(['BEGIN', 'db', 'db', 'END', 'b', 'BEGIN', 'END']);
      expect([await store.outcome(a), await store.outcome(b)]).toEqual(['paid', 'paid']);
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
    expect(inputs).toEqual([
      'src/billing/postgres.ts',
      'src/core/base-error.ts',
      'src/fulfillment-postgres.ts',
      'src/fulfillment/postgres-budget.ts',
      'src/fulfillment/postgres-claims.ts',
      'src/fulfillment/postgres-inbox.ts',
      'src/fulfillment/postgres-session.ts',
      'src/fulfillment/postgres.ts',
      'src/fulfillment/shared-budget.ts',
      'src/internal/pace.ts',
      'src/payouts/postgres.ts',
    ]);
    // 1,536 until the `_open` table (remember/unsettled, for the earlier generation's reconcile);
    // 1,664 until the inbox, renew and attempts (2,348 B with them); 2,368 until the nested
    // claim (an order's key in its payment's transaction: 2,448 B); 2,496 until the payout
    // intents (their two tables: 2,938 B); 3,072 until the subscription records (two tables
    // more: 3,133 B); 3,328 until the request budget (`_budget`, and the shared pacer over it:
    // 4,283 B measured, +10 %).
    expect(gzipBytes).toBeLessThan(4712);
  });

  test('pg and PGlite clients type-check as the store client', () => {
    const typed = (pool: pg.Pool, client: pg.Client, lite: PGlite) => [postgresStore(pool), postgresStore(client), postgresStore(lite)];
    expect(typeof typed).toBe('function');
  });
});
