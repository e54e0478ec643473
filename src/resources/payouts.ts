import * as z from 'zod';
import type { APIPromise } from '../core/api-promise.js';
import type { PagePromise } from '../core/pagination.js';
import { APIResource } from '../core/resource.js';
import { lenientRecord, mobileNumber, pageParams, positiveAmount, unwrapEnvelope } from '../internal/fields.js';
import type { RequestOptions } from '../internal/options.js';

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
    return this._client.request(
      { operation: 'payouts.preview', method: 'POST', path: '/api/v1/payouts/preview', params: [PayoutPreviewParams, params], response: PayoutPreview, retry: 'safe' },
      options,
    );
  }

  /**
   * Creates a payout (POST /api/v1/payouts). Retries reuse one Idempotency-Key; an
   * INPROGRESS or AMBIGUOUS outcome is returned (or thrown) as it is, never retried.
   */
  create(params: PayoutCreateParams, options?: RequestOptions): APIPromise<Payout> {
    return this._client.request(
      { operation: 'payouts.create', method: 'POST', path: '/api/v1/payouts', params: [PayoutCreateParams, params], response: Payout, retry: 'create', finalOutcome: isUnsettledOutcome },
      options,
    );
  }

  /** One page of payouts (GET /api/v1/payouts); `for await` walks every page. */
  list(params?: PayoutListParams, options?: RequestOptions): PagePromise<Payout> {
    return this._client.requestPage(
      { operation: 'payouts.list', method: 'GET', path: '/api/v1/payouts', params: PayoutListParams, value: params, item: PayoutItem },
      options,
    );
  }

  /** One payout by its UUID (GET /api/v1/payouts/{id}). */
  retrieve(id: string, options?: RequestOptions): APIPromise<Payout> {
    return this._client.request(
      { operation: 'payouts.retrieve', method: 'GET', path: '/api/v1/payouts/{id}', pathParams: { id: [PayoutId, id] }, response: Payout },
      options,
    );
  }
}

/** Upstream outcomes that must never be retried as a new payout. */
export const UNSETTLED_PAYOUT_OUTCOMES = ['INPROGRESS', 'AMBIGUOUS'] as const;

const UNSETTLED = /^(INPROGRESS|AMBIGUOUS)$/i;

// Wherever the outcome sits (`status`, `outcome`, `error`, `code`, at the top, in `data`,
// `payout` or any other wrapper a few levels down), and on any HTTP status. A plain-text
// body naming it counts too: a payout must never be sent again on a guess.
function isUnsettledOutcome(body: unknown, depth = 0): boolean {
  if (typeof body === 'string') return depth === 0 ? /\b(INPROGRESS|AMBIGUOUS)\b/i.test(body) : UNSETTLED.test(body.trim());
  if (typeof body !== 'object' || body === null || depth > 3) return false;
  return Object.values(body).some((value) => isUnsettledOutcome(value, depth + 1));
}

/** A payout id: a UUID. */
export const PayoutId = z.guid('must be a UUID, e.g. 123e4567-e89b-12d3-a456-426614174000');

/** Params of `payouts.preview`. */
export const PayoutPreviewParams = z.strictObject({ amount: positiveAmount });
/** Params of `payouts.preview`. */
export type PayoutPreviewParams = z.input<typeof PayoutPreviewParams>;

/** Fee preview of a payout. */
export const PayoutPreview = z.preprocess(
  unwrapEnvelope,
  z.looseObject({ amount: z.number(), fee: z.number(), payable_amount: z.number() }),
);
/** Fee preview of a payout. */
export type PayoutPreview = z.infer<typeof PayoutPreview>;

/** Params of `payouts.create`. `destination`, when given, must equal the approved settlement number. */
export const PayoutCreateParams = z.strictObject({ amount: positiveAmount, destination: mobileNumber.optional() });
/** Params of `payouts.create`. */
export type PayoutCreateParams = z.input<typeof PayoutCreateParams>;

/** Params of `payouts.list`. */
export const PayoutListParams = z.strictObject({ ...pageParams }).optional();
/** Params of `payouts.list`. */
export type PayoutListParams = z.input<typeof PayoutListParams>;

// Payout records are not shown in the spec: known fields typed when present, the rest kept.
const payoutShape = {
  id: z.string().optional(),
  amount: z.number().optional(),
  fee: z.number().optional(),
  status: z.string().optional(),
  destination: z.string().nullish(),
};

const PayoutItem = z.looseObject(payoutShape);

/** A payout record (lenient: fields not shown in the spec). `status` may be INPROGRESS or AMBIGUOUS. */
export const Payout = lenientRecord(payoutShape);
/** A payout record. */
export type Payout = z.infer<typeof Payout>;
