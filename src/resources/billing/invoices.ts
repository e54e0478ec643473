import type { PagePromise } from '../../core/pagination.js';
import type { RequestOptions } from '../../internal/options.js';
import type { Invoice, InvoiceListParams } from '../../schemas/billing/invoices.js';
import { APIResource } from '../resource.js';

/** Billing invoices. */
export class Invoices extends APIResource {
  /** One page of invoices, optionally of one subscription (GET /api/v1/billing/invoices). */
  list(params?: InvoiceListParams, options?: RequestOptions): PagePromise<Invoice> {
    return this._client.getPage('billing.invoices.list', params, options);
  }
}

export * from '../../schemas/billing/invoices.js';
