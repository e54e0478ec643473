// The Postgres store's connections: a claim is one transaction on one connection, checked out
// of a pool for the claim's life, or on a single connection (a pg Client, PGlite) a turn in its
// queue (it holds one transaction at a time); a statement outside any claim runs on any pool
// connection, or in the queue. Below the store's claims, its inbox and postgres.ts.

/**
 * Anything that runs one SQL statement with `$1…` parameters and answers `{ rows }`: a pg
 * `Pool` or `Client`, Neon's `Pool` (`@neondatabase/serverless`), PGlite.
 */
export interface PostgresQueryable {
  /** Runs one SQL statement with `$1…` values; resolves to its rows. */
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

interface PooledConnection extends PostgresQueryable {
  release(destroy?: boolean): void;
  on?(event: 'error', listener: () => void): unknown;
  removeListener?(event: 'error', listener: () => void): unknown;
}

/**
 * One connection for one transaction; `end(true)` when its state is unknown (a pool destroys
 * it). `lost` once a pooled connection reported its end.
 */
export interface Session {
  /** The connection. */
  q: PostgresQueryable;
  /** Gives the connection back (`broken`: destroyed). */
  end(broken?: boolean): void;
  /** Set once a pooled connection reported its end. */
  lost?: boolean;
}

/** One statement with `$1…` values: its result. */
export type Read = (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }>;

// A pg Pool (or Neon's) checks a connection out with connect(). A pg Client has connect()
// too (it opens the connection: `connectionParameters` tells it), and so has a client
// checked out of a pool (`release`): those, and PGlite, are one connection.
/** Whether `client` is a pool (else one connection). */
export const isPool = (client: object) =>
  typeof (client as { connect?: unknown }).connect === 'function' && !('connectionParameters' in client) && !('release' in client);

/** Opens a session: a pooled connection checked out, or the single connection's turn (`tail` is its queue). */
export function sessions(client: PostgresQueryable, pool: boolean, tail: { tail: Promise<unknown> }): () => Promise<Session> {
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

/** A statement outside any claim: any pool connection, or the single connection's turn. */
export function reader(client: PostgresQueryable, pool: boolean, session: () => Promise<Session>): Read {
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

/** Ends the session's transaction without recording anything. */
// A failed ROLLBACK means the connection is gone, and the server rolls back what it had: nothing
// to report.
export const rollback = (session: Session) =>
  session.q.query('ROLLBACK').then(
    () => session.end(false),
    () => session.end(true),
  );

/** `work` in a transaction of its own on one session: committed when it resolves, else rolled back. */
export async function transaction<T>(session: () => Promise<Session>, work: (db: PostgresQueryable) => Promise<T>): Promise<T> {
  const turn = await session();
  try {
    await turn.q.query('BEGIN');
    const result = await work(turn.q);
    await turn.q.query('COMMIT');
    turn.end(false);
    return result;
  } catch (error) {
    await rollback(turn);
    throw error;
  }
}
