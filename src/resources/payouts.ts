import * as z from 'zod/mini';
import type { APIPromise } from '../core/api-promise.js';
import type { PagePromise } from '../core/pagination.js';
import { APIResource } from '../core/resource.js';
import {
  enveloped,
  uuid,
  maybe,
  mobileNumber,
  open,
  openEnum,
  optional,
  pageParams,
  positiveAmount,
  recordTimes,
  type Assert,
  type RecordTimes,
  type Schema,
  type Ties,
  type TiesInput,
} from '../internal/fields.js';
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
      {
        operation: 'payouts.preview',
        method: 'POST',
        path: '/api/v1/payouts/preview',
        params: [PayoutPreviewParams, params],
        response: PayoutPreview,
        retry: 'safe',
      },
      options,
    );
  }

  /**
   * Creates a payout (POST /api/v1/payouts). Retries reuse one Idempotency-Key; an
   * INPROGRESS or AMBIGUOUS outcome is returned (or thrown) as it is, never retried.
   */
  create(params: PayoutCreateParams, options?: RequestOptions): APIPromise<Payout> {
    return this._client.request(
      {
        operation: 'payouts.create',
        method: 'POST',
        path: '/api/v1/payouts',
        params: [PayoutCreateParams, params],
        response: Payout,
        retry: 'create',
        finalOutcome: isUnsettledOutcome,
      },
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
export const PayoutId: Schema<string> = uuid;

/** Params of `payouts.preview`. */
export interface PayoutPreviewParams {
  /** Amount to pay out, in currency units (greater than 0). */
  amount: number;
}
/** Params of `payouts.preview`. */
export const PayoutPreviewParams: Schema<PayoutPreviewParams> = z.strictObject({ amount: positiveAmount });

/** Fee preview of a payout. */
export interface PayoutPreview {
  /** The amount asked for. */
  amount: number;
  /** The payout fee. */
  fee: number;
  /** What reaches the settlement number: amount less the fee. */
  payable_amount: number;
  /** Wallet currency the payout is paid from, when the service says. */
  currency?: string | null | undefined;
}

const previewSchema = open({ amount: z.number(), fee: z.number(), payable_amount: z.number(), currency: maybe(z.string()) });
type _PayoutPreview = Assert<Ties<typeof previewSchema, PayoutPreview>>;
/** Fee preview of a payout (bare or in a `{ status, data }` envelope). */
export const PayoutPreview: Schema<PayoutPreview> = enveloped(previewSchema);

/** Params of `payouts.create`. */
export interface PayoutCreateParams {
  /** Amount to pay out, in currency units (greater than 0). */
  amount: number;
  /** Must equal the approved settlement number when given (international digits). */
  destination?: string | undefined;
}
const createSchema = z.strictObject({ amount: positiveAmount, destination: optional(mobileNumber) });
type _PayoutCreateParams = Assert<TiesInput<typeof createSchema, PayoutCreateParams>>;
/** Params of `payouts.create`. `destination`, when given, must equal the approved settlement number. */
export const PayoutCreateParams: Schema<PayoutCreateParams> = createSchema;

/** Params of `payouts.list`. */
export interface PayoutListParams {
  /** Page size, 1–100. */
  limit?: number | undefined;
  /** Items to skip. */
  offset?: number | undefined;
}
/** Params of `payouts.list`. */
export const PayoutListParams: Schema<PayoutListParams | undefined> = optional(z.strictObject({ ...pageParams }));

/** Upstream outcome of a payout. `INPROGRESS` and `AMBIGUOUS` must never be retried as a new payout. */
export type PayoutStatus = 'SUCCESS' | 'INPROGRESS' | 'AMBIGUOUS' | 'FAILED';

/** A payout record (the sandbox's shape; the spec shows none). */
export interface Payout extends RecordTimes {
  /** Payout id (a UUID). */
  id: string;
  /** Amount asked for, in currency units. */
  amount: number;
  /** The payout fee. */
  fee?: number | undefined;
  /** What reached (or will reach) the settlement number. */
  payable_amount?: number | undefined;
  /** Wallet currency. */
  currency?: string | undefined;
  /** The settlement mobile number paid. */
  destination?: string | null | undefined;
  /** `SUCCESS`, `FAILED`, or `INPROGRESS`/`AMBIGUOUS` (reconcile later; never pay again). */
  status: PayoutStatus;
}

const payoutSchema = open({
  id: z.string(),
  amount: z.number(),
  fee: optional(z.number()),
  payable_amount: optional(z.number()),
  currency: optional(z.string()),
  destination: maybe(z.string()),
  status: openEnum(['SUCCESS', 'INPROGRESS', 'AMBIGUOUS', 'FAILED']),
  ...recordTimes,
});
type _Payout = Assert<Ties<typeof payoutSchema, Payout>>;

const PayoutItem = payoutSchema;

/** A payout record (bare or in a `{ status, data }` envelope). `status` may be INPROGRESS or AMBIGUOUS. */
export const Payout: Schema<Payout> = enveloped(payoutSchema);
