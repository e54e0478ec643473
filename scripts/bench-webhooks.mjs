// Webhook verification benchmark (not a test): ops/s of the bare node:crypto floor against
// verifyWebhookSignature and verifyWebhook, 1 KB and 16 KB bodies, in one run. Uses the
// built package (dist/), as users get it. Short rounds alternate between the contenders
// and each ratio is taken within a round, then the median over rounds is reported, so
// slow drift in machine speed (shared cores) cancels out instead of skewing the ratio.
import { createHmac, timingSafeEqual } from 'node:crypto';
import Stripe from 'stripe';
import { verifyWebhook, verifyWebhookSignature } from '../dist/webhooks.js';

// stripe-node is a dev dependency for this comparison only: its constructEvent does the
// same job (check the HMAC and the age, parse the event), synchronously.
const stripe = new Stripe('sk_test_bench_only');

const SECRET = 'whsec_bench_0123456789abcdef';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 41);
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 60);

function delivery(size) {
  const filler = 'x'.repeat(Math.max(0, size - 260));
  const body = JSON.stringify({
    id: 'evt_bench_1',
    type: 'payment.completed',
    api_version: '2026-01-01',
    created_at: '2026-11-22T12:00:00+00:00',
    data: { trx_id: 'TRX1', merchant_ref: 'order-1', status: 'completed', amount: { value: 25, currency: 'USD' }, note: filler },
  });
  const t = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex');
  // A Node-style headers object, as `req.headers` gives it.
  const headers = {
    'content-type': 'application/json',
    'x-service-signature': signature,
    'x-service-timestamp': t,
    'x-service-event': 'payment.completed',
    'x-environment': 'sandbox',
  };
  return { body, t, signature, headers, stripeHeader: `t=${t},v1=${signature}` };
}

// The floor: the least any correct verifier must do on Node.
function floor({ body, t, signature }) {
  const digest = createHmac('sha256', SECRET).update(`${t}.${body}`).digest();
  if (!timingSafeEqual(digest, Buffer.from(signature, 'hex'))) throw new Error('floor mismatch');
}
// stripe-node's constructEvent does the floor's work plus JSON.parse: a fair stand-in.
function floorParse(d) {
  floor(d);
  return JSON.parse(d.body);
}

async function opsPerSecond(fn, isAsync) {
  let n = 0;
  const end = performance.now() + ROUND_MS;
  const start = performance.now();
  if (isAsync) while (performance.now() < end) for (let i = 0; i < 100; i++, n++) await fn();
  else while (performance.now() < end) for (let i = 0; i < 100; i++, n++) fn();
  return n / ((performance.now() - start) / 1000);
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const rows = [];
for (const size of [1024, 16 * 1024]) {
  const d = delivery(size);
  const options = { payload: d.body, headers: d.headers, secret: SECRET };
  const contenders = {
    floor: [() => floor(d), false],
    'floor + JSON.parse': [() => floorParse(d), false],
    verifyWebhookSignature: [() => verifyWebhookSignature(options), true],
    verifyWebhook: [() => verifyWebhook(options), true],
    'stripe constructEvent': [() => stripe.webhooks.constructEvent(d.body, d.stripeHeader, SECRET), false],
  };
  // Warm up every contender (JIT) before measuring.
  for (const [fn, isAsync] of Object.values(contenders)) await opsPerSecond(fn, isAsync);
  const samples = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
  const sigRatios = [];
  const verifyRatios = [];
  const stripeRatios = [];
  for (let r = 0; r < ROUNDS; r++) {
    const round = {};
    for (const [name, [fn, isAsync]] of Object.entries(contenders)) samples[name].push((round[name] = await opsPerSecond(fn, isAsync)));
    sigRatios.push(round.verifyWebhookSignature / round.floor);
    verifyRatios.push(round.verifyWebhook / round['floor + JSON.parse']);
    stripeRatios.push(round.verifyWebhook / round['stripe constructEvent']);
  }
  const ops = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
  rows.push({ size, ops, sigRatio: median(sigRatios), verifyRatio: median(verifyRatios), stripeRatio: median(stripeRatios) });
}

console.log(`node ${process.version}, ${ROUNDS} rounds x ${ROUND_MS} ms per contender; median ops/s, median of per-round ratios\n`);
console.log(
  '| body | floor | floor + JSON.parse | stripe constructEvent | verifyWebhookSignature | verifyWebhook | sig / floor | verify / (floor + parse) | verify / stripe |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
for (const { size, ops, sigRatio, verifyRatio, stripeRatio } of rows) {
  const f = (x) => Math.round(x).toLocaleString('en-US');
  console.log(
    `| ${size / 1024} KB | ${f(ops.floor)} | ${f(ops['floor + JSON.parse'])} | ${f(ops['stripe constructEvent'])} | ${f(ops.verifyWebhookSignature)} | ${f(ops.verifyWebhook)} | ${sigRatio.toFixed(3)} | ${verifyRatio.toFixed(3)} | ${stripeRatio.toFixed(3)} |`,
  );
}
