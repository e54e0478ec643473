// docs/fulfillment.md and docs/fulfillment-stores.md, as written. Their ```ts blocks are
// files, each named by its first line (`// lib/fulfillment.ts`; `@/` is the app's root, as in
// Next.js); the machinery is docs-pages.ts:
// - every block of a page is type-checked as that file, together, under `strict`,
//   `exactOptionalPropertyTypes` and `noUncheckedIndexedAccess`, the package resolved to its
//   source;
// - every block not marked `<!-- not run: <why> -->` right above it runs, against the local
//   sandbox (createMockService on a real port, its webhooks delivered to the page's own route)
//   on both generations, with PGlite behind a one-connection pool standing in for pg's Pool.
//
// docs/fulfillment.md is a small shop (declarations.d.ts below stands in for what a block
// imports and this repository does not install), its ```sql blocks the schema. The runs go
// through what the page promises: an order paid on its second attempt after a failed one, the
// return page finding the trx_id in the shop's records (a crafted URL gets nothing), a second
// successful attempt going to onDuplicatePayment, a price mismatch to the review list, a dead
// delivery replayed, the inbox drained by the cron route and the worker, a push queue's consumer
// woken by its trigger (the message delivered 3 times fulfils once), and reconcile
// settling a payment whose webhook never came.
//
// docs/fulfillment-stores.md: its Postgres sample runs (a payment of a newAttempt ref, paid
// on the sandbox and delivered by webhook, marks its order paid through ctx.db once, and a
// claim whose COMMIT fails leaves no write behind); its schema is POSTGRES_STORE_SQL; its
// store interfaces are checked against the ones the package exports; its SQLite store and the
// testStore check of it run in test/store-check/sqlite-sample.test.ts (in `npm test`). A
// block that is not run says why in the page.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import type { PaymentsClient } from '../../src/index.js';
import type { Fulfillment } from '../../src/fulfillment.js';
import { POSTGRES_STORE_SQL } from '../../src/fulfillment-postgres.js';
import { verifyWebhook } from '../../src/webhooks.js';
import { onePool } from '../support/pglite-pool.js';
import { openSandbox, readPage, runSteps, samples, standIn, typecheck, until, WEBHOOK_URL, type Page } from './docs-pages.js';

/**
 * The trx_id of the sandbox payment whose link is `url`, from the sandbox's own records: the
 * earlier generation's link (the real product's /payment/checkout?…&token=…) does not carry it.
 */
const paymentOfLink = (mock: { state: { payments: Map<string, Record<string, unknown>> } }, url: unknown): string =>
  String([...mock.state.payments.values()].find((payment) => payment.payment_url === url)?.trx_id);

const page = readPage('docs/fulfillment.md');
const PAGE = page.path;
const stores = readPage('docs/fulfillment-stores.md');

// What docs/fulfillment.md's blocks import that this repository does not install: Neon's driver (the Worker).
const DECLARATIONS = `declare module '@neondatabase/serverless' {
  export class Pool {
    constructor(config: { connectionString: string });
    query(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
    connect(): Promise<{ query(text: string, values?: unknown[]): Promise<{ rows: any[] }>; release(): void }>;
    end(): Promise<void>;
  }
}
`;

// Appended to docs/fulfillment-stores.md's store.ts (the interfaces a store of your own
// implements): each is the one business-payments/fulfillment exports, assignable both ways,
// with the same members (the optional ones too).
const STORE_TYPES_CHECK = `
type Same<A, B> = [A, keyof A] extends [B, keyof B] ? ([B, keyof B] extends [A, keyof A] ? true : false) : false;
export const sameStore: Same<FulfillmentStore, import('business-payments/fulfillment').FulfillmentStore> = true;
export const sameClaim: Same<StoreClaim, import('business-payments/fulfillment').StoreClaim> = true;
export const sameResult: Same<ClaimResult, import('business-payments/fulfillment').ClaimResult> = true;
`;

