// What the chaos runs (scripts/chaos.mjs, payout-chaos.mjs, billing-chaos.mjs) share: the log
// with its elapsed time, the child processes killed whatever happens, one run per column against
// throwaway database servers (scripts/db-servers.mjs), the table of figures at the end; which
// Idempotency-Key the sandbox is serving; and a worker's store.
import { AsyncLocalStorage } from 'node:async_hooks';
import http from 'node:http';
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

/**
 * The Idempotency-Key header of the request the sandbox is handling now (`null` outside one, or
 * without the header): node:http's createServer is wrapped (call this before mock.listen, which
 * looks node:http up at run time) so that each request runs inside an AsyncLocalStorage scope
 * holding it. Read synchronously where the sandbox writes a row, it says which key made it.
 */
export function servedIdempotencyKey() {
  const requestKey = new AsyncLocalStorage();
  const createServer = http.createServer;
  http.createServer = function (...args) {
    const at = args.findIndex((arg) => typeof arg === 'function');
    if (at >= 0) {
      const listener = args[at];
      args[at] = (req, res) => requestKey.run(req.headers['idempotency-key'] ?? null, () => listener(req, res));
    }
    return createServer.apply(this, args);
  };
  return () => requestKey.getStore();
}

/** A worker's store: postgresStore over a pg Pool (`kind` 'postgres') or redisStore over node-redis, only its driver loaded. */
export async function workerStore(kind, { pgUrl, redisUrl }) {
  if (kind === 'postgres') {
    const [{ default: pg }, { postgresStore }] = await Promise.all([import('pg'), import('business-payments/fulfillment/postgres')]);
    const pool = new pg.Pool({ connectionString: pgUrl, max: 8 });
    pool.on('error', () => {});
    return postgresStore(pool);
  }
  const [{ createClient }, { redisStore }] = await Promise.all([import('redis'), import('business-payments/fulfillment/redis')]);
  return redisStore(await createClient({ url: redisUrl }).connect());
}
