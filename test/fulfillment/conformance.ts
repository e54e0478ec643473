// The conformance suite every fulfillment store runs (memory and PGlite in `npm test`,
// PostgreSQL and Redis servers in `npm run test:stores`): what the FulfillmentStore interface
// promises, checked the same way for each. Real timers throughout (leases of a few hundred ms),
// so a store's own clock and its server's are what is tested; a store whose clock is injected
// (memoryStore's `now`) has it moved on instead (`elapse`). Each case uses keys of its own,
// so a persistent database can be reused across runs.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ClaimResult, FulfillmentStore, InboxStore, StoreClaim } from '../../src/fulfillment/store.js';

/** Reads and writes the handler's own data, to check that `claimed.db` commits with the claim. */
interface TransactionalDb {
  /** How many rows `write` made for `key` that are committed (read outside any claim). */
  count(key: string): Promise<number>;
  /** Writes one row for `key` through a claim's `db`. */
  write(db: unknown, key: string): Promise<void>;
}

/** Anything with `query(text, values)` → `{ rows }` (a pg Pool, PGlite). */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** What a store's `setup` gives the suite. */
export interface StoreSetup {
  /**
   * A new store instance on the same backing data, as another process would make it (for a
   * server store: preferably over a connection or client of its own).
   */
  makeStore: () => FulfillmentStore;
  /** Closes what setup opened. */
  close: () => Promise<void>;
  /**
   * `false` when two `makeStore()` instances share nothing (`memoryStore`): the cases then
   * use one instance, and the checks that need a second instance (persistence) are skipped.
   * Default `true`.
   */
  shared?: boolean;
  /**
   * Kills a claim's holder as a crash would (its connection dropped), without its
   * `complete` or `release`. Without it, only the lease running out is checked.
   */
  kill?: (claim: StoreClaim) => Promise<void>;
  /**
   * For stores whose claims are transactions (`claimed.db`): `{ count, write }`, or a
   * Postgres queryable on the same database ({@link postgresWrites} makes them from it).
   */
  transactionalDb?: TransactionalDb | Queryable;
  /**
   * Moves the store's clock on by `ms` (a lease running out, a delay passing). Default: waits
   * `ms` of real time, as a store timed on its server's clock needs.
   */
  elapse?: (ms: number) => Promise<void>;
}

/** A lease short enough to wait out: the cases wait it out with real timers (or `elapse` it). */
const LEASE = 300;
/** A lease no case waits out. */
const LONG = 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const freshKey = (what: string) => `conformance:${what}:${crypto.randomUUID()}`;

function won(result: ClaimResult): StoreClaim {
  if (!('claimed' in result)) throw new Error(`expected a won claim, got ${JSON.stringify(result)}`);
  return result.claimed;
}

/** Claims `key` again and again until won, for at most `withinMs` (a lease's end, a dropped connection). */
async function claimWithin(store: FulfillmentStore, key: string, withinMs: number): Promise<StoreClaim> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const result = await store.claim(key, LONG);
    if ('claimed' in result || Date.now() > deadline) return won(result);
    await sleep(20);
  }
}

/**
 * `{ count, write }` on a Postgres queryable: a table of the suite's own
 * (`business_payments_conformance_writes`), written through `claimed.db`.
 */
async function postgresWrites(db: Queryable): Promise<TransactionalDb> {
  await db.query('CREATE TABLE IF NOT EXISTS business_payments_conformance_writes (key text NOT NULL)', []);
  return {
    count: async (key) => {
      const { rows } = await db.query('SELECT count(*)::int AS n FROM business_payments_conformance_writes WHERE key = $1', [key]);
      return (rows[0] as { n: number }).n;
    },
    write: async (claimDb, key) =>
      void (await (claimDb as Queryable).query('INSERT INTO business_payments_conformance_writes (key) VALUES ($1)', [key])),
  };
}

/**
 * A `kill` for a Postgres store whose `claimed.db` is the claim's connection: terminates that
 * connection's backend from `admin` (another connection), as a crash of its process would end it.
 */
