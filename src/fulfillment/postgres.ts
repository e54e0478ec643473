// postgresStore: the fulfillment store on the merchant's own Postgres, through the client
// they already have (anything with `query(text, values)` → `{ rows }`; no dependency of
// ours). A claim is a transaction holding a transaction-scoped advisory lock on the key, and
// a recorded outcome is a row, written in that same transaction. So a holder that dies
// (process killed, connection dropped) loses its claim at once: the server rolls its
// transaction back and frees the lock. What the handler writes through `db` (the claim's own
// connection) commits with the outcome, or not at all.
import type { ClaimResult, FulfillmentStore, StoreClaim } from './store.js';

/**
 * Anything that runs one SQL statement with `$1…` parameters and answers `{ rows }`: a pg
 * `Pool` or `Client`, Neon's `Pool` (`@neondatabase/serverless`), PGlite.
 */
export interface PostgresQueryable {
  /** Runs one SQL statement with `$1…` values; resolves to its rows. */
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * A claim's `db` (`ctx.db` in the fulfillment handlers): `query` on the claim's own
 * transaction, forwarded to your driver as is (same arguments, same result). What you write
 * through it commits with the claim's outcome, or is rolled back with it. It refuses queries
 * once the claim has ended. Do not run BEGIN, COMMIT or ROLLBACK through it.
 */
export type PostgresClaimDb = PostgresQueryable;

/** Options of {@link postgresStore}. */
export interface PostgresStoreOptions {
  /**
   * The table of recorded outcomes: a plain or schema-qualified name (letters, digits, `_`;
   * not quoted). Default `business_payments_fulfillment`.
   */
  table?: string;
  /**
   * Create the table on first use if it does not exist (once per store). Default `true`.
   * `false` when you manage the schema yourself: run {@link POSTGRES_STORE_SQL} (with your
   * table name) in a migration; the store then needs no CREATE privilege.
   */
  createTable?: boolean;
}

/**
 * The schema of {@link postgresStore}'s tables (under the default name), for your migrations:
 * the recorded outcomes, and (`_open`) the payments reported but not settled yet, which
 * `reconcile` re-verifies on a server without a payment list (the earlier generation).
 */
export const POSTGRES_STORE_SQL = `CREATE TABLE IF NOT EXISTS business_payments_fulfillment (
  key text PRIMARY KEY,
  outcome text NOT NULL,
  completed_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS business_payments_fulfillment_open (
  key text PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  noted_at timestamptz NOT NULL DEFAULT now()
)`;

const DEFAULT_TABLE = 'business_payments_fulfillment';
const BUSY = { busy: true } as const;

interface PooledConnection extends PostgresQueryable {
  release(destroy?: boolean): void;
  on?(event: 'error', listener: () => void): unknown;
  removeListener?(event: 'error', listener: () => void): unknown;
}

/** One connection for one transaction; `end(true)` when its state is unknown (a pool destroys it). */
interface Session {
  q: PostgresQueryable;
  end(broken?: boolean): void;
}

// Per client object, whichever stores share it: the claim attempts in flight and the claims
// held now (by lock name), and for a single connection the tail of its queue (it holds one
// transaction at a time).
const shared = new WeakMap<object, { held: Map<string, Promise<ClaimResult<PostgresClaimDb>>>; tail: Promise<unknown> }>();

// A pg Pool (or Neon's) checks a connection out with connect(). A pg Client has connect()
// too (it opens the connection: `connectionParameters` tells it), and so has a client
// checked out of a pool (`release`): those, and PGlite, are one connection.
const isPool = (client: object) =>
  typeof (client as { connect?: unknown }).connect === 'function' && !('connectionParameters' in client) && !('release' in client);

function sessions(client: PostgresQueryable, pool: boolean, tail: { tail: Promise<unknown> }): () => Promise<Session> {
  if (pool) {
    return async () => {
      const connection = await (client as unknown as { connect(): Promise<PooledConnection> }).connect();
      // pg emits 'error' on a checked-out client whose connection drops between queries; unheard,
      // that would crash the process. The next query fails instead, and that is what we report.
      const ignore = () => {};
      connection.on?.('error', ignore);
      return {
        q: connection,
        end: (broken) => {
          connection.removeListener?.('error', ignore);
          connection.release(broken);
        },
      };
    };
  }
  return async () => {
    let end!: () => void;
    const mine = new Promise<void>((resolve) => (end = resolve));
    const previous = tail.tail;
    tail.tail = previous.then(() => mine);
    await previous;
    return { q: client, end: () => end() };
  };
}

// Ends the session's transaction without recording anything. A failed ROLLBACK means the
// connection is gone, and the server rolls back what it had: nothing to report.
const rollback = (session: Session) =>
  session.q.query('ROLLBACK').then(
    () => session.end(false),
    () => session.end(true),
  );

/**
 * The fulfillment store on your Postgres (11 or later), through your own client: a pg `Pool`
 * (what you want), a pg `Client`, Neon's `Pool`, PGlite. The driver stays your dependency,
 * and its errors reach you as it throws them.
 *
 * - A claim is a transaction on one connection that holds `pg_try_advisory_xact_lock` on
 *   the key. Its `db` (`ctx.db`) is that transaction: what `onPaid` writes through it
 *   commits together with the recorded outcome, so it happens exactly once, even across a
 *   crash. A holder that dies (process killed, connection dropped) loses its claim at once:
 *   the server rolls its transaction back and frees the lock.
 * - The lease (`leaseMs`) ends a claim whose holder is alive but never finishes: when it
 *   runs out, the store rolls the claim's transaction back (its writes are undone, and its
 *   late `complete` rejects), so a hung handler cannot keep a payment busy for ever.
 * - With a pool, each claim checks out a connection for its life. A single connection (a
 *   pg `Client`, PGlite) holds one transaction at a time, so this store queues its claims
 *   and reads on it: one handler at a time in this process (a handler that waits on another
 *   claim or `outcome` of the same store waits until its own lease runs out). Give it a Pool
 *   for concurrency, and a single connection of its own: anything else you run on that
 *   connection while a claim is open runs inside the claim's transaction.
 * - The table (`business_payments_fulfillment`, see {@link POSTGRES_STORE_SQL}) is created
 *   on first use unless `createTable: false`.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const store = postgresStore(pool);
 * ```
 */
export function postgresStore(client: PostgresQueryable, options: PostgresStoreOptions = {}): FulfillmentStore<PostgresClaimDb> {
  const { table = DEFAULT_TABLE, createTable = true } = options;
  if (!/^[A-Za-z_]\w*(\.[A-Za-z_]\w*)?$/.test(table)) {
    throw new TypeError(`postgresStore: table must be an SQL name (schema. allowed), got '${table}'`);
  }
  let state = shared.get(client);
  if (!state) shared.set(client, (state = { held: new Map(), tail: Promise.resolve() }));
  const { held } = state;
  const pool = isPool(client);
  const session = sessions(client, pool, state);
  // A statement outside any claim: any pool connection, or the single connection's turn.
  const read = async (text: string, values?: unknown[]) => {
    if (pool) return client.query(text, values);
    const turn = await session();
    try {
      return await turn.q.query(text, values);
    } finally {
      turn.end();
    }
  };
  let ready: Promise<void> | undefined;
  const prepare = () =>
    (ready ??= createTable
      ? ensureTable(table, read).catch((error: unknown) => {
          ready = undefined;
          throw error;
        })
      : Promise.resolve());

  return {
    // One attempt per key at a time in this process (for every store on this client): claims
    // that come meanwhile share its answer (busy if it won), then are busy while it is held.
    claim(key, leaseMs) {
      const lock = `business-payments:${table}:${key}`;
      const pending = held.get(lock);
      if (pending) return pending.then((result) => ('claimed' in result ? BUSY : result));
      const attempt = prepare().then(() => tryClaim(session, table, lock, key, leaseMs, () => held.delete(lock)));
      held.set(lock, attempt);
      void attempt.then(
        (result) => 'claimed' in result || held.delete(lock),
        () => held.delete(lock),
      );
      return attempt;
    },
    async outcome(key) {
      await prepare();
      const { rows } = await read(`SELECT outcome FROM ${table} WHERE key = $1`, [key]);
      return (rows[0] as { outcome: string } | undefined)?.outcome;
    },
    async remember(key) {
      await prepare();
      await read(`INSERT INTO ${table}_open (key) VALUES ($1) ON CONFLICT (key) DO NOTHING`, [key]);
    },
    async unsettled(limit) {
      await prepare();
      // Settled ones are dropped here rather than in complete(): claims stay as they were.
      await read(`DELETE FROM ${table}_open o USING ${table} d WHERE o.key = d.key`);
      const { rows } = await read(`SELECT key FROM ${table}_open ORDER BY seq LIMIT $1`, [limit]);
      return rows.map((row) => (row as { key: string }).key);
    },
  };
}

// One claim attempt: the outcome, else BEGIN, the lock, the outcome again; the transaction
// stays open if it won.
async function tryClaim(
  session: () => Promise<Session>,
  table: string,
  lock: string,
  key: string,
  leaseMs: number,
  free: () => void,
): Promise<ClaimResult<PostgresClaimDb>> {
  let turn: Session | undefined;
  try {
    turn = await session();
    const q = turn.q;
    const read = async () =>
      (await q.query(`SELECT outcome FROM ${table} WHERE key = $1`, [key])).rows[0] as { outcome: string } | undefined;
    // A recorded outcome needs no lock (and readers taking the lock would make each other busy).
    let found = await read();
    if (found) turn.end();
    else {
      await q.query('BEGIN ISOLATION LEVEL READ COMMITTED');
      const { rows } = await q.query('SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked', [lock]);
      if ((rows[0] as { locked: boolean }).locked) {
        // Read again after the lock, in a statement of its own: under READ COMMITTED its snapshot
        // is taken after the lock was granted, so it sees the outcome of a holder that just let go.
        found = await read();
        if (!found) return { claimed: holding(turn, table, key, leaseMs, free) };
      }
      await rollback(turn);
    }
    return found ? { done: found.outcome } : BUSY;
  } catch (error) {
    if (turn) await rollback(turn);
    throw error;
  }
}

// Creates the table unless it exists. Two first uses at once (two processes starting) would
// race inside CREATE TABLE IF NOT EXISTS (a unique violation in the catalog), so they take
// turns on an advisory lock, in one statement (a DO block: its own transaction, any
// connection). A table that exists needs no CREATE privilege: it is looked up first.
async function ensureTable(table: string, read: (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }>): Promise<void> {
  // Both tables: a store created before the `_open` table existed gains it here.
  const { rows } = await read('SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL AS found', [table, `${table}_open`]);
  if ((rows[0] as { found: boolean }).found) return;
  // `table` is an SQL name (checked): safe inside the literal and the statement.
  const lock = `PERFORM pg_advisory_xact_lock(hashtextextended('business-payments:create:${table}', 0))`;
  await read(`DO $$BEGIN ${lock}; ${POSTGRES_STORE_SQL.replaceAll(DEFAULT_TABLE, table)}; END$$`);
}

// A won claim: its transaction stays open on `turn` until complete (record, COMMIT), release
// (ROLLBACK) or the lease runs out (ROLLBACK; a late complete then rejects).
function holding(turn: Session, table: string, key: string, leaseMs: number, free: () => void): StoreClaim<PostgresClaimDb> {
  let open = true;
  const ended = () => new Error(`postgresStore: the claim on '${key}' has ended`);
  const finish = async (outcome?: string) => {
    open = false;
    clearTimeout(timer);
    try {
      if (outcome === undefined) return await rollback(turn);
      // A plain INSERT: should a row exist after all (a claim that bypassed the lock), the
      // unique key fails this one, and its writes roll back with it.
      await turn.q.query(`INSERT INTO ${table} (key, outcome) VALUES ($1, $2)`, [key, outcome]);
      await turn.q.query('COMMIT');
      turn.end(false);
    } catch (error) {
      await rollback(turn);
      throw error;
    } finally {
      free();
    }
  };
  const timer = setTimeout(() => void (open && finish()), leaseMs > 0 ? Math.min(leaseMs, 2 ** 31 - 1) : 1);
  (timer as { unref?: () => void }).unref?.();
  const db: PostgresClaimDb = {
    query: (...args) => (open ? turn.q.query(...args) : Promise.reject(ended())),
  };
  return {
    db,
    complete: (outcome) => (open ? finish(outcome) : Promise.reject(ended())),
    release: () => (open ? finish() : Promise.resolve()),
  };
}
