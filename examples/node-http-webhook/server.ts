// Webhook endpoint on plain node:http, no framework, over the fulfillment kit: each paid
// order is fulfilled exactly once, however often its webhook is delivered.
//
// Raw body: the signature covers the body byte for byte, so hand the kit the request itself,
// its body unread (`fulfillment.handleWebhook(req)`): it reads the bytes as they came. Do not
// read it first (decoding each chunk to a string on its own mangles a UTF-8 character split
// across two chunks; JSON.parse loses the bytes).
//
// Bounded: the kit checks the signature and timestamp headers before it reads a byte of the
// body (401 without them, or stale: a flood of unsigned posts costs no memory), and reads at
// most maxBodyBytes (1 MiB by default): a longer body is 413, not read further. Send the
// kit's answer as it is: Node stops reading that connection, writes the answer, and closes the
// connection once it is idle (do not destroy the socket or close the connection under the
// upload: the client could see a reset instead of the answer).
//
// Attempts: each payment made for an order has a ref_trx and an Idempotency-Key of its own
// (`order-…~a1`, `~a2`…, from fulfillment.newAttempt): a failed, cancelled or expired payment
// cannot be paid again, nor its reference reused (409 DUPLICATE_REFERENCE), so paying the
// order again is a new attempt. The kit pays an order once across its attempts; handlers find
// the order by `tx.order_ref`.
//
// Run it against the local sandbox: npm run build; start `npx business-payments sandbox` and
// paste its export lines; then `node examples/node-http-webhook/server.ts`. It creates a demo
// order, prints its checkout link, and fulfils the order once you pay.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { PaymentsClient } from 'business-payments';
import {
  createFulfillment,
  memoryStore,
  paidAmount,
  type Fulfillment,
  type FulfilledTransaction,
  type FulfillmentStore,
} from 'business-payments/fulfillment';

/** An order as your database holds it (`id` is its payments' `tx.order_ref`; their `ref_trx` is `<id>~a<n>`). */
export interface Order {
  id: string;
  amount: number;
  currency: string;
  status: 'open' | 'paid' | 'failed';
}

/** What the handlers need of your orders table. */
export interface Orders {
  find(id: string): Promise<Order | undefined>;
  /** Marks the order paid and ships it. With postgresStore, write through `db` (the claim's transaction). */
  fulfil(order: Order, tx: FulfilledTransaction, db: unknown): Promise<void>;
  markFailed(order: Order, tx: FulfilledTransaction, db: unknown): Promise<void>;
}

export interface WebhookHandlerOptions {
  /** Deliveries of the other environment are refused; the client must be of this one. */
  environment: 'sandbox' | 'production';
  /** The webhook signing secret; `[newSecret, oldSecret]` while rotating. */
  secret: string | readonly string[];
  /** The PaymentsClient of that environment: it confirms every outcome before a handler runs. */
  client: PaymentsClient;
  orders: Orders;
  /** Default memoryStore(): claims in this process only. */
  store?: FulfillmentStore | undefined;
  /** The kit, when you made it yourself (createShopFulfillment) to start payments with it too. Default: one made from these options. */
  fulfillment?: Fulfillment | undefined;
}

const PATH = '/webhooks/payments';

export function createShopFulfillment({ environment, secret, client, orders, store }: WebhookHandlerOptions): Fulfillment {
  return createFulfillment({
    environment,
    secret,
    client,
    // One process only. Several processes share their claims through your database:
    //   store: postgresStore(pool),   // from 'business-payments/fulfillment/postgres'
    //   store: redisStore(redis),     // from 'business-payments/fulfillment/redis'
    store: store ?? memoryStore(),
    // The order's price, compared with paidAmount(tx) and tx.currency before onPaid. A throw
    // (an unknown order, a database that is down): 500, delivered again.
    expect: async (tx) => {
      const order = await orderOf(orders, tx);
      return { amount: order.amount, currency: order.currency };
    },
    // Once per order, with a payment the service confirmed at the order's price.
    onPaid: async (tx, { db }) => orders.fulfil(await orderOf(orders, tx), tx, db),
    // Another amount or currency: never onPaid. A durable store puts it on the review list
    // (leave this out there); memoryStore() has none, so it stays unsettled: 500, delivered again.
    onMismatch: (tx, { expected }) => {
      throw new Error(
        `payment ${tx.trx_id} is ${paidAmount(tx)} ${tx.currency}, order ${tx.order_ref} is ${expected?.amount} ${expected?.currency}`,
      );
    },
    // A second attempt of an order already paid succeeded too: refund it.
    onDuplicatePayment: (tx) => console.log(`order ${tx.order_ref} was paid already: refund payment ${tx.trx_id}`),
    onFailed: async (tx, { db }) => {
      const order = tx.order_ref === undefined ? undefined : await orders.find(tx.order_ref);
      if (order) await orders.markFailed(order, tx, db);
    },
  });
}

/** The order a payment is for, or a throw (the delivery gets a 500 and comes again). */
async function orderOf(orders: Orders, tx: FulfilledTransaction): Promise<Order> {
  const order = tx.order_ref === undefined ? undefined : await orders.find(tx.order_ref);
  if (!order) throw new Error(`payment ${tx.trx_id} is for an unknown order ${String(tx.order_ref)}`);
  return order;
}

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(body);
}

export function createWebhookHandler(options: WebhookHandlerOptions) {
  const fulfillment = options.fulfillment ?? createShopFulfillment(options);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== PATH) return send(res, 404, '{"error":"not_found"}');
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return send(res, 405, '{"error":"method_not_allowed"}');
    }
    // 200 done, 401 unsigned or bad signature, 409 in flight elsewhere, 413 over 1 MiB, 500 a
    // handler threw (delivered again).
    const { status, body } = await fulfillment.handleWebhook(req);
    send(res, status, body);
  }

  return (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((error: unknown) => {
      // Anything the kit throws instead of answering: a 500, the service retries. (A missing or
      // padded secret never gets here: createFulfillment refuses it when the handler is made.)
      console.error('webhook handler failed:', error);
      if (!res.headersSent) send(res, 500, '{"error":"internal_error"}');
      else res.end();
    });
  };
}

export function createWebhookServer(options: WebhookHandlerOptions): Server {
  return createServer(createWebhookHandler(options));
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
  const server = createWebhookServer({ ...options, fulfillment });
  const port = Number(process.env.PORT ?? 3000);
  server.listen(port, async () => {
    console.log(`POST http://localhost:${port}${PATH}`);
    // A demo order and a first attempt at paying it: a reference and a key of its own.
    const order = orders.add({ id: `order-${Date.now()}`, amount: 25, currency: 'USD', status: 'open' });
    const attempt = await fulfillment.newAttempt(order.id); // { ref_trx: 'order-…~a1', idempotencyKey, attempt: 1 }
    const payment = await client.payments.create(
      { payment_amount: order.amount, currency_code: order.currency, ref_trx: attempt.ref_trx, ipn_url: `http://localhost:${port}${PATH}` },
      { idempotencyKey: attempt.idempotencyKey },
    );
    console.log(`pay order ${order.id} (attempt ${attempt.ref_trx}) at ${payment.checkout_url}`);
  });
}
