// Client overhead benchmark (not a test): per-call wall time of one small GET (and, in a
// second table, one small signed POST) against a loopback server, for a raw fetch floor, the floor plus our request signing, a bare ky
// call, this SDK (built dist/, as users get it), stripe-node and openai-node. Sequential
// calls (concurrency 1) and 64 in flight (time per call = elapsed / calls). Rounds
// alternate between the contenders (order rotated each round), each ratio is taken within
// a round, and the median over rounds is reported, so drift in machine speed cancels out.
//
//   npm run bench:client                 builds, then runs this script (Node 24 via npm)
//
// Env: BENCH_ROUNDS (default 41), BENCH_CALLS (calls per contender per round at
// concurrency 1, default 200), BENCH_CALLS_PARALLEL (at the parallel level, default 1024),
// BENCH_CONCURRENCY (the parallel level, default 64), BENCH_WARMUP (calls per contender
// before measuring, default 300), BENCH_ONLY (comma list of contender keys below: run only
// those), BENCH_TIMEOUT_MS (longest one batch of calls may take, default 30000).
// Contender keys: fetch, signed, http, ky, kywire, kyretry, sdk, sdktraced (a tracing
// subscriber attached during its batches), baseline (only with BENCH_BASELINE=<another
// build's dist/index.js>, e.g. main before a change), stripe, openai; and for the POST table
// sdkpost (a signed payments.create), baselinepost (the same on BENCH_BASELINE's build),
// openaipost (openai-node posting a JSON body of the same 300 B). p25/p75 in the tables are
// the spread of the per-round figures. The defaults take about two minutes on two cores.
//
// Where does the SDK's time go? Profile it alone (system node is too old: use the repo's):
//   npm run build && BENCH_ONLY=sdk npm exec -- node --cpu-prof --cpu-prof-dir=/tmp/prof scripts/bench-client.mjs
//   npm exec -- node scripts/cpuprofile-top.mjs /tmp/prof/*.cpuprofile
// The server runs in a child process started without --cpu-prof, so the profile holds only
// the client (one .cpuprofile file).
//
// How the others are pointed at http loopback: stripe-node takes { host, port, protocol:
// 'http' } and sends over node:http with its own keep-alive agent (not fetch: hence the
// extra `http` row, stripe's transport floor); openai-node takes baseURL `<origin>/v1` and
// uses the global fetch, like ky and this SDK. All three SDKs keep their default retry
// settings (maxRetries / maxNetworkRetries 2): no call fails here, so none retries.
import { fork } from 'node:child_process';
import diagnostics from 'node:diagnostics_channel';
import { resolve as resolvePath } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import { fileURLToPath } from 'node:url';

const SERVER_FLAG = 'BENCH_CLIENT_SERVER';
const BODY_BYTES = 300;

// ---------------------------------------------------------------------------------------
// The server: fixed answers of equal size. It runs in a child process so that its CPU time
// is not charged to the client under test (on two cores each side gets its own), and so a
// --cpu-prof of the client shows the client only.

/** JSON of exactly `BODY_BYTES` bytes: `pad` is filled with x's. */
function fixedJson(object) {
  const bare = Buffer.byteLength(JSON.stringify({ ...object, pad: '' }));
  if (bare > BODY_BYTES) throw new Error(`fixture is already ${bare} B`);
  return Buffer.from(JSON.stringify({ ...object, pad: 'x'.repeat(BODY_BYTES - bare) }));
}