describe.each<{ page: Page; least: number; extra: Record<string, string> }>([
  { page, least: 10, extra: { 'declarations.d.ts': DECLARATIONS } },
  { page: stores, least: 3, extra: { 'store.ts': STORE_TYPES_CHECK } },
])('$page.path: every ts block', ({ page, least, extra }) => {
  test('names its file once, and runs or says why not', () => {
    expect(page.blocks.length).toBeGreaterThanOrEqual(least);
    expect(page.files.size, 'two blocks name the same file').toBe(page.blocks.length);
    expect(page.sql.length).toBeGreaterThan(0);
    for (const block of page.blocks) if (block.notRun !== undefined) expect(block.notRun.length, block.file).toBeGreaterThan(10);
  });

  test('compiles under strict, exactOptionalPropertyTypes and noUncheckedIndexedAccess', () => {
    expect(typecheck(page, extra)).toEqual([]);
  }, 120_000);
});

// ---------------------------------------------------------------------------------------
// The runs.

type Pool = ReturnType<typeof onePool>;

let pglite: PGlite;
beforeAll(async () => {
  pglite = await PGlite.create();
}, 120_000);
afterAll(async () => {
  await pglite?.close();
});

/** The database emptied (an empty `public` schema), behind the pool that `new pg.Pool(…)` gives the samples. */
async function freshPool(): Promise<Pool> {
  await pglite.exec('DROP SCHEMA public CASCADE; CREATE SCHEMA public;');
  const pool = onePool(pglite);
  standIn(pool);
  return pool;
}

// ---------------------------------------------------------------------------------------
// docs/fulfillment.md's runs.

const ORDERS = ['order-A', 'order-B', 'order-C', 'order-D', 'order-E', 'order-F', 'order-G', 'order-H'];

/** A payment attempt made through the page's checkout. */
interface Made {
  trxId: string;
  ref: string;
}

