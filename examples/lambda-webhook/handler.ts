// AWS Lambda webhook handler (API Gateway HTTP API, or a Lambda function URL) over the
// fulfillment kit: each paid order is fulfilled exactly once.
//
// Raw body: API Gateway hands the body over as a string, base64-encoded when
// `isBase64Encoded` is true (binary media types, function URLs): decode it to the exact bytes
// that were signed before handing it to the kit. Never JSON.parse it first. Header names
// arrive lower-cased, which the verifier accepts.
//
// Store: Lambda runs many instances at once, each with its own memory, so the default
// memoryStore() sees only the deliveries its own instance got. Deploy with a shared one:
//   store: postgresStore(pool),   // from 'business-payments/fulfillment/postgres' (RDS, Aurora, Neon)
//   store: redisStore(redis),     // from 'business-payments/fulfillment/redis' (ElastiCache)
import { PaymentsClient } from 'business-payments';
import { createFulfillment, memoryStore, type FulfilledTransaction, type FulfillmentStore } from 'business-payments/fulfillment';

/** The parts of an API Gateway v2 / function URL event used here. */
export interface LambdaHttpEvent {
  body?: string | null;
  isBase64Encoded?: boolean;
  headers: Record<string, string | undefined>;
}

/** What API Gateway expects back. */
export interface LambdaHttpResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** An order as your database holds it (`id` is the payment's `ref_trx`). */
export interface Order {
  id: string;
  amount: number;
  currency: string;
  status: 'open' | 'paid' | 'failed';
}

/** What the handler needs of your orders table (DynamoDB, RDS…). */
export interface Orders {
  find(id: string): Promise<Order | undefined>;
  /** Marks the order paid and ships it. With postgresStore, write through `db` (the claim's transaction). */
  fulfil(order: Order, tx: FulfilledTransaction, db: unknown): Promise<void>;
  markFailed(order: Order, tx: FulfilledTransaction, db: unknown): Promise<void>;
}

export interface HandlerOptions {
  /** Deliveries of the other environment are refused; the client must be of this one. */
  environment: 'sandbox' | 'production';
  /** The webhook signing secret; `[newSecret, oldSecret]` while rotating. */
  secret: string | readonly string[];
  /** The PaymentsClient of that environment: it confirms every outcome before a handler runs. */
  client: PaymentsClient;
  orders: Orders;
  store?: FulfillmentStore | undefined;
}

export function createHandler({ environment, secret, client, orders, store }: HandlerOptions) {
  const fulfillment = createFulfillment({
    environment,
    secret,
    client,
    store: store ?? memoryStore(), // one instance only: see the top of the file
    // Once per payment, with the transaction the service confirmed. A throw: 500, delivered again.
    onPaid: async (tx, { db }) => {
      const order = tx.merchant_ref === undefined ? undefined : await orders.find(tx.merchant_ref);
      if (!order) throw new Error(`payment ${tx.trx_id} is for an unknown order ${String(tx.merchant_ref)}`);
      if (tx.amount !== order.amount || tx.currency !== order.currency) {
        throw new Error(`payment ${tx.trx_id} is ${tx.amount} ${tx.currency}, order ${order.id} is ${order.amount} ${order.currency}`);
      }
      await orders.fulfil(order, tx, db);
    },
    onFailed: async (tx, { db }) => {
      const order = tx.merchant_ref === undefined ? undefined : await orders.find(tx.merchant_ref);
      if (order) await orders.markFailed(order, tx, db);
    },
  });

  return async (event: LambdaHttpEvent): Promise<LambdaHttpResult> => {
    const raw = event.body ?? '';
    const payload = event.isBase64Encoded ? Buffer.from(raw, 'base64') : raw;
    // 200 done, 401 bad signature, 409 in flight elsewhere, 500 a handler threw (delivered
    // again). A secret unset or padded is refused by createFulfillment above, when the handler
    // is made (the deployed one: at an instance's first invocation, a 500 the service retries).
    const { status, body } = await fulfillment.handleWebhook({ payload, headers: event.headers });
    return { statusCode: status, headers: { 'content-type': 'application/json' }, body };
  };
}

// Your orders table: connect it here (DynamoDB, RDS…). This stand-in knows no order, so every
// paid delivery is answered 500 ("unknown order") until you do; the tests pass their own.
const orders: Orders = {
  find: async () => undefined,
  fulfil: async () => {},
  markFailed: async () => {},
};

let deployed: ReturnType<typeof createHandler> | undefined;

/** The function's handler: the kit is made on the first invocation of each instance, from its environment. */
export const handler = (event: LambdaHttpEvent): Promise<LambdaHttpResult> => {
  deployed ??= (() => {
    const client = new PaymentsClient(); // BUSINESS_PAYMENTS_* of this function
    return createHandler({ environment: client.environment, secret: process.env.BUSINESS_PAYMENTS_WEBHOOK_SECRET!, client, orders });
  })();
  return deployed(event);
};