function answers() {
  // The documented VerifiedTransaction (spec "Verified transaction").
  const verified = fixedJson({
    status: 'success',
    trx_id: 'TRX1',
    amount: 25,
    fee: 0.75,
    currency: 'USD',
    net_amount: 24.25,
    customer: { name: 'Ada Lovelace', email: 'ada@example.com' },
    description: 'Order 1001',
    created_at: '2026-11-22T12:00:00Z',
    updated_at: '2026-11-22T12:01:00Z',
  });
  const customer = fixedJson({
    id: 'cus_123',
    object: 'customer',
    balance: 0,
    created: 1763812800,
    currency: 'usd',
    delinquent: false,
    email: 'ada@example.com',
    livemode: false,
    metadata: {},
    name: 'Ada Lovelace',
  });
  const model = fixedJson({ id: 'gpt-x', object: 'model', created: 1763812800, owned_by: 'bench' });
  // The documented creation answer (spec "Create payment"): `{ status, data }`.
  const created = fixedJson({
    status: 'success',
    data: {
      trx_id: 'TRX1',
      merchant_ref: 'order-1001~a1',
      amount: 25,
      currency: 'USD',
      status: 'pending',
      checkout_url: 'https://pay.example.com/checkout/TRX1',
      expires_at: '2026-11-22T12:30:00Z',
      environment: 'sandbox',
    },
  });
  // What openai-node is answered for its POST: an object of the same size.
  const posted = fixedJson({ id: 'thing_1', object: 'thing', created: 1763812800, status: 'pending' });
  return { verified, customer, model, created, posted };
}

function runServer() {
  const { verified, customer, model, created, posted } = answers();
  const served = { verify: 0, customer: 0, model: 0, create: 0, post: 0, other: 0 };
  const send = (res, body) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length, connection: 'keep-alive' });
    res.end(body);
  };
  const server = http.createServer((req, res) => {
    // Drain any request body (the POSTs' bodies are not looked at: only their answers matter).
    req.resume();
    if (req.method === 'GET' && req.url.startsWith('/api/v1/verify-payment/')) return (served.verify++, send(res, verified));
    if (req.method === 'POST' && req.url === '/api/v1/payments') return (served.create++, send(res, created));
    if (req.method === 'POST' && req.url === '/v1/things') return (served.post++, send(res, posted));
    if (req.method === 'GET' && req.url === '/v1/customers/cus_123') return (served.customer++, send(res, customer));
    if (req.method === 'GET' && req.url === '/v1/models/gpt-x') return (served.model++, send(res, model));
    served.other++;
    res.writeHead(404, { 'content-type': 'application/json', connection: 'keep-alive' });
    res.end(JSON.stringify({ error: 'not_found', url: req.url }));
  });
  // Idle sockets between rounds must stay open: reconnects would be charged to whoever is next.
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 121_000;
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  const close = () => {
    server.closeAllConnections();
    server.close(() => process.send({ served }, () => process.exit(0)));
  };
  process.on('message', (m) => m === 'close' && close());
  // The parent died or went away: never linger as an orphan.
  process.on('disconnect', () => process.exit(0));
}

/** Starts the server child; resolves to { origin, close() → served counts }. */
function startServer() {
  // No --cpu-prof (or any other flag of ours) in the child: it must not write a profile.
  const nodeOptions = (process.env.NODE_OPTIONS ?? '').split(/\s+/).filter((f) => f && !/^--(cpu|heap)-prof/.test(f));
  const child = fork(fileURLToPath(import.meta.url), [], {
    execArgv: [],
    env: { ...process.env, NODE_OPTIONS: nodeOptions.join(' '), [SERVER_FLAG]: '1' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error('the server did not start within 10 s')), 10_000);
    const fail = (error) => {
      clearTimeout(timer);
      child.kill();
      reject(error);
    };
    child.once('error', fail);
    child.once('exit', (code) => fail(new Error(`the server exited early (code ${code})`)));
    child.once('message', ({ port }) => {
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({ origin: `http://127.0.0.1:${port}`, child, close: () => stopServer(child) });
    });
  });
}

function stopServer(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || !child.connected) return resolve(undefined);
    let served;
    const timer = setTimeout(() => child.kill(), 5_000);
    child.on('message', (m) => (served = m.served));
    child.once('exit', () => (clearTimeout(timer), resolve(served)));
    child.send('close');
  });
}

// ---------------------------------------------------------------------------------------
// The contenders.

const CREDENTIALS = { merchantKey: 'test_merchant_001', apiKey: 'test_key_001', apiSecret: 'test_secret_001', environment: 'sandbox' };
const VERIFY_PATH = '/api/v1/verify-payment/TRX1';

