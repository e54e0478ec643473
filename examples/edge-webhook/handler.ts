// Fetch-style webhook handler over the fulfillment kit: a Cloudflare Worker
// (`export default { fetch }`), also deployable as a Vercel function with the same export.
//
// Only web APIs: the verifier uses WebCrypto where node:crypto is not available (and imports
// the CryptoKey once per secret per isolate), the client uses fetch. The body is read from the
// Request as is: nothing here parses it before verification. The kit checks the signature and
// timestamp headers before it reads the body (401 without them, or stale), and reads at most
// maxBodyBytes (1 MiB by default) of its stream: a longer body is 413, the stream cancelled.
//
// Cloudflare: the credentials and the secret are bindings (`wrangler secret put
// BUSINESS_PAYMENTS_WEBHOOK_SECRET`, and the same for _MERCHANT_KEY, _API_KEY, _API_SECRET;
// _BASE_URL and _ENVIRONMENT in wrangler.toml [vars]), and ctx.waitUntil keeps the isolate
// alive until the kit has recorded the outcome (with a shared store, whose inbox answers 200
// as soon as the delivery is recorded: until it is processed). Vercel: there is no env or ctx
// argument; the variables come from process.env and the work is awaited before answering.
//
// Store: isolates come and go, and many run at once, each with its own memory: memoryStore()
// only sees the deliveries its own isolate got. Give the kit a store every isolate reaches
// (postgresStore over Neon's serverless driver, or your own FulfillmentStore on D1 or a
// Durable Object: see docs/fulfillment.md).
import { PaymentsClient } from 'business-payments';
import {
  createFulfillment,
  memoryStore,
  paidAmount,
  type FulfilledTransaction,
  type FulfillmentStore,
} from 'business-payments/fulfillment';

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

/** The part of Cloudflare's ExecutionContext used here. */
export interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
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

/** What the handler needs of your orders table (D1, Postgres over HTTP…). */
export interface Orders {
  find(id: string): Promise<Order | undefined>;
  /** Marks the order paid and ships it. With postgresStore, write through `db` (the claim's transaction). */
  fulfil(order: Order, tx: FulfilledTransaction, db: unknown): Promise<void>;
  markFailed(order: Order, tx: FulfilledTransaction, db: unknown): Promise<void>;
}

export interface WorkerOptions {
  orders: Orders;
  /** Default memoryStore(): this isolate only (see the top of the file). */
  store?: FulfillmentStore | undefined;
  /** Default: one built from the BUSINESS_PAYMENTS_* bindings (or process.env) on the first request. */
  client?: PaymentsClient | undefined;
}

export function createWorker({ orders, store = memoryStore(), client }: WorkerOptions) {
  return {
    async fetch(request: Request, env?: Env, ctx?: ExecutionContext): Promise<Response> {
      if (request.method !== 'POST') return new Response(null, { status: 405, headers: { allow: 'POST' } });
      const vars = variables(env);
      client ??= clientFrom(vars);
      // A kit per request (it is a few closures) for this request's waitUntil; the store and
      // the client are the isolate's.
      const fulfillment = createFulfillment({
        environment: client.environment, // deliveries of the other environment are refused
        secret: secrets(vars),
        client,
        store,
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
        waitUntil: ctx ? (promise) => ctx.waitUntil(promise) : undefined,
      });
      // 200 done, 401 unsigned or bad signature, 409 in flight elsewhere, 413 over 1 MiB, 500 a
      // handler threw (delivered again). A secret unset or padded makes createFulfillment above
      // throw ConfigurationError: a 500, the service retries.
      return fulfillment.handleWebhook(request);
    },
  };
}

/** The order a payment is for, or a throw (the delivery gets a 500 and comes again). */
async function orderOf(orders: Orders, tx: FulfilledTransaction): Promise<Order> {
  const order = tx.order_ref === undefined ? undefined : await orders.find(tx.order_ref);
  if (!order) throw new Error(`payment ${tx.trx_id} is for an unknown order ${String(tx.order_ref)}`);
  return order;
}

// Your orders table: connect it here. This stand-in knows no order, so every paid delivery is
// answered 500 ("unknown order") until you do; the tests pass their own.
const orders: Orders = {
  find: async () => undefined,
  fulfil: async () => {},
  markFailed: async () => {},
};

export default createWorker({ orders });

// Workers bindings when there are any, else process.env (Vercel, Node).
function variables(env: Env | undefined): Env {
  return env?.BUSINESS_PAYMENTS_WEBHOOK_SECRET !== undefined ? env : ((globalThis.process?.env as Env | undefined) ?? env ?? {});
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
