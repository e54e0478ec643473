// The params and results of the invoice routes: types and schemas.
import * as z from 'zod/mini';
import {
  matching,
  optional,
  pageParams,
  provisional,
  readRecord,
  type Assert,
  type RecordTimes,
  type Schema,
  type TiesInput,
} from '../../internal/fields.js';

/** Params of `billing.invoices.list`. */
export interface InvoiceListParams {
  /** Only invoices of this subscription (`sub_…`). */
  subscription?: string | undefined;
  /** Page size, 1–100. */
  limit?: number | undefined;
  /** Items to skip. */
  offset?: number | undefined;
}

const listSchema = z.strictObject({
  subscription: optional(matching(/^sub_[A-Za-z0-9_-]+$/, 'must be a subscription id starting with sub_')),
  ...pageParams,
});
type _InvoiceListParams = Assert<TiesInput<typeof listSchema, InvoiceListParams>>;
/** Params of `billing.invoices.list`. */
export const InvoiceListParams: Schema<InvoiceListParams | undefined> = optional(listSchema);

/** Invoice state: `open` (awaiting a charge), `paid`, or `uncollectible` (dunning exhausted). */
export type InvoiceStatus = 'open' | 'paid' | 'uncollectible';

/**
 * An invoice. **Provisional**: the spec shows no body; this is the sandbox's shape. Every
 * field a server sends is kept, `id` and `subscription` are filled from `invoice_id` and
 * `subscription_id` when the server names them so, and decimal strings are read as numbers.
 */
export interface Invoice extends RecordTimes {
  /** Invoice id, `inv_…`. */
  id: string;
  /** The subscription billed (`sub_…`). */
  subscription: string;
  /** `open`, `paid` or `uncollectible`. */
  status: InvoiceStatus;
  /** Amount in currency units. */
  amount: number;
  /** 3-letter currency code. */
  currency: string;
  /** The plan billed. */
  plan_code?: string | undefined;
  /** Fee in currency units (once paid). */
  fee?: number | undefined;
  /** Amount less the fee (once paid). */
  net_amount?: number | undefined;
  /** Charges tried so far. */
  attempt_count?: number | undefined;
  /** When the next charge is tried (ISO 8601), if any. */
  next_attempt_at?: string | null | undefined;
  /** Why the last charge failed, if it did. */
  failure_reason?: string | null | undefined;
  /** Start of the billed period (ISO 8601). */
  period_start?: string | undefined;
  /** End of the billed period (ISO 8601). */
  period_end?: string | undefined;
  /** When it was paid (ISO 8601), if it was. */
  paid_at?: string | null | undefined;
  /** Fields this SDK version does not name, as the server sent them. */
  [field: string]: unknown;
}

/** An invoice (provisional, see {@link Invoice}). */
export const Invoice: Schema<Invoice> = provisional((value) =>
  readRecord<Invoice>(value, {
    ids: { id: ['invoice_id'], subscription: ['subscription_id'] },
    numbers: ['amount', 'fee', 'net_amount', 'attempt_count'],
  }),
);