/** Signed headers built by hand: the HMAC docs/signing.md describes and what goes with it. */
function signedHeaders() {
  const ts = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', CREDENTIALS.apiSecret).update(`${ts}.GET.${VERIFY_PATH}.`).digest('hex');
  return {
    'Content-Type': 'application/json',
    Accept: 'application/json',
    'X-Environment': CREDENTIALS.environment,
    'X-Merchant-Key': CREDENTIALS.merchantKey,
    'X-API-Key': CREDENTIALS.apiKey,
    'X-Timestamp': ts,
    'X-Signature': `sha256=${signature}`,
  };
}

/** A GET over node:http with a keep-alive agent, as stripe-node sends. */
function httpGet(url, agent) {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve(text));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/** A ky beforeRequest hook that sets `headers` on the Request (how the SDK hands ky its headers). */
const putHeaders =
  (headers) =>
  ({ request }) => {
    for (const name in headers) request.headers.set(name, headers[name]);
  };

/** A `ky.get(…).json()` contender with fixed options (ky imported only when chosen). */
function kyContender(label, options) {
  return {
    label,
    setup: async (origin) => {
      const { default: ky } = await import('ky');
      return () => ky.get(origin + VERIFY_PATH, options).json();
    },
    check: (r) => r.trx_id === 'TRX1',
  };
}

/** A `ky.post(…).json()` of the payments.create body with the SDK's wire headers and a fresh Idempotency-Key. */
function kyPostContender(label, options) {
  return {
    label,
    post: true,
    setup: async (origin) => {
      const { default: ky } = await import('ky');
      const body = JSON.stringify(CREATE_PARAMS);
      const headers = signedHeaders();
      const hooks = { beforeRequest: [putHeaders(headers), ({ request }) => request.headers.set('Idempotency-Key', crypto.randomUUID())] };
      return () => ky.post(`${origin}/api/v1/payments`, { ...options, body, hooks }).json();
    },
    check: (r) => r.data?.trx_id === 'TRX1' || r.trx_id === 'TRX1',
  };
}

const textOk = (text) => Buffer.byteLength(text) === BODY_BYTES && JSON.parse(text).trx_id === 'TRX1';

/** This SDK's contender, from the build `where()` names (none: the contender is skipped). */
function sdkContender(label, where) {
  return {
    label,
    setup: async (origin) => {
      const from = where();
      if (!from) return undefined;
      const { PaymentsClient } = await import(from);
      const client = new PaymentsClient({ ...CREDENTIALS, baseUrl: origin });
      return () => client.payments.verify('TRX1');
    },
    check: (r) => r.trx_id === 'TRX1' && r.status === 'success',
  };
}

/** The params of the POST contenders: a payments.create body of {@link POST_BODY_BYTES} as JSON. */
const POST_BODY_BYTES = 300;
const CREATE_PARAMS = (() => {
  const params = {
    payment_amount: 25,
    currency_code: 'USD',
    ref_trx: 'order-1001~a1',
    description: 'Order 1001',
    customer_name: 'Ada Lovelace',
    customer_email: 'ada@example.com',
    ipn_url: 'https://shop.example.com/webhooks/payments',
    success_redirect: 'https://shop.example.com/thanks',
  };
  const bare = Buffer.byteLength(JSON.stringify(params));
  if (bare > POST_BODY_BYTES) throw new Error(`POST fixture is already ${bare} B`);
  // Padded in the free-text description, which the SDK sends as given.
  return { ...params, description: params.description + ' '.repeat(POST_BODY_BYTES - bare) };
})();

/** This SDK's POST contender: a signed payments.create (an Idempotency-Key, a body to sign). */
function sdkPostContender(label, where) {
  return {
    label,
    post: true,
    setup: async (origin) => {
      const from = where();
      if (!from) return undefined;
      const { PaymentsClient } = await import(from);
      const client = new PaymentsClient({ ...CREDENTIALS, baseUrl: origin });
      return () => client.payments.create(CREATE_PARAMS);
    },
    check: (r) => r.trx_id === 'TRX1' && r.status === 'pending' && r.amount === 25,
  };
}

/**
 * key → { label, setup(origin) → one call, check(one result) }. Each setup imports only
 * what it needs, so a BENCH_ONLY profile holds no other library's load time.
 */
