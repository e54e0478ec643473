// postgresStore: the fulfillment store on the merchant's own Postgres, through the client
// they already have (anything with `query(text, values)` → `{ rows }`; no dependency of
// ours). A claim is a transaction holding a transaction-scoped advisory lock on the key, and
// a recorded outcome is a row, written in that same transaction. So a holder that dies
// (process killed, connection dropped) loses its claim at once: the server rolls its
// transaction back and frees the lock. What the handler writes through `db` (the claim's own
// connection) commits with the outcome, or not at all. The inbox is a table of its own, taken
// with FOR UPDATE SKIP LOCKED and timed on the database's clock. The payout intents
// (src/payouts/postgres.ts) are two more tables, outside any claim.
import { postgresIntents } from '../payouts/postgres.js';
import type { ClaimResult, FulfillmentStore, InboxRecord, InboxStore, StoreClaim } from './store.js';

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
   * not quoted). Default `business_payments_fulfillment`. The store's other tables are named
   * after it (`_open`, `_inbox`, `_payouts`, `_payout_ids`).
   */
  table?: string;
  /**
   * Create the tables on first use if they do not exist (once per store). Default `true`.
   * `false` when you manage the schema yourself: run {@link POSTGRES_STORE_SQL} (with your
   * table name) in a migration; the store then needs no CREATE privilege.
   */
  createTable?: boolean;
}

/**
 * The schema of {@link postgresStore}'s tables (under the default name), for your migrations:
 * the recorded outcomes (and the attempt counts), `_open` the payments reported but not
 * settled yet, which `reconcile` re-verifies on a server without a payment list (the earlier
 * generation), `_inbox` the verified deliveries waiting to be processed, and the payout
 * intents (`store.payouts`): `_payouts` (the intent's JSON in `data`; `key` compares byte-wise,
 * `COLLATE "C"`, for lists in key order) and `_payout_ids` (which intent holds a payout id).
 */
// The index name is quoted: under a schema-qualified table name it holds a dot, and an index
// lives in its table's schema.
export const POSTGRES_STORE_SQL = `CREATE TABLE IF NOT EXISTS business_payments_fulfillment (
  key text PRIMARY KEY,
  outcome text NOT NULL,
  completed_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS business_payments_fulfillment_open (
  key text PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  noted_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS business_payments_fulfillment_inbox (
  id text PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  state text NOT NULL DEFAULT 'pending',
  event text NOT NULL,
  attempts int NOT NULL DEFAULT 0,
  error text,
  due timestamptz NOT NULL DEFAULT now(),
  token text,
  received_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS "business_payments_fulfillment_inbox_due" ON business_payments_fulfillment_inbox (due, seq) WHERE state = 'pending';
CREATE TABLE IF NOT EXISTS business_payments_fulfillment_payouts (
  key text COLLATE "C" PRIMARY KEY,
  state text NOT NULL,
  version int NOT NULL,
  data text NOT NULL
);
CREATE INDEX IF NOT EXISTS "business_payments_fulfillment_payouts_state" ON business_payments_fulfillment_payouts (state, key);
CREATE TABLE IF NOT EXISTS business_payments_fulfillment_payout_ids (
  payout_id text PRIMARY KEY,
  key text NOT NULL
)`;

const DEFAULT_TABLE = 'business_payments_fulfillment';
const BUSY = { busy: true } as const;
const LOCK = 'SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked';
// An inbox record's columns, `at` in ms since the epoch.
const RECORD = 'id, state, event, attempts, error, (extract(epoch FROM received_at) * 1000)::int8 AS at';

interface PooledConnection extends PostgresQueryable {
  release(destroy?: boolean): void;
  on?(event: 'error', listener: () => void): unknown;
  removeListener?(event: 'error', listener: () => void): unknown;
}

/**
 * One connection for one transaction; `end(true)` when its state is unknown (a pool destroys
 * it). `lost` once a pooled connection reported its end.
 */
interface Session {
  q: PostgresQueryable;
  end(broken?: boolean): void;
  lost?: boolean;
}

/** One statement with `$1…` values: its result. */
type Read = (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }>;

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
      // that would crash the process. The next query fails instead, and that is what we report
      // (renew answers false at once: the server has freed the lock).
      const lost = () => (turn.lost = true);
      const turn: Session = {
        q: connection,
        end: (broken) => {
          connection.removeListener?.('error', lost);
          connection.release(broken);
        },
      };
      connection.on?.('error', lost);
      return turn;
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

