// Screenshots of the sandbox web console for docs/testing.md: `npm run screenshots` builds,
// starts a sandbox with a few payments in each state, walks the console in headless Chromium
// (Debian's chromium; the same walk-through as the browser test) and writes one PNG per page
// to docs/images/.
import { mkdirSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { PaymentsClient } from '../dist/index.js';
import { createMockService } from '../dist/testing.js';
import { consoleWalkthrough, LAUNCH } from '../test/browser/console-flow.ts';

const OUT = new URL('../docs/images/', import.meta.url);
mkdirSync(OUT, { recursive: true });

const mock = createMockService();
const server = await mock.listen({ port: 0 });
const browser = await chromium.launch(LAUNCH);
try {
  const client = new PaymentsClient({ ...mock.credentials.sandbox, environment: 'sandbox', baseUrl: server.url });
  const create = (ref, amount, extra = {}) =>
    client.payments.create({
      payment_amount: amount,
      currency_code: 'USD',
      ref_trx: ref,
      ipn_url: 'http://127.0.0.1:59999/unreachable',
      ...extra,
    });
  // A few rows in each state, so the console shows what it shows in real use.
  await mock.completeCheckout((await create('order-1001', 25)).trx_id, 'success');
  await mock.completeCheckout((await create('order-1002', 12.5)).trx_id, 'failed');
  await create('order-1003', 80);
  const written = [];
  await consoleWalkthrough({
    browser,
    sandboxUrl: server.url,
    createPayment: async (ipnUrl) =>
      (
        await create('order-1004', 42, {
          ipn_url: ipnUrl,
          success_redirect: `${server.url}/`,
          cancel_redirect: `${server.url}/`,
          customer_name: 'Asha Mwangi',
        })
      ).trx_id,
    onStep: async (name, page) => {
      const file = new URL(`console-${name}.png`, OUT);
      await page.screenshot({ path: file.pathname, fullPage: false });
      written.push(`docs/images/console-${name}.png`);
    },
  });
  console.log(`wrote ${written.length} screenshots:\n  ${written.join('\n  ')}`);
} finally {
  await browser.close();
  await mock.close();
}