const CONTENDERS = {
  fetch: {
    label: 'raw fetch + text()',
    setup: (origin) => async () => (await fetch(origin + VERIFY_PATH)).text(),
    check: textOk,
  },
  signed: {
    label: 'raw fetch + signing + text()',
    setup: (origin) => async () => (await fetch(origin + VERIFY_PATH, { headers: signedHeaders() })).text(),
    check: textOk,
  },
  http: {
    label: 'raw node:http (stripe transport)',
    setup: (origin, cleanups) => {
      const agent = new http.Agent({ keepAlive: true });
      cleanups.push(() => agent.destroy());
      return () => httpGet(origin + VERIFY_PATH, agent);
    },
    check: textOk,
  },
  ky: kyContender('bare ky .json()', { retry: 0 }),
  // The SDK's transport floor: ky sending the very bytes the SDK sends (the same seven
  // headers, a signature computed once, set in a beforeRequest hook as the SDK sets them),
  // no retry. SDK / this is the SDK's own work per call: validation, signing, the retry
  // policy, parsing.
  kywire: kyContender('ky + the SDK wire headers .json()', { retry: 0, hooks: { beforeRequest: [putHeaders(signedHeaders())] } }),
  // The same with retries on (limit 2, as the SDK): ky then clones each Request up front,
  // so a retry has a body to send; the clone is part of ky's per-call price.
  kyretry: kyContender('ky + wire headers + retry limit 2', {
    retry: { limit: 2 },
    hooks: { beforeRequest: [putHeaders(signedHeaders())] },
  }),
  sdk: sdkContender('SDK payments.verify', () => '../dist/index.js'),
  // The same client with a subscriber on the tracing channels (as an APM tool would hold
  // one): it is attached only while this contender's batches run.
  sdktraced: { ...sdkContender('SDK payments.verify, traced', () => '../dist/index.js'), around: tracingSubscriber },
  // Another build of the SDK (BENCH_BASELINE=<its dist/index.js>), e.g. main before a
  // change: SDK / baseline is what the change costs, both measured in the same rounds.
  baseline: sdkContender(
    'SDK payments.verify, baseline build',
    () => process.env.BENCH_BASELINE && pathToFileURL(resolvePath(process.env.BENCH_BASELINE)).href,
  ),
  stripe: {
    label: 'stripe customers.retrieve',
    setup: async (origin) => {
      const { default: Stripe } = await import('stripe');
      const stripe = new Stripe('sk_test_bench_only', { host: '127.0.0.1', port: Number(new URL(origin).port), protocol: 'http' });
      return () => stripe.customers.retrieve('cus_123');
    },
    check: (r) => r.id === 'cus_123',
  },
  openai: {
    label: 'openai models.retrieve',
    setup: async (origin) => {
      const { default: OpenAI } = await import('openai');
      const openai = new OpenAI({ apiKey: 'sk-bench-only', baseURL: `${origin}/v1` });
      return () => openai.models.retrieve('gpt-x');
    },
    check: (r) => r.id === 'gpt-x',
  },
  // The POST table: a signed payments.create against openai-node posting a JSON body of the
  // same size, both answered with 300 B of JSON.
  sdkpost: sdkPostContender('SDK payments.create', () => '../dist/index.js'),
  baselinepost: sdkPostContender(
    'SDK payments.create, baseline build',
    () => process.env.BENCH_BASELINE && pathToFileURL(resolvePath(process.env.BENCH_BASELINE)).href,
  ),
  // The POST floors: ky posting the same bytes with the SDK's wire headers (and an
  // Idempotency-Key), without and with retries (with them ky clones the Request up front,
  // which tees the body): what any ky-based client pays before its own work.
  kypost: kyPostContender('ky POST + wire headers .json()', { retry: 0 }),
  kyretrypost: kyPostContender('ky POST + wire headers + retry limit 2', { retry: { limit: 2 } }),
  openaipost: {
    label: 'openai client.post (300 B JSON body)',
    post: true,
    setup: async (origin) => {
      const { default: OpenAI } = await import('openai');
      const openai = new OpenAI({ apiKey: 'sk-bench-only', baseURL: `${origin}/v1` });
      return () => openai.post('/things', { body: CREATE_PARAMS });
    },
    check: (r) => r.id === 'thing_1',
  },
};

/**
 * A subscriber that does what a tracer does per call: note the start time against the
 * context, read the outcome at asyncEnd. `on()` attaches it, `off()` detaches it.
 */
