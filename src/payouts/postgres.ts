// The payout intents of postgresStore (`store.payouts`), on two tables named after its own:
// `<table>_payouts`, a row per intent (its state and version as columns, for list and swap,
// and the whole intent as JSON text), and `<table>_payout_ids`, which intent holds a payout
// id. Every step is one statement (add: two when the key is taken), atomic on any connection.
import type { PayoutIntent, PayoutIntentStore } from './store.js';

/** @internal One statement outside any claim, once postgresStore's tables exist: its rows. */
export type PostgresRows = (text: string, values: unknown[]) => Promise<unknown[]>;

// The JSON as it was written: text, not jsonb, so every number and escape (a lone surrogate
// too, which jsonb refuses) comes back exactly.
const parse = (rows: unknown[]) => rows.map((row) => JSON.parse((row as { data: string }).data) as PayoutIntent);

/**
 * @internal The payout intents of `postgresStore(client, { table })` on `<table>_payouts` and
 * `<table>_payout_ids` (see `POSTGRES_STORE_SQL`), through its `rows` (outside any claim, the
 * tables ensured first). List order is the key's `COLLATE "C"` (the column's): code points,
 * as Redis orders them.
 */
export function postgresIntents(table: string, rows: PostgresRows): PayoutIntentStore {
  const select = `SELECT data FROM ${table}_payouts WHERE `;
  const get = async (key: string) => parse(await rows(`${select}key = $1`, [key]))[0];
  return {
    async add(intent) {
      const [created] = parse(
        await rows(
          `INSERT INTO ${table}_payouts (key, state, version, data) VALUES ($1, $2, $3, $4) ON CONFLICT (key) DO NOTHING RETURNING data`,
          [intent.key, intent.state, intent.version, JSON.stringify(intent)],
        ),
      );
      // Taken: read in a statement of its own, whose snapshot sees a concurrent add that
      // committed first (ON CONFLICT waited for it; this statement's snapshot predates it).
      return created ? { intent: created, created: true } : { intent: (await get(intent.key))!, created: false };
    },
    get,
    // Under READ COMMITTED a concurrent swap of the row waits, then sees the version the first
    // one wrote and changes nothing: one wins.
    swap: async (next) =>
      (
        await rows(`UPDATE ${table}_payouts SET state = $2, version = $3, data = $4 WHERE key = $1 AND version = $5 RETURNING key`, [
          next.key,
          next.state,
          next.version,
          JSON.stringify(next),
          next.version - 1,
        ])
      ).length > 0,
    async list(state, limit, after) {
      const n = Math.min(Math.floor(limit), 2 ** 31);
      if (!(n >= 1)) return [];
      const from = after === undefined ? [] : [after];
      return parse(await rows(`${select}state = $1${from.length ? ' AND key > $3' : ''} ORDER BY key LIMIT $2`, [state, n, ...from]));
    },
    // A held id's no-op update locks and returns its row: a concurrent bind waits for the first
    // to commit, then answers its key (ON CONFLICT DO NOTHING would return no row).
    bind: async (payoutId, key) =>
      (
        (await rows(
          `INSERT INTO ${table}_payout_ids AS t (payout_id, key) VALUES ($1, $2) ON CONFLICT (payout_id) DO UPDATE SET key = t.key RETURNING key`,
          [payoutId, key],
        )) as Array<{ key: string }>
      )[0]!.key,
    owner: async (payoutId) =>
      ((await rows(`SELECT key FROM ${table}_payout_ids WHERE payout_id = $1`, [payoutId]))[0] as { key: string } | undefined)?.key,
  };
}
