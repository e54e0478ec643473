// docs/fulfillment.md's first sample, run as written: its code block is taken from the page,
// its imports pointed at src/, and it is imported with `pool` a real Postgres (PGlite) and the
// BUSINESS_PAYMENTS_* variables aimed at the sandbox, on both generations. Its onPaid must
// fulfil a payment of the order's price and refuse one of another price.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { PaymentsClient } from '../../src/index.js';
import { createMockService } from '../../src/testing.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = join(root, '.cache', 'docs-samples');

/** The page's first ```ts block, with its imports resolved to the source. */
function sample(): string {
  const page = readFileSync(join(root, 'docs/fulfillment.md'), 'utf8');
  const code = /```ts\n([\s\S]*?)```/.exec(page)![1]!;
  return (
    `const pool = (globalThis as unknown as { __docsPool: unknown }).__docsPool as never;\n` +
    code
      .replace("from 'business-payments/fulfillment/postgres'", `from '${root}src/fulfillment-postgres.ts'`)
      .replace("from 'business-payments/fulfillment'", `from '${root}src/fulfillment.ts'`)
      .replace("from 'business-payments'", `from '${root}src/index.ts'`)
  );
}

let db: PGlite;
const saved = { ...process.env };
beforeAll(async () => {
  db = await PGlite.create();
  (globalThis as unknown as { __docsPool: unknown }).__docsPool = db;
  await db.exec(
    "CREATE TABLE orders (ref text PRIMARY KEY, total numeric(12,2) NOT NULL, currency text NOT NULL, state text NOT NULL DEFAULT 'new')",
  );
  mkdirSync(dir, { recursive: true });
}, 60_000);
afterAll(async () => {
  process.env = saved;
  rmSync(dir, { recursive: true, force: true });
  await db.close();
});

describe.each(['current', 'earlier'] as const)('docs/fulfillment.md on the %s generation', (generation) => {
  test("onPaid fulfils a payment of the order's price (paidAmount, pg's numeric string) and refuses another price", async () => {
    const mock = createMockService({ generation, timeScale: 0.001 });
    const server = await mock.listen({ port: 0 });
    try {
      // The sample is for production (the sandbox's production credentials, over loopback http).
      const { production } = mock.credentials;
      Object.assign(process.env, {
        BUSINESS_PAYMENTS_ENVIRONMENT: 'production',
        BUSINESS_PAYMENTS_BASE_URL: server.url,
        BUSINESS_PAYMENTS_MERCHANT_KEY: production.merchantKey,
        BUSINESS_PAYMENTS_API_KEY: production.apiKey,
        BUSINESS_PAYMENTS_API_SECRET: production.apiSecret,
        // The earlier generation has no webhook secret: the sample's comment says to pass the API secret.
        BUSINESS_PAYMENTS_WEBHOOK_SECRET: production.webhookSecret,
      });
      const file = join(dir, `fulfillment-${generation}.ts`);
      writeFileSync(file, sample());
      const { fulfillment } = (await import(file)) as typeof import('../../src/fulfillment.js') & {
        fulfillment: ReturnType<typeof import('../../src/fulfillment.js').createFulfillment>;
      };
      const client = new PaymentsClient();

      const pay = async (ref: string, amount: number) => {
        const base = { payment_amount: amount, currency_code: 'USD', ref_trx: ref, customer_name: 'Asha', description: 'Books' };
        const urls = {
          ipn_url: 'https://shop.example.com/ipn',
          success_redirect: 'https://shop.example.com/ok',
          cancel_redirect: 'https://shop.example.com/no',
        };
        await client.payments.initiate({ ...base, ...urls });
        const row = [...mock.state.payments.values()].find((payment) => payment.merchant_ref === ref)!;
        await mock.completeCheckout(String(row.trx_id), 'success');
        return client.payments.verify(String(row.trx_id));
      };
      const state = async (ref: string) =>
        ((await db.query('SELECT state FROM orders WHERE ref = $1', [ref])).rows[0] as { state: string }).state;

      await db.query('INSERT INTO orders (ref, total, currency) VALUES ($1, 100.00, $2), ($3, 100.00, $2)', [
        `${generation}-right`,
        'USD',
        `${generation}-wrong`,
      ]);
      expect(await fulfillment.handleVerified(await pay(`${generation}-right`, 100), { merchantRef: `${generation}-right` })).toBe('ran');
      expect(await state(`${generation}-right`)).toBe('paid');
      await expect(
        fulfillment.handleVerified(await pay(`${generation}-wrong`, 90), { merchantRef: `${generation}-wrong` }),
      ).rejects.toThrow(/price mismatch/);
      expect(await state(`${generation}-wrong`)).toBe('new');
    } finally {
      await server.close();
      await mock.close();
    }
  });
});