// A statement outside any claim: any pool connection, or the single connection's turn.
function reader(client: PostgresQueryable, pool: boolean, session: () => Promise<Session>): Read {
  return async (text, values) => {
    if (pool) return client.query(text, values);
    const turn = await session();
    try {
      return await turn.q.query(text, values);
    } finally {
      turn.end();
    }
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
 * - The lease (`leaseMs`) ends a claim whose holder is alive but no longer renews it: when
 *   it runs out, the store rolls the claim's transaction back (its writes are undone, and its
 *   late `complete` rejects). `renew` starts it afresh while the claim is open: the kit renews
 *   while a handler runs, so a slow handler is never run twice at once (and one that hangs
 *   keeps its claim until its process or connection ends).
 * - With a pool, each claim checks out a connection for its life. A single connection (a
 *   pg `Client`, PGlite) holds one transaction at a time, so this store queues its claims
 *   and reads on it: one handler at a time in this process (a handler that waits on another
 *   claim, `outcome` or the inbox of the same store waits until its own claim ends). Give
 *   it a Pool for concurrency, and a single connection of its own: anything else you run on
 *   that connection while a claim is open runs inside the claim's transaction.
 * - `attempt(order)` counts in the outcomes table (`attempts:<order>`), in one statement.
 * - The inbox (`_inbox` table): any number of workers on any number of connections take due
 *   records with `FOR UPDATE SKIP LOCKED`, fenced by a token; due times are on the database's
 *   clock. Like `outcome`, it runs outside any claim (on a single connection: in the queue).
 * - The payout intents (`store.payouts`, for `createPayouts`): a row per intent in `_payouts`
 *   (state and version as columns, the intent as JSON text), the payout ids they hold in
 *   `_payout_ids`; every change one statement (a swap is an UPDATE on the version), outside
 *   any claim (on a single connection: in the queue).
 * - The tables (`business_payments_fulfillment`, `_open`, `_inbox`, `_payouts`, `_payout_ids`,
 *   see {@link POSTGRES_STORE_SQL}) are created on first use unless `createTable: false`.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const store = postgresStore(pool);
 * ```
 */
// claim: one attempt per key at a time in this process (for every store on this client): claims
// that come meanwhile share its answer (busy if it won), then are busy while it is held.
// attempt: one statement, so concurrent attempts each get the next number.
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
  const read = reader(client, pool, session);
  let ready: Promise<void> | undefined;
  const prepare = () =>
    (ready ??= createTable
      ? ensureTable(table, read).catch((error: unknown) => {
          ready = undefined;
          throw error;
        })
      : Promise.resolve());
  // A statement outside any claim, once the tables are there: its rows.
  const rows = async (text: string, values?: unknown[]) => {
    await prepare();
    return (await read(text, values)).rows;
  };
  return {
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
      const [row] = await rows(`SELECT outcome FROM ${table} WHERE key = $1`, [key]);
      return (row as { outcome: string } | undefined)?.outcome;
    },
    async remember(key) {
      await rows(`INSERT INTO ${table}_open (key) VALUES ($1) ON CONFLICT (key) DO NOTHING`, [key]);
    },
    async unsettled(limit) {
      // Settled ones are dropped here rather than in complete(): claims stay as they were.
      await rows(`DELETE FROM ${table}_open o USING ${table} d WHERE o.key = d.key`);
      return (await rows(`SELECT key FROM ${table}_open ORDER BY seq LIMIT $1`, [limit])).map((row) => (row as { key: string }).key);
    },
    async attempt(order) {
      const [row] = await rows(
        `INSERT INTO ${table} AS t (key, outcome) VALUES ($1, '1') ON CONFLICT (key) DO UPDATE SET outcome = (t.outcome::int + 1)::text RETURNING outcome`,
        [`attempts:${order}`],
      );
      return Number((row as { outcome: string }).outcome);
    },
    inbox: postgresInbox(`${table}_inbox`, rows),
    payouts: postgresIntents(table, rows),
  };
}

// The inbox on its table, through `rows` (outside any claim). Any number of takers on any
// number of connections share it: a take locks its record (SKIP LOCKED: others pass it by)
// and leases it with a new token, which fences finish.
function postgresInbox(inbox: string, rows: (text: string, values: unknown[]) => Promise<unknown[]>): InboxStore {
  // Due times on the database's clock: a clock step on the app host changes nothing. now() is
  // the statement's start (each runs in a transaction of its own), and stable, so the due index
  // serves `due <= now()` (clock_timestamp() would have take read every pending record).
  const update = `UPDATE ${inbox} SET due = now() + $1 * interval '1 ms', `;
  // Whether a statement changed a row.
  const changed = async (text: string, values: unknown[]) => (await rows(`${text} RETURNING id`, values)).length > 0;
  // finish (fenced by the token) and replay: the record's next state, no taker.
  const settle = (values: unknown[], fence = '') =>
    changed(`${update}state = $2, attempts = $3, error = $4, token = NULL WHERE id = $5${fence}`, values);
  return {
    add: (id, event, state = 'pending') =>
      changed(`INSERT INTO ${inbox} (id, event, state) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`, [id, event, state]),
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
      settle([delayMs, state, attempts, error ?? null, lease.id, lease.token], ' AND token = $6'),
    list: async (state, limit) =>
      (await rows(`SELECT ${RECORD} FROM ${inbox} WHERE state = $1 ORDER BY seq LIMIT $2`, [state, limit])).map(record),
    replay: (id) => settle([0, 'pending', 0, null, id]),
  };
}

// A row of RECORD as an InboxRecord (pg answers int8 as a string, and NULL as null).
function record(row: unknown): InboxRecord {
  const { at, error, ...rest } = row as Omit<InboxRecord, 'at' | 'error'> & { at: string | number; error: string | null };
  return { ...rest, error: error ?? undefined, at: Number(at) };
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
      const { rows } = await q.query(LOCK, [lock]);
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
async function ensureTable(table: string, read: Read): Promise<void> {
  // Every table: a store created before the `_open`, `_inbox` or payout tables existed gains them here.
  const { rows } = await read(
    'SELECT num_nulls(to_regclass($1), to_regclass($2), to_regclass($3), to_regclass($4), to_regclass($5)) = 0 AS found',
    ['', '_open', '_inbox', '_payouts', '_payout_ids'].map((name) => table + name),
  );
  if ((rows[0] as { found: boolean }).found) return;
  // `table` is an SQL name (checked): safe inside the literal and the statement.
  const lock = `PERFORM pg_advisory_xact_lock(hashtextextended('business-payments:create:${table}', 0))`;
  await read(`DO $$BEGIN ${lock}; ${POSTGRES_STORE_SQL.replaceAll(DEFAULT_TABLE, table)}; END$$`);
}

// A won claim: its transaction stays open on `turn` until complete (record, COMMIT), release
// (ROLLBACK) or the lease runs out (ROLLBACK; a late complete then rejects). renew starts the
// lease afresh while the claim is open.
function holding(turn: Session, table: string, key: string, leaseMs: number, free: () => void): StoreClaim<PostgresClaimDb> {
  let open = true;
  const ended = () => new Error(`postgresStore: the claim on '${key}' has ended`);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const lease = () => {
    clearTimeout(timer);
    timer = setTimeout(() => void (open && finish()), leaseMs > 0 ? Math.min(leaseMs, 2 ** 31 - 1) : 1);
    (timer as { unref?: () => void }).unref?.();
  };
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
  lease();
  const db: PostgresClaimDb = {
    query: (...args) => (open ? turn.q.query(...args) : Promise.reject(ended())),
  };
  return {
    db,
    complete: (outcome) => (open ? finish(outcome) : Promise.reject(ended())),
    release: () => (open ? finish() : Promise.resolve()),
    // Ended (completed, released, rolled back by its lease) or its connection lost: false.
    renew: () => Promise.resolve(open && !turn.lost && (lease(), true)),
    // Another key in this same transaction (the kit: the payment's order): its lock is held,
    // and its outcome commits, with this claim; releasing it alone records nothing.
    claim: async (other) => {
      if (!open) throw ended();
      const { rows } = await turn.q.query(LOCK, [`business-payments:${table}:${other}`]);
      if (!(rows[0] as { locked: boolean }).locked) return BUSY;
      const found = (await turn.q.query(`SELECT outcome FROM ${table} WHERE key = $1`, [other])).rows[0] as { outcome: string } | undefined;
      if (found) return { done: found.outcome };
      const record = async (outcome: string) => {
        if (!open) throw ended();
        await turn.q.query(`INSERT INTO ${table} (key, outcome) VALUES ($1, $2)`, [other, outcome]);
      };
      return { claimed: { db, complete: record, release: () => Promise.resolve(), renew: () => Promise.resolve(open) } };
    },
  };
}
