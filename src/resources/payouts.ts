import type { APIPromise } from '../core/api-promise.js';
import type { PagePromise } from '../core/pagination.js';
import type { RequestOptions } from '../internal/options.js';
import type { Payout, PayoutCreateParams, PayoutListParams, PayoutPreview, PayoutPreviewParams } from '../schemas/payouts.js';
import { APIResource } from './resource.js';

/**
 * Payouts of settled balance to the business's approved settlement mobile number.
 * Gates (KYB approved, business approved, settlement number on file) fail with label
 * `Payout Rejected`.
 *
 * @example
 * ```ts
 * const preview = await client.payouts.preview({ amount: 100 });
 * const payout = await client.payouts.create({ amount: 100 });
 * if (payout.status === 'AMBIGUOUS') reconcileLater(payout);
 * ```
 */
export class Payouts extends APIResource {
  /** Fee preview (POST /api/v1/payouts/preview): amount, fee, payable_amount. */
  preview(params: PayoutPreviewParams, options?: RequestOptions): APIPromise<PayoutPreview> {
    return this._client.post('payouts.preview', params, options);
  }

  /**
   * Creates a payout (POST /api/v1/payouts). Money moving out is never sent twice on a
   * guess: it is retried only when the request provably never left (connection refused)
   * or on 429, always with the same Idempotency-Key. Any other failure is thrown with
   * `.idempotencyKey`, and its message says how to look the payout up. An INPROGRESS or
   * AMBIGUOUS outcome, in whatever field or spelling the server puts it, is returned as
   * `status` (or thrown, on an error status) as it is.
   */
  create(params: PayoutCreateParams, options?: RequestOptions): APIPromise<Payout> {
    return this._client.post('payouts.create', params, options);
  }

  /** One page of payouts (GET /api/v1/payouts); `for await` walks every page. */
  list(params?: PayoutListParams, options?: RequestOptions): PagePromise<Payout> {
    return this._client.getPage('payouts.list', params, options);
  }

  /** One payout by its UUID (GET /api/v1/payouts/{id}). */
  retrieve(id: string, options?: RequestOptions): APIPromise<Payout> {
    return this._client.get('payouts.retrieve', id, options);
  }
}

export * from '../schemas/payouts.js';
