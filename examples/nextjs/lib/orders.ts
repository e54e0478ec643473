// The shop's orders and payment attempts, in memory for the example: USE YOUR DATABASE.
//
// Memory is per process (and lost on every deploy): `next start` runs the server action, the
// return page and the node webhook route in one process, so they share it here; the edge
// route runs in an isolate of its own (it sees none of these orders), and a serverless
// deployment runs many instances.
import { paidAmount, type FulfilledTransaction } from 'business-payments/fulfillment';

export interface Order {
  /** Your order id: its payments' `tx.order_ref` (their `ref_trx` is `<id>~a<n>`). */
  id: string;
  item: string;
  amount: number;
  currency: string;
  /** `failed`: its last attempt failed (a new attempt can still pay it). */
  status: 'open' | 'paid' | 'failed';
  /** The payment that paid it (or failed last), once settled. */
  trx_id?: string | undefined;
}

/**
 * One attempt at paying an order: one payment, with a reference and an Idempotency-Key of its
 * own. A payment that failed, was cancelled or expired cannot be paid again, nor its reference
 * used again, so paying the order again is a new attempt.
 */
export interface PaymentAttempt {
  /** The payment's `ref_trx` (`<order>~a<n>`, from `fulfillment.newAttempt`). */
  ref_trx: string;
  order_id: string;
  /** The payment made for it: the create answer's `trx_id` (the earlier generation: its IPN's). */
  trx_id?: string | undefined;
}

/** What the shop sells (one thing). Prices live on the server, never in the form. */
export const ITEM = { item: 'One annual subscription', amount: 25, currency: 'USD' } as const;

// Next.js bundles route handlers and pages separately, each with its own copy of this module:
// the maps are kept on globalThis, so that the process has one of each.
const shared = globalThis as { shopOrders?: Map<string, Order>; shopAttempts?: Map<string, PaymentAttempt> };
const orders = (shared.shopOrders ??= new Map<string, Order>());
const attempts = (shared.shopAttempts ??= new Map<string, PaymentAttempt>());

export function createOrder(): Order {
  const order: Order = { id: `order-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`, ...ITEM, status: 'open' };
  orders.set(order.id, order);
  return order;
}

export function findOrder(id: string | undefined): Order | undefined {
  return id === undefined ? undefined : orders.get(id);
}

/** Keeps a new attempt at paying the order, before its payment is created (the return page looks it up). */
export function saveAttempt(order: Order, refTrx: string): PaymentAttempt {
  if (order.status === 'failed') order.status = 'open';
  const attempt: PaymentAttempt = { ref_trx: refTrx, order_id: order.id };
  attempts.set(refTrx, attempt);
  return attempt;
}

/**
 * Keeps the payment made for an attempt: the `trx_id` of its `ref_trx` (from the create
 * answer, or the IPN's on the earlier generation). An order paid under its own id before
 * attempts: `refTrx` is that id.
 */
export function savePayment(order: Order, trxId: string, refTrx: string = order.id): void {
  const attempt = attempts.get(refTrx) ?? { ref_trx: refTrx, order_id: order.id };
  if (attempt.order_id !== order.id) return; // another order's reference: never moved across
  attempts.set(refTrx, { ...attempt, trx_id: trxId });
}

/**
 * The attempt the return URL names, when it is one of this order's; without a name, the
 * order's latest. The return page takes the `trx_id` from here, never from its URL.
 */
export function findAttempt(order: Order, refTrx?: string): PaymentAttempt | undefined {
  if (refTrx !== undefined) {
    const attempt = attempts.get(refTrx);
    return attempt?.order_id === order.id ? attempt : undefined;
  }
  let latest: PaymentAttempt | undefined;
  for (const attempt of attempts.values()) if (attempt.order_id === order.id) latest = attempt;
  return latest;
}

/** Ships the order (here: a log line). Called from onPaid only, so once per order. */
export function fulfilOrder(order: Order, tx: FulfilledTransaction): void {
  order.status = 'paid';
  order.trx_id = tx.trx_id;
  savePayment(order, tx.trx_id, tx.merchant_ref); // the earlier generation: the IPN brought the trx_id
  console.log(`order ${order.id} fulfilled (${tx.trx_id}, ${paidAmount(tx)} ${tx.currency})`);
}

/** One attempt's payment failed: the order stays payable (a new attempt), and paid if another attempt paid it. */
export function markOrderFailed(order: Order, tx: FulfilledTransaction): void {
  savePayment(order, tx.trx_id, tx.merchant_ref);
  if (order.status !== 'paid') Object.assign(order, { status: 'failed', trx_id: tx.trx_id });
  console.log(`order ${order.id}: payment ${tx.trx_id} failed`);
}