/** The page's shop, on a fresh database, against a sandbox of one generation. */
async function openShop(generation: 'current' | 'earlier') {
  // A fresh database: the page's schema, its orders, and a log of every order marked paid (a
  // trigger: it counts fulfilments, and rolls back with them).
  const pool: Pool = await freshPool();
  for (const sql of page.sql) await pglite.exec(sql);
  await pglite.exec(`CREATE TABLE paid_log (order_id text, trx_id text);
    CREATE FUNCTION log_paid() RETURNS trigger AS $$ BEGIN
      IF NEW.state = 'paid' THEN INSERT INTO paid_log VALUES (NEW.id, NEW.paid_by); END IF; RETURN NEW; END $$ LANGUAGE plpgsql;
    CREATE TRIGGER log_paid AFTER UPDATE ON orders FOR EACH ROW EXECUTE FUNCTION log_paid();`);
  for (const id of ORDERS) await pglite.query("INSERT INTO orders (id, amount, currency) VALUES ($1, 25.00, 'USD')", [id]);
  const rows = async <T>(text: string, values: unknown[] = []) => (await pool.query(text, values)).rows as T[];
  const field = async (text: string, id: string) => (await rows<{ value: string | null }>(text, [id]))[0]?.value;

  // Where the sandbox's deliveries go: the page's route, a process that records them and dies
  // before processing them (`recordOnly`), or nowhere (`lose`: the connection is refused).
  const mode = { lose: false, recordOnly: false };
  let route: (request: Request) => Promise<Response> = () => Promise.reject(new Error('no route yet'));
  const sandbox = await openSandbox(generation, (request) => route(request));
  const { earlier, mock, production } = sandbox;
  const cleanups: (() => unknown)[] = [() => sandbox.close()];

  const { load, unrun } = samples(page, join(page.dir, generation));
  const kit = await load<{ fulfillment: Fulfillment; client: PaymentsClient; pool: unknown }>('lib/fulfillment.ts');
  expect(kit.pool).toBe(pool);
  const { startPayment } = await load<{ startPayment(orderId: string): Promise<string | null | undefined> }>('lib/checkout.ts');
  const { paymentState } = await load<{ paymentState(orderId: string, ref: string): Promise<string | undefined> }>('lib/return-page.ts');
  const nextRoute = await load<{ POST(request: Request): Promise<Response> }>('app/api/webhooks/payments/route.ts');
  const secret = production.webhookSecret;
  route = async (request) => {
    if (mode.lose) throw new TypeError('fetch failed: connect ECONNREFUSED');
    if (request.url !== WEBHOOK_URL) return new Response(null, { status: 404 });
    if (!mode.recordOnly) return nextRoute.POST(request);
    // Verified and recorded as handleWebhook records it, then the process is gone.
    const event = await verifyWebhook({ payload: await request.text(), headers: request.headers, secret, environment: 'production' });
    const trxId = (event.data as { trx_id: string }).trx_id;
    await kit.fulfillment.store.inbox!.add(event.id ?? `ipn:${trxId}:${event.type}`, JSON.stringify(event));
    return Response.json({ received: true, result: 'queued' });
  };

  return {
    ...sandbox,
    mode,
    cleanups,
    load,
    ...kit,
    paymentState,
    pool,
    rows,
    /** Payments made by one step for the next ones. */
    made: {} as Record<string, Made>,
    orderState: (id: string) => field('SELECT state AS value FROM orders WHERE id = $1', id),
    attemptState: (ref: string) => field('SELECT state AS value FROM payment_attempts WHERE ref_trx = $1', ref),
    paidLog: async (id: string) =>
      (await rows<{ trx_id: string }>('SELECT trx_id FROM paid_log WHERE order_id = $1', [id])).map((r) => r.trx_id),
    /** A new attempt at paying the order, through the page's checkout. */
    async checkout(orderId: string): Promise<Made> {
      const url = await startPayment(orderId);
      const trxId = paymentOfLink(mock, url);
      const ref = String(mock.state.payments.get(trxId)?.merchant_ref);
      const [attempt] = await rows('SELECT order_id, trx_id FROM payment_attempts WHERE ref_trx = $1', [ref]);
      // Kept before the customer leaves, with the trx_id where the create answered one.
      expect(attempt).toEqual({ order_id: orderId, trx_id: earlier ? null : trxId });
      return { trxId, ref };
    },
    unrun,
    async close() {
      for (const cleanup of cleanups.reverse()) await cleanup();
    },
  };
}
type Shop = Awaited<ReturnType<typeof openShop>>;