function tracingSubscriber() {
  const started = new WeakMap();
  let finished = 0;
  const handlers = {
    start: (ctx) => started.set(ctx, performance.now()),
    end: () => {},
    asyncStart: () => {},
    asyncEnd: (ctx) => {
      if (ctx.status === 200 && started.has(ctx)) finished++;
    },
    error: () => {},
  };
  const channel = diagnostics.tracingChannel('business-payments:request');
  return {
    on: () => channel.subscribe(handlers),
    off: () => channel.unsubscribe(handlers),
    count: () => finished,
  };
}

// ---------------------------------------------------------------------------------------
// Timing.

const env = (name, fallback) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer (got ${process.env[name]})`);
  return value;
};

/** Runs `calls` calls of `fn`, `concurrency` in flight; µs per call. Fails past `timeoutMs`. */
async function batch(name, fn, calls, concurrency, timeoutMs) {
  let next = 0;
  let stopped = false;
  const worker = async () => {
    while (next < calls && !stopped) {
      next++;
      await fn();
    }
  };
  let timer;
  const watchdog = new Promise((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${name}: ${calls} calls at concurrency ${concurrency} took longer than ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  const start = performance.now();
  try {
    await Promise.race([Promise.all(Array.from({ length: Math.min(concurrency, calls) }, worker)), watchdog]);
  } finally {
    stopped = true;
    clearTimeout(timer);
  }
  return ((performance.now() - start) * 1000) / calls;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))];

const RATIOS = [
  ['SDK / bare ky', 'sdk', 'ky', 'target ≤ 1.05'],
  ['SDK / ky + SDK wire headers', 'sdk', 'kywire', "the SDK's own work over its transport"],
  ['ky + SDK wire headers / bare ky', 'kywire', 'ky', 'what seven headers cost'],
  ['ky retry limit 2 / ky retry 0 (same headers)', 'kyretry', 'kywire', "what ky's retry readiness costs"],
  ['SDK / ky + wire headers + retry 2', 'sdk', 'kyretry'],
  ['SDK / raw fetch', 'sdk', 'fetch'],
  ['SDK / raw fetch + signing', 'sdk', 'signed'],
  ['ky / raw fetch', 'ky', 'fetch'],
  ['signing / raw fetch', 'signed', 'fetch'],
  ['openai / raw fetch', 'openai', 'fetch'],
  ['stripe / raw fetch', 'stripe', 'fetch'],
  ['stripe / raw node:http', 'stripe', 'http'],
  ['SDK / openai', 'sdk', 'openai', 'target ≤ 1.10'],
  ['SDK traced / SDK', 'sdktraced', 'sdk', 'what a tracing subscriber costs'],
  ['SDK traced / openai', 'sdktraced', 'openai'],
  ['SDK / baseline build', 'sdk', 'baseline', 'BENCH_BASELINE: what the change costs'],
  ['SDK / stripe', 'sdk', 'stripe'],
  ['SDK create / openai post', 'sdkpost', 'openaipost', 'target ≤ 1.10'],
  ['SDK create / baseline build', 'sdkpost', 'baselinepost', 'BENCH_BASELINE: what the change costs'],
];

async function measure(chosen, { concurrency, calls, rounds, timeoutMs }) {
  const keys = Object.keys(chosen);
  const samples = Object.fromEntries(keys.map((k) => [k, []]));
  const ratios = Object.fromEntries(RATIOS.map(([name]) => [name, []]));
  for (let r = 0; r < rounds; r++) {
    const round = {};
    // Rotate the order so no contender always runs right after the same neighbour.
    for (let i = 0; i < keys.length; i++) {
      const key = keys[(r + i) % keys.length];
      const around = chosen[key][2];
      around?.on();
      samples[key].push((round[key] = await batch(key, chosen[key][1], calls, concurrency, timeoutMs)));
      around?.off();
    }
    for (const [name, a, b] of RATIOS) if (a in round && b in round) ratios[name].push(round[a] / round[b]);
  }
  return { samples, ratios };
}

function printTable(chosen, { method, concurrency, calls, samples, ratios }) {
  const us = (x) => x.toFixed(1);
  console.log(`\n## ${method}, concurrency ${concurrency} (${calls} calls per contender per round)\n`);
  console.log('| contender | µs per call (median) | p25 | p75 |');
  console.log('|---|---:|---:|---:|');
  for (const [key, [label]] of Object.entries(chosen)) {
    const xs = samples[key];
    console.log(`| ${label} | ${us(median(xs))} | ${us(quantile(xs, 0.25))} | ${us(quantile(xs, 0.75))} |`);
  }
  const shown = RATIOS.filter(([name]) => ratios[name].length > 0);
  if (shown.length === 0) return;
  console.log('\n| ratio (median of per-round ratios) | value | note |');
  console.log('|---|---:|---|');
  for (const [name, , , note] of shown) console.log(`| ${name} | ${median(ratios[name]).toFixed(3)} | ${note ?? ''} |`);
}

