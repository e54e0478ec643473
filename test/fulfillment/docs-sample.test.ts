// docs/fulfillment.md, as written. Its ```ts blocks are the files of a small shop, each named
// by its first line (`// lib/fulfillment.ts`; `@/` is the shop's root, as in Next.js):
// - every block is type-checked as that file, together, under `strict`,
//   `exactOptionalPropertyTypes` and `noUncheckedIndexedAccess`, the package resolved to its
//   source (declarations.d.ts below stands in for what a block imports and this repository
//   does not install);
// - every block not marked `<!-- not run: <why> -->` right above it runs, against the local
//   sandbox (createMockService on a real port, its webhooks delivered to the page's own route)
//   on both generations, with PGlite behind a one-connection pool standing in for pg's Pool
//   and the page's ```sql blocks as the schema. The runs go through what the page promises:
//   an order paid on its second attempt after a failed one, the return page finding the
//   trx_id in the shop's records (a crafted URL gets nothing), a second successful attempt
//   going to onDuplicatePayment, a price mismatch to the review list, a dead delivery
//   replayed, the inbox drained by the cron route and the worker, and reconcile settling a
//   payment whose webhook never came. A block that is not run says why in the page.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import type { PaymentsClient } from '../../src/index.js';
import type { Fulfillment } from '../../src/fulfillment.js';
import { createMockService, signWebhook, type MockService } from '../../src/testing.js';
import { verifyWebhook } from '../../src/webhooks.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const PAGE = 'docs/fulfillment.md';
const dir = join(root, '.cache', 'docs-samples', 'fulfillment');

/** A ```ts block of the page: the file it is (its first line), where it starts, whether it runs. */
interface Block {
  file: string;
  code: string;
  /** The page's line number of the block's first line of code. */
  line: number;
  /** The reason given in `<!-- not run: … -->`, when it is not run. */
  notRun?: string;
}

function readPage(): { blocks: Block[]; sql: string[] } {
  const lines = readFileSync(join(root, PAGE), 'utf8').split('\n');
  const blocks: Block[] = [];
  const sql: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\w+)\s*$/.exec(lines[i]!);
    if (!fence) continue;
    const end = lines.indexOf('```', i + 1);
    if (end < 0) throw new Error(`${PAGE}:${i + 1}: a code block that never ends`);
    const code = lines.slice(i + 1, end).join('\n') + '\n';
    if (fence[1] === 'sql') sql.push(code);
    if (fence[1] === 'ts') {
      let above = i - 1;
      while (above >= 0 && lines[above]!.trim() === '') above--;
      const notRun = /^<!-- not run: (.+?) -->$/.exec(lines[above] ?? '')?.[1];
      const file = /^\/\/ ([\w@[\]./-]+\.ts)\b/.exec(lines[i + 1]!)?.[1];
      if (!file) throw new Error(`${PAGE}:${i + 2}: a ts block must start with the file it is, e.g. "// lib/fulfillment.ts"`);
      blocks.push({ file, code, line: i + 2, ...(notRun ? { notRun } : {}) });
    }
    i = end;
  }
  return { blocks, sql };
}

const page = readPage();
const blocks = new Map(page.blocks.map((block) => [block.file, block]));

// What the blocks import that this repository does not install: Neon's driver (the Worker).
const DECLARATIONS = `declare module '@neondatabase/serverless' {
  export class Pool {
    constructor(config: { connectionString: string });
    query(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
    connect(): Promise<{ query(text: string, values?: unknown[]): Promise<{ rows: any[] }>; release(): void }>;
    end(): Promise<void>;
  }
}
`;

/** The package's entries as the samples import them, resolved to the source. */
const ENTRIES: Record<string, string> = {
  'business-payments': 'src/index.ts',
  'business-payments/fulfillment': 'src/fulfillment.ts',
  'business-payments/fulfillment/postgres': 'src/fulfillment-postgres.ts',
  'business-payments/fulfillment/redis': 'src/fulfillment-redis.ts',
  'business-payments/webhooks': 'src/webhooks.ts',
};

