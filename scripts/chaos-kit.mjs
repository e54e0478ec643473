// What the two chaos runs (scripts/chaos.mjs, scripts/payout-chaos.mjs) share: the log with
// its elapsed time, the child processes killed whatever happens, one run per column against
// throwaway database servers (scripts/db-servers.mjs), and the table of figures at the end.
import { startDbServers } from './db-servers.mjs';

/** `[  12.3 s] line` logging from one start, and the small timing helpers beside it. */
export function chaosClock() {
  const started = performance.now();
  const seconds = (from = started) => `${((performance.now() - from) / 1000).toFixed(1)} s`;
  return {
    started,
    seconds,
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    log: (line) => console.log(`[${seconds().padStart(7)}] ${line}`),
    pick: (list) => list[Math.floor(Math.random() * list.length)],
  };
}

/** The children a run starts, to SIGKILL at its end (or at a failure) whatever their state. */
export function childProcesses() {
  const children = new Set();
  const killChildren = () => {
    for (const child of children) {
      try {
        child.kill('SIGKILL');
      } catch {
        // gone
      }
    }
  };
  return { children, killChildren };
}

/**
 * Starts PostgreSQL and Redis, then `run(column, servers)` for each column in turn (each
 * returns `{ row, problems }`, `row.column` naming it); the servers and children are stopped
 * whatever happens. Resolves to `{ failed, results }`.
 */
export async function runColumns({ name, pgOptions, columns, run, killChildren, log }) {
  let failed = false;
  let stopServers = () => {};
  const results = [];
  try {
    const servers = await startDbServers({ name, pgOptions, log });
    servers.onStop(killChildren);
    stopServers = servers.stop;
    for (const column of columns) {
      const result = await run(column, servers);
      results.push(result);
      for (const p of result.problems) console.error(`FAIL ${result.row.column}: ${p}`);
      if (result.problems.length) failed = true;
    }
  } catch (error) {
    failed = true;
    console.error(error instanceof Error ? (error.stderr?.toString() || '') + (error.stack ?? error.message) : error);
  } finally {
    killChildren();
    stopServers();
  }
  return { failed, results };
}

/** The figures of each column side by side: one line per key of the rows, `column` as the head. */
export function printTable(rows) {
  if (!rows.length) return;
  const keys = Object.keys(rows[0]);
  const width = Math.max(...keys.map((k) => k.length));
  const cell = Math.max(20, ...rows.flatMap((r) => keys.map((k) => String(r[k]).length + 2)));
  console.log('');
  console.log(`${''.padEnd(width)}${rows.map((r) => String(r.column).padStart(cell)).join('')}`);
  for (const key of keys.slice(1)) console.log(`${key.padEnd(width)}${rows.map((r) => String(r[key]).padStart(cell)).join('')}`);
}
