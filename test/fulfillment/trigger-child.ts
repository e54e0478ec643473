// One web process of the pg-boss SIGKILL case (triggers-real.check.ts): a kit on postgresStore
// (a pg Pool) with pgBossTrigger on a real pg-boss, that handles one signed delivery. With
// `hold`, the job is sent inside the inbox row's transaction and the process then waits there,
// before the COMMIT, until it is killed. Bundled by triggers-real.check.ts (esbuild), run by node.
//
//   node trigger-child.mjs '<json: TriggerChild>'
//
// stdout, a line each: SENT (the job inserted, the transaction still open: `hold` only);
// ANSWER <status> (the delivery answered).
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { createFulfillment, type FulfillmentTrigger } from '../../src/fulfillment.js';
import { pgBossTrigger } from '../../src/fulfillment-pg-boss.js';
import { postgresStore } from '../../src/fulfillment/postgres.js';

/** What the parent passes. */
export interface TriggerChild {
  url: string;
  table: string;
  queue: string;
  secret: string;
  delivery: { payload: string; headers: Record<string, string> };
  hold: boolean;
}

const setup = JSON.parse(process.argv[2]!) as TriggerChild;
const say = (line: string) => process.stdout.write(`${line}\n`);
const pool = new pg.Pool({ connectionString: setup.url, max: 2 });
pool.on('error', () => {});
// The parent created pg-boss's schema and the queue: no maintenance here.
const boss = new PgBoss({ connectionString: setup.url, supervise: false, schedule: false, migrate: false });
boss.on('error', () => {});
await boss.start();
const real = pgBossTrigger(boss, { queue: setup.queue });
const trigger: FulfillmentTrigger = {
  send: real.send,
  async sendInTransaction(db, id) {
    await real.sendInTransaction!(db, id);
    if (!setup.hold) return;
    say('SENT');
    // Held here, inside the inbox row's transaction, until the parent kills this process.
    await new Promise(() => setInterval(() => {}, 1_000));
  },
};
const fulfillment = createFulfillment({
  environment: 'sandbox',
  secret: setup.secret,
  client: { environment: 'sandbox', payments: { verify: () => Promise.reject(new Error('not here')), list: async function* () {} } },
  store: postgresStore(pool, { table: setup.table }),
  trigger,
  onPaid: () => {},
});
const answer = await fulfillment.handleWebhook(setup.delivery);
say(`ANSWER ${answer.status}`);
await boss.stop({ graceful: false }).catch(() => {});
await pool.end();
process.exit(0);