describe(`${PAGE}: every ts block`, () => {
  test('names its file once, and runs or says why not', () => {
    expect(page.blocks.length).toBeGreaterThanOrEqual(10);
    expect(blocks.size, 'two blocks name the same file').toBe(page.blocks.length);
    expect(page.sql.length).toBeGreaterThan(0);
    for (const block of page.blocks) if (block.notRun !== undefined) expect(block.notRun.length, block.file).toBeGreaterThan(10);
  });

  test('compiles under strict, exactOptionalPropertyTypes and noUncheckedIndexedAccess', () => {
    const project = join(dir, 'types');
    rmSync(project, { recursive: true, force: true });
    const files: string[] = [];
    for (const block of page.blocks) {
      const file = join(project, block.file);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, block.code);
      files.push(file);
    }
    writeFileSync(join(project, 'declarations.d.ts'), DECLARATIONS);
    const options: ts.CompilerOptions = {
      strict: true,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      noImplicitOverride: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
      types: ['node'],
      typeRoots: [join(root, 'node_modules/@types')],
      esModuleInterop: true,
      skipLibCheck: true,
      noEmit: true,
      paths: {
        '@/*': [`${project}/*`],
        ...Object.fromEntries(Object.entries(ENTRIES).map(([name, path]) => [name, [join(root, path)]])),
      },
    };
    const program = ts.createProgram([...files, join(project, 'declarations.d.ts')], options);
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => !d.file || d.file.fileName.startsWith(project))
      .map((d) => {
        const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line : undefined;
        const block = d.file && page.blocks.find((b) => join(project, b.file) === d.file!.fileName);
        const at = block && where !== undefined ? `${PAGE}:${block.line + where} (${block.file})` : (d.file?.fileName ?? '');
        return `${at}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
      });
    expect(diagnostics).toEqual([]);
  }, 120_000);
});

// ---------------------------------------------------------------------------------------
// The runs.

/**
 * PGlite's one connection as pg's Pool hands out connections (a Pool of one): `connect()` →
 * a client with `query` and `release`, `query` a statement on a connection of its own turn.
 */
function poolOf(db: PGlite) {
  let tail = Promise.resolve();
  const connect = async () => {
    let free!: () => void;
    const previous = tail;
    tail = previous.then(() => new Promise<void>((resolve) => (free = resolve)));
    await previous;
    let released = false;
    return {
      query: (text: string, values?: unknown[]) => (released ? Promise.reject(new Error('used after release')) : db.query(text, values)),
      release() {
        if (!released) free();
        released = true;
      },
    };
  };
  const query = async (text: string, values?: unknown[]) => {
    const client = await connect();
    try {
      return await client.query(text, values);
    } finally {
      client.release();
    }
  };
  return { connect, query };
}
type Pool = ReturnType<typeof poolOf>;

async function until(what: string, predicate: () => Promise<boolean> | boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

let pglite: PGlite;
const saved = { ...process.env };
beforeAll(async () => {
  pglite = await PGlite.create();
}, 120_000);
afterAll(async () => {
  process.env = saved;
  await pglite?.close();
});

const ORDERS = ['order-A', 'order-B', 'order-C', 'order-D', 'order-E', 'order-F', 'order-G'];
const WEBHOOK_URL = 'https://shop.example.com/api/webhooks/payments';

/** A payment attempt made through the page's checkout. */
interface Made {
  trxId: string;
  ref: string;
}

/** The page's shop, on a fresh database, against a sandbox of one generation. */
async function openShop(generation: 'current' | 'earlier') {
  const earlier = generation === 'earlier';
  const run = join(dir, generation);
  const ran = new Set<string>();
  writeShop(run);

  // A fresh database: the page's schema, its orders, and a log of every order marked paid (a
  // trigger: it counts fulfilments, and rolls back with them).
  await pglite.exec('DROP SCHEMA public CASCADE; CREATE SCHEMA public;');
  for (const sql of page.sql) await pglite.exec(sql);
  await pglite.exec(`CREATE TABLE paid_log (order_id text, trx_id text);
    CREATE FUNCTION log_paid() RETURNS trigger AS $$ BEGIN
      IF NEW.state = 'paid' THEN INSERT INTO paid_log VALUES (NEW.id, NEW.paid_by); END IF; RETURN NEW; END $$ LANGUAGE plpgsql;
    CREATE TRIGGER log_paid AFTER UPDATE ON orders FOR EACH ROW EXECUTE FUNCTION log_paid();`);
  for (const id of ORDERS) await pglite.query("INSERT INTO orders (id, amount, currency) VALUES ($1, 25.00, 'USD')", [id]);
  const pool: Pool = poolOf(pglite);
  (globalThis as unknown as { __docsPool: Pool }).__docsPool = pool;
  const rows = async <T>(text: string, values: unknown[] = []) => (await pool.query(text, values)).rows as T[];
  const field = async (text: string, id: string) => (await rows<{ value: string | null }>(text, [id]))[0]?.value;

  // Where the sandbox's deliveries go: the page's route, a process that records them and dies
  // before processing them (`recordOnly`), or nowhere (`lose`: the connection is refused).
  const mode = { lose: false, recordOnly: false };
  let route: (request: Request) => Promise<Response> = () => Promise.reject(new Error('no route yet'));
  const clock = { offset: 0 }; // the sandbox's clock against ours: payments made "20 minutes ago"
  const mock: MockService = createMockService({
    generation,
    now: () => Date.now() + clock.offset,
    toleranceSeconds: 3_600,
    fetch: (input, init) => route(new Request(input, init)),
  });
  const server = await mock.listen({ port: 0 });
  const { production } = mock.credentials;
  Object.assign(process.env, {
    BUSINESS_PAYMENTS_ENVIRONMENT: 'production',
    BUSINESS_PAYMENTS_BASE_URL: server.url, // the sandbox's production credentials, over loopback http
    BUSINESS_PAYMENTS_MERCHANT_KEY: production.merchantKey,
    BUSINESS_PAYMENTS_API_KEY: production.apiKey,
    BUSINESS_PAYMENTS_API_SECRET: production.apiSecret,
    // The earlier generation has no webhook secret: the page says to pass the API secret (the sandbox's webhookSecret there).
    BUSINESS_PAYMENTS_WEBHOOK_SECRET: production.webhookSecret,
  });
  if (earlier) expect(production.webhookSecret).toBe(production.apiSecret);
  const cleanups: (() => unknown)[] = [() => mock.close()];

  /** Imports a block: the module the page's file is. */
  const load = async <T>(file: string): Promise<T> => {
    const block = blocks.get(file);
    if (!block) throw new Error(`${PAGE} has no block "// ${file}"`);
    if (block.notRun) throw new Error(`${PAGE}: "// ${file}" is marked not run, but the test runs it`);
    ran.add(file);
    return (await import(join(run, file))) as T;
  };
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
    earlier,
    mock,
    production,
    mode,
    clock,
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
      const trxId = new URL(String(url)).pathname.split('/')[2]!;
      const ref = String(mock.state.payments.get(trxId)?.merchant_ref);
      const [attempt] = await rows('SELECT order_id, trx_id FROM payment_attempts WHERE ref_trx = $1', [ref]);
      // Kept before the customer leaves, with the trx_id where the create answered one.
      expect(attempt).toEqual({ order_id: orderId, trx_id: earlier ? null : trxId });
      return { trxId, ref };
    },
    /** The sandbox's delivery of the payment, signed afresh as the service signs it (or with another secret). */
    delivery(trxId: string, other?: string) {
      const event = mock.state.events.find((e) => (e.payload.data as { trx_id?: string } | undefined)?.trx_id === trxId)!;
      return earlier
        ? signWebhook({ format: 'legacy', payload: event.body, secret: other ?? production.apiSecret })
        : signWebhook({ payload: event.body, secret: other ?? secret, environment: 'production' });
    },
    /** The page's blocks that did not run, but for those it says why. */
    unrun: () => page.blocks.filter((block) => !block.notRun && !ran.has(block.file)).map((block) => block.file),
    async close() {
      for (const cleanup of cleanups.reverse()) await cleanup();
      process.env = { ...saved };
    },
  };
}
type Shop = Awaited<ReturnType<typeof openShop>>;

/** Writes the page's blocks as the shop's files, `@/`, `pg` and the package resolved here. */
function writeShop(run: string): void {
  rmSync(run, { recursive: true, force: true });
  for (const block of page.blocks) {
    const file = join(run, block.file);
    mkdirSync(dirname(file), { recursive: true });
    const code = block.code
      .replace(/from '@\/([\w./[\]-]+)'/g, (_, path: string) => `from '${join(run, path)}.ts'`)
      .replace(/from 'pg'/g, `from '${join(run, 'pg-stand-in.ts')}'`)
      .replace(/from '(business-payments[\w/]*)'/g, (_, name: string) => `from '${join(root, ENTRIES[name]!)}'`);
    writeFileSync(file, code);
  }
  // pg's Pool, as `new pg.Pool(…)` makes it: PGlite behind a pool of one connection.
  writeFileSync(
    join(run, 'pg-stand-in.ts'),
    'export default { Pool: class { constructor() { return (globalThis as unknown as { __docsPool: object }).__docsPool; } } };\n',
  );
}

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
    let at = 'opening the shop';
    let timer: ReturnType<typeof setTimeout> | undefined;
    // A run that hangs (a claim that never comes back, say) says where.
    const hung = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the run hung at: ${at}`)), 60_000);
    });
    let shop: Shop | undefined;
    try {
      await Promise.race([
        (async () => {
          shop = await openShop(generation);
          for (const [name, step] of STEPS) {
            at = name;
            await step(shop);
          }
        })(),
        hung,
      ]);
      // Every block the page does not mark "not run" ran.
      expect(shop!.unrun()).toEqual([]);
    } finally {
      clearTimeout(timer);
      await shop?.close();
    }
  }, 90_000);
});
