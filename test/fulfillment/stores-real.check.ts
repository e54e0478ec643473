// The store conformance suite (testStore, business-payments/testing) on real servers, for
// each kit: postgresStore over a `pg` Pool and over one pg Client on PostgreSQL, redisStore
// over node-redis and over ioredis on Redis (and their payout intents and subscription
// records); and the SIGSTOP cases
// (./sigstop.ts): a real process holding a claim, paused past its lease while another handles
// the delivery. Run by `npm run test:stores` (scripts/stores.mjs), which starts throwaway
// servers, passes them in BP_TEST_PG_URL and BP_TEST_REDIS_URL, and prints a line per store
// and kit with its cases (each testStore run keeps its counts in its test's meta). Not a
// *.test.ts: plain `npm test` never runs it.
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { describe, expect, test } from 'vitest';
import { redisStore } from '../../src/fulfillment/redis.js';
import type { StoreClaim } from '../../src/fulfillment/store.js';
import { intentOf } from '../../src/store-check/intents.js';
import { recordOf } from '../../src/store-check/subscriptions.js';
import { testStore, type StoreQueryable, type StoreReport } from '../../src/testing.js';
import { skipReasons } from '../store-check/reasons.js';
import { pausedHolder } from './sigstop.js';

declare module 'vitest' {
  interface TaskMeta {
    /** A testStore run's counts, for scripts/stores.mjs's line. */
    storeCases?: { passed: number; failed: number; skipped: number; skippedFor: string[] };
  }
}

const { BP_TEST_PG_URL: pgUrl, BP_TEST_REDIS_URL: redisUrl } = process.env;
if (!pgUrl || !redisUrl) throw new Error('run by `npm run test:stores`: it starts the servers and sets BP_TEST_PG_URL, BP_TEST_REDIS_URL');

/** Each setup writes under keys of its own, so runs and cases never see each other's. */
const freshPrefix = () => `bp-test:${crypto.randomUUID()}:`;

/**
 * The store over `clients[0]`, and `another` making each new instance over the next of
 * `clients` (connections or pools of their own, as separate processes would have):
 * completion must be visible through another connection, and concurrent claims from several
 * instances race across connections.
 */
function rotating<T, Store>(clients: T[], make: (client: T) => Store) {
  let next = 0;
  return { store: make(clients[0]!), another: () => make(clients[++next % clients.length]!) };
}

/**
 * A `kill` for a Postgres store whose `claimed.db` is the claim's connection: terminates that
 * connection's backend from `admin` (another connection), as a crash of its process would end it.
 */
function postgresKill(admin: StoreQueryable): (claim: StoreClaim) => Promise<void> {
  return async (claim) => {
    const { rows } = await (claim.db as StoreQueryable).query('SELECT pg_backend_pid() AS pid', []);
    await admin.query('SELECT pg_terminate_backend($1)', [(rows[0] as { pid: number }).pid]);
  };
}

/**
 * One store's testStore run, as a suite named for its kit and store: no case fails (the
 * assertion prints each failure's message), and only the cases `skips` names are skipped.
 */
function storeCheck(name: string, skips: string[], run: () => Promise<StoreReport>): void {
  describe(name, () => {
    test('testStore: every case passes', async ({ task }) => {
      const report = await run();
      const skippedFor = [...new Set(skipReasons(report))];
      task.meta.storeCases = { passed: report.passed.length, failed: report.failed.length, skipped: report.skipped.length, skippedFor };
      expect(report.failed).toEqual([]);
      expect(skipReasons(report)).toEqual(skips);
    }, 180_000);
  });
}

// Imported in each run: a failure to load pg fails the Postgres runs, not the Redis ones.
const postgres = async () => {
  const [{ default: pg }, { postgresStore }] = await Promise.all([import('pg'), import('../../src/fulfillment/postgres.js')]);
  return { pg, postgresStore };
};

storeCheck('fulfillment: postgres (pg Pool, PostgreSQL server)', [], async () => {
  const { pg, postgresStore } = await postgres();
  const pools = [1, 2, 3].map(() => new pg.Pool({ connectionString: pgUrl, max: 10 }));
  try {
    const { store, another } = rotating(pools, (pool) => postgresStore(pool));
    return await testStore(store, { kit: 'fulfillment', another, transactionalDb: pools[0]!, kill: postgresKill(pools[0]!) });
  } finally {
    await Promise.all(pools.map((pool) => pool.end()));
  }
});

