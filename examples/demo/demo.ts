// The merchant's whole flow on the embedded sandbox, with no credentials and no network
// beyond 127.0.0.1: a hosted checkout paid by the customer and a USSD push payment, each
// confirmed by a signed webhook (checked with verifyWebhook) and by payments.verify.
//
//   npm run demo        (builds the package, then runs this file with Node 24)
//   npm run demo -- --reserialise
//                       the same flow with the classic mistake: the webhook endpoint verifies
//                       JSON.stringify(JSON.parse(body)) instead of the bytes it received. The
//                       sandbox writes JSON as the service does (PHP: `\uXXXX`, `\/`), so the
//                       customer's name "Zoë" arrives as "Zo\u00eb": the endpoint answers 401
//                       and the demo stops at step 5, as it would in production.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PaymentsClient, type VerifiedTransaction } from 'business-payments';
import { createMockService, type MockService } from 'business-payments/testing';
import { verifyWebhook, WebhookVerificationError, type WebhookEvent } from 'business-payments/webhooks';

const DEADLINE_MS = 20_000;
/** `--reserialise`: the webhook endpoint makes the classic mistake (see the top of this file). */
const RESERIALISE = process.argv.includes('--reserialise');
/** The documented test number whose USSD push the customer approves (docs/testing.md). */
const APPROVING_PHONE = '255700000001';

const started = Date.now();
const cleanups: Array<() => Promise<unknown>> = [];
let stepNumber = 0;
let stepTitle = 'setup';

function step(title: string): void {
  stepNumber += 1;
  stepTitle = title;
  console.log(`\n${stepNumber}. ${title}`);
}
function ok(detail: string): void {
  console.log(`   ✓ ${detail}`);
}
function note(detail: string): void {
  console.log(`     ${detail}`);
}
function money(value: number | null | undefined, currency: string | null | undefined): string {
  if (typeof value !== 'number') return '(not given)';
  return `${currency ?? ''} ${value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}
function fail(message: string): never {
  throw new Error(message);
}

/** A merchant's webhook endpoint: verifies each delivery, keeps each event id once. */
interface Receiver {
  url: string;
  /** Resolves with the first verified event that matches; rejects when a delivery is refused. */
  waitFor(match: (event: WebhookEvent) => boolean): Promise<WebhookEvent>;
  stats: { verified: number; duplicates: number; rejected: string[] };
}

async function startReceiver(secret: string, reserialise: boolean): Promise<Receiver> {
  const events = new Map<string, WebhookEvent>();
  const waiters: Array<{
    match: (event: WebhookEvent) => boolean;
    resolve: (event: WebhookEvent) => void;
    reject: (error: Error) => void;
  }> = [];
  const stats = { verified: 0, duplicates: 0, rejected: [] as string[] };
  let refused: Error | undefined; // the last delivery the endpoint refused

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    // The raw bytes as received: re-serialised JSON would not match the signature
    // (--reserialise makes that mistake on purpose).
    const payload = reserialise ? JSON.stringify(JSON.parse(raw.toString('utf8'))) : raw;
    try {
      const event = await verifyWebhook({ payload, headers: req.headers, secret });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'); // answer fast, then process
      const id = event.id ?? ''; // a payment event always has one
      if (events.has(id)) {
        stats.duplicates += 1; // a retry of an event already handled
        return;
      }
      events.set(id, event);
      stats.verified += 1;
      for (const waiter of waiters.filter((w) => w.match(event))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(event);
      }
    } catch (error) {
      const reason = error instanceof WebhookVerificationError ? error.reason : String(error);
      stats.rejected.push(reason);
      const status = /signature|timestamp|header/.test(reason) ? 401 : 400;
      res.writeHead(status).end(reason);
      const why = reserialise
        ? ` (it verified JSON.stringify(JSON.parse(body)): ${firstDifference(raw.toString('utf8'), String(payload))})`
        : '';
      refused = new Error(`the webhook endpoint answered ${status} ${reason}${why}`);
      for (const waiter of waiters.splice(0)) waiter.reject(refused);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeAllConnections();
    await closed;
  });

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/payments`,
    stats,
    waitFor(match) {
      const seen = [...events.values()].find(match);
      if (seen) return Promise.resolve(seen);
      if (refused) return Promise.reject(refused);
      return new Promise((resolve, reject) => waiters.push({ match, resolve, reject }));
    },
  };
}

