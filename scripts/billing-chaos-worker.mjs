// One worker process of the billing chaos proof (scripts/billing-chaos.mjs): createBilling over
// the shared store (postgresStore or redisStore), its PaymentsClient pointed at the parent's
// sandbox, as a merchant's web process would run it behind a "Subscribe" button; SIGKILLed at
// chosen points. Its clock is the parent's test clock: each command carries the time there, and
// the kit (`now`) and the client (`now`: X-Timestamp) read it, so records and signatures are on
// the sandbox's time (the sandbox keeps its default 300 s tolerance).
//
// stdin, one command a line:
//   SUB <id> <customer> <phone> <point> <now>  billing.subscribe(...) at clock time <now>; `point`
//                                        (or `-`) is where this process SIGKILLs itself during it:
//                                          record: right after store.subscriptions.add recorded
//                                                  the subscription (nothing sent yet);
//                                          create: the create's request about to leave (its
//                                                  send counted in the record, nothing sent);
//                                          answer: once the sandbox answered the create (the
//                                                  subscription made), before the kit records it.
// stdout: READY; DONE <id> <created> <state> <subscriptionId|->; DYING <id> <point> just before a
// self-kill (pipes are synchronous on Linux: the line is out before the signal); ERROR <id> <message>.
import { createInterface } from 'node:readline';
import { PaymentsClient } from 'business-payments';
import { createBilling } from 'business-payments/billing';
import { workerStore } from './chaos-kit.mjs';

const env = process.env;
const say = (line) => process.stdout.write(`${line}\n`);
let clockNow = 0; // the parent's test clock, as its latest command gave it (each SUB sets it before any use)
const now = () => clockNow;

// The column's store (only its driver loaded: a spare starts quicker).
const store = await workerStore(env.BC_STORE, { pgUrl: env.BC_PG_URL, redisUrl: env.BC_REDIS_URL });

// ---- the kill points: a record key's chosen point (the key is also the create's Idempotency-Key) ----
const dieAt = new Map(); // record key → { id, point }
function die(key) {
  const { id, point } = dieAt.get(key);
  say(`DYING ${id} ${point}`);
  process.kill(process.pid, 'SIGKILL');
}
const records = store.subscriptions;
const hooked = {
  add: async (record) => {
    const result = await records.add(record);
    if (result.created && dieAt.get(record.key)?.point === 'record') die(record.key);
    return result;
  },
  get: (key) => records.get(key),
  swap: (next) => records.swap(next),
  list: (limit, after) => records.list(limit, after),
  bind: (subscriptionId, key) => records.bind(subscriptionId, key),
  owner: (subscriptionId) => records.owner(subscriptionId),
};

// The client's fetch: `create` dies before the request leaves (the kit counted the send),
// `answer` once the sandbox answered it (the subscription made, not yet recorded).
async function chaosFetch(input, init) {
  const key = new Headers(input instanceof Request ? input.headers : init?.headers).get('idempotency-key');
  const point = key ? dieAt.get(key)?.point : undefined;
  if (point === 'create') die(key);
  const response = await fetch(input, init);
  if (point === 'answer') die(key);
  return response;
}
const client = new PaymentsClient({
  environment: 'sandbox',
  ...JSON.parse(env.BC_CREDS),
  baseUrl: env.BC_SANDBOX_URL,
  fetch: chaosFetch,
  now,
  maxRetries: 0,
  pollingBudget: 1e9, // the sandbox's rate limit is raised for the run
});
const billing = createBilling({ client, store: { subscriptions: hooked, durable: true }, now });
const TERMS = 'Clinic Pro: TZS 30,000 every month, charged by USSD push to this number until you cancel.';

createInterface({ input: process.stdin })
  .on('line', (line) => {
    const [what, id, customer, phone, point, at] = line.split(' ');
    if (what !== 'SUB') return;
    clockNow = Math.max(clockNow, Number(at));
    // The key this call records, when it records one: the customer's first (nobody resubscribes in the run).
    const key = `sub:${customer}:${env.BC_PLAN}:1`;
    if (point !== '-') dieAt.set(key, { id, point });
    billing
      .subscribe({ customer, plan_code: env.BC_PLAN, customer_phone: phone, terms_shown: TERMS })
      .then(
        ({ created, state, record }) => say(`DONE ${id} ${created} ${state} ${record.subscriptionId ?? '-'}`),
        (error) => say(`ERROR ${id} ${String(error?.code ?? '')} ${String(error?.message ?? error).replace(/\s+/g, ' ')}`),
      )
      .finally(() => {
        if (dieAt.get(key)?.id === id) dieAt.delete(key);
      });
  })
  .on('close', () => process.exit(0));
say('READY');