// What the page promises, step by step, each on the shop as the steps before left it.
const STEPS: Array<[string, (shop: Shop) => Promise<void>]> = [
  [
    "an attempt fails; the order's next attempt pays it, once; the return page says so from the records",
    async (shop) => {
      const a1 = await shop.checkout('order-A');
      expect(a1.ref).toBe('order-A~a1');
      await shop.mock.completeCheckout(a1.trxId, 'failed');
      await until('the failed attempt recorded by onFailed', async () => (await shop.attemptState(a1.ref)) === 'failed');
      expect(await shop.paymentState('order-A', a1.ref)).toBe('failed');
      if (!shop.earlier) {
        // Why an attempt of its own: the failed one's reference cannot be paid again.
        const again = { payment_amount: 25, currency_code: 'USD', ref_trx: a1.ref, ipn_url: WEBHOOK_URL };
        await expect(shop.client.payments.create(again, { idempotencyKey: 'order-A-once-more' })).rejects.toMatchObject({
          status: 409,
          label: 'DUPLICATE_REFERENCE',
        });
      }
      const a2 = (shop.made.a2 = await shop.checkout('order-A'));
      expect(a2.ref).toBe('order-A~a2');
      await shop.mock.completeCheckout(a2.trxId, 'success');
      // The customer is back: the page settles it (or the webhook has, or is at it).
      expect(['paid', 'confirming']).toContain(await shop.paymentState('order-A', a2.ref));
      await until('order-A paid', async () => (await shop.orderState('order-A')) === 'paid');
      expect(await shop.paymentState('order-A', a2.ref)).toBe('paid');
      expect(await shop.paidLog('order-A')).toEqual([a2.trxId]);
    },
  ],
  [
    'the return URL only names an attempt to look up in the records: another order’s, or none, is a 404',
    async (shop) => {
      const { ref } = shop.made.a2!;
      expect(await shop.paymentState('order-B', ref)).toBeUndefined();
      expect(await shop.paymentState('order-A', 'order-A~a9')).toBeUndefined();
      expect(await shop.paymentState('order-A', `${ref}' OR true --`)).toBeUndefined();
    },
  ],
  [
    'two attempts of one order both paid: onPaid once, the second to onDuplicatePayment',
    async (shop) => {
      const b1 = await shop.checkout('order-B');
      const b2 = (shop.made.b2 = await shop.checkout('order-B'));
      await shop.mock.completeCheckout(b1.trxId, 'success');
      await until('order-B paid', async () => (await shop.orderState('order-B')) === 'paid');
      await shop.mock.completeCheckout(b2.trxId, 'success');
      await until('the second payment marked for a refund', async () => (await shop.attemptState(b2.ref)) === 'refund');
      expect(await shop.paidLog('order-B')).toEqual([b1.trxId]);
      expect(await shop.paymentState('order-B', b2.ref)).toBe('paid');
    },
  ],
  [
    'a payment of another price: never onPaid; on the review list',
    async (shop) => {
      const c1 = (shop.made.c1 = await shop.checkout('order-C'));
      await shop.pool.query("UPDATE orders SET amount = 30.00 WHERE id = 'order-C'");
      await shop.mock.completeCheckout(c1.trxId, 'success');
      await until('the mismatch on the review list', async () =>
        (await shop.fulfillment.inbox({ state: 'review' })).some((record) => record.id === `review:${c1.trxId}`),
      );
      expect(await shop.orderState('order-C')).toBe('open');
      expect(await shop.paidLog('order-C')).toEqual([]);
    },
  ],
  [
    'a delivery that fails (its order is not there yet) is retried, then dead; the inbox script lists it and replays it',
    async (shop) => {
      const d1 = await shop.checkout('order-D');
      await shop.pool.query("DELETE FROM payment_attempts WHERE order_id = 'order-D'");
      await shop.pool.query("DELETE FROM orders WHERE id = 'order-D'");
      await shop.mock.completeCheckout(d1.trxId, 'success');
      const table = 'business_payments_fulfillment_inbox';
      const failing = async () => (await shop.rows<{ error: string | null }>(`SELECT error FROM ${table} WHERE attempts > 0`))[0];
      await until('the delivery failed once', async () => (await failing()) !== undefined);
      expect((await failing())!.error).toMatch(/is for no order of ours/);
      // As after maxAttempts failures (8, some 21 minutes of backoff): dead.
      await shop.pool.query(`UPDATE ${table} SET state = 'dead' WHERE attempts > 0`);
      const [dead] = await shop.fulfillment.inbox({ state: 'dead' });
      expect(dead).toMatchObject({ state: 'dead', attempts: 1, error: expect.stringMatching(/no order of ours/) });
      // The cause fixed (the order is there), the page's script replays it; it lists the review list too.
      await shop.pool.query("INSERT INTO orders (id, amount, currency) VALUES ('order-D', 25.00, 'USD')");
      await shop.pool.query("INSERT INTO payment_attempts (ref_trx, order_id, trx_id) VALUES ($1, 'order-D', $2)", [d1.ref, d1.trxId]);
      const log = vi.spyOn(console, 'log').mockImplementation(() => {});
      await shop.load('admin/inbox.ts');
      const logged = log.mock.calls.map(([line]) => String(line));
      log.mockRestore();
      expect(logged).toContain(`to review: ${shop.made.c1!.trxId} (order order-C): mismatch`);
      expect(logged).toContainEqual(expect.stringMatching(new RegExp(`^dead after 1 attempts: ${dead!.id}: .*no order of ours`)));
      expect(await shop.orderState('order-D')).toBe('paid');
      expect(await shop.fulfillment.inbox({ state: 'dead' })).toEqual([]);
    },
  ],
  [
    'Express and Lambda: a delivery (recorded, 200 at once), a forgery 401',
    async (shop) => {
      const { app } = await shop.load<{ app: import('express').Express }>('server.ts');
      const http = createServer(app);
      await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
      shop.cleanups.push(() => new Promise((resolve) => http.close(resolve)));
      const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/webhooks/payments`;
      for (const [other, status] of [
        [undefined, 200],
        ['not_the_secret_0123456789', 401],
      ] as const) {
        const { body, headers } = await shop.delivery(shop.made.a2!.trxId, other);
        const answer = await fetch(url, { method: 'POST', body, headers });
        expect(answer.status).toBe(status);
        if (status === 200) expect(await answer.json()).toEqual({ received: true, result: 'queued' });
      }
      const { handler } = await shop.load<{
        handler(event: {
          body: string;
          isBase64Encoded: boolean;
          headers: Record<string, string>;
        }): Promise<{ statusCode: number; body: string }>;
      }>('lambda.ts');
      const signed = await shop.delivery(shop.made.b2!.trxId);
      const headers = Object.fromEntries(Object.entries(signed.headers).map(([name, value]) => [name.toLowerCase(), value]));
      expect(await handler({ body: Buffer.from(signed.body).toString('base64'), isBase64Encoded: true, headers })).toMatchObject({
        statusCode: 200,
        body: JSON.stringify({ received: true, result: 'queued' }),
      });
    },
  ],
  [
    'recorded, and the process gone before processing: the cron route drains it',
    async (shop) => {
      shop.mode.recordOnly = true;
      const e1 = await shop.checkout('order-E');
      await shop.mock.completeCheckout(e1.trxId, 'success');
      shop.mode.recordOnly = false;
      expect(await shop.orderState('order-E')).toBe('open');
      const cron = await shop.load<{ GET(): Promise<Response> }>('app/api/cron/fulfillment/route.ts');
      const drained = (await (await cron.GET()).json()) as { processed: number; done: number; retried: number; dead: number };
      expect(drained).toMatchObject({ processed: expect.any(Number), retried: 0, dead: 0 });
      expect(drained.done).toBeGreaterThanOrEqual(1);
      expect(await shop.orderState('order-E')).toBe('paid');
    },
  ],
  [
    'the same, taken up by the worker process, which stops on SIGTERM',
    async (shop) => {
      shop.mode.recordOnly = true;
      const f1 = await shop.checkout('order-F');
      await shop.mock.completeCheckout(f1.trxId, 'success');
      shop.mode.recordOnly = false;
      // The worker's SIGTERM listener, kept instead of added to this test process.
      let sigterm: (() => void) | undefined;
      const once = process.once.bind(process);
      vi.spyOn(process, 'once').mockImplementation(((event: string, listener: () => void) =>
        event === 'SIGTERM' ? ((sigterm = listener), process) : once(event, listener)) as typeof process.once);
      const worker = shop.load('inbox-worker.ts');
      await until('order-F paid by the worker', async () => (await shop.orderState('order-F')) === 'paid');
      expect(sigterm).toBeTypeOf('function');
      sigterm!();
      await worker;
    },
  ],
  [
    'woken by a push queue: the delivery sends { id }, the consumer fulfils; the message delivered 3 times fulfils once',
    async (shop) => {
      const queued = await shop.load<{
        fulfillment: Fulfillment;
        messages: Array<{ id: string }>;
        consume(message: { id: string }): Promise<void>;
      }>('lib/inbox-queue.ts');
      shop.mode.lose = true; // the sandbox's own delivery goes nowhere: this one goes to the queue's kit
      const h1 = await shop.checkout('order-H');
      await shop.mock.completeCheckout(h1.trxId, 'success');
      shop.mode.lose = false;
      const { body, headers } = await shop.delivery(h1.trxId);
      expect((await queued.fulfillment.handleWebhook({ payload: body, headers })).status).toBe(200);
      expect(queued.messages).toHaveLength(1);
      expect(await shop.orderState('order-H')).toBe('open'); // nothing processed it in the request
      for (let i = 0; i < 3; i++) await queued.consume(queued.messages[0]!);
      expect(await shop.orderState('order-H')).toBe('paid');
      expect(await shop.paidLog('order-H')).toEqual([h1.trxId]);
    },
  ],
  [
    'reconcile: a payment whose webhook never came is settled, one this shop never made an attempt for is unknown, not an error',
    async (shop) => {
      let lost: Made | undefined;
      let stranger: string | undefined;
      // The earlier generation has no payment list: reconcile re-verifies what the store knows
      // is open (an IPN that never reached the shop cannot be found from its side), and by now
      // everything is settled.
      if (!shop.earlier) {
        shop.clock.offset = -20 * 60_000; // made 20 minutes ago: past reconcile's olderThan
        lost = await shop.checkout('order-G');
        const unknown = { payment_amount: 25, currency_code: 'USD', ref_trx: 'order-Z~a7', ipn_url: WEBHOOK_URL };
        stranger = (await shop.client.payments.create(unknown, { idempotencyKey: 'order-Z~a7' })).trx_id;
        shop.clock.offset = 0;
        shop.mode.lose = true; // their deliveries never arrive (the next try is minutes away)
        await shop.mock.completeCheckout(lost.trxId, 'success');
        await shop.mock.completeCheckout(stranger, 'success');
        shop.mode.lose = false;
        expect(await shop.orderState('order-G')).toBe('open');
      }
      const cron = await shop.load<{ GET(): Promise<Response> }>('app/api/cron/reconcile/route.ts');
      const answer = await cron.GET();
      const report = (await answer.json()) as { paid: number; errors: unknown[]; unknown: string[]; walked?: string };
      expect(report.errors).toEqual([]);
      expect(answer.status).toBe(200);
      if (shop.earlier) expect(report).toMatchObject({ walked: 'store' });
      else {
        expect(report).toMatchObject({ paid: 1, unknown: [stranger] });
        expect(await shop.paidLog('order-G')).toEqual([lost!.trxId]);
      }
      // Each order paid once, by the payment that paid it.
      for (const id of ['order-A', 'order-B', 'order-D', 'order-E', 'order-F']) expect(await shop.paidLog(id), id).toHaveLength(1);
    },
  ],
];

describe.each(['current', 'earlier'] as const)(`${PAGE} runs against the sandbox (%s generation), on PGlite`, (generation) => {
  test('the shop: attempts, the return page from the records, the routes and the inbox, duplicates, mismatches, dead deliveries, the cron route, the worker, reconcile', async () => {
    await runSteps(() => openShop(generation), STEPS, 60_000);
  }, 90_000);
});

// ---------------------------------------------------------------------------------------
// docs/fulfillment-stores.md's run: its Postgres sample (the Redis one needs a server, and the
// store interfaces are declarations: the page says so).

// The orders the sample's onPaid marks paid. A trigger logs each update that pays one: in
// paid_log, which rolls back with the claim (the committed ones), and on the sequence updates,
// which does not (every one made). And a connection lost before COMMIT: the INSERT of a key in
// crash_on fails, once.
const STORES_SCHEMA = `CREATE TABLE orders (id text PRIMARY KEY, paid_at timestamptz);
  CREATE TABLE paid_log (order_id text);
  CREATE SEQUENCE updates;
  CREATE FUNCTION log_paid() RETURNS trigger AS $$ BEGIN
    IF NEW.paid_at IS NOT NULL THEN INSERT INTO paid_log VALUES (NEW.id); PERFORM nextval('updates'); END IF;
    RETURN NEW; END $$ LANGUAGE plpgsql;
  CREATE TRIGGER log_paid AFTER UPDATE ON orders FOR EACH ROW EXECUTE FUNCTION log_paid();
  CREATE TABLE crash_on (key text);
  CREATE SEQUENCE crashes;
  CREATE FUNCTION crash() RETURNS trigger AS $$ BEGIN
    IF EXISTS (SELECT FROM crash_on WHERE key = NEW.key) THEN
      IF nextval('crashes') = 1 THEN RAISE EXCEPTION 'the connection was lost before COMMIT'; END IF;
    END IF;
    RETURN NEW; END $$ LANGUAGE plpgsql;
  CREATE TRIGGER crash BEFORE INSERT ON business_payments_fulfillment FOR EACH ROW EXECUTE FUNCTION crash();
  INSERT INTO orders (id) VALUES ('order-1'), ('order-2');`;

describe(`${stores.path}: its schema`, () => {
  test('is the one postgresStore creates (POSTGRES_STORE_SQL)', () => {
    expect(stores.sql.map((sql) => sql.trim())).toEqual([POSTGRES_STORE_SQL]);
  });
});

/** The stores page's blocks that test/store-check/sqlite-sample.test.ts runs: the SQLite store and its testStore check. */
const RUN_ELSEWHERE = ['lib/sqlite-store.ts', 'check-sqlite-store.ts'];

/** The stores page's Postgres sample (its lib/fulfillment.ts), on a fresh database, against a sandbox of one generation. */
async function openStoresApp(generation: 'current' | 'earlier') {
  // The page's schema run as the migration it offers (the store then finds its tables), and the sample's orders.
  const pool = await freshPool();
  for (const sql of stores.sql) await pglite.exec(sql);
  await pglite.exec(STORES_SCHEMA);
  const rows = async <T>(text: string, values: unknown[] = []) => (await pool.query(text, values)).rows as T[];

  let route: (request: Request) => Promise<Response> = () => Promise.reject(new Error('no route yet'));
  const sandbox = await openSandbox(generation, (request) => route(request));
  const { load, unrun } = samples(stores, join(stores.dir, generation));
  const { fulfillment, client, ...kit } = await load<{ fulfillment: Fulfillment; client: PaymentsClient; pool: unknown }>(
    'lib/fulfillment.ts',
  );
  expect(kit.pool).toBe(pool);
  // The app's webhook route.
  route = async (request) => (request.url === WEBHOOK_URL ? fulfillment.handleWebhook(request) : new Response(null, { status: 404 }));

  return {
    ...sandbox,
    fulfillment,
    client,
    pool,
    rows,
    unrun: () => unrun().filter((file) => !RUN_ELSEWHERE.includes(file)),
    /** Committed updates that paid the order. */
    paid: async (id: string) => (await rows('SELECT order_id FROM paid_log WHERE order_id = $1', [id])).length,
    /** Updates that paid an order, committed or not. */
    made: async () => (await rows<{ n: number }>('SELECT (CASE WHEN is_called THEN last_value ELSE 0 END)::int AS n FROM updates'))[0]!.n,
    /** A payment on the sandbox of the order's next attempt (newAttempt): its trx_id. */
    async pay(order: string) {
      const attempt = await fulfillment.newAttempt(order);
      expect(attempt.ref_trx).toBe(`${order}~a1`);
      const back = `https://shop.example.com/orders/${order}/return`;
      const params = {
        payment_amount: 25,
        currency_code: 'USD',
        ref_trx: attempt.ref_trx,
        description: order,
        success_redirect: back,
        cancel_redirect: back,
        ipn_url: WEBHOOK_URL,
      };
      const options = { idempotencyKey: attempt.idempotencyKey };
      // The earlier generation has no payments.create: initiate answers the payment's link only,
      // which hides the trx_id; the sandbox's records know it (the merchant learns it from the IPN).
      const trxId = sandbox.earlier
        ? paymentOfLink(sandbox.mock, (await client.payments.initiate(params, options)).payment_url)
        : (await client.payments.create(params, options)).trx_id;
      expect(sandbox.mock.state.payments.get(trxId)?.merchant_ref).toBe(attempt.ref_trx);
      return trxId;
    },
  };
}

