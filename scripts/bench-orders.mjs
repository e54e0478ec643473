// Calls per fulfilled order (a benchmark, not a test): how many requests the SDK sends the
// service for one order paid and fulfilled, the merchant's create included. The service allows
// 120 requests a minute per business, so at two an order (the create, one verify) a merchant
// can take 60 orders a minute; every extra verify lowers that. DESIGN's budget: ≤ 2.0, with
// duplicate deliveries and return pages included.
//
//   npm run bench:orders      (builds, then runs this on dist/)
//
// The sandbox on a real port (createMockService, its requests counted from its own log), a
// PaymentsClient, and the fulfillment kit on memoryStore() behind the sandbox's webhook
// deliveries (handed to `handleWebhook({ payload, headers })` as they come). Per order: a
// payment attempt (`newAttempt`) and `payments.create`, the customer pays
// (`mock.completeCheckout`), its webhook is delivered, then the scenario's extras: the same
// delivery again (the service's retries: at least once), and the return page as the docs write
// it (`fulfillment.outcome` of the trx_id the shop saved: the kit answers from its store, or
// verifies once in the payment's claim), also before a late webhook (the page fulfils the
// order; the deliveries that come after cost nothing). Prints, per
// scenario, the requests per fulfilled order by kind and whether each order was fulfilled once.
// BENCH_ORDERS (default 50) orders per scenario. Exits 0 (a benchmark), 1 only when it could not
// run or an order was fulfilled other than once.
import { PaymentsClient } from 'business-payments';
import { createFulfillment, memoryStore } from 'business-payments/fulfillment';
import { createMockService } from 'business-payments/testing';

const ORDERS = Number(process.env.BENCH_ORDERS ?? 50);
const BUDGET = 2.0;
const SCENARIOS = [
  { name: 'one delivery', deliveries: 1, returnPage: false },
  { name: 'delivered 3 times', deliveries: 3, returnPage: false },
  { name: 'one delivery + return page', deliveries: 1, returnPage: true },
  { name: 'delivered 3 times + return page', deliveries: 3, returnPage: true },
  { name: 'return page, then 3 late deliveries', deliveries: 3, returnPage: true, late: true },
];

async function scenario({ name, deliveries, returnPage, late = false }) {
  const sent = []; // the deliveries the sandbox made, to send again
  let kit;
  const mock = createMockService({
    rateLimitPerMinute: 1e9,
    fetch: async (_url, init) => {
      const delivery = { payload: String(init?.body), headers: init?.headers };
      sent.push(delivery);
      // A late webhook: the service's delivery is held, and handed to the kit after the return page.
      if (late) return new Response(null, { status: 200 });
      const { status } = await kit.handleWebhook(delivery);
      return new Response(null, { status });
    },
  });
  const server = await mock.listen({ port: 0 });
  const { webhookSecret: secret, ...credentials } = mock.credentials.sandbox;
  const client = new PaymentsClient({ environment: 'sandbox', ...credentials, baseUrl: server.url, pollingBudget: 1e9 });
  const fulfilled = new Map();
  kit = createFulfillment({
    environment: 'sandbox',
    client,
    secret,
    store: memoryStore(),
    onPaid: (tx) => void fulfilled.set(tx.order_ref, (fulfilled.get(tx.order_ref) ?? 0) + 1),
  });
  const before = mock.state.requests.length;
  for (let i = 0; i < ORDERS; i++) {
    const attempt = await kit.newAttempt(`order-${i}`);
    const payment = await client.payments.create(
      { payment_amount: 25, currency_code: 'USD', ref_trx: attempt.ref_trx, ipn_url: 'https://shop.example.test/webhooks' },
      { idempotencyKey: attempt.idempotencyKey },
    );
    const count = sent.length;
    await mock.completeCheckout(payment.trx_id, 'success');
    const delivery = sent[count];
    const page = async () => {
      if ((await kit.outcome(payment.trx_id, { merchantRef: attempt.ref_trx })) !== 'paid') throw new Error('return page: not paid');
    };
    if (returnPage && late) await page();
    for (let again = late ? 0 : 1; again < deliveries && delivery; again++) await kit.handleWebhook(delivery);
    if (returnPage && !late) await page();
  }
  const requests = mock.state.requests.slice(before);
  await server.close();
  await mock.close();
  const byKind = {};
  for (const r of requests) {
    const kind = `${r.method} ${String(r.path).replace(/\/verify-payment\/.+$/, '/verify-payment/:trx_id')}`;
    byKind[kind] = (byKind[kind] ?? 0) + 1;
  }
  const orders = [...fulfilled.values()];
  return {
    name,
    perOrder: requests.length / Math.max(1, orders.length),
    byKind,
    once: orders.length === ORDERS && orders.every((n) => n === 1),
    fulfilled: orders.length,
  };
}

let failed = false;
console.log(`calls per fulfilled order, ${ORDERS} orders a scenario (budget ≤ ${BUDGET.toFixed(1)})`);
for (const s of SCENARIOS) {
  const r = await scenario(s);
  const kinds = Object.entries(r.byKind)
    .map(([kind, n]) => `${kind} ${(n / Math.max(1, r.fulfilled)).toFixed(2)}`)
    .join(', ');
  const verdict = r.perOrder <= BUDGET ? 'within budget' : 'OVER budget';
  console.log(
    `${r.name.padEnd(36)} ${r.perOrder.toFixed(2).padStart(5)}  ${verdict.padEnd(13)} (${kinds}); fulfilled once: ${r.once ? 'yes' : 'NO'}`,
  );
  if (!r.once) failed = true;
}
process.exit(failed ? 1 : 0);