/** Where two texts first differ, e.g. `"Zo\u00eb Mwinyi" became "Zoë Mwinyi"`. */
function firstDifference(sent: string, reserialised: string): string {
  let i = 0;
  while (i < sent.length && sent[i] === reserialised[i]) i++;
  const start = Math.max(sent.lastIndexOf('"', i), 0);
  const end = (text: string) => text.indexOf('"', i) + 1 || text.length;
  return `${sent.slice(start, end(sent))} became ${reserialised.slice(start, end(reserialised))}`;
}

/** The customer presses Pay on the hosted checkout page: its form, submitted over HTTP. */
async function payOnCheckoutPage(mock: MockService, checkoutUrl: string, trxId: string): Promise<string> {
  const page = await fetch(checkoutUrl);
  const html = await page.text();
  if (!page.ok) fail(`the checkout page answered ${page.status}`);
  const attribute = (tag: string, name: string) => {
    const value = tag.match(new RegExp(`\\b${name}\\s*=\\s*"([^"]*)"`, 'i'))?.[1];
    return value === undefined ? undefined : decodeEntities(value);
  };
  const form = [...html.matchAll(/<form\b[^>]*>[\s\S]*?<\/form>/gi)]
    .map((match) => match[0])
    .find((f) => /\/pay(\?|$)/.test(attribute(f.slice(0, f.indexOf('>')), 'action') ?? ''));
  if (form === undefined) {
    // No Pay form on the page: press the button the way the page would.
    await mock.completeCheckout(trxId, 'success');
    return 'checkout completed with mock.completeCheckout';
  }
  const action = new URL(attribute(form.slice(0, form.indexOf('>')), 'action')!, checkoutUrl);
  const fields = new URLSearchParams();
  for (const [input] of form.matchAll(/<input\b[^>]*>/gi)) {
    const name = attribute(input, 'name');
    if (name === undefined || (/type="(radio|checkbox)"/i.test(input) && !/\bchecked\b/i.test(input))) continue;
    fields.append(name, attribute(input, 'value') ?? '');
  }
  const answer = await fetch(action, { method: 'POST', body: fields, redirect: 'manual' });
  await answer.body?.cancel();
  if (answer.status >= 400) fail(`the checkout form answered ${answer.status}`);
  return `form POST ${action.pathname} (${fields}) answered ${answer.status}, redirect to ${answer.headers.get('location')}`;
}

function decodeEntities(text: string): string {
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, code: string) =>
    code[0] === '#'
      ? String.fromCodePoint(Number(code[1] === 'x' || code[1] === 'X' ? `0${code.slice(1)}` : code.slice(1)))
      : (named[code.toLowerCase()] ?? entity),
  );
}

function describeVerified(v: VerifiedTransaction): string {
  return `${v.status}: ${money(v.amount, v.currency)}, fee ${money(v.fee, v.currency)}, net ${money(v.net_amount, v.currency)}`;
}

function describeEvent(event: WebhookEvent): string {
  if (event.type !== 'payment.completed' && event.type !== 'payment.failed') return `${event.type} ${event.id}`;
  const { amount, settlement, status } = event.data;
  const currency = amount?.currency;
  return `${event.type} ${event.id} (status ${status}; gross ${money(settlement?.gross?.value, currency)}, fees ${money(settlement?.fees?.value, currency)}, net ${money(settlement?.net?.value, currency)})`;
}

