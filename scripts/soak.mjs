// Soak test of the sandbox as a long-running service (not a unit test): N signed requests
// through the SDK (built dist/, as users get it) at concurrency C, from this process, against
// the sandbox in a child process with the rate limit raised. Prints requests/s, p50/p99
// latency, errors, and the sandbox's RSS at the start, the 10k mark, the middle and the end.
// Exits 1 on any error, or when RSS grows by 30 MB or more between the 10k mark and the end.
//
//   npm run soak                      builds, then 100,000 requests at 64 in flight
//
// The sandbox is what merchants leave running: `business-payments sandbox --json --port 0
// --rate-limit 1000000000` (dist/cli.js), its log read and dropped; RSS from /proc (Linux) or ps.
//
// Env: SOAK_REQUESTS (default 100000), SOAK_CONCURRENCY (default 64), SOAK_TARGET=listen
// (the sandbox is createMockService().listen() in a plain Node child instead, which also
// reports its heap after a full GC), and for that target: SOAK_TRACE=1 (heap spaces every
// 10k requests), SOAK_CHILD_FLAGS (node flags of the child, e.g. --max-semi-space-size=4:
// with V8's defaults the young generation grows to 2 x 64 MB under this load), SOAK_LIMITS
// (the service's `limits` as JSON, e.g. '{"records":1000}'; the soak then reads payments
// that were trimmed, so expect 404s), SOAK_IDLE_MS (also measure after that long idle).
// The mix per 10 calls: 1 payments.create, 3 payments.verify, 2 payments.retrieve,
// 2 balance.retrieve, 1 siteInfo.retrieve, 1 payments.list (limit 10).
import { execFileSync, fork, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const CHILD = 'SOAK_SANDBOX';

if (process.env[CHILD]) {
  const { createMockService } = await import('../dist/testing.js');
  const mock = createMockService({
    rateLimitPerMinute: 1_000_000_000,
    ...(process.env.SOAK_LIMITS ? { limits: JSON.parse(process.env.SOAK_LIMITS) } : {}),
  });
  const server = await mock.listen({ port: 0 });
  process.on('message', async (m) => {
    if (m === 'rss') {
      // A full collection first (the child runs with --expose-gc): what stays is what the service keeps.
      globalThis.gc?.();
      const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
      const spaces = process.env.SOAK_TRACE
        ? (await import('node:v8'))
            .getHeapSpaceStatistics()
            .map((x) => `${x.space_name} ${(x.space_size / 1048576).toFixed(0)}/${(x.space_used_size / 1048576).toFixed(0)}`)
            .join(', ')
        : '';
      // Linux splits RSS into anonymous memory (what the process allocated) and file pages
      // (the node binary's code, faulted in as new paths run; shared and reclaimable).
      const status = await import('node:fs').then((fs) => fs.readFileSync('/proc/self/status', 'utf8')).catch(() => '');
      const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
      process.send({
        rss,
        anon: kb('RssAnon'),
        file: kb('RssFile'),
        heapUsed,
        heapTotal,
        external,
        arrayBuffers,
        spaces,
        requests: mock.state.requests.length,
        payments: mock.state.payments.size,
      });
    }
    if (m === 'close') {
      await server.close();
      await mock.close();
      process.exit(0);
    }
  });
  process.on('disconnect', () => process.exit(0));
  process.send({ url: server.url, credentials: mock.credentials.sandbox });
} else {
  await main();
}

async function main() {
  const total = Number(process.env.SOAK_REQUESTS ?? 100_000);
  const concurrency = Number(process.env.SOAK_CONCURRENCY ?? 64);
  const target = process.env.SOAK_TARGET === 'listen' ? await startListenChild() : await startCliSandbox();
  const { url, credentials, ask } = target;

  const { PaymentsClient } = await import('../dist/index.js');
  const client = new PaymentsClient({ ...credentials, environment: 'sandbox', baseUrl: url, maxRetries: 0 });
  const trxIds = [];
  let created = 0;
  let n = 0;
  const call = (i) => {
    switch (i % 10) {
      case 0:
        return (
          client.payments
            .create({
              payment_amount: 10 + (i % 90),
              currency_code: 'USD',
              ref_trx: `soak-${i}`,
              success_redirect: 'https://shop.example.com/ok',
              ipn_url: 'https://shop.example.com/ipn',
            })
            // The newest 1,000 payments are the ones read (older ones may be trimmed from the store).
            .then((p) => (trxIds[created++ % 1000] = p.trx_id))
        );
      case 1:
      case 2:
      case 3:
        return trxIds.length ? client.payments.verify(trxIds[i % trxIds.length]) : client.balance.retrieve();
      case 4:
      case 5:
        return trxIds.length ? client.payments.retrieve(trxIds[i % trxIds.length]) : client.balance.retrieve();
      case 6:
      case 7:
        return client.balance.retrieve();
      case 8:
        return client.siteInfo.retrieve();
      default:
        return client.payments.list({ limit: 10 });
    }
  };

  const latencies = new Float64Array(total);
  const errors = new Map();
  const rss = {};
  // Request index -> the marks taken there (at 20k requests the middle is the 10k mark).
  const marks = new Map();
  for (const [at, label] of [
    [10_000, '10k'],
    [Math.floor(total / 2), 'middle'],
  ])
    marks.set(at, [...(marks.get(at) ?? []), label]);
  rss.start = (await ask('rss')).rss;
  const started = performance.now();
  const worker = async () => {
    while (n < total) {
      const i = n++;
      const t = performance.now();
      try {
        await call(i);
      } catch (error) {
        const key = `${error?.name}: ${String(error?.message).slice(0, 120)}`;
        errors.set(key, (errors.get(key) ?? 0) + 1);
      }
      latencies[i] = performance.now() - t;
      const labels = marks.get(i);
      if (labels) {
        const { rss: now } = await ask('rss');
        for (const label of labels) rss[label] = now;
      }
      if (process.env.SOAK_TRACE && i % 10_000 === 0) {
        const m = await ask('rss');
        console.log(
          `  at ${i}: rss ${(m.rss / 1048576).toFixed(1)} MB (anon ${(m.anon / 1048576).toFixed(1)}, file ${(m.file / 1048576).toFixed(1)})${m.heapUsed === undefined ? '' : `, heap ${(m.heapUsed / 1048576).toFixed(1)}/${(m.heapTotal / 1048576).toFixed(1)} MB (${m.spaces})`}`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  const end = await ask('rss');
  rss.end = end.rss;
  // Optional: the resting state a while after the load (V8 may hand young-generation pages back).
  const idleMs = Number(process.env.SOAK_IDLE_MS ?? 0);
  const rested = idleMs > 0 ? await new Promise((resolve) => setTimeout(resolve, idleMs)).then(() => ask('rss')) : undefined;
  target.close();

  const sorted = [...latencies].sort((a, b) => a - b);
  const pct = (p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))].toFixed(2);
  const mb = (b) => (b / 1024 / 1024).toFixed(1);
  const errorCount = [...errors.values()].reduce((a, b) => a + b, 0);
  console.log(`soak: ${total} requests at concurrency ${concurrency} in ${seconds.toFixed(1)} s (node ${process.version})`);
  console.log(`requests/s ${(total / seconds).toFixed(0)}   p50 ${pct(0.5)} ms   p99 ${pct(0.99)} ms   errors ${errorCount}`);
  // The ten commonest errors (a broken run can have thousands of distinct ones).
  const commonest = [...errors].sort((a, b) => b[1] - a[1]);
  for (const [key, count] of commonest.slice(0, 10)) console.log(`  ${count} × ${key}`);
  if (commonest.length > 10) console.log(`  … and ${commonest.length - 10} other distinct errors`);
  console.log(
    `sandbox RSS: start ${mb(rss.start)} MB, 10k ${mb(rss['10k'] ?? rss.start)} MB, middle ${mb(rss.middle ?? rss.start)} MB, end ${mb(rss.end)} MB`,
  );
  console.log(`sandbox: ${target.name}`);
  if (end.heapUsed !== undefined)
    console.log(
      `sandbox after a full GC at the end: heap used ${mb(end.heapUsed)} of ${mb(end.heapTotal)} MB, external ${mb(end.external)} MB (array buffers ${mb(end.arrayBuffers)} MB); stores: request log ${end.requests}, payments ${end.payments}`,
    );
  if (rested)
    console.log(
      `sandbox RSS after ${idleMs / 1000} s idle: ${mb(rested.rss)} MB${rested.heapUsed === undefined ? '' : ` (heap ${mb(rested.heapUsed)} of ${mb(rested.heapTotal)} MB)`}`,
    );
  const growth = rss.end - (rss['10k'] ?? rss.start);
  console.log(`RSS growth from the 10k mark to the end: ${mb(growth)} MB (limit 30 MB)`);
  process.exit(errorCount === 0 && growth < 30 * 1024 * 1024 ? 0 : 1);
}

/** `business-payments sandbox` from dist/cli.js: the credentials from its first line; RSS from /proc or ps. */
async function startCliSandbox() {
  const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
  const child = spawn(process.execPath, [cli, 'sandbox', '--json', '--port', '0', '--rate-limit', '1000000000'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const first = await new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (chunk) => {
      buffered += chunk;
      const nl = buffered.indexOf('\n');
      if (nl === -1) return;
      child.stdout.off('data', onData);
      // The request log that follows is read and dropped, as a terminal would scroll it away.
      child.stdout.on('data', () => {});
      resolve(JSON.parse(buffered.slice(0, nl)));
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.once('exit', (code) => reject(new Error(`the sandbox exited (${code})`)));
  });
  const { merchantKey, apiKey, apiSecret, baseUrl } = first;
  return {
    name: `business-payments sandbox (pid ${child.pid})`,
    url: baseUrl,
    credentials: { merchantKey, apiKey, apiSecret },
    ask: async () => {
      if (!existsSync(`/proc/${child.pid}/status`)) {
        // Not Linux (macOS): ps gives the RSS in KiB, without the anonymous / file split.
        const kib = Number(execFileSync('ps', ['-o', 'rss=', '-p', String(child.pid)], { encoding: 'utf8' }).trim());
        return { rss: kib * 1024, anon: NaN, file: NaN };
      }
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
      return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') };
    },
    close: () => child.kill('SIGINT'),
  };
}

/** createMockService().listen() in a forked Node child (this file, as SOAK_SANDBOX). */
async function startListenChild() {
  const child = fork(fileURLToPath(import.meta.url), [], {
    execArgv: ['--expose-gc', ...(process.env.SOAK_CHILD_FLAGS ?? '').split(' ').filter(Boolean)],
    env: { ...process.env, [CHILD]: '1' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ask = (message) =>
    new Promise((resolve) => {
      child.once('message', resolve);
      child.send(message);
    });
  const { url, credentials } = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`the sandbox exited (${code})`)));
  });
  return { name: 'createMockService().listen() in a Node child', url, credentials, ask, close: () => child.send('close') };
}
