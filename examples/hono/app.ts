// Hono 4: a shop's checkout, webhook route and return page over the fulfillment kit, so that
// each paid order is fulfilled exactly once. One app for every runtime Hono runs on: Node
// (through @hono/node-server: server.ts beside this file), and Cloudflare Workers, Bun, Deno
// and Vercel through `export default app` below. This file uses web APIs only.
//
// Raw body: Hono parses nothing until a handler asks (`c.req.json()`), and `c.req.raw` is the
// Fetch Request as it came, its body unread. The webhook route hands it to the kit as it is,
// `fulfillment.handleWebhook(c.req.raw)`: the kit checks the signature and timestamp headers
// before it reads the body (401 without them, or stale), then reads the bytes that were signed,
// at most maxBodyBytes of them (1 MiB by default; 413 past it, the stream cancelled). Do not
// call `c.req.json()` or `c.req.text()` in a middleware in front of it: a body read once is
// gone from the Request (Hono keeps what it read for its own readers, not in `c.req.raw`), and
// the kit refuses a Request whose body was used: 400 `invalid_payload` for every delivery.
//
// Once: deliveries come at least once, and the customer's return page races the webhook.
// createFulfillment verifies every report with the service (payments.verify) and runs onPaid
// once per order, whichever path reports it first.
//
// One attempt, one reference: each payment made for an order has a ref_trx and an
// Idempotency-Key of its own (`order-…~a1`, then `~a2`…, from fulfillment.newAttempt: see the
// checkout route). A payment that failed, was cancelled or expired cannot be paid again, nor
// its reference reused: paying the order again is a new attempt. The kit pays an order once
// across its attempts; handlers find it by `tx.order_ref`.
//
// Configuration: the client and the secret are given to createApp (server.ts, the tests), or
// read on the first request from the BUSINESS_PAYMENTS_* bindings (Workers: `c.env`;
// `wrangler secret put BUSINESS_PAYMENTS_WEBHOOK_SECRET`, and the same for _MERCHANT_KEY,
// _API_KEY, _API_SECRET) or from process.env (Node, Bun, Deno, Vercel).
//
// Store: memoryStore() holds claims in one process (one isolate): fine for `node server.ts`,
// wrong wherever more than one instance runs (Workers, serverless, several servers). Give the
// kit a store they all reach: postgresStore(pool) from 'business-payments/fulfillment/postgres'
// or redisStore(redis) from 'business-payments/fulfillment/redis'. A durable store answers a
// delivery once it is recorded and processes it after: on Workers, make the kit per request
// with `waitUntil: (work) => c.executionCtx.waitUntil(work)`, as examples/edge-webhook/handler.ts
// does, so the isolate stays up until it is done.
import { Hono } from 'hono';
import { PaymentsClient } from 'business-payments';
import {
  createFulfillment,
  memoryStore,
  paidAmount,
  type Fulfillment,
  type FulfilledTransaction,
  type FulfillmentStore,
} from 'business-payments/fulfillment';

/** The BUSINESS_PAYMENTS_* bindings (Workers) or environment variables (everywhere else). */
export interface Env {
  BUSINESS_PAYMENTS_ENVIRONMENT?: string;
  BUSINESS_PAYMENTS_BASE_URL?: string;
  BUSINESS_PAYMENTS_MERCHANT_KEY?: string;
  BUSINESS_PAYMENTS_API_KEY?: string;
  BUSINESS_PAYMENTS_API_SECRET?: string;
  BUSINESS_PAYMENTS_WEBHOOK_SECRET?: string;
  /** The previous secret, set only while rotating. */
  BUSINESS_PAYMENTS_WEBHOOK_SECRET_PREVIOUS?: string;
}

/** An order as your database holds it. */
export interface Order {
  /** Your order id: its payments' `tx.order_ref` (their `ref_trx` is `<id>~a<n>`). */
  id: string;
  amount: number;
  currency: string;
  status: 'open' | 'paid' | 'failed';
  /** Its latest payment attempt's `ref_trx`, saved when the checkout creates the payment. */
  ref_trx?: string | undefined;
  /** That attempt's payment, saved with it: the return page verifies this, never a trx_id from its URL. */
  trx_id?: string | undefined;
}

/** What the shop needs of your orders table (D1, Postgres over HTTP…). */
export interface Orders {
  find(id: string): Promise<Order | undefined>;
  /** Saves the attempt's `ref_trx` and payment with the order, before the customer is sent to pay. */
  savePayment(order: Order, payment: { ref_trx: string; trx_id: string }): Promise<void>;
  /** Marks the order paid and ships it. With postgresStore, write through `db` (the claim's transaction). */
  fulfil(order: Order, tx: FulfilledTransaction, db: unknown): Promise<void>;
  markFailed(order: Order, tx: FulfilledTransaction, db: unknown): Promise<void>;
}

