import * as z from 'zod/mini';
import type { APIPromise } from '../core/api-promise.js';
import type { PagePromise } from '../core/pagination.js';
import { APIResource } from '../core/resource.js';
import { unwrap } from '../internal/envelope.js';
import {
  uuid,
  mobileNumber,
  optional,
  pageParams,
  positiveAmount,
  provisional,
  shown,
  readRecord,
  type Assert,
  type RecordTimes,
  type Schema,
  type TiesInput,
} from '../internal/fields.js';
import type { RequestOptions } from '../internal/options.js';
import { readPayout } from './payout-outcome.js';

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

/** Upstream outcomes that must never be retried as a new payout. */
export const UNSETTLED_PAYOUT_OUTCOMES = ['INPROGRESS', 'AMBIGUOUS'] as const;

/** A payout id: a UUID. */
export const PayoutId: Schema<string> = uuid;

/** Params of `payouts.preview`. */
export interface PayoutPreviewParams {
  /** Amount to pay out, in currency units (greater than 0). */
  amount: number;
}
/** Params of `payouts.preview`. */
export const PayoutPreviewParams: Schema<PayoutPreviewParams> = z.strictObject({ amount: positiveAmount });

/** Fee preview of a payout: `fee` and `payable_amount` are what you act on (decimal strings read as numbers). */
export interface PayoutPreview {
  /** The amount asked for. */
  amount?: number | null | undefined;
  /** The payout fee. */
  fee: number;
  /** What reaches the settlement number: amount less the fee. */
  payable_amount: number;
  /** Wallet currency the payout is paid from, when the service says. */
  currency?: string | null | undefined;
}

/** Fee preview of a payout (bare or in a `{ status, data }` envelope): `fee` and `payable_amount` checked. */
export const PayoutPreview: Schema<PayoutPreview> = shown({ fee: z.number(), payable_amount: z.number() }, (body) =>
  readRecord(unwrap(body), { numbers: ['amount', 'fee', 'payable_amount'] }),
);

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

/**
 * A payout record. **Provisional**: the spec shows no body for the payout routes, so this
 * is the sandbox's shape. Against another server every field it sends is kept; `id` is
 * filled from `payout_id` / `uuid` / `reference`, amounts sent as decimal strings are read as
 * numbers, and `status` is the SDK's reading of the outcome wherever the server puts it
 * (`status`, `payout_status`, `state`, a code or a message naming IN_PROGRESS or
 * AMBIGUOUS): one of the four values when it is recognised (`SUCCESSFUL` → `SUCCESS`,
 * `PENDING` → `INPROGRESS`), the server's own word otherwise. When the SDK's reading
 * differs from the server's `status` field, the server's value is kept as `server_status`.
 */
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
  /** Fields this SDK version does not name, as the server sent them (`server_status` among them). */
  [field: string]: unknown;
}

/** @internal One payout of a list. */
export const PayoutItem: Schema<Payout> = provisional(readPayout);

/** A payout record (bare or in any envelope; provisional, see {@link Payout}). */
export const Payout: Schema<Payout> = provisional((body) => readPayout(unwrap(body, ['payout'], 'without-id')));
