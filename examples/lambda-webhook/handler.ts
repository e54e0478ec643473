// AWS Lambda webhook handler (API Gateway HTTP API, or a Lambda function URL) over the
// fulfillment kit: each paid order is fulfilled exactly once.
//
// Raw body: API Gateway hands the body over as a string, base64-encoded when
// `isBase64Encoded` is true (binary media types, function URLs): decode it to the exact bytes
// that were signed before handing it to the kit. Never JSON.parse it first. Header names
// arrive lower-cased, which the verifier accepts.
//
// Bounded: the event holds the whole body already (Lambda takes at most 6 MB); the kit checks
// the signature and timestamp headers first (401 without them, or stale), then refuses a body
// over maxBodyBytes (1 MiB by default) with 413, unverified.
//
// Store: Lambda runs many instances at once, each with its own memory, so the default
// memoryStore() sees only the deliveries its own instance got. Deploy with a shared one:
//   store: postgresStore(pool),   // from 'business-payments/fulfillment/postgres' (RDS, Aurora, Neon)
//   store: redisStore(redis),     // from 'business-payments/fulfillment/redis' (ElastiCache)
// With a shared store the kit's inbox is on: a delivery is answered 200 once it is recorded,
// and processed after. Lambda freezes the function once it has answered, so schedule
// fulfillment.drain() (EventBridge, every minute) to process what is left, or pass inbox: false.
import { PaymentsClient } from 'business-payments';
import {
  createFulfillment,
  memoryStore,
  paidAmount,
  type FulfilledTransaction,
  type FulfillmentStore,
} from 'business-payments/fulfillment';

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

/**
 * An order as your database holds it. Its payments' `ref_trx` are attempt references
 * (`<id>~a<n>`, from `fulfillment.newAttempt` where your app creates them: one per payment,
 * as a failed or expired payment's reference cannot be used again); `tx.order_ref` is `id`.
 */
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

/** The order a payment is for, or a throw (the delivery gets a 500 and comes again). */
async function orderOf(orders: Orders, tx: FulfilledTransaction): Promise<Order> {
  const order = tx.order_ref === undefined ? undefined : await orders.find(tx.order_ref);
  if (!order) throw new Error(`payment ${tx.trx_id} is for an unknown order ${String(tx.order_ref)}`);
  return order;
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
