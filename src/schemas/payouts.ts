// The params and results of the payout routes: types and schemas.
import * as z from 'zod/mini';
import { unwrap } from '../internal/envelope.js';
import {
  uuid,
  exactAmounts,
  normalizedPhones,
  phoneParam,
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
import { readPayout } from './payout-outcome.js';

/** A payout id: a UUID. */
export const PayoutId: Schema<string> = uuid;

/** Params of `payouts.preview`. */
export interface PayoutPreviewParams {
  /** Amount to pay out, in currency units (greater than 0; a number or a decimal string, at most 2 decimal places). */
  amount: number | string;
}
/** Params of `payouts.preview`. */
export const PayoutPreviewParams: Schema<PayoutPreviewParams> = z.strictObject({ amount: positiveAmount }).check(exactAmounts('amount'));

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
  /**
   * Amount to pay out, in currency units (greater than 0): a number or a decimal string, at most
   * 2 decimal places (a payout names no currency); float noise is removed, more digits refused.
   */
  amount: number | string;
  /** Must equal the approved settlement number when given: as written (`0712 345 678`), sent as international digits. */
  destination?: string | undefined;
}
const createSchema = z.strictObject({ amount: positiveAmount, destination: optional(phoneParam()) });
type _PayoutCreateParams = Assert<TiesInput<typeof createSchema, PayoutCreateParams>>;
/** Params of `payouts.create`. `destination`, when given, must equal the approved settlement number. */
export const PayoutCreateParams: Schema<PayoutCreateParams> = createSchema.check(
  exactAmounts('amount'),
  normalizedPhones({ destination: undefined }),
);

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
export const PayoutItem: Schema<Payout> = provisional(readPayout<Payout>);

/** A payout record (bare or in any envelope; provisional, see {@link Payout}). */
export const Payout: Schema<Payout> = provisional((body) => readPayout<Payout>(unwrap(body, ['payout'], 'without-id')));