const INBOX = 'business_payments_fulfillment_inbox';

// What the page promises of the sample, step by step.
const STORE_STEPS: Array<[string, (app: Awaited<ReturnType<typeof openStoresApp>>) => Promise<void>]> = [
  [
    'a payment of a newAttempt ref, delivered by webhook: its order marked paid through ctx.db; reported again, not again',
    async (app) => {
      const trxId = await app.pay('order-1');
      await app.mock.completeCheckout(trxId, 'success');
      await until('order-1 paid', async () => (await app.paid('order-1')) > 0);
      // The delivery again, the return page's verify, a drain.
      const { body, headers } = await app.delivery(trxId);
      expect((await app.fulfillment.handleWebhook(new Request(WEBHOOK_URL, { method: 'POST', body, headers }))).status).toBe(200);
      expect(await app.fulfillment.handleVerified(await app.client.payments.verify(trxId), { merchantRef: 'order-1~a1' })).toBe('done');
      await app.fulfillment.drain();
      expect(await app.paid('order-1')).toBe(1);
      expect(await app.made()).toBe(1);
      expect(await app.rows('SELECT paid_at IS NOT NULL AS paid FROM orders ORDER BY id')).toEqual([{ paid: true }, { paid: false }]);
    },
  ],
  [
    "the claim's COMMIT fails: onPaid's write is undone with it; the delivery's retry marks the order paid once",
    async (app) => {
      const trxId = await app.pay('order-2');
      await app.pool.query('INSERT INTO crash_on (key) VALUES ($1)', [`payment:${trxId}`]);
      await app.mock.completeCheckout(trxId, 'success');
      await until('the delivery failed once', async () => (await app.rows(`SELECT FROM ${INBOX} WHERE attempts > 0`)).length > 0);
      expect(await app.rows(`SELECT state, attempts, error FROM ${INBOX} WHERE attempts > 0`)).toEqual([
        { state: 'pending', attempts: 1, error: expect.stringMatching(/connection was lost before COMMIT/) },
      ]);
      expect(await app.rows("SELECT paid_at FROM orders WHERE id = 'order-2'")).toEqual([{ paid_at: null }]);
      expect(await app.paid('order-2')).toBe(0);
      expect(await app.made()).toBe(2); // onPaid did write: undone
      // The retry, due now rather than in 10 s.
      await app.pool.query(`UPDATE ${INBOX} SET due = now() WHERE state = 'pending'`);
      expect(await app.fulfillment.drain()).toMatchObject({ processed: 1, done: 1 });
      expect(await app.paid('order-2')).toBe(1);
      expect(await app.paid('order-1')).toBe(1);
      expect(await app.made()).toBe(3);
    },
  ],
];

describe.each(['current', 'earlier'] as const)(`${stores.path} runs against the sandbox (%s generation), on PGlite`, (generation) => {
  test('the Postgres sample: a payment of a newAttempt ref, delivered by webhook, marks its order paid through ctx.db once; a claim that does not commit leaves no write, and its retry marks the order once', async () => {
    await runSteps(() => openStoresApp(generation), STORE_STEPS, 20_000);
  }, 30_000);
});
