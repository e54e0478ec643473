// A webhook flood (a measurement, not a test): 1.5 GiB posted to the fulfillment
// kit's webhook handler on node:http, in both of its Node forms, and what it costs the server.
// Done when every case is answered 401 or 413 and the server's peak RSS grows by less than
// 64 MB in each.
//
//   npm run bench:flood      (builds, then runs this on dist/)
//
// The server is a child process (this file with --server) with the built kit
// (`business-payments/fulfillment`, which resolves to dist/fulfillment.js) behind node:http:
// - /node:  `fulfillment.handleWebhook(req)`, the Node request itself;
// - /fetch: `fulfillment.handleWebhook(new Request(…, { body: Readable.toWeb(req), duplex: 'half' }))`.
// Each sends the kit's answer as it is (docs/fulfillment.md: Node stops reading the
// connection, writes the answer, and closes the connection once idle). This process is the
// flood: over a plain socket it streams each case's 1.5 GiB from one 64 KiB buffer (nothing is
// held), chunked or with a content-length, unsigned or with signed headers (an oversized
// delivery), and keeps sending after the answer until all is sent or the server stops reading
// (no progress for a second). It prints the status it got, the bytes it had sent by then and
// in all, how the upload ended, and the server's peak RSS growth over the case (its RSS
// sampled every 2 ms, and its VmHWM, reset before the case through /proc/self/clear_refs where
// Linux allows it). Exits 1 when a case is over 64 MB or not answered 401 / 413.
import { fork } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

const SECRET = 'whsec_flood_0123456789';
const TOTAL = 1.5 * 1024 ** 3; // 1.5 GiB a case
const LIMIT_MB = 64;
const CASE_TIMEOUT_MS = 30_000;
const STALL_MS = 1000;
const MB = 1e6;

// FLOOD_FORMS=fetch runs one form only (the kit before the bound had no Node form).
const FORMS = (process.env.FLOOD_FORMS ?? 'node,fetch').split(',');

if (process.argv[2] === '--server') await server();
else await main();

// ---------------------------------------------------------------------------------------
// The server (child process).

async function server() {
  const { createFulfillment } = await import('business-payments/fulfillment');
  const fulfillment = createFulfillment({
    environment: 'sandbox',
    secret: SECRET,
    // The service's side of verify, answered at once.
    client: {
      environment: 'sandbox',
      payments: {
        verify: async (trx_id) => ({ trx_id, status: 'success', amount: 25, fee: 0, net_amount: 25, currency: 'USD' }),
        list: async function* () {},
      },
    },
    onPaid: () => {},
  });
  let answered;
  const http = createServer(async (req, res) => {
    try {
      const { status, body } = req.url === '/fetch' ? await viaFetch(req) : await fulfillment.handleWebhook(req);
      answered = status;
      res.writeHead(status, { 'content-type': 'application/json' }).end(body);
    } catch (error) {
      answered = `threw ${error?.name}: ${error?.message}`;
      res.writeHead(500).end();
    }
  });
  // The Fetch form, as a Node server hands a Request to a Fetch-API handler.
  async function viaFetch(req) {
    const body = Readable.toWeb(req);
    const response = await fulfillment.handleWebhook(
      new Request(`http://${req.headers.host}${req.url}`, { method: 'POST', headers: req.headers, body, duplex: 'half' }),
    );
    return { status: response.status, body: await response.text() };
  }

  // Peak RSS over a case: sampled, and the kernel's high-water mark when it can be reset.
  let peak = 0;
  const sample = () => (peak = Math.max(peak, process.memoryUsage.rss()));
  setInterval(sample, 2).unref();
  const hwm = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN) * 1024;
  const resetHwm = () => {
    try {
      writeFileSync('/proc/self/clear_refs', '5');
      return true;
    } catch {
      return false;
    }
  };
  let baseline = 0;
  let hwmReset = false;
  process.on('message', (message) => {
    if (message === 'start') {
      globalThis.gc?.();
      answered = undefined;
      hwmReset = resetHwm();
      peak = baseline = process.memoryUsage.rss();
      process.send({ started: true, baseline });
    } else if (message === 'stop') {
      sample();
      const kernelPeak = hwmReset ? hwm() : NaN;
      process.send({ answered, sampledGrowth: peak - baseline, hwmGrowth: kernelPeak - baseline, hwmReset });
    } else if (message === 'exit') {
      http.close();
      process.exit(0);
    }
  });
  http.listen(0, '127.0.0.1', () => process.send({ port: http.address().port }));
}

// ---------------------------------------------------------------------------------------
// The flood (this process).

