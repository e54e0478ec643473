// The earlier generation's payment row: what earlier-payments.ts keeps and earlier-ipn.ts
// and console.ts read (a file of its own, so neither handler file imports the other's types).
import type { PaymentRow } from './payments.js';

/** A payment of the earlier generation, as the service keeps it (a `state.payments` value). */
export interface EarlierPaymentRow extends PaymentRow {
  generation: 'earlier';
  /** `payment_amount` exactly as sent: a number, or a string. */
  sent_amount: number | string;
  /** What initiate-payment's `info` echoed, without `merchant_id`: the IPN's `data` before `trx_id`. */
  echo: Record<string, unknown>;
}
