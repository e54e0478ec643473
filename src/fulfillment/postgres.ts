// postgresStore: the fulfillment store on the merchant's own Postgres, through the client
// they already have (anything with `query(text, values)` → `{ rows }`; no dependency of
// ours). Its parts, below this file: the sessions (postgres-session.ts: a claim's connection,
// or a single connection's turn), the claims (postgres-claims.ts: a transaction holding an
// advisory lock on the key, its outcome a row written in that same transaction) and the inbox
// (postgres-inbox.ts). The payout intents (src/payouts/postgres.ts) and the subscription
// records (src/billing/postgres.ts) are two more tables each, outside any claim. Here: the
// options, the schema, and the store wired from its parts.
import { postgresSubscriptions } from '../billing/postgres.js';
import { postgresIntents } from '../payouts/postgres.js';
import { postgresBudget } from './postgres-budget.js';
import type { FulfillmentStore } from './store.js';
import { claimer, type Held, type PostgresClaimDb } from './postgres-claims.js';
import { postgresInbox } from './postgres-inbox.js';
import { isPool, reader, sessions, transaction, type PostgresQueryable, type Read } from './postgres-session.js';

export type { PostgresClaimDb } from './postgres-claims.js';
export type { PostgresQueryable } from './postgres-session.js';

/** Options of {@link postgresStore}. */
export interface PostgresStoreOptions {
  /**
   * The table of recorded outcomes: a plain or schema-qualified name (letters, digits, `_`;
   * not quoted). Default `business_payments_fulfillment`. The store's other tables are named
   * after it (`_open`, `_inbox`, `_payouts`, `_payout_ids`, `_subscriptions`, `_subscription_ids`,
   * `_budget`).
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
 * `COLLATE "C"`, for lists in key order) and `_payout_ids` (which intent holds a payout id); and
 * the subscription records (`store.subscriptions`): `_subscriptions` (the record's JSON in
 * `data`, keyed as `_payouts`) and `_subscription_ids` (which record holds a subscription id); and
 * `_budget` the request budget (`store.budget`): a row per key, its sends of the window and its
 * pause's end (ms on the database's clock).
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
);
CREATE TABLE IF NOT EXISTS business_payments_fulfillment_subscriptions (
  key text COLLATE "C" PRIMARY KEY,
  version int NOT NULL,
  data text NOT NULL
);
CREATE TABLE IF NOT EXISTS business_payments_fulfillment_subscription_ids (
  subscription_id text PRIMARY KEY,
  key text NOT NULL
);
CREATE TABLE IF NOT EXISTS business_payments_fulfillment_budget (
  key text PRIMARY KEY,
  at int8 NOT NULL,
  sends int8[] NOT NULL,
  until int8 NOT NULL,
  wait int8 NOT NULL
)`;

const DEFAULT_TABLE = 'business_payments_fulfillment';

// Per client object, whichever stores share it: the claim attempts in flight and the claims
// held now (by lock name), and for a single connection the tail of its queue (it holds one
// transaction at a time).
const shared = new WeakMap<object, { held: Held; tail: Promise<unknown> }>();

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
 * - The subscription records (`store.subscriptions`, for `createBilling`), alike: a row per
 *   record in `_subscriptions` (its version as a column, the record as JSON text), the
 *   subscription ids they hold in `_subscription_ids`, every change one statement.
 * - The request budget (`store.budget`, for the client option `requestBudget`): a row per key
 *   in `_budget`, its sends of the last minute and its pause timed on the database's clock
 *   (`now()`); each take is one upsert, so concurrent takes from every process are decided
 *   one after the other.
 * - The tables (`business_payments_fulfillment`, `_open`, `_inbox`, `_payouts`, `_payout_ids`,
 *   `_subscriptions`, `_subscription_ids`, `_budget`, see {@link POSTGRES_STORE_SQL}) are created
 *   on first use unless `createTable: false` (then run it in a migration: `_budget` too).
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const store = postgresStore(pool);
 * ```
 */
// attempt: one statement, so concurrent attempts each get the next number.
export function postgresStore(client: PostgresQueryable, options: PostgresStoreOptions = {}): FulfillmentStore<PostgresClaimDb> {
  const { table = DEFAULT_TABLE, createTable = true } = options;
  if (!/^[A-Za-z_]\w*(\.[A-Za-z_]\w*)?$/.test(table)) {
    throw new TypeError(`postgresStore: table must be an SQL name (schema. allowed), got '${table}'`);
  }
  let state = shared.get(client);
  if (!state) shared.set(client, (state = { held: new Map(), tail: Promise.resolve() }));
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
    claim: claimer(session, table, prepare, state.held),
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
    inbox: postgresInbox(`${table}_inbox`, rows, async (work) => (await prepare(), transaction(session, work))),
    payouts: postgresIntents(table, rows),
    subscriptions: postgresSubscriptions(table, rows),
    budget: postgresBudget(`${table}_budget`, rows),
  };
}

// Creates the table unless it exists. Two first uses at once (two processes starting) would
// race inside CREATE TABLE IF NOT EXISTS (a unique violation in the catalog), so they take
// turns on an advisory lock, in one statement (a DO block: its own transaction, any
// connection). A table that exists needs no CREATE privilege: it is looked up first.
async function ensureTable(table: string, read: Read): Promise<void> {
  // Every table: a store created before the `_open`, `_inbox`, payout, subscription or budget
  // tables existed gains them here.
  const names = ['', '_open', '_inbox', '_payouts', '_payout_ids', '_subscriptions', '_subscription_ids', '_budget'];
  const { rows } = await read(
    `SELECT num_nulls(${names.map((_, i) => `to_regclass($${i + 1})`).join(', ')}) = 0 AS found`,
    names.map((name) => table + name),
  );
  if ((rows[0] as { found: boolean }).found) return;
  // `table` is an SQL name (checked): safe inside the literal and the statement.
  const lock = `PERFORM pg_advisory_xact_lock(hashtextextended('business-payments:create:${table}', 0))`;
  await read(`DO $$BEGIN ${lock}; ${POSTGRES_STORE_SQL.replaceAll(DEFAULT_TABLE, table)}; END$$`);
}
