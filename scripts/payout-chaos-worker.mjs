// One worker process of the payout chaos proof (scripts/payout-chaos.mjs): createPayouts over
// the shared store (postgresStore or redisStore), its PaymentsClient pointed at the parent's
// sandbox, as a merchant's payout job would run it; SIGKILLed at chosen points.
//
// stdin, one command a line (the parent keeps at most a few SENDs in flight here):
//   SEND <key> <amount> <point>  payouts.send({ key, amount }); `point` (or `-`) is where this
//                                process SIGKILLs itself while sending that key:
//                                  record:   right after store.payouts.add resolved (the intent
//                                            is recorded, nothing sent: it stays `pending`);
//                                  taken:    right after the swap that takes it for a send
//                                            (`unknown`, sends + 1) resolved, before the request;
//                                  inflight: a few ms after the request started (the payout may
//                                            or may not be made);
//                                  sent:     once the sandbox answered (or reset the connection),
//                                            before the kit reads the answer (the payout is made).
//   RESOLVE <id> <clockOffsetMs> resolve() with settleAfter 0 on a kit whose clock is
//                                Date.now() + clockOffsetMs (the jump past the key window).
// stdout: READY; DONE <key> <state> per send; DYING <key> <point> just before a self-kill
// (pipes are synchronous on Linux: the line is out before the signal); REPORT <id> <json>;
// ERROR <key|id> <message>.
import { createInterface } from 'node:readline';
import { PaymentsClient } from 'business-payments';
import { createPayouts } from 'business-payments/payouts';
import { workerStore } from './chaos-kit.mjs';

const env = process.env;
const say = (line) => process.stdout.write(`${line}\n`);

// The column's store (only its driver loaded: a restart after a kill is quicker).
const store = await workerStore(env.PC_STORE, { pgUrl: env.PC_PG_URL, redisUrl: env.PC_REDIS_URL });

// ---- the kill points: a key's chosen point, checked by the hooks below ----
const dieAt = new Map(); // key → point
function die(key, point) {
  say(`DYING ${key} ${point}`);
  process.kill(process.pid, 'SIGKILL');
}
const intents = store.payouts;
const hooked = {
  add: async (intent) => {
    const result = await intents.add(intent);
    if (dieAt.get(intent.key) === 'record') die(intent.key, 'record');
    return result;
  },
  swap: async (next) => {
    const swapped = await intents.swap(next);
    // The take: the first swap into `unknown` (the send recorded), before the request goes out.
    if (swapped && next.state === 'unknown' && dieAt.get(next.key) === 'taken') die(next.key, 'taken');
    return swapped;
  },
  get: (key) => intents.get(key),
  list: (state, limit, after) => intents.list(state, limit, after),
  bind: (payoutId, key) => intents.bind(payoutId, key),
  owner: (payoutId) => intents.owner(payoutId),
};
const kitStore = { payouts: hooked, durable: true };

// The client's fetch: the real one, with the in-flight and after-answer kills.
async function chaosFetch(input, init) {
  const key = new Headers(input instanceof Request ? input.headers : init?.headers).get('idempotency-key');
  const point = key ? dieAt.get(key) : undefined;
  if (point === 'inflight') setTimeout(() => die(key, 'inflight'), 1 + Math.random() * 4);
  try {
    return await fetch(input, init);
  } finally {
    if (point === 'sent') die(key, 'sent');
  }
}
const client = new PaymentsClient({
  environment: 'sandbox',
  ...JSON.parse(env.PC_CREDS),
  baseUrl: env.PC_SANDBOX_URL,
  fetch: chaosFetch,
  // The sandbox's rate limit is raised for the run: the client's polling budget with it.
  pollingBudget: 1e9,
});
const payouts = createPayouts({ client, store: kitStore });

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const [what, a, b, c] = line.split(' ');
  if (what === 'SEND') {
    if (c && c !== '-') dieAt.set(a, c);
    // Done with the key here: its point is spent (another process may have sent it).
    payouts
      .send({ key: a, amount: Number(b) })
      .then(
        (intent) => say(`DONE ${a} ${intent.state}`),
        (error) => say(`ERROR ${a} ${String(error?.message ?? error).replace(/\s+/g, ' ')}`),
      )
      .finally(() => dieAt.delete(a));
  } else if (what === 'RESOLVE') {
    dieAt.clear();
    const kit = createPayouts({ client, store: kitStore, settleAfter: 0, now: () => Date.now() + Number(b) });
    kit.resolve().then(
      (report) =>
        say(
          `REPORT ${a} ${JSON.stringify({
            checked: report.checked,
            changed: report.changed,
            open: report.open.length,
            review: report.review.length,
            errors: report.errors,
          })}`,
        ),
      (error) => say(`ERROR ${a} ${String(error?.message ?? error).replace(/\s+/g, ' ')}`),
    );
  }
});
lines.on('close', () => process.exit(0));
say('READY');
