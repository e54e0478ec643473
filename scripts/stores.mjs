// The fulfillment stores on real servers (CI): the conformance suite
// (test/fulfillment/conformance.ts) for postgresStore over a `pg` Pool on a PostgreSQL server,
// and redisStore over node-redis and over ioredis on a Redis server. Both servers are
// throwaways: fresh data directories under the temp dir, loopback ports picked free, started
// here and stopped (directories removed) whatever happens. One line per store; exit 1 if any
// failed.
//
//   npm run test:stores
//
// It installs nothing: it expects Debian's packages (`apt-get install -y postgresql
// redis-server`, as .ci/run does), i.e. /usr/lib/postgresql/<15+>/bin and redis-server on the
// PATH; BP_PG_BIN=<dir of initdb, pg_ctl> points elsewhere (e.g. Homebrew). As root, the
// PostgreSQL server runs as the `postgres` user (initdb refuses root).
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const SUITE = 'test/fulfillment/stores-real.check.ts';
const started = performance.now();
const seconds = (from) => `${((performance.now() - from) / 1000).toFixed(1)} s`;

/** The directory holding initdb and pg_ctl: BP_PG_BIN, else the newest of Debian's, else the PATH's. */
function pgBin() {
  if (process.env.BP_PG_BIN) return process.env.BP_PG_BIN;
  const debian = '/usr/lib/postgresql';
  const versions = existsSync(debian) ? readdirSync(debian).filter((v) => existsSync(join(debian, v, 'bin/initdb'))) : [];
  if (versions.length) return join(debian, versions.sort((a, b) => Number(b) - Number(a))[0], 'bin');
  try {
    return join(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim());
  } catch {
    return undefined;
  }
}

