// The Postgres store's inbox: the verified deliveries waiting to be processed, a table of its
// own (`_inbox`), taken with FOR UPDATE SKIP LOCKED and timed on the database's clock. It runs
// outside any claim, through the store's `rows` (on a single connection: in its queue); an add
// with a trigger's job, in a transaction of its own.
import type { PostgresQueryable } from './postgres-session.js';
import type { InboxRecord, InboxStore } from './store.js';

// An inbox record's columns, `at` in ms since the epoch.
const RECORD = 'id, state, event, attempts, error, (extract(epoch FROM received_at) * 1000)::int8 AS at';

/** The inbox on its table `inbox`, through `rows` (a statement outside any claim: its rows). */
// Any number of takers on any number of connections share it: a take locks its record (SKIP
// LOCKED: others pass it by) and leases it with a new token, which fences finish.
// `inTransaction` runs an add's `within` in the insert's own transaction (the trigger's job).
export function postgresInbox(
  inbox: string,
  rows: (text: string, values: unknown[]) => Promise<unknown[]>,
  inTransaction: <T>(work: (db: PostgresQueryable) => Promise<T>) => Promise<T>,
): InboxStore {
  // Due times on the database's clock: a clock step on the app host changes nothing. now() is
  // the statement's start (each runs in a transaction of its own), and stable, so the due index
  // serves `due <= now()` (clock_timestamp() would have take read every pending record).
  const update = `UPDATE ${inbox} SET due = now() + $1 * interval '1 ms', `;
  // Whether a statement changed a row.
  const changed = async (text: string, values: unknown[]) => (await rows(`${text} RETURNING id`, values)).length > 0;
  // finish (fenced by the token) and replay: the record moved to its next state, no taker.
  const move = (values: unknown[], fence = '') =>
    changed(`${update}state = $2, attempts = $3, error = $4, token = NULL WHERE id = $5${fence}`, values);
  return {
    add(id, event, state = 'pending', within) {
      const insert = `INSERT INTO ${inbox} (id, event, state) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`;
      if (!within) return changed(insert, [id, event, state]);
      return inTransaction(async (db) => {
        const added = (await db.query(`${insert} RETURNING id`, [id, event, state])).rows.length > 0;
        if (added) await within(db);
        return added;
      });
    },
    get: async (id) => {
      const [row] = await rows(`SELECT ${RECORD} FROM ${inbox} WHERE id = $1`, [id]);
      return row ? record(row) : undefined;
    },
    // One statement: the oldest due record no other taker has locked.
    async take(leaseMs, id) {
      const token = crypto.randomUUID();
      const [row] = await rows(
        `${update}token = $2 WHERE id = (SELECT id FROM ${inbox} WHERE state = 'pending' AND due <= now()${id === undefined ? '' : ' AND id = $3'} ORDER BY due, seq LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING ${RECORD}`,
        id === undefined ? [leaseMs, token] : [leaseMs, token, id],
      );
      return row ? { ...record(row), token } : undefined;
    },
    finish: (lease, { state, attempts, delayMs = 0, error }) =>
      move([delayMs, state, attempts, error ?? null, lease.id, lease.token], ' AND token = $6'),
    list: async (state, limit) =>
      (await rows(`SELECT ${RECORD} FROM ${inbox} WHERE state = $1 ORDER BY seq LIMIT $2`, [state, limit])).map(record),
    replay: (id) => move([0, 'pending', 0, null, id]),
  };
}

// A row of RECORD as an InboxRecord (pg answers int8 as a string, and NULL as null).
function record(row: unknown): InboxRecord {
  const { at, error, ...rest } = row as Omit<InboxRecord, 'at' | 'error'> & { at: string | number; error: string | null };
  return { ...rest, error: error ?? undefined, at: Number(at) };
}
