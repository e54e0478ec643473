// The shop's orders table, in memory for the example: USE YOUR DATABASE.
//
// Memory is per process (and lost on every deploy): `next start` runs the server action, the
// return page and the node webhook route in one process, so they share it here; the edge
// route runs in an isolate of its own (it sees none of these orders), and a serverless
// deployment runs many instances.
import { paidAmount, type FulfilledTransaction } from 'business-payments/fulfillment';

export interface Order {
  /** Your reference: the payment's `ref_trx`, `merchant_ref` in its events. */
  id: string;
  item: string;
  amount: number;
  currency: string;
  status: 'open' | 'paid' | 'failed';
  /** The payment made for it (on the earlier generation, known once its IPN came). */
  trx_id?: string | undefined;
}

/** What the shop sells (one thing). Prices live on the server, never in the form. */
export const ITEM = { item: 'One annual subscription', amount: 25, currency: 'USD' } as const;

// Next.js bundles route handlers and pages separately, each with its own copy of this module:
// the map is kept on globalThis, so that the process has one.
const shared = globalThis as { shopOrders?: Map<string, Order> };
const orders = (shared.shopOrders ??= new Map<string, Order>());

export function createOrder(): Order {
  const order: Order = { id: `order-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`, ...ITEM, status: 'open' };
  orders.set(order.id, order);
  return order;
}

export function findOrder(id: string | undefined): Order | undefined {
  return id === undefined ? undefined : orders.get(id);
}

export function savePayment(order: Order, trxId: string): void {
  order.trx_id = trxId;
}

/** Ships the order (here: a log line). Called from onPaid only, so once per order. */
export function fulfilOrder(order: Order, tx: FulfilledTransaction): void {
  order.status = 'paid';
  order.trx_id = tx.trx_id;
  console.log(`order ${order.id} fulfilled (${tx.trx_id}, ${paidAmount(tx)} ${tx.currency})`);
}

export function markOrderFailed(order: Order, tx: FulfilledTransaction): void {
  order.status = 'failed';
  order.trx_id = tx.trx_id;
  console.log(`order ${order.id}: payment ${tx.trx_id} failed`);
}
