// The subscription records of postgresStore (`store.subscriptions`), on two tables named after
// its own: `<table>_subscriptions`, a row per record (its version as a column, for swap, and
// the whole record as JSON text), and `<table>_subscription_ids`, which record holds a service
// subscription id. Every step is one statement (add: two when the key is taken), atomic on any
// connection. The payout intents' pattern (src/payouts/postgres.ts), without a state column:
// the kit lists every record (a record's state moves with time, so it is worked out on read).
import type { PostgresRows } from '../payouts/postgres.js';
import type { SubscriptionRecord, SubscriptionStore } from './store.js';

// The JSON as it was written: text, not jsonb, so every number and escape (a lone surrogate
// too, which jsonb refuses) comes back exactly.
const parse = (rows: unknown[]) => rows.map((row) => JSON.parse((row as { data: string }).data) as SubscriptionRecord);

/**
 * @internal The subscription records of `postgresStore(client, { table })` on
 * `<table>_subscriptions` and `<table>_subscription_ids` (see `POSTGRES_STORE_SQL`), through its
 * `rows` (outside any claim, the tables ensured first). List order is the key's `COLLATE "C"`
 * (the column's): code points, as Redis orders them.
 */
export function postgresSubscriptions(table: string, rows: PostgresRows): SubscriptionStore {
  const select = `SELECT data FROM ${table}_subscriptions `;
  const get = async (key: string) => parse(await rows(`${select}WHERE key = $1`, [key]))[0];
  return {
    async add(record) {
      const [created] = parse(
        await rows(
          `INSERT INTO ${table}_subscriptions (key, version, data) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING RETURNING data`,
          [record.key, record.version, JSON.stringify(record)],
        ),
      );
      // Taken: read in a statement of its own, whose snapshot sees a concurrent add that
      // committed first (ON CONFLICT waited for it; this statement's snapshot predates it).
      return created ? { record: created, created: true } : { record: (await get(record.key))!, created: false };
    },
    get,
    // Under READ COMMITTED a concurrent swap of the row waits, then sees the version the first
    // one wrote and changes nothing: one wins.
    swap: async (next) =>
      (
        await rows(`UPDATE ${table}_subscriptions SET version = $2, data = $3 WHERE key = $1 AND version = $4 RETURNING key`, [
          next.key,
          next.version,
          JSON.stringify(next),
          next.version - 1,
        ])
      ).length > 0,
    async list(limit, after) {
      const n = Math.min(Math.floor(limit), 2 ** 31);
      if (!(n >= 1)) return [];
      const from = after === undefined ? [] : [after];
      return parse(await rows(`${select}${from.length ? 'WHERE key > $2 ' : ''}ORDER BY key LIMIT $1`, [n, ...from]));
    },
    // A held id's no-op update locks and returns its row: a concurrent bind waits for the first
    // to commit, then answers its key (ON CONFLICT DO NOTHING would return no row).
    bind: async (subscriptionId, key) =>
      (
        (await rows(
          `INSERT INTO ${table}_subscription_ids AS t (subscription_id, key) VALUES ($1, $2) ON CONFLICT (subscription_id) DO UPDATE SET key = t.key RETURNING key`,
          [subscriptionId, key],
        )) as Array<{ key: string }>
      )[0]!.key,
    owner: async (subscriptionId) =>
      (
        (await rows(`SELECT key FROM ${table}_subscription_ids WHERE subscription_id = $1`, [subscriptionId]))[0] as
          { key: string } | undefined
      )?.key,
  };
}