export interface AppOptions {
  orders: Orders;
  /** The PaymentsClient (its environment is the kit's). Default: one built from the BUSINESS_PAYMENTS_* variables. */
  client?: PaymentsClient | undefined;
  /** The webhook signing secret; `[newSecret, oldSecret]` while rotating. Default: BUSINESS_PAYMENTS_WEBHOOK_SECRET (and _PREVIOUS). */
  secret?: string | readonly string[] | undefined;
  /** Default memoryStore(): this process (this isolate) only; see the top of the file. */
  store?: FulfillmentStore | undefined;
  /**
   * The shop's public origin (`https://shop.example.com`): the payment's ipn_url and
   * redirects are made from it. Default: the request's own (fine locally; behind a proxy, or
   * wherever the Host header is not yours to trust, set it).
   */
  origin?: string | undefined;
}

interface Shop {
  client: PaymentsClient;
  fulfillment: Fulfillment;
}

/** The order a payment is for, or a throw (the delivery gets a 500 and comes again). */
async function orderOf(orders: Orders, tx: FulfilledTransaction): Promise<Order> {
  const order = tx.order_ref === undefined ? undefined : await orders.find(tx.order_ref);
  if (!order) throw new Error(`payment ${tx.trx_id} is for an unknown order ${String(tx.order_ref)}`);
  return order;
}

function createShopFulfillment(client: PaymentsClient, secret: string | readonly string[], orders: Orders, store: FulfillmentStore) {
  return createFulfillment({
    environment: client.environment, // deliveries of the other environment are refused
    secret, // unset or padded: createFulfillment throws ConfigurationError (a 500: the service retries)
    client,
    store,
    // The order's price: the kit compares it with paidAmount(tx) and tx.currency before onPaid.
    // A throw (an unknown order, a database that is down): 500, delivered again.
    expect: async (tx) => {
      const order = await orderOf(orders, tx);
      return { amount: order.amount, currency: order.currency };
    },
    // Once per order, with a payment the service confirmed, at the order's price.
    onPaid: async (tx, { db }) => orders.fulfil(await orderOf(orders, tx), tx, db),
    // Another amount or currency: never onPaid. A durable store puts it on the review list
    // (leave this out there); memoryStore() has none, so it stays unsettled: 500, delivered again.
    onMismatch: (tx, { expected }) => {
      throw new Error(
        `payment ${tx.trx_id} is ${paidAmount(tx)} ${tx.currency}, order ${tx.order_ref} is ${expected?.amount} ${expected?.currency}`,
      );
    },
    // A second attempt of an order already paid succeeded too (two tabs): refund it.
    onDuplicatePayment: (tx) => console.log(`order ${tx.order_ref} was paid already: refund payment ${tx.trx_id}`),
    // At most once per payment, never after onPaid. The order can be paid again (a new attempt).
    onFailed: async (tx, { db }) => {
      const order = tx.order_ref === undefined ? undefined : await orders.find(tx.order_ref);
      if (order) await orders.markFailed(order, tx, db);
    },
  });
}

/**
 * A new attempt at paying the order: a `ref_trx` and an Idempotency-Key of its own
 * (`<order>~a<n>`), and its payment. Save what it returns with the order before you send the
 * customer to `checkout_url`: the return page verifies that `trx_id`.
 */
export async function startPayment({ client, fulfillment }: Shop, order: Order, origin: string) {
  const attempt = await fulfillment.newAttempt(order.id); // { ref_trx: 'order-…~a1', idempotencyKey, attempt: 1 }
  const payment = await client.payments.create(
    {
      payment_amount: order.amount,
      currency_code: order.currency,
      ref_trx: attempt.ref_trx,
      ipn_url: `${origin}/webhooks/payments`,
      success_redirect: `${origin}/orders/${order.id}/return`,
      cancel_redirect: `${origin}/orders/${order.id}/return`,
    },
    // The attempt's key: a retry of this call (a timeout, a reset) replays this payment instead of making a second.
    { idempotencyKey: attempt.idempotencyKey },
  );
  // A hosted payment always comes with its checkout link; a 500 if the service sent none.
  if (!payment.checkout_url) throw new Error(`payment ${payment.trx_id} came back without a checkout_url`);
  return { ref_trx: attempt.ref_trx, trx_id: payment.trx_id, checkout_url: payment.checkout_url };
}

