// The sandbox web console in a real headless Chromium (Debian's chromium, driven by
// playwright-core): `npm run test:browser`, run by .ci/run after `apt-get install -y chromium`.
import { PaymentsClient } from 'business-payments';
import { createMockService } from 'business-payments/testing';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { consoleWalkthrough, LAUNCH } from './console-flow.js';

let browser: Browser;
beforeAll(async () => {
  browser = await chromium.launch(LAUNCH);
});
afterAll(async () => {
  await browser?.close();
});

test('create → pay on the checkout page → webhook attempt visible → resend → delivered', async () => {
  const mock = createMockService();
  const server = await mock.listen({ port: 0 });
  try {
    const client = new PaymentsClient({ ...mock.credentials.sandbox, environment: 'sandbox', baseUrl: server.url });
    const trx = await consoleWalkthrough({
      browser,
      sandboxUrl: server.url,
      createPayment: async (ipnUrl) =>
        (
          await client.payments.create({
            payment_amount: 25,
            currency_code: 'USD',
            ref_trx: 'console-walk-1',
            ipn_url: ipnUrl,
            success_redirect: `${server.url}/`,
            cancel_redirect: `${server.url}/`,
          })
        ).trx_id,
    });
    expect((await client.payments.verify(trx)).status).toBe('success');
    const attempts = mock.state.deliveries.map((d) => [d.attempt, d.status, d.manual ?? false]);
    expect(attempts).toEqual([
      [1, 500, false],
      [2, 200, true],
    ]);
  } finally {
    await mock.close();
  }
});

test('the console works without JavaScript: settle a pending payment with a form post', async () => {
  const mock = createMockService();
  const server = await mock.listen({ port: 0 });
  const context = await browser.newContext({ javaScriptEnabled: false });
  try {
    const client = new PaymentsClient({ ...mock.credentials.sandbox, environment: 'sandbox', baseUrl: server.url });
    const { trx_id: trx } = await client.payments.create({
      payment_amount: 10,
      currency_code: 'USD',
      ref_trx: 'no-js-1',
      ipn_url: 'http://127.0.0.1:59999/none',
    });
    const page = await context.newPage();
    await page.goto(`${server.url}/console/payments/${trx}`);
    await page.getByLabel('Reason').selectOption('PAYMENT_DECLINED');
    await page.getByRole('button', { name: 'Settle as failed' }).click();
    await page.getByText('PAYMENT_DECLINED: Declined by the payment processor.').waitFor();
    expect(await client.payments.retrieve(trx)).toMatchObject({ status: 'failed', failure_reason: 'PAYMENT_DECLINED' });
  } finally {
    await context.close();
    await mock.close();
  }
});
