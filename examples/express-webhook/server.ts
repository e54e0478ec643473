// Express 5: a shop's webhook route and return page over the fulfillment kit, so that each
// paid order is fulfilled exactly once.
//
// Raw body: the signature covers the body byte for byte, so the webhook route hands the kit
// the request itself, its body unread (`fulfillment.handleWebhook(req)`), and is registered
// BEFORE any global express.json(). A global app.use(express.json()) placed first would parse
// the body into an object; the bytes are gone, and re-serialising never reproduces them
// exactly (key order, spacing, escapes), so verification fails with reason `invalid_payload`.
//
// Bounded: the kit checks the signature and timestamp headers before it reads a byte of the
// body (401 without them, or stale), and reads at most maxBodyBytes (1 MiB by default): a
// longer body is 413, not read further. Send the kit's answer as it is: Node stops reading
// that connection, writes the answer, and closes the connection once it is idle.
//
// Once: deliveries come at least once (the same event can arrive twice), and the customer's
// return page races the webhook. createFulfillment verifies every report with the service
// (payments.verify) and runs onPaid once per order, whichever path reports it first.
//
// One attempt, one reference: each payment made for an order has a ref_trx and an
// Idempotency-Key of its own (`order-…~a1`, then `~a2`…: fulfillment.newAttempt makes them,
// see startPayment below). A payment that failed, was cancelled or expired cannot be paid
// again, and neither can its reference (its key replays the dead payment; the same ref_trx
// under a new key is 409 DUPLICATE_REFERENCE): paying the order again is a new attempt. The
// kit pays an order once across its attempts; handlers find it by `tx.order_ref`.
//
// Run it against the local sandbox: npm run build; start `npx business-payments sandbox` and
// paste its export lines; then `node examples/express-webhook/server.ts`. It creates a demo
// order, prints its checkout link, and fulfils the order once you pay.
import { fileURLToPath } from 'node:url';
import express from 'express';
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
  /** Its latest payment attempt's `ref_trx`, saved when you create the payment (startPayment). */
  ref_trx?: string | undefined;
  /** That attempt's payment, saved with it: the return page verifies this, never a trx_id from its URL. */
  trx_id?: string | undefined;
}

/** What the shop needs of your orders table. */
export interface Orders {
  find(id: string): Promise<Order | undefined>;
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
  /** Default memoryStore(): claims in this process only (see below). */
  store?: FulfillmentStore | undefined;
  /** The kit, when you made it yourself (createShopFulfillment) to start payments with it too. Default: one made from these options. */
  fulfillment?: Fulfillment | undefined;
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
    // database that is down) leaves the payment unsettled: the webhook gets a 500 and the
    // service delivers again.
    expect: async (tx) => {
      const order = await orderOf(orders, tx);
      return { amount: order.amount, currency: order.currency };
    },
    // Once per order, with a payment the service confirmed, at the order's price.
    onPaid: async (tx, { db }) => orders.fulfil(await orderOf(orders, tx), tx, db),
    // A payment of another amount or currency never reaches onPaid. With a durable store
    // (Postgres, Redis) leave this out: the payment goes on the review list,
    // fulfillment.inbox({ state: 'review' }). memoryStore() has no such list, so here it is
    // left unsettled: the webhook gets a 500, the service delivers again, and someone looks.
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
 * customer to `checkout_url`: the return page verifies that `trx_id`. Call it again to pay an
 * order whose last attempt failed, was cancelled or expired.
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
  return { ref_trx: attempt.ref_trx, trx_id: payment.trx_id, checkout_url: payment.checkout_url };
}

export function createApp(options: ShopOptions): express.Express {
  const fulfillment = options.fulfillment ?? createShopFulfillment(options);
  const app = express();

  // The webhook: the kit reads the request's body itself (headers first, at most 1 MiB). The
  // answer: 200 done, 401 unsigned or bad signature, 409 in flight elsewhere, 413 too large,
  // 500 a handler threw.
  app.post('/webhooks/payments', async (req, res) => {
    const { status, body } = await fulfillment.handleWebhook(req);
    res.status(status).type('application/json').send(body);
  });

  // The return page (the payment's success_redirect and cancel_redirect). Reaching it proves
  // nothing (anyone can open any URL): the order id in it only says which of your orders to
  // look up. The trx_id comes from your records (saved by startPayment), the outcome from the
  // kit (its store, or one verify it settles): the customer sees "paid" even before the webhook
  // comes, and the order still ships once.
  app.get('/orders/:id/return', async (req, res) => {
    const order = await options.orders.find(req.params.id);
    if (!order) {
      res.status(404).send('No such order');
      return;
    }
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
    // No trx_id: the earlier generation's initiate answers none (its IPN brings it); until it comes, "being confirmed".
    const { status } = (await options.orders.find(order.id)) ?? order;
    const text = status === 'paid' ? 'is paid: thank you!' : payment === 'failed' ? 'was not paid.' : 'is being confirmed.';
    res.type('text/plain').send(`Order ${order.id} ${text}`);
  });

  // The rest of your API parses JSON as usual: registered after the webhook route, so the
  // webhook's body has already been read raw by the time this parser runs.
  app.use(express.json());

  return app;
}

/** Orders in memory, for the example. USE YOUR DATABASE. */
export function memoryOrders(): Orders & { add(order: Order): Order } {
  const rows = new Map<string, Order>();
  return {
    add: (order) => (rows.set(order.id, order), order),
    find: async (id) => rows.get(id),
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
  const options = { environment: client.environment, secret, client, orders };
  const fulfillment = createShopFulfillment(options);
  const app = createApp({ ...options, fulfillment });
  const origin = `http://localhost:${Number(process.env.PORT ?? 3000)}`;
  app.listen(Number(process.env.PORT ?? 3000), async () => {
    console.log(`POST ${origin}/webhooks/payments`);
    // A demo order, and a first attempt at paying it, saved with the order (USE YOUR DATABASE).
    const order = orders.add({ id: `order-${Date.now()}`, amount: 25, currency: 'USD', status: 'open' });
    const { ref_trx, trx_id, checkout_url } = await startPayment(fulfillment, client, order, origin);
    Object.assign(order, { ref_trx, trx_id });
    console.log(`pay order ${order.id} (attempt ${ref_trx}) at ${checkout_url}`);
  });
}