export function createApp(options: AppOptions) {
  const { orders } = options;
  const store = options.store ?? memoryStore();
  let shop: Shop | undefined;
  /** The client and the kit: made once, on the first request (Workers' bindings come with it). */
  const shopOf = (env: Env | undefined): Shop => {
    if (shop) return shop;
    const vars = variables(env);
    const client = options.client ?? clientFrom(vars);
    const secret = options.secret ?? secrets(vars);
    return (shop = { client, fulfillment: createShopFulfillment(client, secret, orders, store) });
  };
  const app = new Hono<{ Bindings: Env }>();

  // The webhook: the Fetch Request as it came; the kit reads its body (headers first, at most
  // 1 MiB) and answers with a Response. 200 done, 401 unsigned or bad signature, 409 in flight
  // elsewhere, 413 too large, 500 a handler threw.
  app.post('/webhooks/payments', (c) => shopOf(c.env).fulfillment.handleWebhook(c.req.raw));

  // The checkout (the cart's "Pay" button posts here): a new attempt at paying the order, its
  // payment saved with the order, and the customer sent to the hosted checkout.
  app.post('/orders/:id/checkout', async (c) => {
    const order = await orders.find(c.req.param('id'));
    if (!order) return c.json({ error: 'no_such_order' }, 404);
    if (order.status === 'paid') return c.json({ error: 'already_paid' }, 409);
    const origin = options.origin ?? new URL(c.req.url).origin;
    const { ref_trx, trx_id, checkout_url } = await startPayment(shopOf(c.env), order, origin);
    await orders.savePayment(order, { ref_trx, trx_id });
    return c.redirect(checkout_url, 303);
  });

  // The return page (the payment's success_redirect and cancel_redirect). Reaching it proves
  // nothing: the order id in it only says which of your orders to look up. The trx_id comes
  // from your records, the outcome from the kit (its store, or one verify it settles): the
  // customer sees "paid" even before the webhook comes, and the order still ships once.
  app.get('/orders/:id/return', async (c) => {
    const order = await orders.find(c.req.param('id'));
    if (!order) return c.text('No such order', 404);
    const { fulfillment } = shopOf(c.env);
    let payment: string | undefined;
    if (order.trx_id) {
      try {
        // Asked of the kit, not the service: from its store once the webhook settled it, else one
        // verify, settled as the webhook would. The attempt's reference from the record too (an
        // order paid before attempts: its id).
        payment = await fulfillment.outcome(order.trx_id, { merchantRef: order.ref_trx ?? order.id }); // 'paid', 'failed', 'review' or 'pending'
      } catch (error) {
        console.error(`order ${order.id}:`, error); // a handler threw (an unknown order, the database): the customer sees "confirming"
      }
    }
    const { status } = (await orders.find(order.id)) ?? order;
    const text = status === 'paid' ? 'is paid: thank you!' : payment === 'failed' ? 'was not paid.' : 'is being confirmed.';
    return c.text(`Order ${order.id} ${text}`);
  });

  return app;
}

/** Orders in memory, for the example. USE YOUR DATABASE. */
export function memoryOrders(): Orders & { add(order: Order): Order } {
  const rows = new Map<string, Order>();
  return {
    add: (order) => (rows.set(order.id, order), order),
    find: async (id) => rows.get(id),
    savePayment: async (order, payment) => void Object.assign(order, payment),
    fulfil: async (order, tx) => {
      order.status = 'paid';
      console.log(`order ${order.id} paid (${tx.trx_id}): shipping it`);
    },
    markFailed: async (order, tx) => {
      if (order.status === 'paid') return; // another attempt paid it
      order.status = 'failed';
      console.log(`order ${order.id}: payment ${tx.trx_id} failed`);
    },
  };
}

// Your orders table: connect it here. This stand-in knows no order, so the checkout is 404 and
// every paid delivery is answered 500 ("unknown order") until you do; server.ts and the tests
// pass their own.
const orders: Orders = {
  find: async () => undefined,
  savePayment: async () => {},
  fulfil: async () => {},
  markFailed: async () => {},
};

// Workers, Bun, Deno, Vercel: the app is the module's default export (its `fetch`).
export default createApp({ orders });

// Workers bindings when there are any, else process.env (Node, Bun, Deno, Vercel: there, the
// second argument of `fetch` is the runtime's own, not the bindings).
function variables(env: Env | undefined): Env {
  return env?.BUSINESS_PAYMENTS_WEBHOOK_SECRET !== undefined ? env : ((globalThis.process?.env as Env | undefined) ?? {});
}

function clientFrom(vars: Env): PaymentsClient {
  return new PaymentsClient({
    environment: vars.BUSINESS_PAYMENTS_ENVIRONMENT === 'production' ? 'production' : 'sandbox',
    baseUrl: vars.BUSINESS_PAYMENTS_BASE_URL,
    merchantKey: vars.BUSINESS_PAYMENTS_MERCHANT_KEY,
    apiKey: vars.BUSINESS_PAYMENTS_API_KEY,
    apiSecret: vars.BUSINESS_PAYMENTS_API_SECRET,
  });
}

function secrets(vars: Env): string[] {
  // An empty array makes createFulfillment throw ConfigurationError ("webhook secret is not set").
  return [vars.BUSINESS_PAYMENTS_WEBHOOK_SECRET, vars.BUSINESS_PAYMENTS_WEBHOOK_SECRET_PREVIOUS].filter(
    (s): s is string => s !== undefined,
  );
}