async function main() {
  const child = fork(fileURLToPath(import.meta.url), ['--server'], {
    execArgv: ['--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    process.exit((await flooded(child)) ? 0 : 1);
  } catch (error) {
    console.error(error);
    child.kill();
    process.exit(1);
  }
}

// Every case in turn; true when each was answered 401 or 413 under the limit.
async function flooded(child) {
  const { signWebhook } = await import('business-payments/testing');
  const next = () => new Promise((resolve) => child.once('message', resolve));
  const { port } = await next();
  const ask = async (message) => (child.send(message), next());
  const signed = async (payload) => (await signWebhook({ secret: SECRET, payload })).headers;
  const event = { id: 'evt_flood', type: 'payment.completed', data: { trx_id: 'TRX_FLOOD', amount: { value: 25, currency: 'USD' } } };

  // Warm-up, unmeasured: a real delivery through each form (200), so what a case measures is
  // the flood, not the first request's code loading.
  for (const path of FORMS.map((form) => `/${form}`)) {
    const delivery = await signWebhook({ secret: SECRET, payload: event });
    const status = await new Promise((resolve, reject) => {
      const req = request({ port, host: '127.0.0.1', path, method: 'POST', headers: delivery.headers }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      });
      req.on('error', reject);
      req.end(delivery.body);
    });
    if (status !== 200) throw new Error(`warm-up ${path}: ${status}`);
  }

  const cases = [];
  for (const form of FORMS)
    for (const who of ['unsigned', 'signed']) for (const framing of ['chunked', 'content-length']) cases.push({ form, who, framing });

  console.log(
    `webhook flood: ${(TOTAL / 1024 ** 3).toFixed(1)} GiB a case to the kit on node:http (${process.version}), limit ${LIMIT_MB} MB of server RSS growth`,
  );
  const started = performance.now();
  let failed = false;
  for (const { form, who, framing } of cases) {
    const headers = who === 'unsigned' ? { 'content-type': 'application/json' } : await signed(event);
    await ask('start');
    const t0 = performance.now();
    const got = await flood(port, `/${form}`, headers, framing);
    // Let the server finish with the connection before reading its peak.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const server = await ask('stop');
    const growth = Math.max(server.sampledGrowth, Number.isNaN(server.hwmGrowth) ? 0 : server.hwmGrowth);
    const ok = (got.status === 401 || got.status === 413) && growth < LIMIT_MB * MB;
    failed ||= !ok;
    console.log(
      [
        ok ? '✓' : '✗',
        `${form.padEnd(5)} ${`${who} ${framing}`.padEnd(23)}`,
        `answered ${got.status ?? 'nothing'}`.padEnd(12),
        `sent ${((got.sentAtAnswer ?? got.sentInAll) / MB).toFixed(1).padStart(6)} MB by then, ${(got.sentInAll / MB).toFixed(0).padStart(4)} MB in all`,
        `server RSS +${(growth / MB).toFixed(1)} MB (sampled +${(server.sampledGrowth / MB).toFixed(1)}, VmHWM ${server.hwmReset ? `+${(server.hwmGrowth / MB).toFixed(1)}` : 'n/a'})`,
        `${Math.round(performance.now() - t0)} ms`,
      ].join('  '),
    );
    console.log(`  ${got.ended}${server.answered !== got.status ? `; the server answered ${server.answered}` : ''}`);
  }
  child.send('exit');
  console.log(
    `${failed ? 'FAILED' : 'every case answered 401 or 413 under the limit'} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return !failed;
}

// Streams TOTAL bytes of body from one buffer over a plain socket, as a flood would: on after
// the answer too, until all is sent, the server stops reading (no progress for STALL_MS) or
// closes the connection. Resolves with the answer's status, the bytes sent when it came and
// in all, and how the upload ended.
function flood(port, path, headers, framing) {
  return new Promise((resolve) => {
    let sent = 0;
    let status;
    let sentAtAnswer;
    let progress = Date.now();
    const started = Date.now();
    const chunked = framing === 'chunked';
    const data = Buffer.alloc(64 * 1024, 0x20);
    // One chunk of the chunked framing carries the whole buffer.
    const chunk = chunked ? Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]) : data;
    const head = Object.entries({
      host: '127.0.0.1',
      ...headers,
      ...(chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': TOTAL }),
    })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    const socket = connect(port, '127.0.0.1');
    const done = (ended) => {
      clearInterval(watch);
      socket.destroy();
      resolve({ status, sentAtAnswer, sentInAll: sent, ended });
    };
    const watch = setInterval(() => {
      // All sent: the server took the whole body; done once it has answered.
      if (sent >= TOTAL) {
        if (status !== undefined) done('all sent: the server took the whole body');
      } else if (Date.now() - progress > STALL_MS)
        done('stalled: the server stopped reading (it closes the connection after keepAliveTimeout)');
      if (Date.now() - started > CASE_TIMEOUT_MS) done('timeout');
    }, 50);
    let answer = '';
    socket.on('data', (bytes) => {
      if (status !== undefined) return;
      answer += bytes.toString('latin1');
      const line = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      if (line) {
        status = Number(line[1]);
        sentAtAnswer = sent;
      }
    });
    socket.on('error', (error) => done(`${error.code ?? error.message}`));
    socket.on('close', () =>
      done(sent >= TOTAL && status !== undefined ? 'all sent: the server took the whole body' : 'closed by the server'),
    );
    const pump = () => {
      while (!socket.destroyed && sent < TOTAL) {
        sent += data.length;
        progress = Date.now();
        if (!socket.write(chunk)) return void socket.once('drain', pump);
      }
      // All sent: the chunked framing's end, then wait for the server to have read it all.
      if (!socket.destroyed) socket.end(chunked ? '0\r\n\r\n' : undefined);
    };
    socket.on('connect', () => {
      socket.write(`POST ${path} HTTP/1.1\r\n${head}\r\n`);
      pump();
    });
  });
}
