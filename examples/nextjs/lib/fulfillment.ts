// The fulfillment kit of the shop: the webhook routes and the return page report payments to
// it, and it runs onPaid once per payment, whichever reports it first.
import { PaymentsClient, paidAmount } from 'business-payments';
import { createFulfillment, memoryStore, type Fulfillment } from 'business-payments/fulfillment';
import { findOrder, fulfilOrder, markOrderFailed } from './orders';

// Deliveries of the other environment are refused, and the client is of this one.
const environment = process.env.BUSINESS_PAYMENTS_ENVIRONMENT === 'production' ? 'production' : 'sandbox';

// Made on first use, not at module level: `next build` imports the routes while it collects
// page data, where BUSINESS_PAYMENTS_* are usually absent (the client would throw
// ConfigurationError and fail the build). One of each per process after that, kept on
// globalThis: Next.js bundles route handlers and pages separately, each with its own copy of
// this module, and the webhook route and the return page must share one memoryStore.
const shared = globalThis as { shopClient?: PaymentsClient; shopFulfillment?: Fulfillment };

export const paymentsClient = (): PaymentsClient => (shared.shopClient ??= new PaymentsClient({ environment }));

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
    store: memoryStore(),
    // Once per payment, with the transaction the service confirmed. A throw leaves it
    // unsettled: the webhook gets a 500 (the service delivers again), the return page shows
    // "confirming", and reconcile reports it until someone looks.
    onPaid: async (tx) => {
      const order = findOrder(tx.merchant_ref);
      if (!order) throw new Error(`payment ${tx.trx_id} is for an unknown order ${String(tx.merchant_ref)}`);
      // The service says it is paid; you check it is the payment this order asked for.
      // paidAmount(tx): what the customer paid on either generation (the earlier one's
      // verify answers the net in `amount`, the payment less the merchant's fee).
      if (paidAmount(tx) !== order.amount || tx.currency !== order.currency) {
        throw new Error(`payment ${tx.trx_id} is ${paidAmount(tx)} ${tx.currency}, order ${order.id} is ${order.amount} ${order.currency}`);
      }
      fulfilOrder(order, tx); // with postgresStore, write through ctx.db: it commits with the claim
    },
    // At most once, never after onPaid.
    onFailed: async (tx) => {
      const order = findOrder(tx.merchant_ref);
      if (order) markOrderFailed(order, tx);
      else console.log(`payment ${tx.trx_id} failed; no order ${String(tx.merchant_ref)} here`);
    },
  }));
}

/**
 * The return page's check: asks the service about the order's payment and reports the outcome
 * to the kit (it may be the first to know: the webhook can come later, or never). Never
 * fulfil because the customer reached a URL: anyone can open it.
 */
export async function confirmOrder(orderId: string) {
  const order = findOrder(orderId);
  if (!order) return undefined;
  // On the earlier generation the trx_id comes with the IPN only (initiate answers none, and
  // the return URL carries nothing): until it has come, the payment is being confirmed.
  if (!order.trx_id) return { order, payment: undefined, result: 'unknown' };
  const tx = await paymentsClient().payments.verify(order.trx_id);
  let result: string;
  try {
    result = await fulfillment().handleVerified(tx, { merchantRef: order.id }); // 'ran' | 'done' | 'busy' | 'pending'
  } catch (error) {
    console.error(`order ${order.id}:`, error); // onPaid threw (the amount check…): the customer sees "confirming"
    result = 'error';
  }
  return { order, payment: tx.status, result };
}