function which(command) {
  try {
    return execFileSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** A loopback port free right now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once `port` answers a Redis PING (redis-server --daemonize returns before it listens). */
async function redisReady(port, deadline = Date.now() + 10_000) {
  for (;;) {
    const pong = await new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.setTimeout(500);
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (data) => (socket.destroy(), resolve(data.toString().startsWith('+PONG'))));
      socket.once('error', () => resolve(false));
      socket.once('timeout', () => (socket.destroy(), resolve(false)));
    });
    if (pong) return;
    if (Date.now() > deadline) throw new Error(`redis-server did not answer on 127.0.0.1:${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const bin = pgBin();
const redisServer = which('redis-server');
if (!bin || !existsSync(join(bin, 'initdb')) || !redisServer) {
  console.error(
    'test:stores needs a PostgreSQL server (initdb, pg_ctl) and redis-server: `apt-get install -y postgresql redis-server` (Debian), or set BP_PG_BIN.',
  );
  process.exit(1);
}

// Everything the servers write lives under one temp dir, removed at the end.
const work = mkdtempSync(join(tmpdir(), 'bp-stores-'));
const pgData = join(work, 'pg');
const redisDir = join(work, 'redis');
const cleanups = [];
let cleaned = false;
function cleanup() {
  if (cleaned) return;
  cleaned = true;
  for (const step of cleanups.reverse()) {
    try {
      step();
    } catch (error) {
      console.error(`cleanup: ${error.message}`);
    }
  }
  rmSync(work, { recursive: true, force: true });
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    cleanup();
    process.exit(130);
  });
}
process.once('exit', cleanup);

let failed = false;
try {
  const [pgPort, redisPort] = [await freePort(), await freePort()];

  // PostgreSQL: initdb and the server as `postgres` when we are root (initdb refuses root).
  const asRoot = process.getuid?.() === 0;
  const asPg = (command, args) =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, command), ...args]] : [join(bin, command), args];
  mkdirSync(pgData, { mode: 0o700 });
  if (asRoot) {
    chmodSync(work, 0o755); // the postgres user must reach its data dir
    const [uid, gid] = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' })));
    chownSync(pgData, uid, gid);
  }
  const pgStarted = performance.now();
  execFileSync(...asPg('initdb', ['-D', pgData, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']), {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // A throwaway: no durability work (fsync and friends off), loopback and its own socket dir only.
  const options = `-p ${pgPort} -k ${pgData} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  cleanups.push(() => {
    if (existsSync(join(pgData, 'postmaster.pid'))) {
      execFileSync(...asPg('pg_ctl', ['-D', pgData, '-m', 'immediate', '-w', 'stop']), { stdio: 'ignore' });
    }
  });
  // -l: the server's output goes to a file, not to our pipe (pg_ctl would otherwise never return).
  execFileSync(...asPg('pg_ctl', ['-D', pgData, '-o', options, '-l', join(pgData, 'server.log'), '-w', 'start']), {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const pgVersion = readFileSync(join(pgData, 'PG_VERSION'), 'utf8').trim();
  console.log(`PostgreSQL ${pgVersion} on 127.0.0.1:${pgPort} (${seconds(pgStarted)})`);

  // Redis: no persistence, daemonized with its pidfile in our dir.
  mkdirSync(redisDir);
  const redisStarted = performance.now();
  const pidfile = join(redisDir, 'redis.pid');
  cleanups.push(() => {
    if (!existsSync(pidfile)) return;
    const pid = Number(readFileSync(pidfile, 'utf8'));
    try {
      process.kill(pid, 'SIGKILL'); // a throwaway with nothing to save
    } catch {
      return; // already gone
    }
    const until = Date.now() + 5000;
    while (Date.now() < until) {
      try {
        process.kill(pid, 0);
      } catch {
        return;
      }
      execFileSync('sleep', ['0.05']);
    }
  });
  execFileSync(redisServer, [
    '--port',
    String(redisPort),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--daemonize',
    'yes',
    '--pidfile',
    pidfile,
    '--dir',
    redisDir,
    '--logfile',
    join(redisDir, 'redis.log'),
  ]);
  await redisReady(redisPort);
  const redisVersion = execFileSync(redisServer, ['--version'], { encoding: 'utf8' }).match(/v=(\S+)/)?.[1] ?? '?';
  console.log(`Redis ${redisVersion} on 127.0.0.1:${redisPort} (${seconds(redisStarted)})`);

  // The suite, in this process's vitest: only the real-server file (it is not a *.test.ts, so
  // plain `npm test` never picks it up), no global setup (it needs no package build).
  process.env.BP_TEST_PG_URL = `postgres://postgres@127.0.0.1:${pgPort}/postgres`;
  process.env.BP_TEST_REDIS_URL = `redis://127.0.0.1:${redisPort}`;
  const { startVitest } = await import('vitest/node');
  const vitest = await startVitest([], {
    config: false,
    root,
    include: [SUITE],
    environment: 'node',
    watch: false,
    reporters: ['default'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  });
  // One line per store: each top-level suite of the file is one store's conformance run.
  const modules = vitest.state.getTestModules();
  const suites = modules.flatMap((module) => [...module.children.suites()]);
  if (!suites.length) failed = true;
  const label = (name) => name.replace(/^store conformance: /, '');
  const width = Math.max(0, ...suites.map((suite) => label(suite.name).length));
  console.log('');
  for (const module of modules) {
    if (module.children.size) continue;
    failed = true; // the file did not load (its error is above)
    console.log(`${module.moduleId.slice(root.length)}  FAIL (did not load)`);
  }
  for (const suite of suites) {
    const tests = [...suite.children.allTests()];
    const bad = tests.filter((test) => test.result().state === 'failed').length;
    const skipped = tests.filter((test) => test.result().state === 'skipped').length;
    // The suite's own time (its setup and close hooks included), else the sum of its tests'.
    const ms = suite.task.result?.duration ?? tests.reduce((sum, test) => sum + (test.diagnostic()?.duration ?? 0), 0);
    const ok = !bad && suite.state() !== 'failed';
    if (!ok) failed = true;
    const counts = ok
      ? `${tests.length - skipped} passed${skipped ? `, ${skipped} not applicable` : ''}`
      : `${bad} of ${tests.length} failed${bad ? '' : ' (a hook)'}`;
    console.log(`${label(suite.name).padEnd(width)}  ${ok ? 'pass' : 'FAIL'}  ${(ms / 1000).toFixed(1).padStart(5)} s  (${counts})`);
  }
  if (process.exitCode || vitest.state.getCountOfFailedTests() > 0) failed = true;
  await vitest.close();
} catch (error) {
  failed = true;
  console.error(error instanceof Error ? (error.stderr?.toString() || '') + error.message : error);
} finally {
  cleanup();
}
console.log(`test:stores ${failed ? 'FAILED' : 'passed'} in ${seconds(started)}`);
process.exit(failed ? 1 : 0);
