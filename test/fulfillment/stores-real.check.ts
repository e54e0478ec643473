// The conformance suite (./conformance.ts) on real servers: postgresStore over a `pg` Pool on
// PostgreSQL, redisStore over node-redis and over ioredis on Redis. Run by `npm run
// test:stores` (scripts/stores.mjs), which starts throwaway servers and passes them in
// BP_TEST_PG_URL and BP_TEST_REDIS_URL. Not a *.test.ts: plain `npm test` never runs it.
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { redisStore } from '../../src/fulfillment/redis.js';
import type { FulfillmentStore } from '../../src/fulfillment/store.js';
import { postgresKill, runStoreConformance } from './conformance.js';

const { BP_TEST_PG_URL: pgUrl, BP_TEST_REDIS_URL: redisUrl } = process.env;
if (!pgUrl || !redisUrl) throw new Error('run by `npm run test:stores`: it starts the servers and sets BP_TEST_PG_URL, BP_TEST_REDIS_URL');

/** Each setup writes under keys of its own, so runs and cases never see each other's. */
const freshPrefix = () => `bp-test:${crypto.randomUUID()}:`;

/**
 * Each new store instance takes the next of `clients` (connections or pools of their own, as
 * separate processes would have): completion must be visible through another connection,
 * and concurrent claims from several instances race across connections.
 */
function rotating<T>(clients: T[], make: (client: T) => FulfillmentStore) {
  let next = 0;
  return () => make(clients[next++ % clients.length]!);
}

runStoreConformance(
  'postgres (pg Pool, PostgreSQL server)',
  async () => {
    // Imported here: a failure to load fails this store's cases, not the Redis ones.
    const [{ default: pg }, { postgresStore }] = await Promise.all([import('pg'), import('../../src/fulfillment/postgres.js')]);
    const pools = [1, 2, 3].map(() => new pg.Pool({ connectionString: pgUrl, max: 10 }));
    return {
      makeStore: rotating(pools, (pool) => postgresStore(pool)),
      transactionalDb: pools[0]!,
      kill: postgresKill(pools[0]!),
      close: async () => void (await Promise.all(pools.map((pool) => pool.end()))),
    };
  },
  { kill: true, db: true },
);

runStoreConformance(
  'postgres (one pg Client: claims queued, PostgreSQL server)',
  async () => {
    const [{ default: pg }, { postgresStore }] = await Promise.all([import('pg'), import('../../src/fulfillment/postgres.js')]);
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    const reader = new pg.Pool({ connectionString: pgUrl, max: 2 });
    return {
      makeStore: () => postgresStore(client, { table: 'bp_single_client' }),
      transactionalDb: reader,
      close: async () => void (await Promise.all([client.end(), reader.end()])),
    };
  },
  { db: true },
);

runStoreConformance('redis (node-redis, Redis server)', async () => {
  const clients = await Promise.all([1, 2, 3].map(() => createClient({ url: redisUrl }).connect()));
  const prefix = freshPrefix();
  return {
    makeStore: rotating(clients, (client) => redisStore(client, { prefix })),
    close: async () => void (await Promise.all(clients.map((client) => client.close()))),
  };
});

runStoreConformance('redis (ioredis, Redis server)', async () => {
  const clients = [1, 2, 3].map(() => new Redis(redisUrl, { maxRetriesPerRequest: 1 }));
  const prefix = freshPrefix();
  return {
    makeStore: rotating(clients, (client) => redisStore(client, { prefix })),
    close: async () => void (await Promise.all(clients.map((client) => client.quit()))),
  };
});
