// The gross amount a customer paid, read from a verified transaction of either generation of
// the service. Pure (its one import is the amounts' own digit count): the fulfillment entry (no
// ky, no zod) exports it too.
import { decimals } from './money.js';

/** What {@link paidAmount} reads of a verified transaction. */
export interface PaidAmountInput {
  /** Verify's `amount`: the gross on the current generation, the net on the earlier one. */
  amount?: number | null | undefined;
  /** The service's fee, when it says. */
  fee?: number | null | undefined;
  /** The amount less the fee, when it says. */
  net_amount?: number | null | undefined;
}

/**
 * The gross amount the customer paid, on both generations of the service: the earlier
 * generation's verify reports the **net** amount as `amount` (equal to `net_amount`, after
 * the merchant's fee), the current one the gross. So: `amount + fee` when `amount` equals
 * `net_amount` and `fee` is more than 0, else `amount`. Compare this, not `amount`, with your
 * order's price. `undefined` when the transaction has no amount (a pending or failed answer of
 * the earlier generation carries none).
 *
 * @example
 * ```ts
 * const tx = await client.payments.verify(trxId);
 * if (tx.status === 'success' && paidAmount(tx) === order.total && tx.currency === order.currency) ship(order);
 * ```
 */
export function paidAmount(tx: PaidAmountInput & { amount: number }): number;
export function paidAmount(tx: PaidAmountInput): number | undefined;
export function paidAmount(tx: PaidAmountInput): number | undefined {
  const { amount, fee, net_amount: net } = tx ?? {};
  // Number.isFinite is false for anything but a finite number.
  if (!Number.isFinite(amount)) return undefined;
  if (amount !== net || !Number.isFinite(fee) || !(fee! > 0)) return amount!;
  // 97.5 + 2.45 is 99.94999… in binary: round to the decimals the two amounts were written with.
  return Number((amount! + fee!).toFixed(Math.min(8, Math.max(decimals(amount!), decimals(fee!)))));
}