storeCheck('fulfillment: postgres (one pg Client: claims queued, PostgreSQL server)', ['kill'], async () => {
  const { pg, postgresStore } = await postgres();
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  const reader = new pg.Pool({ connectionString: pgUrl, max: 2 });
  try {
    const make = () => postgresStore(client, { table: 'bp_single_client' });
    return await testStore(make(), { kit: 'fulfillment', another: make, transactionalDb: reader });
  } finally {
    await Promise.all([client.end(), reader.end()]);
  }
});

const NO_DB = ['kill', 'transactionalDb', 'transactionalDb'];

storeCheck('fulfillment: redis (node-redis, Redis server)', NO_DB, async () => {
  const clients = await Promise.all([1, 2, 3].map(() => createClient({ url: redisUrl }).connect()));
  const prefix = freshPrefix();
  try {
    const { store, another } = rotating(clients, (client) => redisStore(client, { prefix }));
    return await testStore(store, { kit: 'fulfillment', another });
  } finally {
    await Promise.all(clients.map((client) => client.close()));
  }
});

storeCheck('fulfillment: redis (ioredis, Redis server)', NO_DB, async () => {
  const clients = [1, 2, 3].map(() => new Redis(redisUrl, { maxRetriesPerRequest: 1 }));
  const prefix = freshPrefix();
  try {
    const { store, another } = rotating(clients, (client) => redisStore(client, { prefix }));
    return await testStore(store, { kit: 'fulfillment', another });
  } finally {
    await Promise.all(clients.map((client) => client.quit()));
  }
});

// The payout intents, on the same servers: each new instance over the next pool or client.
storeCheck('payouts: postgres (pg Pool, PostgreSQL server)', [], async () => {
  const { pg, postgresStore } = await postgres();
  const pools = [1, 2, 3].map(() => new pg.Pool({ connectionString: pgUrl, max: 10 }));
  try {
    const { store, another } = rotating(pools, (pool) => postgresStore(pool).payouts!);
    return await testStore(store, { kit: 'payouts', another });
  } finally {
    await Promise.all(pools.map((pool) => pool.end()));
  }
});

storeCheck('payouts: redis (node-redis, Redis server)', [], async () => {
  const clients = await Promise.all([1, 2, 3].map(() => createClient({ url: redisUrl }).connect()));
  const prefix = freshPrefix();
  try {
    const { store, another } = rotating(clients, (client) => redisStore(client, { prefix }).payouts!);
    return await testStore(store, { kit: 'payouts', another });
  } finally {
    await Promise.all(clients.map((client) => client.close()));
  }
});

storeCheck('payouts: redis (ioredis, Redis server)', [], async () => {
  const clients = [1, 2, 3].map(() => new Redis(redisUrl, { maxRetriesPerRequest: 1 }));
  const prefix = freshPrefix();
  try {
    const { store, another } = rotating(clients, (client) => redisStore(client, { prefix }).payouts!);
    return await testStore(store, { kit: 'payouts', another });
  } finally {
    await Promise.all(clients.map((client) => client.quit()));
  }
});

describe('payout intents: redis keys (node-redis, Redis server)', () => {
  test('a hash per intent holding the JSON as given, a set per state, the ids hash: none expires, whatever keepDoneMs', async () => {
    const client = await createClient({ url: redisUrl }).connect();
    try {
      const prefix = freshPrefix();
      const store = redisStore(client, { prefix, keepDoneMs: 1 }).payouts!;
      const intent = intentOf('K1', { amount: 0.1 + 0.2, payout: { amount: 1e-7, big: 2 ** 60 } });
      await store.add(intent);
      const moved = { ...intent, version: 2, state: 'sent' as const };
      expect(await store.swap(moved)).toBe(true);
      expect(await store.bind('po_1', 'K1')).toBe('K1');
      await new Promise((resolve) => setTimeout(resolve, 20)); // past keepDoneMs
      const key = (name: string) => `${prefix}{payouts}:${name}`;
      expect(await client.hGetAll(key('i:K1'))).toEqual({ state: 'sent', version: '2', intent: JSON.stringify(moved) });
      expect(await client.zRange(key('s:sent'), 0, -1)).toEqual(['K1']);
      expect(await client.exists(key('s:pending'))).toBe(0);
      expect(await client.hGetAll(key('ids'))).toEqual({ po_1: 'K1' });
      for (const name of ['i:K1', 's:sent', 'ids']) expect(await client.pTTL(key(name))).toBe(-1);
    } finally {
      client.destroy();
    }
  });
});

