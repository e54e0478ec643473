import * as z from 'zod/mini';
import type { PagePromise } from '../../core/pagination.js';
import { APIResource } from '../../core/resource.js';
import {
  maybe,
  open,
  openEnum,
  optional,
  pageParams,
  recordTimes,
  type Assert,
  type RecordTimes,
  type Schema,
  type Ties,
  type TiesInput,
} from '../../internal/fields.js';
import type { RequestOptions } from '../../internal/options.js';

/** Billing invoices. */
export class Invoices extends APIResource {
  /** One page of invoices, optionally of one subscription (GET /api/v1/billing/invoices). */
  list(params?: InvoiceListParams, options?: RequestOptions): PagePromise<Invoice> {
    return this._client.requestPage(
      {
        operation: 'billing.invoices.list',
        method: 'GET',
        path: '/api/v1/billing/invoices',
        params: InvoiceListParams,
        value: params,
        item: Invoice,
      },
      options,
    );
  }
}

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
  subscription: optional(z.string().check(z.regex(/^sub_[A-Za-z0-9_-]+$/, 'must be a subscription id starting with sub_'))),
  ...pageParams,
});
type _InvoiceListParams = Assert<TiesInput<typeof listSchema, InvoiceListParams>>;
/** Params of `billing.invoices.list`. */
export const InvoiceListParams: Schema<InvoiceListParams | undefined> = optional(listSchema);

/** Invoice state: `open` (awaiting a charge), `paid`, or `uncollectible` (dunning exhausted). */
export type InvoiceStatus = 'open' | 'paid' | 'uncollectible';

/** An invoice (the sandbox's shape; the spec shows none). */
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
}

const invoiceSchema = open({
  id: z.string(),
  subscription: z.string(),
  status: openEnum(['open', 'paid', 'uncollectible']),
  amount: z.number(),
  currency: z.string(),
  plan_code: optional(z.string()),
  fee: optional(z.number()),
  net_amount: optional(z.number()),
  attempt_count: optional(z.number()),
  next_attempt_at: maybe(z.string()),
  failure_reason: maybe(z.string()),
  period_start: optional(z.string()),
  period_end: optional(z.string()),
  paid_at: maybe(z.string()),
  ...recordTimes,
});
type _Invoice = Assert<Ties<typeof invoiceSchema, Invoice>>;
/** An invoice. */
export const Invoice: Schema<Invoice> = invoiceSchema;
