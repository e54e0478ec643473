// Throwaway PostgreSQL and Redis servers for test:stores and test:chaos: fresh data
// directories under the temp dir, loopback ports picked free, started here and stopped
// (directories removed) at exit, on a signal, or by `stop()`, whatever happens.
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

/** The directory holding initdb and pg_ctl: BP_PG_BIN, else the newest of Debian's, else the PATH's. */
function pgBin() {
  if (process.env.BP_PG_BIN) return process.env.BP_PG_BIN;
  const debian = '/usr/lib/postgresql';
  const versions = existsSync(debian) ? readdirSync(debian).filter((v) => existsSync(join(debian, v, 'bin/initdb'))) : [];
  if (versions.length) return join(debian, versions.sort((a, b) => Number(b) - Number(a))[0], 'bin');
  try {
    return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
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

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

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
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Starts both servers. `onStop` steps (children of the caller's) run first when they stop.
 * Resolves to their URLs and versions, and `stop()`; exits the process with a hint when the
 * packages are missing.
 */
export async function startDbServers({ name, pgOptions = '', log = console.log } = {}) {
  const bin = pgBin();
  const redisServer = which('redis-server');
  if (!bin || !existsSync(join(bin, 'initdb')) || !redisServer) {
    console.error(
      `${name} needs a PostgreSQL server (initdb, pg_ctl) and redis-server: \`apt-get install -y postgresql redis-server\` (Debian), or set BP_PG_BIN.`,
    );
    process.exit(1);
  }
  const work = mkdtempSync(join(tmpdir(), `bp-${name.replace(/\W/g, '-')}-`));
  const cleanups = [];
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    for (const step of cleanups.reverse()) {
      try {
        step();
      } catch (error) {
        console.error(`cleanup: ${error.message}`);
      }
    }
    rmSync(work, { recursive: true, force: true });
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(signal, () => {
      stop();
      process.exit(130);
    });
  }
  process.once('exit', stop);
  const [pgPort, redisPort] = [await freePort(), await freePort()];
  const pgVersion = startPostgres(bin, work, pgPort, pgOptions, cleanups);
  log(`PostgreSQL ${pgVersion} on 127.0.0.1:${pgPort}`);
  const redisVersion = await startRedis(redisServer, work, redisPort, cleanups);
  log(`Redis ${redisVersion} on 127.0.0.1:${redisPort}`);
  return {
    pgUrl: `postgres://postgres@127.0.0.1:${pgPort}/postgres`,
    redisUrl: `redis://127.0.0.1:${redisPort}`,
    onStop: (step) => cleanups.push(step),
    stop,
  };
}

// initdb and the server as `postgres` when we are root (initdb refuses root); a throwaway: no
// durability work (fsync and friends off), loopback and its own socket dir only.
function startPostgres(bin, work, port, extraOptions, cleanups) {
  const pgData = join(work, 'pg');
  const asRoot = process.getuid?.() === 0;
  const asPg = (command, args) =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, command), ...args]] : [join(bin, command), args];
  mkdirSync(pgData, { mode: 0o700 });
  if (asRoot) {
    chmodSync(work, 0o755); // the postgres user must reach its data dir
    const [uid, gid] = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' })));
    chownSync(pgData, uid, gid);
  }
  execFileSync(...asPg('initdb', ['-D', pgData, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']), {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const options = `-p ${port} -k ${pgData} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off ${extraOptions}`;
  cleanups.push(() => {
    if (existsSync(join(pgData, 'postmaster.pid'))) {
      execFileSync(...asPg('pg_ctl', ['-D', pgData, '-m', 'immediate', '-w', 'stop']), { stdio: 'ignore' });
    }
  });
  // -l: the server's output goes to a file, not to our pipe (pg_ctl would otherwise never return).
  execFileSync(...asPg('pg_ctl', ['-D', pgData, '-o', options.trim(), '-l', join(pgData, 'server.log'), '-w', 'start']), {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return readFileSync(join(pgData, 'PG_VERSION'), 'utf8').trim();
}

// No persistence, daemonized with its pidfile in our dir; stopped with SIGKILL (nothing to save).
async function startRedis(redisServer, work, port, cleanups) {
  const redisDir = join(work, 'redis');
  mkdirSync(redisDir);
  const pidfile = join(redisDir, 'redis.pid');
  cleanups.push(() => {
    if (!existsSync(pidfile)) return;
    const pid = Number(readFileSync(pidfile, 'utf8'));
    try {
      process.kill(pid, 'SIGKILL');
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
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  execFileSync(redisServer, [
    ...args,
    '--daemonize',
    'yes',
    '--pidfile',
    pidfile,
    '--dir',
    redisDir,
    '--logfile',
    join(redisDir, 'redis.log'),
  ]);
  await redisReady(port);
  return execFileSync(redisServer, ['--version'], { encoding: 'utf8' }).match(/v=(\S+)/)?.[1] ?? '?';
}