// The subscription records, on the same servers: each new instance over the next pool or client.
storeCheck('billing: postgres (pg Pool, PostgreSQL server)', [], async () => {
  const { pg, postgresStore } = await postgres();
  const pools = [1, 2, 3].map(() => new pg.Pool({ connectionString: pgUrl, max: 10 }));
  try {
    const { store, another } = rotating(pools, (pool) => postgresStore(pool).subscriptions!);
    return await testStore(store, { kit: 'billing', another });
  } finally {
    await Promise.all(pools.map((pool) => pool.end()));
  }
});

storeCheck('billing: redis (node-redis, Redis server)', [], async () => {
  const clients = await Promise.all([1, 2, 3].map(() => createClient({ url: redisUrl }).connect()));
  const prefix = freshPrefix();
  try {
    const { store, another } = rotating(clients, (client) => redisStore(client, { prefix }).subscriptions!);
    return await testStore(store, { kit: 'billing', another });
  } finally {
    await Promise.all(clients.map((client) => client.close()));
  }
});

storeCheck('billing: redis (ioredis, Redis server)', [], async () => {
  const clients = [1, 2, 3].map(() => new Redis(redisUrl, { maxRetriesPerRequest: 1 }));
  const prefix = freshPrefix();
  try {
    const { store, another } = rotating(clients, (client) => redisStore(client, { prefix }).subscriptions!);
    return await testStore(store, { kit: 'billing', another });
  } finally {
    await Promise.all(clients.map((client) => client.quit()));
  }
});

describe('subscription records: redis keys (node-redis, Redis server)', () => {
  test('a hash per record holding the JSON as given, one set of keys, the ids hash: none expires, whatever keepDoneMs', async () => {
    const client = await createClient({ url: redisUrl }).connect();
    try {
      const prefix = freshPrefix();
      const store = redisStore(client, { prefix, keepDoneMs: 1 }).subscriptions!;
      const record = recordOf('sub:c:p:1', { paid: [{ invoice: 'inv_1', start: 0.5, end: 2 ** 60 }], termsShown: 'lone \ud800' });
      await store.add(record);
      const active = { ...record, version: 2, state: 'active' as const, subscriptionId: 'sub_1' };
      expect(await store.swap(active)).toBe(true);
      expect(await store.bind('sub_1', 'sub:c:p:1')).toBe('sub:c:p:1');
      await new Promise((resolve) => setTimeout(resolve, 20)); // past keepDoneMs
      const key = (name: string) => `${prefix}{billing}:${name}`;
      expect(await client.hGetAll(key('r:sub:c:p:1'))).toEqual({ version: '2', record: JSON.stringify(active) });
      expect(await client.zRange(key('keys'), 0, -1)).toEqual(['sub:c:p:1']);
      expect(await client.hGetAll(key('ids'))).toEqual({ sub_1: 'sub:c:p:1' });
      for (const name of ['r:sub:c:p:1', 'keys', 'ids']) expect(await client.pTTL(key(name))).toBe(-1);
    } finally {
      client.destroy();
    }
  });
});

// A holder paused (SIGSTOP) for twice its lease while another process handles the same delivery.
// Each run prints what it saw, for the record.
const figures = (run: Awaited<ReturnType<typeof pausedHolder>>) =>
  console.log(
    `paused ${(run.pausedMs / 1000).toFixed(1)} s, run ${(run.totalMs / 1000).toFixed(1)} s; holder ${run.holderAnswer}; other ${run.otherAnswer}, then ${run.otherAfter}`,
  );