export function postgresKill(admin: Queryable): (claim: StoreClaim) => Promise<void> {
  return async (claim) => {
    const { rows } = await (claim.db as Queryable).query('SELECT pg_backend_pid() AS pid', []);
    await admin.query('SELECT pg_terminate_backend($1)', [(rows[0] as { pid: number }).pid]);
  };
}

/**
 * Registers the conformance cases for one store. `setup` runs once before them (60 s allowed:
 * a server or PGlite may be starting) and `close` once after.
 *
 * @example
 * ```ts
 * runStoreConformance('postgres (pg Pool)', async () => {
 *   const pools = [1, 2, 3].map(() => new pg.Pool({ connectionString: url }));
 *   let next = 0;
 *   return {
 *     makeStore: () => postgresStore(pools[next++ % pools.length]!),
 *     transactionalDb: pools[0]!,
 *     kill: postgresKill(pools[0]!),
 *     close: async () => void (await Promise.all(pools.map((pool) => pool.end()))),
 *   };
 * });
 * ```
 */
export function runStoreConformance(
  name: string,
  setup: () => Promise<StoreSetup>,
  /** What the store offers beyond the interface: the cases for it are registered only then (never skipped). */
  has: { kill?: boolean; db?: boolean } = {},
): void {
  describe(`store conformance: ${name}`, () => {
    let given: StoreSetup | undefined;
    let writes: TransactionalDb | undefined;
    beforeAll(async () => {
      given = await setup();
      const db = given.transactionalDb;
      writes = db && 'query' in db ? await postgresWrites(db) : db;
    }, 60_000);
    afterAll(() => given?.close(), 30_000);

    const it = (): StoreSetup => given ?? expect.fail('setup failed');
    /** `ms` on the store's clock: moved on, or waited out in real time. */
    const wait: Wait = async (ms) => void (await (it().elapse ?? sleep)(ms));
    const shared = () => it().shared !== false;
    // `count` stores as separate processes would have them; one, for a store that shares nothing.
    const stores = (count: number) => {
      const one = it().makeStore();
      return Array.from({ length: count }, (_, i) => (i === 0 || !shared() ? one : it().makeStore()));
    };

    registerExclusion(stores);
    registerEnds(stores, shared);
    registerDeath(stores, it, wait, has.kill === true);
    registerUnsettled(stores);
    registerRenewal(stores, wait);
    registerAttempts(stores);
    registerInbox(stores, shared, wait);
    if (has.db) registerTransactional(stores, it, wait, () => writes ?? expect.fail('setup gave no transactionalDb'));
  });
}

function registerExclusion(stores: (count: number) => FulfillmentStore[]): void {
  test('200 concurrent claims of one key: exactly one wins, the others are busy; then all see the outcome', async () => {
    const key = freshKey('race');
    const all = stores(4);
    const claimAll = () => Promise.all(Array.from({ length: 200 }, (_, i) => all[i % all.length]!.claim(key, LONG)));
    const results = await claimAll();
    const winners = results.filter((result) => 'claimed' in result);
    expect(winners).toHaveLength(1);
    expect(results.filter((result) => 'busy' in result)).toHaveLength(199);
    await won(winners[0]!).complete('paid');
    expect(await claimAll()).toEqual(Array.from({ length: 200 }, () => ({ done: 'paid' })));
  });

  test('200 concurrent claims racing the winner completing: one runs, the others are busy or see its outcome', async () => {
    const key = freshKey('race-complete');
    const all = stores(4);
    const results = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const result = await all[i % all.length]!.claim(key, LONG);
        if ('claimed' in result) await result.claimed.complete('paid');
        return result;
      }),
    );
    expect(results.filter((result) => 'claimed' in result)).toHaveLength(1);
    expect(results.filter((result) => !('claimed' in result) && !('busy' in result) && result.done !== 'paid')).toEqual([]);
    expect(await all[0]!.outcome(key)).toBe('paid');
  });

  test('concurrent claims of 20 keys: one winner per key, none blocks another', async () => {
    const keys = Array.from({ length: 20 }, (_, i) => freshKey(`many-${i}`));
    const all = stores(4);
    const results = await Promise.all(
      keys.flatMap((key, k) =>
        [0, 1, 2, 3, 4].map(async (i) => {
          const result = await all[(k + i) % all.length]!.claim(key, LONG);
          if ('claimed' in result) await result.claimed.complete(`outcome-${k}`);
          return { key, won: 'claimed' in result };
        }),
      ),
    );
    for (const key of keys) expect(results.filter((result) => result.key === key && result.won)).toHaveLength(1);
    expect(await Promise.all(keys.map((key) => all[1]!.outcome(key)))).toEqual(keys.map((_, k) => `outcome-${k}`));
  });
}

