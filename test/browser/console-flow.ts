// The sandbox console walk-through a developer does, in a real Chromium: create a payment
// (through the SDK), open it in the console, pay on the hosted checkout page, see the webhook
// attempt fail (the endpoint answers 500), resend it, see it delivered. Shared by the browser
// test (against src/) and `npm run screenshots` (against dist/): it takes what it drives.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';

/** Debian's chromium (CI: `apt-get install -y chromium`); never a downloaded browser. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Launch options: headless Debian chromium, no network beyond localhost. */
export const LAUNCH = {
  executablePath: CHROMIUM,
  headless: true,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    '--disable-quic',
  ],
};

/** A webhook endpoint on localhost that answers each delivery with the next status of `answers` (the last repeats). */
export async function webhookEndpoint(answers: number[]): Promise<{ url: string; received: string[]; close: () => Promise<void> }> {
  const received: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push(body);
      res.writeHead(answers.length > 1 ? answers.shift()! : (answers[0] ?? 200)).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** What the walk-through needs: a page, the sandbox URL, and a way to create a payment. */
export interface Walk {
  browser: Browser;
  sandboxUrl: string;
  /** Creates a hosted payment whose webhooks go to `ipnUrl`; resolves to its trx_id. */
  createPayment: (ipnUrl: string) => Promise<string>;
  /** Called at each step with the page (screenshots). */
  onStep?: (name: string, page: Page) => Promise<void>;
}

/** Runs create → console → checkout → pay → attempt visible → resend → delivered; returns the trx_id. */
export async function consoleWalkthrough({ browser, sandboxUrl, createPayment, onStep = async () => {} }: Walk): Promise<string> {
  const hooks = await webhookEndpoint([500, 200]);
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  // The console's CSP must let its own live-reload script run: any violation fails the walk.
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
  });
  try {
    const trx = await createPayment(hooks.url);
    await page.goto(`${sandboxUrl}/`);
    await page.getByRole('link', { name: trx }).waitFor();
    await onStep('console', page);

    await page.getByRole('link', { name: trx }).click();
    await page.getByRole('button', { name: 'Settle as success' }).waitFor();
    await onStep('payment-pending', page);

    await page.getByRole('link', { name: 'Open the hosted checkout page' }).click();
    await page.getByRole('button', { name: /^Pay / }).waitFor();
    await page.getByRole('button', { name: /^Decline/ }).waitFor();
    await onStep('checkout', page);
    // Pay redirects to the merchant's success URL; the console is where we look next. (Off the
    // checkout page of either generation: /checkout/{trx}, or the earlier one's /payment/checkout.)
    await Promise.all([
      page.waitForURL((url) => !/^\/(payment\/)?checkout(\/|$)/.test(url.pathname)),
      page.getByRole('button', { name: /^Pay / }).click(),
    ]);

    await page.goto(`${sandboxUrl}/console/payments/${encodeURIComponent(trx)}`);
    await page.getByText('HTTP 500').first().waitFor();
    await onStep('payment-paid', page);

    await page.getByRole('link', { name: /^evt_/ }).first().click();
    await page.getByRole('button', { name: 'Resend now' }).waitFor();
    await onStep('event-failed', page);
    await page.getByRole('button', { name: 'Resend now' }).click();
    await page.getByText('2 (resend)').waitFor();
    await page.getByText('HTTP 200').waitFor();
    await onStep('event-delivered', page);
    if (hooks.received.length !== 2) throw new Error(`the endpoint got ${hooks.received.length} deliveries, expected 2`);
    if (violations.length) throw new Error(`CSP violations: ${violations.join('; ')}`);
    return trx;
  } finally {
    await page.close();
    await hooks.close();
  }
}
