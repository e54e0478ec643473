// One process of the SIGSTOP cases (sigstop.ts): a kit on the shared store (postgresStore over a
// pg Pool, or redisStore over node-redis) that handles one signed webhook delivery in the request
// (inbox: false), as a web process does. Bundled by sigstop.ts (esbuild), run by node.
//
//   node sigstop-child.mjs '<json: ChildSetup>'
//
// stdin, a command a line: GO (handle the delivery; again on each GO), FINISH (the onPaid
// running returns). stdout, a line each: READY; ONPAID <effectKey> (onPaid started);
// EFFECT <1|0> (its effect, keyed on effectKey: 1 done now, 0 done before by another run);
// WARN <what the kit warned>; ANSWER <status> <body>.
import { createInterface } from 'node:readline';
import pg from 'pg';
import { createClient } from 'redis';
import { createFulfillment } from '../../src/fulfillment.js';
import type { FulfillmentStore } from '../../src/fulfillment/store.js';
import { postgresStore, type PostgresQueryable } from '../../src/fulfillment/postgres.js';
import { redisStore } from '../../src/fulfillment/redis.js';
import type { VerifiedTransaction } from '../../src/schemas/payments.js';

/** What the parent passes: the store, and the delivery to handle. */
export interface ChildSetup {
  store: 'postgres' | 'redis';
  url: string;
  /** The Postgres table (its effects in `<name>_effects`), or the Redis key prefix. */
  name: string;
  lease: number;
  secret: string;
  delivery: { payload: string; headers: Record<string, string> };
}

const setup = JSON.parse(process.argv[2]!) as ChildSetup;
const say = (line: string) => process.stdout.write(`${line}\n`);
const warn = console.warn.bind(console);
console.warn = (...args: unknown[]) => (say(`WARN ${args.map(String).join(' ')}`), warn(...args));

let store: FulfillmentStore<unknown>;
// The handler's effect, idempotent on effectKey: in the claim's transaction on Postgres, SET NX on Redis.
let effect: (key: string, db: unknown) => Promise<number>;
if (setup.store === 'postgres') {
  const pool = new pg.Pool({ connectionString: setup.url, max: 4 });
  pool.on('error', () => {});
  store = postgresStore(pool, { table: setup.name });
  effect = async (key, db) =>
    (
      await (db as PostgresQueryable).query(`INSERT INTO ${setup.name}_effects (key) VALUES ($1) ON CONFLICT DO NOTHING RETURNING key`, [
        key,
      ])
    ).rows.length;
} else {
  const redis = await createClient({ url: setup.url }).connect();
  store = redisStore(redis, { prefix: setup.name });
  effect = async (key) => ((await redis.set(`${setup.name}effect:${key}`, String(process.pid), { NX: true })) === 'OK' ? 1 : 0);
}

let finish: () => void = () => {};
const verify = async (trxId: string) =>
  ({ trx_id: trxId, status: 'success', amount: 25, currency: 'USD', fee: 0, net_amount: 25 }) as VerifiedTransaction;
const fulfillment = createFulfillment<unknown>({
  environment: 'sandbox',
  secret: setup.secret,
  client: { environment: 'sandbox', payments: { verify, list: async function* () {} } },
  store,
  inbox: false,
  lease: setup.lease,
  onPaid: async (_tx, { effectKey, db }) => {
    say(`ONPAID ${effectKey}`);
    say(`EFFECT ${await effect(effectKey, db)}`);
    await new Promise<void>((resolve) => (finish = resolve));
  },
});

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line === 'FINISH') finish();
  if (line === 'GO')
    void fulfillment.handleWebhook(setup.delivery).then(
      ({ status, body }) => say(`ANSWER ${status} ${body}`),
      (error: unknown) => say(`ANSWER threw ${String(error)}`),
    );
});
say('READY');