function registerEnds(stores: (count: number) => FulfillmentStore[], shared: () => boolean): void {
  test('complete records the outcome: later claims get { done }, outcome() returns it (from a new instance too, where stores share data)', async () => {
    const key = freshKey('complete');
    const [store] = stores(1) as [FulfillmentStore];
    const claim = won(await store.claim(key, LONG));
    await claim.complete('paid');
    expect(await store.claim(key, LONG)).toEqual({ done: 'paid' });
    expect(await store.outcome(key)).toBe('paid');
    expect(await store.outcome(freshKey('never-claimed'))).toBeUndefined();
    // Persistence: a store made afresh (a new process) reads what the first one recorded.
    if (shared()) {
      const fresh = stores(2)[1]!;
      expect(await fresh.claim(key, LONG)).toEqual({ done: 'paid' });
      expect(await fresh.outcome(key)).toBe('paid');
    }
  });

  test('release frees the key at once and records nothing', async () => {
    const key = freshKey('release');
    const [a, b] = stores(2) as [FulfillmentStore, FulfillmentStore];
    const claim = won(await a.claim(key, LONG));
    expect(await b.claim(key, LONG)).toEqual({ busy: true });
    // Asked while the claim is held (a store on one connection answers once it is free).
    const during = a.outcome(key);
    await claim.release();
    expect(await during).toBeUndefined();
    const next = won(await b.claim(key, LONG));
    await next.release();
    expect(await a.outcome(key)).toBeUndefined();
    await won(await a.claim(key, LONG)).complete('failed');
    expect(await b.outcome(key)).toBe('failed');
  });
}

type Wait = (ms: number) => Promise<void>;

function registerDeath(stores: (count: number) => FulfillmentStore[], it: () => StoreSetup, wait: Wait, killable: boolean): void {
  test('a holder that dies (its lease runs out, never completed nor released): another claimer then wins', async () => {
    const key = freshKey('lease');
    const [a, b] = stores(2) as [FulfillmentStore, FulfillmentStore];
    won(await a.claim(key, LEASE)); // its holder is gone: nothing ends this claim but its lease
    expect(await b.claim(key, LONG)).toEqual({ busy: true });
    await wait(LEASE);
    const next = await claimWithin(b, key, 1_000);
    await next.complete('paid');
    expect(await a.outcome(key)).toBe('paid');
  });

  if (killable)
    test('a holder whose connection drops (a crash) frees the key without waiting for its lease', async () => {
      const kill = it().kill ?? expect.fail('setup gave no kill');
      const key = freshKey('kill');
      const [a, b] = stores(2) as [FulfillmentStore, FulfillmentStore];
      const holder = won(await a.claim(key, LONG));
      expect(await b.claim(key, LONG)).toEqual({ busy: true });
      await kill(holder);
      const next = await claimWithin(b, key, 1_000);
      await next.complete('paid');
      expect(await a.outcome(key)).toBe('paid');
      await expect(holder.complete('stale')).rejects.toThrow();
      expect(await b.outcome(key)).toBe('paid');
    });

  test('a stale holder (lease ran out, taken over) cannot end the new claim nor overwrite its outcome', async () => {
    const key = freshKey('stale');
    const [a, b, c] = stores(3) as [FulfillmentStore, FulfillmentStore, FulfillmentStore];
    const stale = won(await a.claim(key, LEASE));
    await wait(LEASE);
    const fresh = await claimWithin(b, key, 1_000);
    await stale.complete('stale').catch(() => {}); // a store may reject it or ignore it
    await stale.release().catch(() => {});
    expect(await c.claim(key, LONG)).toEqual({ busy: true });
    await fresh.complete('fresh');
    expect(await c.claim(key, LONG)).toEqual({ done: 'fresh' });
    expect(await a.outcome(key)).toBe('fresh');
  });

  test("a stale holder's complete says so: it resolves false or rejects (the kit then never answers `ran`); a live one's does not", async () => {
    const key = freshKey('lost');
    const [a, b] = stores(2) as [FulfillmentStore, FulfillmentStore];
    const stale = won(await a.claim(key, LEASE));
    await wait(LEASE);
    const fresh = await claimWithin(b, key, 1_000);
    expect(await stale.complete('stale').catch(() => false)).toBe(false);
    expect(await fresh.complete('fresh')).not.toBe(false);
    expect(await a.outcome(key)).toBe('fresh');
  });
}

