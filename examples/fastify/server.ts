// Fastify 5: a shop's checkout, webhook route and return page over the fulfillment kit, so
// that each paid order is fulfilled exactly once.
//
// Raw body: the signature covers the body byte for byte, and Fastify parses every JSON body
// by default (its application/json parser runs before the handler): `req.body` is then an
// object, the bytes are gone, and re-serialising never reproduces them exactly (key order,
// spacing, escapes). So the webhook route lives in a plugin of its own (an encapsulated
// context: what it sets applies to its routes only) that replaces Fastify's body parsers with
// one that leaves the body unread, and hands the kit the Node request itself,
// `fulfillment.handleWebhook(req.raw)`: the kit reads the bytes as they came.
//
// Why not `req.raw` with Fastify's parsers in place: by the time the handler runs, Fastify
// has read the request's stream to its end to parse it, and `req.raw` is that same stream:
// read again it gives nothing (an empty body, which no signature matches). The kit sees that
// it was read and refuses it: 400 `invalid_payload` ("The body was already read"), for every
// genuine delivery. `handleWebhook({ payload: req.body, headers })` with the parsed object is
// refused alike (400 `invalid_payload`: a parsed object cannot be verified).
//
// The other way: keep the bytes as a Buffer in the plugin,
//   webhooks.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
// and pass `fulfillment.handleWebhook({ payload: req.body, headers: req.headers })`. That
// works too, but Fastify then reads the whole body (up to its bodyLimit, 1 MiB by default)
// before the kit has looked at a header. Handed `req.raw` unread, the kit checks the
// signature and timestamp headers before it reads a byte of the body (401 without them, or
// stale), and reads at most maxBodyBytes (1 MiB by default): a longer body is 413.
//
// Once: deliveries come at least once, and the customer's return page races the webhook.
// createFulfillment verifies every report with the service (payments.verify) and runs onPaid
// once per order, whichever path reports it first.
//
// One attempt, one reference: each payment made for an order has a ref_trx and an
// Idempotency-Key of its own (`order-…~a1`, then `~a2`…: fulfillment.newAttempt makes them,
// see the checkout route). A payment that failed, was cancelled or expired cannot be paid
// again, and neither can its reference: paying the order again is a new attempt. The kit pays
// an order once across its attempts; handlers find it by `tx.order_ref`.
//
// Run it against the local sandbox: npm run build; start `npx business-payments sandbox` and
// paste its export lines; then `node examples/fastify/server.ts`. It creates a demo order,
// prints its checkout link, and fulfils the order once you pay.
import { fileURLToPath } from 'node:url';
import Fastify, { type FastifyInstance } from 'fastify';
import { PaymentsClient } from 'business-payments';
import {
  createFulfillment,
  memoryStore,
  paidAmount,
  type Fulfillment,
  type FulfilledTransaction,
  type FulfillmentStore,
} from 'business-payments/fulfillment';

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

/** What the shop needs of your orders table. */
export interface Orders {
  find(id: string): Promise<Order | undefined>;
  /** Saves the attempt's `ref_trx` and payment with the order, before the customer is sent to pay. */
  savePayment(order: Order, payment: { ref_trx: string; trx_id: string }): Promise<void>;
  /** Marks the order paid and ships it. With postgresStore, write through `db` (the claim's transaction). */
  fulfil(order: Order, tx: FulfilledTransaction, db: unknown): Promise<void>;
  markFailed(order: Order, tx: FulfilledTransaction, db: unknown): Promise<void>;
}

export interface ShopOptions {
  /** Deliveries of the other environment are refused; the client must be of this one. */
  environment: 'sandbox' | 'production';
  /** The webhook signing secret; `[newSecret, oldSecret]` while rotating. */
  secret: string | readonly string[];
  /** The PaymentsClient of that environment: it confirms every outcome before a handler runs. */
  client: PaymentsClient;
  orders: Orders;
  /** Default memoryStore(): claims in this process only (see createShopFulfillment). */
  store?: FulfillmentStore | undefined;
  /** The kit, when you made it yourself (createShopFulfillment). Default: one made from these options. */
  fulfillment?: Fulfillment | undefined;
  /**
   * The shop's public origin (`https://shop.example.com`): the payment's ipn_url and
   * redirects are made from it. Default: the request's own (fine locally; behind a proxy, or
   * wherever the Host header is not yours to trust, set it).
   */
  origin?: string | undefined;
}

