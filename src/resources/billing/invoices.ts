import * as z from 'zod';
import type { PagePromise } from '../../core/pagination.js';
import { APIResource } from '../../core/resource.js';
import { pageParams } from '../../internal/fields.js';
import type { RequestOptions } from '../../internal/options.js';

/** Billing invoices. */
export class Invoices extends APIResource {
  /** One page of invoices, optionally of one subscription (GET /api/v1/billing/invoices). */
  list(params?: InvoiceListParams, options?: RequestOptions): PagePromise<Invoice> {
    return this._client.requestPage(
      { operation: 'billing.invoices.list', method: 'GET', path: '/api/v1/billing/invoices', params: InvoiceListParams, value: params, item: Invoice },
      options,
    );
  }
}

/** Params of `billing.invoices.list`. */
export const InvoiceListParams = z
  .strictObject({
    subscription: z.string().regex(/^sub_[A-Za-z0-9_-]+$/, 'must be a subscription id starting with sub_').optional(),
    ...pageParams,
  })
  .optional();
/** Params of `billing.invoices.list`. */
export type InvoiceListParams = z.input<typeof InvoiceListParams>;

/** An invoice (lenient: fields not shown in the spec). */
export const Invoice = z.looseObject({ id: z.string().optional(), subscription: z.string().nullish(), status: z.string().optional() });
/** An invoice. */
export type Invoice = z.infer<typeof Invoice>;