describe('SIGSTOP past the lease: postgres (pg Pool, PostgreSQL server)', () => {
  test('the paused holder keeps its claim (its connection holds the lock): the other never runs onPaid, the holder answers ran', async () => {
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({ connectionString: pgUrl });
    const table = `bp_sigstop_${crypto.randomUUID().replaceAll('-', '')}`;
    try {
      await pool.query(`CREATE TABLE ${table}_effects (key text PRIMARY KEY)`);
      const run = await pausedHolder('postgres', pgUrl, table);
      figures(run);
      expect(run.pausedMs).toBeGreaterThanOrEqual(3_000); // twice the lease
      expect(run.holder.all('ONPAID')).toEqual(['payment:TRX_SIGSTOP:paid']);
      expect(run.other.all('ONPAID')).toEqual([]);
      expect(run.otherAnswer).toBe('409 {"received":true,"result":"busy"}');
      expect(run.holderAnswer).toBe('200 {"received":true,"result":"ran"}');
      expect(run.holder.all('WARN')).toEqual([]);
      expect(run.otherAfter).toBe('200 {"received":true,"result":"done"}');
      expect((await pool.query(`SELECT key FROM ${table}_effects`)).rows).toEqual([{ key: 'payment:TRX_SIGSTOP:paid' }]);
      expect((await pool.query(`SELECT outcome FROM ${table} WHERE key = 'payment:TRX_SIGSTOP'`)).rows).toEqual([{ outcome: 'paid' }]);
    } finally {
      await pool.end();
    }
  });
});

describe('SIGSTOP past the lease: redis (node-redis, Redis server)', () => {
  test("the paused holder's lease runs out and the other runs onPaid: the holder's answer is not ran, it says the lease was lost; one effectKey, one effect", async () => {
    const client = await createClient({ url: redisUrl }).connect();
    const prefix = freshPrefix();
    try {
      const run = await pausedHolder('redis', redisUrl, prefix);
      figures(run);
      expect(run.pausedMs).toBeGreaterThanOrEqual(3_000);
      // Both ran onPaid, with the same effectKey: the effect keyed on it was done once (by the holder).
      expect(run.holder.all('ONPAID')).toEqual(['payment:TRX_SIGSTOP:paid']);
      expect(run.other.all('ONPAID')).toEqual(['payment:TRX_SIGSTOP:paid']);
      expect([...run.holder.all('EFFECT'), ...run.other.all('EFFECT')]).toEqual(['1', '0']);
      expect(await client.get(`${prefix}effect:payment:TRX_SIGSTOP:paid`)).toBe(String(run.holder.process.pid));
      expect(run.otherAnswer).toBe('200 {"received":true,"result":"ran"}');
      // The stale holder: a 500 that says why (the service delivers again, and finds it done), and a warning.
      const [status, ...body] = run.holderAnswer.split(' ');
      expect(status).toBe('500');
      expect(JSON.parse(body.join(' '))).toEqual({
        error: 'handler_failed',
        message: 'fulfillment: lease lost on payment:TRX_SIGSTOP while its handler ran: another process may have run it too',
      });
      expect(run.holder.all('WARN')).toEqual([
        expect.stringMatching(/^\[business-payments\] fulfillment: lease lost on payment:TRX_SIGSTOP/),
      ]);
      expect(run.otherAfter).toBe('200 {"received":true,"result":"done"}');
      expect(await client.get(`${prefix}payment:TRX_SIGSTOP`)).toBe('done:paid');
    } finally {
      client.destroy();
    }
  });
});

// The request budget (store.budget), on the same servers: each new instance over the next pool or client.
storeCheck('budget: postgres (pg Pool, PostgreSQL server)', [], async () => {
  const { pg, postgresStore } = await postgres();
  const pools = [1, 2, 3].map(() => new pg.Pool({ connectionString: pgUrl, max: 10 }));
  try {
    const { store, another } = rotating(pools, (pool) => postgresStore(pool).budget!);
    return await testStore(store, { kit: 'budget', another });
  } finally {
    await Promise.all(pools.map((pool) => pool.end()));
  }
});

storeCheck('budget: redis (node-redis, Redis server)', [], async () => {
  const clients = await Promise.all([1, 2, 3].map(() => createClient({ url: redisUrl }).connect()));
  const prefix = freshPrefix();
  try {
    const { store, another } = rotating(clients, (client) => redisStore(client, { prefix }).budget!);
    return await testStore(store, { kit: 'budget', another });
  } finally {
    await Promise.all(clients.map((client) => client.close()));
  }
});

storeCheck('budget: redis (ioredis, Redis server)', [], async () => {
  const clients = [1, 2, 3].map(() => new Redis(redisUrl, { maxRetriesPerRequest: 1 }));
  const prefix = freshPrefix();
  try {
    const { store, another } = rotating(clients, (client) => redisStore(client, { prefix }).budget!);
    return await testStore(store, { kit: 'budget', another });
  } finally {
    await Promise.all(clients.map((client) => client.quit()));
  }
});