/** The order a payment is for, or a throw (the delivery gets a 500 and comes again). */
async function orderOf(orders: Orders, tx: FulfilledTransaction): Promise<Order> {
  const order = tx.order_ref === undefined ? undefined : await orders.find(tx.order_ref);
  if (!order) throw new Error(`payment ${tx.trx_id} is for an unknown order ${String(tx.order_ref)}`);
  return order;
}

export function createShopFulfillment({ environment, secret, client, orders, store }: ShopOptions): Fulfillment {
  return createFulfillment({
    environment,
    secret,
    client,
    // memoryStore() holds claims in this process only: with more than one process (several
    // servers, a restart in between), share them in your database instead:
    //   store: postgresStore(pool),   // from 'business-payments/fulfillment/postgres'
    //   store: redisStore(redis),     // from 'business-payments/fulfillment/redis'
    store: store ?? memoryStore(),
    // The order's price: the kit compares it with paidAmount(tx) (what the customer paid, on
    // either generation) and tx.currency before onPaid runs. A throw (an unknown order, a
    // database that is down) leaves the payment unsettled: 500, and the service delivers again.
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
export async function startPayment(fulfillment: Fulfillment, client: PaymentsClient, order: Order, origin: string) {
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

export function buildApp(options: ShopOptions): FastifyInstance {
  const fulfillment = options.fulfillment ?? createShopFulfillment(options);
  const { orders, client } = options;
  const app = Fastify();

  // The webhook, in a plugin of its own: its body parsers are this plugin's, the rest of the
  // app keeps Fastify's. None reads the body: the kit does (headers first, at most 1 MiB). The
  // answer: 200 done, 401 unsigned or bad signature, 409 in flight elsewhere, 413 too large,
  // 500 a handler threw.
  void app.register(async (webhooks) => {
    webhooks.removeAllContentTypeParsers();
    webhooks.addContentTypeParser('*', (_req, _body, done) => done(null)); // any content type, the body left unread
    webhooks.post('/webhooks/payments', async (req, reply) => {
      const { status, body } = await fulfillment.handleWebhook(req.raw);
      return reply.code(status).type('application/json').send(body);
    });
  });

  // The checkout (the cart's "Pay" button posts here): a new attempt at paying the order, its
  // payment saved with the order, and the customer sent to the hosted checkout.
  app.post<{ Params: { id: string } }>('/orders/:id/checkout', async (req, reply) => {
    const order = await orders.find(req.params.id);
    if (!order) return reply.code(404).send({ error: 'no_such_order' });
    if (order.status === 'paid') return reply.code(409).send({ error: 'already_paid' });
    const origin = options.origin ?? `${req.protocol}://${req.host}`;
    const { ref_trx, trx_id, checkout_url } = await startPayment(fulfillment, client, order, origin);
    await orders.savePayment(order, { ref_trx, trx_id });
    return reply.redirect(checkout_url, 303);
  });

  // The return page (the payment's success_redirect and cancel_redirect). Reaching it proves
  // nothing: the order id in it only says which of your orders to look up. The trx_id comes
  // from your records, the outcome from the kit (its store, or one verify it settles): the
  // customer sees "paid" even before the webhook comes, and the order still ships once.
  app.get<{ Params: { id: string } }>('/orders/:id/return', async (req, reply) => {
    const order = await orders.find(req.params.id);
    if (!order) return reply.code(404).type('text/plain').send('No such order');
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
    return reply.type('text/plain').send(`Order ${order.id} ${text}`);
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

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const secret = process.env.BUSINESS_PAYMENTS_WEBHOOK_SECRET;
  if (!secret) throw new Error('Set BUSINESS_PAYMENTS_WEBHOOK_SECRET');
  const client = new PaymentsClient(); // BUSINESS_PAYMENTS_* from the environment
  const orders = memoryOrders();
  const port = Number(process.env.PORT ?? 3000);
  const origin = `http://localhost:${port}`;
  const options = { environment: client.environment, secret, client, orders, origin };
  const fulfillment = createShopFulfillment(options);
  const app = buildApp({ ...options, fulfillment });
  await app.listen({ port });
  console.log(`POST ${origin}/webhooks/payments`);
  // A demo order, and a first attempt at paying it, saved with the order (USE YOUR DATABASE).
  const order = orders.add({ id: `order-${Date.now()}`, amount: 25, currency: 'USD', status: 'open' });
  const { ref_trx, trx_id, checkout_url } = await startPayment(fulfillment, client, order, origin);
  await orders.savePayment(order, { ref_trx, trx_id });
  console.log(`pay order ${order.id} (attempt ${ref_trx}) at ${checkout_url}`);
}
