// The Postgres store's request budget (`store.budget`): one row per key in a table of its own
// (`_budget`), holding the key's sends of the window (ms on the database's clock) and the end
// of its pause. Each step is one statement: an upsert takes the row's lock, so concurrent
// takes from any number of connections are decided one after the other, each on the row as
// the one before left it. Times are the database's `now()`: an app server's clock changes nothing.
import { sharedBudget, type RequestBudget } from './shared-budget.js';

/** Now on the database's clock, in ms since the epoch. */
const NOW = `(extract(epoch FROM now()) * 1000)::int8`;

/** The budget on its table `budget`, through `rows` (a statement outside any claim: its rows). */
export function postgresBudget(budget: string, rows: (text: string, values: unknown[]) => Promise<unknown[]>): RequestBudget {
  // An upsert of the key's row: a new row from `fresh` (sends, until, wait), else `update`
  // (EXCLUDED.at is now; `b` the row as the last writer left it).
  const upsert = (fresh: string, update: string) =>
    `INSERT INTO ${budget} AS b (key, at, sends, until, wait) SELECT $1, n, ${fresh} FROM (SELECT ${NOW} AS n) t ON CONFLICT (key) DO UPDATE SET ${update}`;
  // The row's sends still in the window of $2 ms, oldest first.
  const kept = `ARRAY(SELECT s FROM unnest(b.sends) s WHERE s > EXCLUDED.at - $2 ORDER BY s)`;
  return sharedBudget({
    async count(key, windowMs) {
      const [row] = await rows(`SELECT count(*)::int AS n FROM ${budget} b, unnest(b.sends) s WHERE b.key = $1 AND s > ${NOW} - $2`, [
        key,
        windowMs,
      ]);
      return Number((row as { n: number | string }).n);
    },
    // The answer is kept in the row (`wait`): 0 taken, else the ms until room may come (the
    // pause's end, or when the oldest send that fills the window leaves it).
    async take(key, limit, windowMs) {
      const [row] = await rows(
        `${upsert('ARRAY[n], 0, 0', `at = EXCLUDED.at, (sends, wait) = (SELECT CASE WHEN w = 0 THEN k || EXCLUDED.at ELSE k END, w FROM (SELECT k, CASE WHEN b.until > EXCLUDED.at THEN b.until - EXCLUDED.at WHEN cardinality(k) >= $3 THEN k[cardinality(k) - $3 + 1] + $2 - EXCLUDED.at ELSE 0 END AS w FROM (SELECT ${kept} AS k) x) y)`)} RETURNING wait`,
        [key, windowMs, limit],
      );
      return Number((row as { wait: number | string }).wait);
    },
    async record(key, windowMs) {
      await rows(`${upsert('ARRAY[n], 0, 0', `at = EXCLUDED.at, sends = ${kept} || EXCLUDED.at`)}`, [key, windowMs]);
    },
    async pause(key, ms) {
      // A pause of `ms` from now, or a longer one already set kept.
      await rows(`${upsert(`'{}'::int8[], n + $2, 0`, 'at = EXCLUDED.at, until = greatest(b.until, EXCLUDED.until)')}`, [key, ms]);
    },
  });
}
