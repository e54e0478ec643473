// The Postgres store's claims: a claim is a transaction holding a transaction-scoped advisory
// lock on the key, and a recorded outcome a row written in that same transaction. So a holder
// that dies (process killed, connection dropped) loses its claim at once: the server rolls its
// transaction back and frees the lock, and what the handler wrote through `db` (the claim's own
// connection) commits with the outcome, or not at all. Below it the sessions.
import type { ClaimResult, ClaimStore, StoreClaim } from './store.js';
import { rollback, type PostgresQueryable, type Session } from './postgres-session.js';

/**
 * A claim's `db` (`ctx.db` in the fulfillment handlers): `query` on the claim's own
 * transaction, forwarded to your driver as is (same arguments, same result). What you write
 * through it commits with the claim's outcome, or is rolled back with it. It refuses queries
 * once the claim has ended. Do not run BEGIN, COMMIT or ROLLBACK through it.
 */
export type PostgresClaimDb = PostgresQueryable;

const BUSY = { busy: true } as const;
const LOCK = 'SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked';

/** The claims held now, and the claim attempts in flight, by lock name. */
export type Held = Map<string, Promise<ClaimResult<PostgresClaimDb>>>;

/** `claim(key, leaseMs)` on `table`, once `prepare` has the tables there. */
// One attempt per key at a time in this process (for every store on this client: `held` is the
// client's): claims that come meanwhile share its answer (busy if it won), then are busy while it
// is held.
export function claimer(
  session: () => Promise<Session>,
  table: string,
  prepare: () => Promise<void>,
  held: Held,
): ClaimStore<PostgresClaimDb>['claim'] {
  return (key, leaseMs) => {
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
