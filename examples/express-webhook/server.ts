// Express 5: a shop's webhook route and return page over the fulfillment kit, so that each
// paid order is fulfilled exactly once.
//
// Raw body: the signature covers the body byte for byte, so the webhook route gets
// express.raw() (req.body is then a Buffer) and is registered BEFORE any global
// express.json(). A global app.use(express.json()) placed first would parse the body into an
// object; the bytes are gone, and re-serialising never reproduces them exactly (key order,
// spacing, escapes), so verification fails with reason `invalid_payload`.
//
// Once: deliveries come at least once (the same event can arrive twice), and the customer's
// return page races the webhook. createFulfillment verifies every report with the service
// (payments.verify) and runs onPaid once per payment, whichever path reports it first.
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
  type Fulfillment,
  type FulfilledTransaction,
  type FulfillmentStore,
} from 'business-payments/fulfillment';

/** An order as your database holds it. */
export interface Order {
  /** Your reference: the payment's `ref_trx` (`merchant_ref` in events). */
  id: string;
  amount: number;
  currency: string;
  status: 'open' | 'paid' | 'failed';
  /** The payment made for it, saved when you create the payment. */
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
    // Runs once per payment, with the transaction the service confirmed. A throw leaves it
    // unsettled: the webhook gets a 500 and the service delivers again.
    onPaid: async (tx, { db }) => {
      const order = tx.merchant_ref === undefined ? undefined : await orders.find(tx.merchant_ref);
      if (!order) throw new Error(`payment ${tx.trx_id} is for an unknown order ${String(tx.merchant_ref)}`);
      // The service says it is paid; you check it is the payment this order asked for.
      if (tx.amount !== order.amount || tx.currency !== order.currency) {
        throw new Error(`payment ${tx.trx_id} is ${tx.amount} ${tx.currency}, order ${order.id} is ${order.amount} ${order.currency}`);
      }
      await orders.fulfil(order, tx, db);
    },
    // Never after onPaid for the same payment.
    onFailed: async (tx, { db }) => {
      const order = tx.merchant_ref === undefined ? undefined : await orders.find(tx.merchant_ref);
      if (order) await orders.markFailed(order, tx, db);
    },
  });
}

export function createApp(options: ShopOptions): express.Express {
  const fulfillment = createShopFulfillment(options);
  const app = express();

  // The webhook: req.body is the Buffer express.raw() collected; the headers are Node's. The
  // answer: 200 done, 401 bad signature, 409 in flight elsewhere, 500 a handler threw.
  app.post('/webhooks/payments', express.raw({ type: 'application/json' }), async (req, res) => {
    const { status, body } = await fulfillment.handleWebhook({ payload: req.body as Buffer, headers: req.headers });
    res.status(status).type('application/json').send(body);
  });

  // The return page (the payment's success_redirect). Reaching it proves nothing (anyone can
  // open the URL): it asks the service, and reports the outcome to the same kit, so the
  // customer sees "paid" even before the webhook comes, and the order still ships once.
  app.get('/orders/:id/return', async (req, res) => {
    const order = await options.orders.find(req.params.id);
    if (!order?.trx_id) {
      res.status(404).send('No such order');
      return;
    }
    const tx = await options.client.payments.verify(order.trx_id);
    try {
      await fulfillment.handleVerified(tx, { merchantRef: order.id }); // 'ran', 'done', 'busy' (the webhook has it) or 'pending'
    } catch (error) {
      console.error(`order ${order.id}:`, error); // onPaid threw (e.g. the amount check): the customer sees "confirming"
    }
    const { status } = (await options.orders.find(order.id)) ?? order;
    const text = status === 'paid' ? 'is paid: thank you!' : tx.status === 'failed' ? 'was not paid.' : 'is being confirmed.';
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
  const app = createApp({ environment: client.environment, secret, client, orders });
  const origin = `http://localhost:${Number(process.env.PORT ?? 3000)}`;
  app.listen(Number(process.env.PORT ?? 3000), async () => {
    console.log(`POST ${origin}/webhooks/payments`);
    // A demo order to pay. The order id is the payment's reference and its idempotency key:
    // a double-clicked Pay button replays the first payment instead of making a second.
    const order = orders.add({ id: `order-${Date.now()}`, amount: 25, currency: 'USD', status: 'open' });
    const payment = await client.payments.create(
      {
        payment_amount: order.amount,
        currency_code: order.currency,
        ref_trx: order.id,
        ipn_url: `${origin}/webhooks/payments`,
        success_redirect: `${origin}/orders/${order.id}/return`,
        cancel_redirect: `${origin}/orders/${order.id}/return`,
      },
      { idempotencyKey: order.id },
    );
    order.trx_id = payment.trx_id;
    console.log(`pay order ${order.id} at ${payment.checkout_url}`);
  });
}
