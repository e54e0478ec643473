// PGlite (one connection) behind what pg's Pool offers, for the fulfillment tests that stand
// it in for a Pool: the store conformance suite and the docs' samples.
import type { PGlite } from '@electric-sql/pglite';

/**
 * A pool of PGlite's one connection, handed out in turns as pg's Pool hands out connections:
 * `connect()` → a client with `query` and `release(destroy?)`; `query` checks one out for a
 * statement. Counts what is out, so the cases can check every connection came back.
 */
export function onePool(db: PGlite) {
  let tail = Promise.resolve();
  const stats = { out: 0, destroyed: 0, connects: 0 };
  const connect = async () => {
    let free!: () => void;
    const previous = tail;
    tail = previous.then(() => new Promise<void>((resolve) => (free = resolve)));
    await previous;
    stats.connects++;
    stats.out++;
    let released = false;
    return {
      query: (text: string, values?: unknown[]) => (released ? Promise.reject(new Error('used after release')) : db.query(text, values)),
      release(destroy?: boolean) {
        if (released) throw new Error('released twice');
        released = true;
        stats.out--;
        if (destroy) stats.destroyed++;
        free();
      },
    };
  };
  const query = async (text: string, values?: unknown[]) => {
    const client = await connect();
    try {
      return await client.query(text, values);
    } finally {
      client.release();
    }
  };
  return { connect, query, stats };
}