function registerTransactional(
  stores: (count: number) => FulfillmentStore[],
  it: () => StoreSetup,
  wait: Wait,
  getWrites: () => TransactionalDb,
): void {
  // `count` reads outside any claim: a store on a single connection has none open then.
  const needs = () => getWrites();

  test('claimed.db: a write commits with complete and is rolled back by release', async () => {
    const writes = needs();
    const [store] = stores(1) as [FulfillmentStore];
    const kept = freshKey('db-complete');
    const claim = won(await store.claim(kept, LONG));
    await writes.write(claim.db, kept);
    await claim.complete('paid');
    expect(await writes.count(kept)).toBe(1);

    const undone = freshKey('db-release');
    const first = won(await store.claim(undone, LONG));
    await writes.write(first.db, undone);
    await first.release();
    expect(await writes.count(undone)).toBe(0);
    // The retry (the delivery comes again) writes once: exactly once in all.
    const retry = won(await store.claim(undone, LONG));
    await writes.write(retry.db, undone);
    await retry.complete('paid');
    expect(await writes.count(undone)).toBe(1);
  });

  test('claimed.db: a holder that dies (lease out, or killed) leaves no write; the next holder writes exactly once', async () => {
    const writes = needs();
    const [a, b] = stores(2) as [FulfillmentStore, FulfillmentStore];
    const key = freshKey('db-lease');
    const stale = won(await a.claim(key, LEASE));
    await writes.write(stale.db, key);
    await wait(LEASE);
    const fresh = await claimWithin(b, key, 1_000);
    await writes.write(stale.db, key).catch(() => {}); // too late: must not commit
    await writes.write(fresh.db, key);
    await stale.complete('stale').catch(() => {});
    await fresh.complete('paid');
    expect(await writes.count(key)).toBe(1);
    expect(await a.outcome(key)).toBe('paid');

    const kill = it().kill;
    if (!kill) return;
    const killedKey = freshKey('db-kill');
    const killed = won(await a.claim(killedKey, LONG));
    await writes.write(killed.db, killedKey);
    await kill(killed);
    const next = await claimWithin(b, killedKey, 1_000);
    await writes.write(next.db, killedKey);
    await next.complete('paid');
    expect(await writes.count(killedKey)).toBe(1);
    await killed.release(); // gives its dead connection back (else its lease would, a minute on)
  });
}

function registerUnsettled(stores: (count: number) => FulfillmentStore[]): void {
  test('remember/unsettled: reported keys without an outcome, oldest first, once each, from every instance; settled ones drop out', async () => {
    const [a, b] = stores(2) as [FulfillmentStore, FulfillmentStore];
    const [first, paid, last] = ['first', 'paid', 'last'].map((what) => freshKey(`open-${what}`)) as [string, string, string];
    const done = freshKey('open-done');
    await won(await a.claim(done, LONG)).complete('paid');
    for (const key of [first, paid, done, last, first]) await a.remember!(key);
    const mine = (keys: string[]) => keys.filter((key) => [first, paid, last, done].includes(key));
    expect(mine(await b.unsettled!(100_000))).toEqual([first, paid, last]);
    await won(await b.claim(paid, LONG)).complete('paid');
    expect(mine(await a.unsettled!(100_000))).toEqual([first, last]);
    // The limit counts unsettled keys only.
    const page = await a.unsettled!(1);
    expect(page).toHaveLength(1);
  });
}

