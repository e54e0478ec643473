// The fulfillment kit of the shop: the webhook routes and the return page report payments to
// it, and it runs onPaid once per order, whichever reports it first.
import { PaymentsClient, paidAmount } from 'business-payments';
import {
  createFulfillment,
  memoryStore,
  type Fulfillment,
  type FulfilledTransaction,
  type PaymentState,
} from 'business-payments/fulfillment';
import { findAttempt, findOrder, fulfilOrder, markOrderFailed, type Order } from './orders';

// Deliveries of the other environment are refused, and the client is of this one.
const environment = process.env.BUSINESS_PAYMENTS_ENVIRONMENT === 'production' ? 'production' : 'sandbox';

// Made on first use, not at module level: `next build` imports the routes while it collects
// page data, where BUSINESS_PAYMENTS_* are usually absent (the client would throw
// ConfigurationError and fail the build). One of each per process after that, kept on
// globalThis: Next.js bundles route handlers and pages separately, each with its own copy of
// this module, and the webhook route, the return page and the checkout action must share one
// memoryStore (it also counts each order's payment attempts).
const shared = globalThis as { shopClient?: PaymentsClient; shopFulfillment?: Fulfillment };

export const paymentsClient = (): PaymentsClient => (shared.shopClient ??= new PaymentsClient({ environment }));

/** The order a payment is for (`tx.order_ref`: its `ref_trx` without the `~a<n>` of its attempt), or a throw. */
function orderOf(tx: FulfilledTransaction): Order {
  const order = findOrder(tx.order_ref);
  if (!order) throw new Error(`payment ${tx.trx_id} is for an unknown order ${String(tx.order_ref)}`);
  return order;
}

export function fulfillment(): Fulfillment {
  return (shared.shopFulfillment ??= createFulfillment({
    environment,
    // The webhook signing secret; on the earlier generation (its IPN is signed with the API
    // secret, and it has no other) set this variable to the API secret.
    secret: process.env.BUSINESS_PAYMENTS_WEBHOOK_SECRET!, // unset or padded: createFulfillment throws ConfigurationError (each delivery a 500)
    client: paymentsClient(),
    // memoryStore(): this process only (it says so once under NODE_ENV=production). Every
    // instance of a deployed app must share one store:
    //   store: postgresStore(pool),   // from 'business-payments/fulfillment/postgres'
    //   store: redisStore(redis),     // from 'business-payments/fulfillment/redis'
    // With either, the webhook is answered as soon as the delivery is recorded and processed
    // right after (pass Next's `after` as waitUntil on Vercel); a cron route calling
    // fulfillment().drain() picks up what a crash left (docs/fulfillment.md).
    store: memoryStore(),
    // The order's price. The kit compares it with paidAmount(tx) (what the customer paid, on
    // either generation: the earlier one's verify answers the net in `amount`) and
    // tx.currency, before onPaid. A throw (an unknown order) leaves the payment unsettled: the
    // webhook gets a 500 (the service delivers again), the return page shows "confirming".
    expect: (tx) => {
      const order = orderOf(tx);
      return { amount: order.amount, currency: order.currency };
    },
    // Once per order, with a payment the service confirmed, at the order's price.
    onPaid: async (tx) => fulfilOrder(orderOf(tx), tx), // with postgresStore, write through ctx.db: it commits with the claim
    // A payment of another amount or currency never reaches onPaid. With a durable store leave
    // this out: the payment goes on the review list, fulfillment().inbox({ state: 'review' }).
    // memoryStore() has none, so here it stays unsettled: a 500, delivered again, and reconcile
    // reports it until someone looks.
    onMismatch: (tx, { expected }) => {
      throw new Error(
        `payment ${tx.trx_id} is ${paidAmount(tx)} ${tx.currency}, order ${tx.order_ref} is ${expected?.amount} ${expected?.currency}`,
      );
    },
    // A second attempt of an order already paid succeeded too (two tabs): refund it.
    onDuplicatePayment: (tx) => console.log(`order ${tx.order_ref} was paid already: refund payment ${tx.trx_id}`),
    // At most once per payment, never after onPaid. The order can be paid again: a new attempt.
    onFailed: async (tx) => {
      const order = findOrder(tx.order_ref);
      if (order) markOrderFailed(order, tx);
      else console.log(`payment ${tx.trx_id} failed; no order ${String(tx.order_ref)} here`);
    },
  }));
}

/**
 * The return page's check. The URL only names the order and the attempt (`?ref=`): the
 * `trx_id` comes from the shop's records of that attempt (kept when the payment was created),
 * the outcome from the kit (`payment`: `fulfillment.outcome`: its store, or one verify it
 * settles; it may be the first to know: the webhook can come later, or never; `error` when a
 * handler threw). A `ref` that is not one of this order's attempts is
 * `undefined` (a 404): a URL is anyone's to write.
 */
export async function confirmOrder(orderId: string, ref?: string) {
  const order = findOrder(orderId);
  if (!order) return undefined;
  const attempt = findAttempt(order, ref); // without a ref: the order's latest attempt
  if (ref !== undefined && !attempt) return undefined;
  // On the earlier generation the trx_id comes with the IPN only (initiate answers none, and
  // the return URL carries nothing): until it has come (onPaid / onFailed keep it with the
  // attempt), the payment is being confirmed. An IPN that could not be settled is left to
  // reconcile (docs/generations.md).
  if (!attempt?.trx_id) return { order, payment: undefined };
  let payment: PaymentState | 'error';
  try {
    // Asked of the kit, not the service: from its store once the webhook settled it, else one
    // verify, settled as the webhook would. merchantRef from the record too: it names the order.
    payment = await fulfillment().outcome(attempt.trx_id, { merchantRef: attempt.ref_trx }); // 'paid' | 'failed' | 'review' | 'pending'
  } catch (error) {
    console.error(`order ${order.id}:`, error); // a handler threw (the price check, an unknown order…): the customer sees "confirming"
    payment = 'error';
  }
  return { order, payment };
}