async function demo(): Promise<void> {
  console.log('Business Payments demo: the whole merchant flow on the local sandbox (no credentials, no network)');

  step('Start the sandbox');
  // timeScale 0.01: the customer answers a USSD push in 50 ms instead of 5 s.
  const mock = createMockService({ timeScale: 0.01, autoRun: true });
  cleanups.push(() => mock.close());
  const server = await mock.listen({ port: 0, host: '127.0.0.1' });
  // The sandbox set; its webhook secret signs sandbox deliveries only (production has its own).
  const { webhookSecret, ...credentials } = mock.credentials.sandbox;
  ok(`listening on ${server.url}`);
  note(`merchant key ${credentials.merchantKey}, API key ${credentials.apiKey} (sandbox)`);

  step('Start the webhook endpoint');
  const receiver = await startReceiver(webhookSecret, RESERIALISE);
  ok(`${receiver.url}: verifyWebhook on every delivery, de-duplicated by event id`);
  if (RESERIALISE) note('--reserialise: it verifies JSON.stringify(JSON.parse(body)), not the bytes received (the classic mistake)');

  const client = new PaymentsClient({ environment: 'sandbox', ...credentials, baseUrl: server.url });

  step('Create a hosted checkout');
  const order = `demo-order-${started}`;
  // One reference per payment attempt, `<order>~a<n>` (the fulfillment kit's newAttempt makes
  // them): a failed, cancelled or expired payment cannot be paid again, nor its ref_trx used
  // again (409 DUPLICATE_REFERENCE), so paying the order again takes `~a2`.
  const attempt = `${order}~a1`;
  const checkout = await client.payments.create({
    payment_amount: 25,
    currency_code: 'USD',
    ref_trx: attempt,
    description: 'Coffee beans, 1 kg',
    customer_name: 'Zoë Mwinyi',
    customer_email: 'zoe.mwinyi@example.com',
    ipn_url: receiver.url,
    success_redirect: 'https://shop.example.com/thanks',
  });
  ok(`payments.create: ${checkout.trx_id} for ${money(checkout.amount, checkout.currency)}, ${checkout.status}`);
  note(`checkout URL: ${checkout.checkout_url}`);

  step('The customer pays on the hosted checkout page');
  ok(await payOnCheckoutPage(mock, checkout.checkout_url ?? fail('no checkout_url in the response'), checkout.trx_id));

  step('Receive the signed webhook');
  const paid = await receiver.waitFor((e) => e.type.startsWith('payment.') && e.data?.trx_id === checkout.trx_id);
  if (paid.type !== 'payment.completed') fail(`expected payment.completed, got ${paid.type}`);
  ok(`signature verified: ${describeEvent(paid)}`);

  step('Verify the transaction before fulfilment');
  const verified = await client.payments.verify(checkout.trx_id);
  if (verified.status !== 'success') fail(`payments.verify says ${verified.status}`);
  ok(`payments.verify(${verified.trx_id}): ${describeVerified(verified)}`);
  note(`fulfil order ${order}, paid by attempt ${attempt} (once: by trx_id, and by order across its attempts)`);

  step(`USSD push to ${APPROVING_PHONE} (the test number that approves)`);
  const push = await client.payments.create({
    payment_amount: 15_000,
    currency_code: 'TZS',
    ref_trx: `demo-push-${started}~a1`,
    payment_mode: 'push',
    customer_phone: APPROVING_PHONE,
    customer_name: 'Juma Hassan',
    ipn_url: receiver.url,
  });
  ok(`payments.create: ${push.trx_id} for ${money(push.amount, push.currency)}, ${push.status}; the customer's phone rings`);

  step('Wait for the customer to approve');
  const pushed = await receiver.waitFor((e) => e.type.startsWith('payment.') && e.data?.trx_id === push.trx_id);
  if (pushed.type !== 'payment.completed') fail(`expected payment.completed, got ${pushed.type}`);
  ok(`webhook verified: ${describeEvent(pushed)}`);
  const outcome = await client.payments.waitForOutcome(push.trx_id, { timeout: 10_000, interval: 100 });
  if (outcome.status !== 'success') fail(`waitForOutcome says ${outcome.status}`);
  ok(`payments.waitForOutcome: ${describeVerified(outcome)}`);

  if (receiver.stats.rejected.length > 0) fail(`the endpoint rejected deliveries: ${receiver.stats.rejected.join(', ')}`);
  const { verified: count, duplicates } = receiver.stats;
  console.log(
    `\nDone in ${((Date.now() - started) / 1000).toFixed(1)} s: 2 payments settled, ${count} webhooks verified, ${duplicates} duplicates ignored.`,
  );
}

async function closeAll(): Promise<void> {
  const pending = cleanups.reverse().map((close) => close().catch(() => undefined));
  await Promise.race([Promise.all(pending), new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
}

let timer: NodeJS.Timeout | undefined;
const deadline = new Promise<never>((_, reject) => {
  timer = setTimeout(() => reject(new Error(`took longer than ${DEADLINE_MS / 1000} s`)), DEADLINE_MS);
});
try {
  await Promise.race([demo(), deadline]);
  clearTimeout(timer);
  await closeAll();
  // Everything is closed, so Node exits now; a handle left open must not hang the demo.
  setTimeout(() => process.exit(0), 2_000).unref();
} catch (error) {
  clearTimeout(timer);
  console.error(`\n✗ demo failed at step ${stepNumber} (${stepTitle}): ${error instanceof Error ? error.message : String(error)}`);
  await closeAll();
  process.exit(1);
}
