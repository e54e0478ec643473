// What the docs' snippets use without declaring it, for samples.test.ts: the
// declarations every snippet is type-checked beside (it lives here, never in the docs: a
// reader's code declares these itself), and a stand-in for each name the test can give a
// value when it runs one.
//
// - Your application's values (`client`, `params`, `order`, `req`, …): a snippet is an
//   excerpt of an app that has them. Those with a stand-in run against the local sandbox (a
//   PaymentsClient from the BUSINESS_PAYMENTS_* variables openSandbox sets, a payment made and
//   paid on it, its signed delivery, PGlite behind pg's Pool, a recorder for `fulfil`). One
//   that uses a name without a stand-in (`Deno`, `webhookSecret`) cannot run: its page marks
//   it `<!-- not run: <why> -->`.
// - The package's exports, for `@example` blocks only: an editor shows an example on the
//   export it documents, whose import is implied. A block of a page imports what it uses from
//   the package (samples.test.ts refuses one that does not).
import { ServerResponse, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { PGlite } from '@electric-sql/pglite';
import express from 'express';
import { Agent } from 'undici';
import * as index from '../../src/index.js';
import { PaymentsClient, type PaymentCreateParams, type PaymentInitiateParams } from '../../src/index.js';
import * as doctor from '../../src/doctor.js';
import * as fulfillmentEntry from '../../src/fulfillment.js';
import * as postgres from '../../src/fulfillment-postgres.js';
import * as redis from '../../src/fulfillment-redis.js';
import * as pgBoss from '../../src/fulfillment-pg-boss.js';
import * as bullmq from '../../src/fulfillment-bullmq.js';
import * as payouts from '../../src/payouts.js';
import * as billingEntry from '../../src/billing.js';
import * as testing from '../../src/testing.js';
import * as webhooks from '../../src/webhooks.js';
import { onePool } from '../support/pglite-pool.js';
import { WEBHOOK_URL, type openSandbox } from '../fulfillment/docs-pages.js';
import { slug, type Sample } from './samples.js';

/** The package's exports an `@example` may use without importing them, by the entry each is from. */
const EXPORTS: Record<string, [entry: string, module: Record<string, unknown>]> = {
  PaymentsClient: ['business-payments', index],
  InvalidParamsError: ['business-payments', index],
  RouteNotSupportedError: ['business-payments', index],
  paidAmount: ['business-payments', index],
  signRequest: ['business-payments', index],
  verifyWebhookSignature: ['business-payments/webhooks', webhooks],
  verifyWebhook: ['business-payments/webhooks', webhooks],
  signWebhook: ['business-payments/testing', testing],
  createMockService: ['business-payments/testing', testing],
  createFulfillment: ['business-payments/fulfillment', fulfillmentEntry],
  postgresStore: ['business-payments/fulfillment/postgres', postgres],
  redisStore: ['business-payments/fulfillment/redis', redis],
  queueTrigger: ['business-payments/fulfillment', fulfillmentEntry],
  pgBossTrigger: ['business-payments/fulfillment/pg-boss', pgBoss],
  bullmqTrigger: ['business-payments/fulfillment/bullmq', bullmq],
  createPayouts: ['business-payments/payouts', payouts],
  createBilling: ['business-payments/billing', billingEntry],
  diagnose: ['business-payments/doctor', doctor],
};

export const isExport = (name: string) => name in EXPORTS;

/** One run of a sample: its sandbox, and what its stand-ins share. */
export interface Run {
  sample: Sample;
  sandbox: Awaited<ReturnType<typeof openSandbox>>;
  /** What the recorders (`fulfil`, `ship`, `queue.send`, …) were called with. */
  calls: Array<[string, unknown[]]>;
  /** Runs after the sample (a mock's close). */
  defer(cleanup: () => unknown): void;
}

type StandIn = (run: Run) => unknown;

interface Name {
  /** Its type in the declarations. */
  type: string;
  /** Its value when a sample that uses it runs; without one, why that sample is type-checked only. */
  standIn: StandIn | { none: string };
}

const ref = (run: Run, part: string) => `${slug(run.sample)}-${part}`;
const client = () => new PaymentsClient(); // the BUSINESS_PAYMENTS_* variables of openSandbox
const record =
  (name: string, answer: (...args: unknown[]) => unknown = () => undefined) =>
  (run: Run) =>
  (...args: unknown[]) => {
    run.calls.push([name, args]);
    return answer(...args);
  };

// A payment made and paid on the run's sandbox (once per run): what `payment`, `trxId`,
// `verified` and the signed delivery (`request`, `rawBody`, `req`, `event`) are of.
const paidOf = new WeakMap<Run, ReturnType<typeof pay>>();
const paid = (run: Run) => paidOf.get(run) ?? paidOf.set(run, pay(run)).get(run)!;
async function pay(run: Run) {
  const { sandbox } = run;
  const payments = client().payments;
  const fields = { payment_amount: 25, currency_code: 'USD', ref_trx: ref(run, 'paid'), ipn_url: WEBHOOK_URL };
  let payment: index.Payment | undefined;
  let trxId: string;
  if (sandbox.earlier) {
    const redirects = { success_redirect: 'https://shop.example.com/thanks', cancel_redirect: 'https://shop.example.com/cart' };
    await payments.initiate({ ...fields, ...redirects, customer_name: 'Asha' }); // that server fails without a name
    trxId = [...sandbox.mock.state.payments.values()].find((row) => row.merchant_ref === fields.ref_trx)!.trx_id as string;
  } else {
    payment = await payments.create(fields);
    trxId = payment.trx_id;
  }
  await sandbox.mock.completeCheckout(trxId, 'success');
  const verified = await payments.verify(trxId);
  const delivery = await sandbox.delivery(trxId);
  const secret = sandbox.production.webhookSecret; // on the earlier generation, the API secret
  const event = await webhooks.verifyWebhook({ payload: delivery.body, headers: delivery.headers, secret, environment: 'production' });
  // Node's headers: lower-case names.
  const nodeHeaders = Object.fromEntries(Object.entries(delivery.headers).map(([name, value]) => [name.toLowerCase(), value]));
  return { payment, trxId, verified, delivery, event, nodeHeaders };
}

// The delivery as node:http gives it (once per run): its body a stream, its headers lower-case.
const requestOf = new WeakMap<Run, Promise<IncomingMessage>>();
const nodeRequest = (run: Run) => requestOf.get(run) ?? requestOf.set(run, readable(run)).get(run)!;
async function readable(run: Run): Promise<IncomingMessage> {
  const { delivery, nodeHeaders } = await paid(run);
  const stream = Readable.from([Buffer.from(delivery.body)]);
  return Object.assign(stream, { headers: nodeHeaders, method: 'POST', url: '/api/webhooks/payments' }) as unknown as IncomingMessage;
}

// PGlite (one, for the whole file, emptied for each run) behind pg's Pool.
let pglite: Promise<PGlite> | undefined;
/** Starts PGlite (seconds of WebAssembly) before a sample needs it. */
export const warmPglite = () => void (pglite ??= PGlite.create());
export const closePglite = async () => (await pglite)?.close();
async function pool() {
  const db = await (pglite ??= PGlite.create());
  await db.exec('DROP SCHEMA public CASCADE; CREATE SCHEMA public;');
  return onePool(db);
}
const poolOf = new WeakMap<Run, ReturnType<typeof pool>>();
const runPool = (run: Run) => poolOf.get(run) ?? poolOf.set(run, pool()).get(run)!;

// The attempts `saveAttempt` keeps and `findAttempt` reads (README's overview of the kit).
const attempts = new Map<string, { ref_trx: string; order_id: string; trx_id: string }>();

const NAMES: Record<string, Name> = {
  // The client and what is paid with it.
  client: { type: 'PaymentsClient', standIn: client },
  params: {
    type: 'PaymentCreateParams',
    standIn: (run): PaymentCreateParams => ({
      payment_amount: 25,
      currency_code: 'USD',
      ref_trx: ref(run, 'params'),
      ipn_url: WEBHOOK_URL,
    }),
  },
  legacyParams: {
    type: 'PaymentInitiateParams',
    standIn: (run): PaymentInitiateParams => ({
      payment_amount: 25,
      currency_code: 'USD',
      ref_trx: ref(run, 'legacy'),
      ipn_url: WEBHOOK_URL,
      success_redirect: 'https://shop.example.com/thanks',
      cancel_redirect: 'https://shop.example.com/cart',
    }),
  },
  success_redirect: { type: 'string', standIn: () => 'https://shop.example.com/thanks' },
  cancel_redirect: { type: 'string', standIn: () => 'https://shop.example.com/cart' },
  ipn_url: { type: 'string', standIn: () => WEBHOOK_URL },
  order: {
    type: '{ id: string; total: number; currency: string }',
    standIn: (run) => ({ id: ref(run, 'order'), total: 25, currency: 'USD' }),
  },
  payment: {
    type: 'Payment',
    standIn: async (run) =>
      (await paid(run)).payment ?? Promise.reject(new Error('`payment` is of payments.create: the current generation')),
  },
  trxId: { type: 'string', standIn: async (run) => (await paid(run)).trxId },
  verified: { type: 'VerifiedTransaction', standIn: async (run) => (await paid(run)).verified },
  invoiceId: { type: 'string', standIn: (run) => ref(run, 'invoice') },
  apiSecret: { type: 'string', standIn: (run) => run.sandbox.production.apiSecret },
  webhookSecret: { type: 'string', standIn: { none: 'doctor posts a test delivery to your public webhook URL' } },
  // A dispatcher of undici's (no proxy: the proxy recipes are proved on the wire by their own test).
  agent: {
    type: 'Dispatcher',
    standIn: (run) => {
      const agent = new Agent();
      run.defer(() => agent.close());
      return agent;
    },
  },
  Deno: {
    type: '{ createHttpClient(options: { proxy: { url: string } }): { close(): void } }',
    standIn: { none: "Deno's API: not this runtime" },
  },

  // A delivery of the payment, signed as the sandbox signs it.
  request: {
    type: 'Request',
    standIn: async (run) => {
      const { delivery } = await paid(run);
      return new Request(WEBHOOK_URL, { method: 'POST', body: delivery.body, headers: delivery.headers });
    },
  },
  rawBody: { type: 'Buffer', standIn: async (run) => Buffer.from((await paid(run)).delivery.body) },
  payload: { type: 'string', standIn: async (run) => (await paid(run)).delivery.body },
  headers: { type: 'Record<string, string>', standIn: async (run) => (await paid(run)).delivery.headers },
  secret: { type: 'string', standIn: (run) => run.sandbox.production.webhookSecret },
  req: { type: 'ExpressRequest', standIn: (run) => nodeRequest(run) },
  // Express's response over node:http's, for the request above (nothing is sent: no socket).
  res: {
    type: 'ExpressResponse',
    standIn: async (run) => {
      const req = await nodeRequest(run);
      return Object.assign(Object.setPrototypeOf(new ServerResponse(req), express.response) as ServerResponse, { req });
    },
  },
  event: { type: 'WebhookEvent', standIn: async (run) => (await paid(run)).event },
  // The `data` of an earlier generation's IPN, as sent.
  data: {
    type: 'Record<string, unknown>',
    standIn: (run) => ({ ref_trx: ref(run, 'ipn'), customer_name: 'Asha', is_sandbox: false, trx_id: 'TRX1' }),
  },
  app: { type: 'Express', standIn: () => express() },
  queue: { type: '{ send(message: unknown): Promise<void> }', standIn: (run) => ({ send: record('queue.send', async () => {})(run) }) },

  // The application's own functions: recorders.
  fulfil: { type: '(what: unknown) => Promise<void>', standIn: record('fulfil', async () => {}) },
  ship: { type: '(order: unknown) => void', standIn: record('ship') },
  cancel: { type: '(trxId: string) => void', standIn: record('cancel') },
  log: { type: '(message: string) => void', standIn: record('log') },
  reconcileLater: { type: '(payout: unknown) => void', standIn: record('reconcileLater') },
  redirect: { type: '(url: string) => void', standIn: record('redirect') },
  enqueue: { type: '(event: WebhookEvent) => Promise<void>', standIn: record('enqueue', async () => {}) },
  handleEvent: { type: '(event: WebhookEvent) => Promise<void>', standIn: record('handleEvent', async () => {}) },
  handleOther: { type: '(event: WebhookEvent) => Promise<void>', standIn: record('handleOther', async () => {}) },
  claimEvent: {
    type: '(id: string) => Promise<boolean>',
    standIn: (run) => {
      const seen = new Set<unknown>();
      return record('claimEvent', async (id) => !seen.has(id) && !!seen.add(id))(run);
    },
  },
  myRecordingFetch: {
    type: 'typeof fetch',
    standIn: (run) => record('myRecordingFetch', async () => Response.json({ received: true }))(run),
  },
  // The sandbox's URL (openSandbox gives it in BUSINESS_PAYMENTS_BASE_URL).
  sandboxUrl: { type: 'string', standIn: () => process.env.BUSINESS_PAYMENTS_BASE_URL! },
  mock: {
    type: 'MockService',
    standIn: (run) => {
      const mock = testing.createMockService();
      run.defer(() => mock.close());
      return mock;
    },
  },

  // The merchant's queue engines (the triggers' examples): their jobs recorded, never run.
  boss: {
    type: "import('pg-boss').PgBoss",
    standIn: (run) => ({ send: record('boss.send', async () => 'job-id')(run), work: record('boss.work', async () => 'worker-id')(run) }),
  },
  inboxQueue: { type: "import('bullmq').Queue", standIn: (run) => ({ add: record('inboxQueue.add', async () => ({}))(run) }) },
  // The shop on Postgres (README's overview of the fulfillment kit, the payout kit).
  pool: { type: 'Pool', standIn: runPool },
  db: { type: 'Pool', standIn: runPool },
  // The kit on its memory store (README's overview runs it on Postgres).
  fulfillment: {
    type: 'Fulfillment',
    standIn: (run) =>
      fulfillmentEntry.createFulfillment({
        environment: 'production',
        secret: run.sandbox.production.webhookSecret,
        client: client(),
        onPaid: record('onPaid', async () => {})(run),
      }),
  },
  // The billing kit on its memory store (docs/billing.md's setup runs it on Postgres), and a plan of the run's sandbox.
  billing: {
    type: 'BillingKit',
    standIn: () => billingEntry.createBilling({ client: client(), store: billingEntry.memoryStore() }),
  },
  plan_code: {
    type: 'string',
    standIn: async () =>
      (await client().billing.plans.create({ name: 'Clinic Pro', amount: 30_000, currency: 'TZS', interval: 'month' })).plan_code,
  },
  priceOf: {
    type: '(db: unknown, orderRef: string | undefined) => Promise<{ amount: number; currency: string }>',
    standIn: record('priceOf', async () => ({ amount: 25, currency: 'USD' })),
  },
  shipOrder: { type: '(db: unknown, orderRef: string | undefined) => Promise<void>', standIn: record('shipOrder', async () => {}) },
  markAttemptFailed: {
    type: '(db: unknown, ref: string | undefined) => Promise<void>',
    standIn: record('markAttemptFailed', async () => {}),
  },
  saveAttempt: {
    type: '(db: unknown, attempt: { ref_trx: string; order_id: string; trx_id: string }) => Promise<void>',
    standIn: record('saveAttempt', async (_db, attempt) => {
      const a = attempt as { ref_trx: string; order_id: string; trx_id: string };
      attempts.set(a.ref_trx, a);
    }),
  },
  findAttempt: {
    type: '(db: unknown, ref: string) => Promise<{ ref_trx: string; order_id: string; trx_id: string }>',
    standIn: record(
      'findAttempt',
      async (_db, ref) => attempts.get(ref as string) ?? Promise.reject(new Error(`no attempt ${String(ref)}`)),
    ),
  },
  // The return URL's query: the ref of the run's latest attempt.
  searchParams: {
    type: '{ ref: string }',
    standIn: () => ({
      get ref() {
        return [...attempts.keys()].at(-1)!;
      },
    }),
  },
};

/** The declarations every sample is type-checked beside (declarations.ts). */
export const DECLARATIONS = `// What the docs' snippets use without declaring it (test/docs/context.ts).
import type { Payment, PaymentCreateParams, PaymentInitiateParams, PaymentsClient, VerifiedTransaction, WebhookEvent } from 'business-payments';
import type { Fulfillment } from 'business-payments/fulfillment';
import type { BillingKit } from 'business-payments/billing';
import type { MockService } from 'business-payments/testing';
import type { Pool } from 'pg';
import type { Express, Request as ExpressRequest, Response as ExpressResponse } from 'express';
import type { Dispatcher } from 'undici';

declare global {
${Object.entries(NAMES)
  .map(([name, { type }]) => `  var ${name}: ${type};`)
  .join('\n')}

  // The package's exports, for @example blocks (a page's block imports them).
${Object.entries(EXPORTS)
  .map(([name, [entry]]) => `  var ${name}: typeof import('${entry}').${name};`)
  .join('\n')}

  // A Cloudflare Worker's (workers-types is not installed).
  interface Env { BUSINESS_PAYMENTS_WEBHOOK_SECRET: string }
  interface ExecutionContext { waitUntil(promise: Promise<unknown>): void }
}
export {};
`;

/** Why a sample that uses `names` cannot run, or undefined when every one has a stand-in. */
export function noStandIn(names: string[]): string | undefined {
  const missing = names.flatMap((name) => {
    const standIn = NAMES[name]?.standIn;
    return standIn && 'none' in standIn ? [`${name}: ${standIn.none}`] : [];
  });
  return missing.length ? missing.join('; ') : undefined;
}

/** A delivery of the run's paid payment, signed afresh as the sandbox signs it: for a route a sample exports. */
export async function delivery(run: Run): Promise<Request> {
  const signed = await run.sandbox.delivery((await paid(run)).trxId);
  return new Request(WEBHOOK_URL, { method: 'POST', body: signed.body, headers: signed.headers });
}

/** The values of `names` for a run. */
export async function standIns(names: string[], run: Run): Promise<Record<string, unknown>> {
  const values: Record<string, unknown> = {};
  for (const name of names) {
    const exported = EXPORTS[name];
    if (exported) values[name] = exported[1][name];
    else values[name] = await (NAMES[name]!.standIn as StandIn)(run);
  }
  return values;
}