async function main() {
  const rounds = env('BENCH_ROUNDS', 41);
  const calls1 = env('BENCH_CALLS', 200);
  const parallel = env('BENCH_CONCURRENCY', 64);
  const callsN = env('BENCH_CALLS_PARALLEL', 1024);
  const warmup = env('BENCH_WARMUP', 300);
  const timeoutMs = env('BENCH_TIMEOUT_MS', 30_000);

  const only = (process.env.BENCH_ONLY ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  const unknown = only.filter((k) => !(k in CONTENDERS));
  if (unknown.length) throw new Error(`BENCH_ONLY: unknown contender ${unknown.join(', ')} (known: ${Object.keys(CONTENDERS).join(', ')})`);

  const server = await startServer();
  const cleanups = [];
  try {
    // key → [label, one call]; each answer is checked once, then every contender is warmed
    // up (JIT, connection pools) sequentially and at the parallel level.
    const chosen = {};
    for (const key of only.length ? only : Object.keys(CONTENDERS)) {
      const { label, setup, check, around: makeAround } = CONTENDERS[key];
      const fn = await setup(server.origin, cleanups);
      if (!fn) continue; // a contender that needs an env setting it did not get
      const around = makeAround?.();
      around?.on();
      const result = await fn();
      if (!check(result)) throw new Error(`${key} (${label}) got an unexpected answer: ${JSON.stringify(result).slice(0, 200)}`);
      await batch(key, fn, warmup, 1, timeoutMs);
      await batch(key, fn, Math.max(warmup, parallel * 4), parallel, timeoutMs);
      around?.off();
      // The traced contender must really have been traced: its subscriber saw every call.
      if (around && around.count() === 0) throw new Error(`${key}: the tracing subscriber saw no call`);
      chosen[key] = [label, fn, around];
    }

    console.log(`node ${process.version} on ${process.platform}/${process.arch}; server in a child process; ${BODY_BYTES} B JSON answers`);
    console.log(
      `${rounds} rounds (after ${warmup} warm-up calls each), contender order rotated per round${only.length ? `; only: ${only.join(', ')}` : ''}`,
    );
    // Two tables, GET and POST, each measured on its own (ratios are taken within a table).
    const tables = [
      ['GET', Object.fromEntries(Object.entries(chosen).filter(([key]) => !CONTENDERS[key].post))],
      ['POST', Object.fromEntries(Object.entries(chosen).filter(([key]) => CONTENDERS[key].post))],
    ].filter(([, contenders]) => Object.keys(contenders).length > 0);
    for (const [method, contenders] of tables) {
      for (const [concurrency, calls] of [
        [1, calls1],
        [parallel, callsN],
      ]) {
        const result = await measure(contenders, { concurrency, calls, rounds, timeoutMs });
        printTable(contenders, { method, concurrency, calls, ...result });
      }
    }
  } finally {
    for (const cleanup of cleanups) cleanup();
    const served = await server.close();
    if (served?.other) console.error(`warning: the server answered ${served.other} request(s) with 404`);
  }
}

if (process.env[SERVER_FLAG] === '1') {
  runServer();
} else {
  main().then(
    () => (process.exitCode = 0),
    (error) => {
      console.error(`bench-client failed: ${error?.stack ?? error}`);
      process.exitCode = 1;
      // A call still hanging (or retrying) must not keep a failed run alive.
      setTimeout(() => process.exit(1), 2_000).unref();
    },
  );
}