function registerRenewal(stores: (count: number) => FulfillmentStore[], wait: Wait): void {
  test('renew keeps a claim past its lease (no one else wins meanwhile); a stale holder cannot renew', async () => {
    const key = freshKey('renew');
    const [a, b] = stores(2) as [FulfillmentStore, FulfillmentStore];
    const holder = won(await a.claim(key, LEASE));
    expect(holder.renew).toBeTypeOf('function');
    // Renewed every third of the lease for three leases: busy throughout.
    for (let i = 0; i < 9; i++) {
      await wait(LEASE / 3);
      expect(await holder.renew!()).toBe(true);
      expect(await b.claim(key, LONG)).toEqual({ busy: true });
    }
    await holder.complete('paid');
    expect(await b.outcome(key)).toBe('paid');

    const staleKey = freshKey('renew-stale');
    const stale = won(await a.claim(staleKey, LEASE));
    await wait(LEASE);
    const fresh = await claimWithin(b, staleKey, 1_000);
    expect(await stale.renew!().catch(() => false)).toBe(false);
    await fresh.complete('fresh');
    expect(await a.outcome(staleKey)).toBe('fresh');
  });
}

function registerAttempts(stores: (count: number) => FulfillmentStore[]): void {
  test('attempt(order) counts 1, 2, 3… across instances, concurrently without a gap or a repeat; outcome("attempts:" + order) reads it', async () => {
    const order = freshKey('order');
    const all = stores(4);
    const numbers = await Promise.all(Array.from({ length: 40 }, (_, i) => all[i % all.length]!.attempt!(order)));
    expect([...numbers].sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(await all[1]!.outcome(`attempts:${order}`)).toBe('40');
    expect(await all[2]!.attempt!(freshKey('other-order'))).toBe(1);
  });
}

function registerInbox(stores: (count: number) => FulfillmentStore[], shared: () => boolean, wait: Wait): void {
  const inboxes = (count: number): InboxStore[] => stores(count).map((store) => store.inbox ?? expect.fail('the store has no inbox'));
  const event = (id: string) => JSON.stringify({ id, type: 'payment.completed', data: { trx_id: id } });

  test('inbox: add is once per id; take leases a due record to one taker of many; finish is fenced by the token', async () => {
    const [a, b, c] = inboxes(3) as [InboxStore, InboxStore, InboxStore];
    const id = freshKey('delivery');
    expect(await a.add(id, event(id))).toBe(true);
    expect(await b.add(id, 'another body')).toBe(false);
    // Many takers of that one id at once: exactly one gets it.
    const taken = (await Promise.all([a, b, c, a, b, c].map((inbox) => inbox.take(LONG, id)))).filter((lease) => lease !== undefined);
    expect(taken).toHaveLength(1);
    const lease = taken[0]!;
    expect(lease).toMatchObject({ id, state: 'pending', event: event(id), attempts: 0 });
    expect(typeof lease.token).toBe('string');
    expect(Math.abs(lease.at - Date.now())).toBeLessThan(60_000);
    expect(await b.take(LONG, id)).toBeUndefined();
    // A forged token finishes nothing.
    expect(await c.finish({ ...lease, token: 'not-yours' }, { state: 'done', attempts: 0 })).toBe(false);
    expect(await b.finish(lease, { state: 'done', attempts: 0 })).toBe(true);
    expect(await c.take(LONG, id)).toBeUndefined();
    expect((await a.list('done', 100_000)).some((record) => record.id === id)).toBe(true);
    expect((await a.list('pending', 100_000)).some((record) => record.id === id)).toBe(false);
  });

  test('inbox: a taker that dies loses its lease; the record is taken again, and the stale token is refused', async () => {
    const [a, b] = inboxes(2) as [InboxStore, InboxStore];
    const id = freshKey('delivery-lease');
    await a.add(id, event(id));
    const first = (await a.take(LEASE, id)) ?? expect.fail('not taken');
    expect(await b.take(LONG, id)).toBeUndefined();
    await wait(LEASE + 50);
    const second = (await b.take(LONG, id)) ?? expect.fail('not taken again');
    expect(second.token).not.toBe(first.token);
    expect(await a.finish(first, { state: 'done', attempts: 0 })).toBe(false);
    expect(await b.finish(second, { state: 'pending', attempts: 1, delayMs: LONG, error: 'verify timed out' })).toBe(true);
    // Pending again, but not due: no taker gets it, and it is listed with its error.
    expect(await a.take(LONG, id)).toBeUndefined();
    expect((await b.list('pending', 100_000)).find((record) => record.id === id)).toMatchObject({ attempts: 1, error: 'verify timed out' });
  });

  test('inbox: take without an id takes due records, each once, across takers; a delay makes a record due later', async () => {
    const [a, b] = inboxes(2) as [InboxStore, InboxStore];
    const ids = [0, 1, 2, 3, 4].map((i) => freshKey(`queue-${i}`));
    for (const id of ids) await a.add(id, event(id));
    const got: string[] = [];
    // Takes until these five are taken (records of other cases, or of earlier runs on a kept
    // database, may be due too: they are taken and finished as done).
    for (let i = 0; i < 10_000 && got.length < ids.length; i++) {
      const lease = await [a, b][i % 2]!.take(LONG);
      if (!lease) break;
      if (ids.includes(lease.id)) got.push(lease.id);
      await [b, a][i % 2]!.finish(
        lease,
        lease.id === ids[0] ? { state: 'pending', attempts: 1, delayMs: LEASE } : { state: 'done', attempts: 0 },
      );
    }
    expect([...got].sort()).toEqual([...ids].sort());
    expect(await a.take(LONG, ids[0])).toBeUndefined();
    await wait(LEASE + 50);
    const again = (await b.take(LONG, ids[0])) ?? expect.fail('not due again');
    expect(again.attempts).toBe(1);
    await b.finish(again, { state: 'dead', attempts: 2, error: 'gave up' });
    expect((await a.list('dead', 100_000)).find((record) => record.id === ids[0])).toMatchObject({
      attempts: 2,
      error: 'gave up',
      state: 'dead',
    });
  });

  test('inbox: replay makes a dead or done record pending and due at once, attempts 0; an unknown id is false; review records are listed', async () => {
    const [a, b] = inboxes(2) as [InboxStore, InboxStore];
    const id = freshKey('dead');
    await a.add(id, event(id));
    const lease = (await a.take(LONG, id)) ?? expect.fail('not taken');
    await a.finish(lease, { state: 'dead', attempts: 5, error: 'ERP down' });
    expect(await b.take(LONG, id)).toBeUndefined();
    expect(await b.replay(id)).toBe(true);
    expect(await b.replay(freshKey('never'))).toBe(false);
    const again = (await a.take(LONG, id)) ?? expect.fail('not due after replay');
    expect(again).toMatchObject({ id, state: 'pending', attempts: 0 });
    expect((await b.list('dead', 100_000)).some((record) => record.id === id)).toBe(false);

    const review = freshKey('review');
    expect(await a.add(review, JSON.stringify({ trx_id: review, reason: 'duplicate' }), 'review')).toBe(true);
    expect(await b.take(LONG, review)).toBeUndefined();
    const listed = (await b.list('review', 100_000)).filter((record) => record.id === review);
    expect(listed).toEqual([expect.objectContaining({ id: review, state: 'review', attempts: 0 })]);
    // Oldest first, and the limit holds.
    expect(await b.list('review', 1)).toHaveLength(1);
    if (shared()) expect((await inboxes(3)[2]!.list('review', 100_000)).some((record) => record.id === review)).toBe(true);
  });
}
