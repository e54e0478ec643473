// What the fulfilment store's cases work with: the instances to race, the store's clock, the
// hooks given, and the small helpers every case uses. Each case uses keys of its own (a random
// id in each), so a persistent database can be checked again and again.
import type { ClaimResult, FulfillmentStore, StoreClaim } from '../fulfillment/store.js';
import { fail, show } from './assert.js';
import type { FulfillmentCheckOptions, StoreQueryable, StoreWrites } from './types.js';

/** A lease short enough to wait out: the cases wait it out in real time (or `elapse` it). */
export const LEASE = 300;
/** A lease no case waits out. */
export const LONG = 60_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
export const freshKey = (what: string) => `store-check:${what}:${crypto.randomUUID()}`;

/** What the fulfilment cases are given. */
export interface ClaimsContext {
  /** The store given (the first of `stores`). */
  readonly store: FulfillmentStore;
  /** `count` instances, as separate processes would have them (the one instance `count` times, without `another`). */
  readonly stores: (count: number) => FulfillmentStore[];
  /** Whether `another` was given: instances share data. */
  readonly shared: boolean;
  /** `ms` on the store's clock: moved on (`elapse`), or waited out in real time. */
  readonly wait: (ms: number) => Promise<void>;
  readonly kill: ((claim: StoreClaim) => Promise<void>) | undefined;
  /** The handler's own data (`transactionalDb`), made ready on first use; `undefined` without it. */
  readonly writes: (() => Promise<StoreWrites>) | undefined;
}

/** The claim `result` won, or the case fails. */
export function won(result: ClaimResult): StoreClaim {
  if (!('claimed' in result)) fail(`expected a won claim, got ${show(result)}`);
  return result.claimed;
}

/** Claims `key` again and again until won, for at most `withinMs` (a lease's end, a dropped connection). */
export async function claimWithin(store: FulfillmentStore, key: string, withinMs: number): Promise<StoreClaim> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const result = await store.claim(key, LONG);
    if ('claimed' in result || Date.now() > deadline) return won(result);
    await sleep(20);
  }
}

const TABLE = 'business_payments_store_check_writes';

/** `{ count, write }` on a Postgres queryable: a table of the check's own, written through `claimed.db`. */
async function postgresWrites(db: StoreQueryable): Promise<StoreWrites> {
  await db.query(`CREATE TABLE IF NOT EXISTS ${TABLE} (key text NOT NULL)`, []);
  return {
    count: async (key) => {
      const { rows } = await db.query(`SELECT count(*)::int AS n FROM ${TABLE} WHERE key = $1`, [key]);
      return (rows[0] as { n: number }).n;
    },
    write: async (claimDb, key) => void (await (claimDb as StoreQueryable).query(`INSERT INTO ${TABLE} (key) VALUES ($1)`, [key])),
  };
}

/** The cases' context from the store and the options given. */
export function claimsContext(store: FulfillmentStore, options: FulfillmentCheckOptions): ClaimsContext {
  const { another, elapse, kill, transactionalDb: db } = options;
  let writes: Promise<StoreWrites> | undefined;
  return {
    store,
    stores: (count) => Array.from({ length: count }, (_, i) => (i === 0 || !another ? store : another())),
    shared: another !== undefined,
    wait: async (ms) => void (await (elapse ?? sleep)(ms)),
    kill,
    writes: db && (() => (writes ??= 'query' in db ? postgresWrites(db) : Promise.resolve(db))),
  };
}
