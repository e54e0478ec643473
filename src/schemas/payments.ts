// The params and results of the payment routes: types and schemas.
import * as z from 'zod/mini';
import type { Environment } from '../internal/options.js';
import { isRecord, unwrap } from '../internal/envelope.js';
import {
  currencyCode,
  custom,
  email,
  httpUrl,
  amountParam,
  exactAmounts,
  normalizedPhones,
  oneOf,
  phoneParam,
  optional,
  pageParams,
  provisional,
  shown,
  readRecord,
  text,
  whenObject,
  type Assert,
  type Schema,
  type TiesInput,
} from '../internal/fields.js';

/** Payment status: `pending` at creation, then `success` or `failed`. */
export type PaymentStatus = 'pending' | 'success' | 'failed';
/** How the customer pays: on the hosted checkout page, or by approving a USSD push. */
export type PaymentMode = 'hosted' | 'push';

const PAYMENT_STATUSES = ['pending', 'success', 'failed'] as const;
const PAYMENT_MODES = ['hosted', 'push'] as const;

// A gateway keyword: checked, never rewritten (the server matches it case-insensitively).
const isKeyword = (keyword: unknown): boolean => typeof keyword === 'string' && keyword.trim() !== '';

const paymentFields = {
  payment_amount: amountParam((amount) => amount >= 1, 'must be at least 1.00', { minimum: 1 }),
  currency_code: currencyCode,
  ref_trx: text(60, 1),
  description: optional(z.string()),
  customer_name: optional(text(100)),
  customer_email: optional(email),
  customer_phone: optional(phoneParam()),
  payment_mode: optional(oneOf(PAYMENT_MODES, 'must be hosted or push')),
  allow_payment_methods: optional(
    custom<string | string[]>(
      (value) => isKeyword(value) || (Array.isArray(value) && value.length > 0 && value.every(isKeyword)),
      'must be a method keyword or a non-empty list of them (none blank)',
      { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
    ),
  ),
};

const pushNeedsPhone = z.refine<{ payment_mode?: string | undefined; customer_phone?: string | undefined }>(
  (params) => params.payment_mode !== 'push' || params.customer_phone !== undefined,
  { path: ['customer_phone'], message: 'is required when payment_mode is push', ...whenObject },
);

// Both creation routes send the amount exact at the currency's digits and the phone as its
// international digits.
const exactPayment = [exactAmounts('payment_amount', 'currency_code'), normalizedPhones({ customer_phone: undefined })] as const;

/** Fields both creation routes take. */
interface PaymentFields {
  /**
   * Amount in currency units, at least 1.00: a number or a decimal string (`'19.99'`, pg's
   * `numeric`). Sent exact at the currency's minor-unit digits: float noise removed
   * (`1.1 + 2.2` is sent as 3.3); more digits than the currency has (`10.005` USD, `12.5`
   * UGX) is an `InvalidParamsError` naming the two nearest amounts.
   */
  payment_amount: number | string;
  /** 3-letter upper-case currency code, e.g. `USD`. */
  currency_code: string;
  /** Your order reference (1–60 characters); comes back as `merchant_ref`. */
  ref_trx: string;
  /** Shown to the customer on the checkout page. */
  description?: string | undefined;
  /** Customer name, at most 100 characters. */
  customer_name?: string | undefined;
  /** Customer e-mail, at most 100 characters. */
  customer_email?: string | undefined;
  /**
   * The customer's mobile number as they type it (`0712 345 678`, `+255 712 345 678`), sent as
   * its international digits (`255712345678`); local forms are read in the client's
   * `phoneCountry` (default TZ). Required for `push`.
   */
  customer_phone?: string | undefined;
  /** `hosted` (default) or `push` (a USSD prompt on `customer_phone`). */
  payment_mode?: PaymentMode | undefined;
  /** Restrict the checkout to these method keywords (one, or a list). */
  allow_payment_methods?: string | string[] | undefined;
}

/** Params of `payments.create`. */
export interface PaymentCreateParams extends PaymentFields {
  /** Where the checkout sends the customer after paying (http(s) URL). */
  success_redirect?: string | undefined;
  /** Where the checkout sends the customer on cancel (http(s) URL). */
  cancel_redirect?: string | undefined;
  /** Your webhook endpoint (https:// in production); the merchant's default when absent. */
  ipn_url?: string | undefined;
  /** Synonym of `ipn_url`: give one, or the same URL in both. */
  webhook_url?: string | undefined;
}

const createParamsSchema = z.strictObject({
  ...paymentFields,
  success_redirect: optional(httpUrl),
  cancel_redirect: optional(httpUrl),
  ipn_url: optional(httpUrl),
  webhook_url: optional(httpUrl),
});
type _PaymentCreateParams = Assert<TiesInput<typeof createParamsSchema, PaymentCreateParams>>;

/**
 * Params of `payments.create`. Unknown keys are refused, so a misspelt field can never be
 * dropped silently from a payment.
 */
export const PaymentCreateParams: Schema<PaymentCreateParams> = createParamsSchema.check(
  pushNeedsPhone,
  ...exactPayment,
  z.refine((params) => !(params.ipn_url && params.webhook_url && params.ipn_url !== params.webhook_url), {
    path: ['webhook_url'],
    message: 'is a synonym of ipn_url: give one, or the same URL in both',
  }),
);

/**
 * Params of the legacy `payments.initiate`: the redirects and ipn_url are required there, and it
 * opens a checkout page only (`payment_mode: 'push'` is refused before sending: the earlier
 * generation, where this is the only create, cannot ring a phone).
 */
export interface PaymentInitiateParams extends PaymentFields {
  /** Where the checkout sends the customer after paying (http(s) URL). */
  success_redirect: string;
  /** Where the checkout sends the customer on cancel (http(s) URL). */
  cancel_redirect: string;
  /** Your webhook endpoint (https:// in production). */
  ipn_url: string;
}

// The earlier generation ignores payment_mode and customer_phone on its only create: a push
// sent there would silently be a checkout link, and the phone would never ring.
const HOSTED_ONLY =
  "is hosted only on payments.initiate: the earlier generation cannot ring a phone (it would silently open a checkout link). Send the customer the payment_url, or use payments.create({ payment_mode: 'push', customer_phone }) on the current generation";
const initiateParamsSchema = z.strictObject({ ...paymentFields, success_redirect: httpUrl, cancel_redirect: httpUrl, ipn_url: httpUrl });
type _PaymentInitiateParams = Assert<TiesInput<typeof initiateParamsSchema, PaymentInitiateParams>>;
/**
 * Params of the legacy `payments.initiate`: the redirects and ipn_url are required there; hosted
 * checkout only (the route's own rules take push: the SDK refuses it, so the contract check
 * still sees the route as the service describes it).
 */
export const PaymentInitiateParams: Schema<PaymentInitiateParams> = initiateParamsSchema.check(
  z.refine((params) => params.payment_mode !== 'push', { path: ['payment_mode'], message: HOSTED_ONLY, ...whenObject }),
  ...exactPayment,
);

/**
 * A created payment (the `data` of the creation response). `trx_id`, `status`, `amount` and
 * `currency` are what you act on: the call fails with `ResponseValidationError` without
 * them. The other fields are kept as the server sent them (null or absent included).
 */
export interface Payment {
  /** The service's transaction id: keep it to verify the payment. */
  trx_id: string;
  /** Your order reference (the `ref_trx` you sent). */
  merchant_ref?: string | null | undefined;
  /** Amount in currency units (a decimal string such as `"25.00"` is read as 25). */
  amount: number;
  /** 3-letter currency code. */
  currency: string;
  /** `pending` at creation. */
  status: PaymentStatus;
  /** Hosted checkout link (hosted mode; a push payment has none). */
  checkout_url?: string | null | undefined;
  /** When the checkout session expires (ISO 8601). */
  expires_at?: string | null | undefined;
  /** `sandbox` or `production`. */
  environment?: Environment | null | undefined;
}

/** A created payment: read tolerantly, then what you act on checked. */
export const Payment: Schema<Payment> = shown(
  { trx_id: z.string(), status: z.string(), amount: z.number(), currency: z.string() },
  (body) => readRecord(body, { ids: { trx_id: [] }, numbers: ['amount'] }),
);

/**
 * @internal Creation body `{ status, data, payment_url, trx_id }`; callers get `data` with
 * the envelope's other fields beside it. The top-level `status` is the envelope's
 * (`success`), never the payment's.
 */
export const PaymentCreateResponse: Schema<Payment> = z.pipe(z.transform(readCreated), Payment);

// The documented envelope gives `data`; its top-level trx_id and payment_url (the legacy
// alias of the checkout link) fill in for the payment's own when those are missing.
function readCreated(body: unknown): unknown {
  if (!isRecord(body) || !isRecord(body.data)) return unwrap(body, [], 'always');
  const payment = { ...body.data };
  payment.trx_id ??= body.trx_id;
  if (payment.checkout_url === undefined && body.payment_url !== undefined) payment.checkout_url = body.payment_url;
  return payment;
}

/**
 * `info` of a legacy payment session. Nothing in it is acted on, so every field is kept as
 * the server sent it: a whole number sent as `"12"` reads as 12, PHP-style `1`/`0` as
 * booleans, and null or absent stays so.
 */
export interface PaymentSessionInfo {
  /** Your order reference. */
  ref_trx?: string | null | undefined;
  /** The description you sent. */
  description?: string | null | undefined;
  /** Your webhook endpoint. */
  ipn_url?: string | null | undefined;
  /** Cancel redirect. */
  cancel_redirect?: string | null | undefined;
  /** Success redirect. */
  success_redirect?: string | null | undefined;
  /** Customer name you sent. */
  customer_name?: string | null | undefined;
  /** Customer e-mail you sent. */
  customer_email?: string | null | undefined;
  /** Your numeric merchant id. */
  merchant_id?: number | null | undefined;
  /** Your business name. */
  merchant_name?: string | null | undefined;
  /** Amount in currency units. */
  amount?: number | null | undefined;
  /** 3-letter currency code. */
  currency_code?: string | null | undefined;
  /** `sandbox` or `production`. */
  environment?: Environment | null | undefined;
  /** Whether this is a sandbox session. */
  is_sandbox?: boolean | null | undefined;
  /** Echo of the method filter you sent. */
  allow_payment_methods?: string[] | null | undefined;
  /** True when you selected specific gateways in the dashboard. */
  merchant_payment_methods_restricted?: boolean | null | undefined;
  /** Ids of the deposit methods eligible for this currency. */
  merchant_payment_method_ids?: (number | string)[] | null | undefined;
  /** Codes of the methods the hosted checkout may show. */
  merchant_payment_method_codes?: string[] | null | undefined;
}

// PHP-style servers send `merchant_id: "12"` and 1/0 for booleans: read as the spec's types.
const readInfo = (info: unknown) =>
  readRecord(info, { numbers: ['amount', 'merchant_id'], flags: ['is_sandbox', 'merchant_payment_methods_restricted'] });

/** `info` of a legacy payment session (nothing in it is acted on). */
export const PaymentSessionInfo: Schema<PaymentSessionInfo> = /* @__PURE__ */ shown({}, readInfo);

/** Legacy creation response: a signed, time-limited `payment_url` (what you act on) and the session `info`. */
export interface PaymentSession {
  /** Signed, time-limited checkout link. */
  payment_url: string;
  /** The session as the service recorded it. */
  info?: PaymentSessionInfo | null | undefined;
  /** The transaction id and checkout link, when the server sends them. */
  data?: { trx_id?: string | null | undefined; checkout_url?: string | null | undefined } | null | undefined;
}

/** Legacy creation response: `payment_url` is what you act on. */
export const PaymentSession: Schema<PaymentSession> = shown({ payment_url: z.string() }, (body) => {
  const session = readRecord<Record<string, unknown>>(body, {});
  if (isRecord(session) && session.info !== undefined) session.info = readInfo(session.info);
  return session;
});

/** Params of `payments.list`. */
export interface PaymentListParams {
  /** Page size, 1–100. */
  limit?: number | undefined;
  /** Items to skip. */
  offset?: number | undefined;
  /** Only payments with this status. */
  status?: PaymentStatus | undefined;
  /** Only payments with this order reference. */
  merchant_ref?: string | undefined;
}

const listParamsSchema = z.strictObject({
  ...pageParams,
  status: optional(oneOf(PAYMENT_STATUSES, 'must be pending, success or failed')),
  merchant_ref: optional(text(60, 1)),
});
type _PaymentListParams = Assert<TiesInput<typeof listParamsSchema, PaymentListParams>>;
/** Params of `payments.list`. */
export const PaymentListParams: Schema<PaymentListParams | undefined> = optional(listParamsSchema);

/**
 * A payment as the list and retrieve routes show it. **Provisional**: the spec shows no
 * body for these routes, so this is the sandbox's shape. Another server may name or shape
 * fields otherwise: every field it sends is kept (read one the SDK does not name as
 * `record['risk_score']`), `trx_id` and `status` are filled from `transaction_id` and
 * `state` / `payment_status` when the server uses those names, and amounts sent as decimal
 * strings are read as numbers. Nothing here ever makes a call fail.
 */
export interface PaymentRecord {
  /** The service's transaction id. */
  trx_id: string;
  /** Your order reference. */
  merchant_ref?: string | null | undefined;
  /** Amount in currency units. */
  amount: number;
  /** Fee in currency units. */
  fee?: number | undefined;
  /** Amount less the fee. */
  net_amount?: number | undefined;
  /** 3-letter currency code. */
  currency: string;
  /** `pending`, `success` or `failed`. */
  status: PaymentStatus;
  /** `hosted` or `push`. */
  payment_mode?: PaymentMode | undefined;
  /** `sandbox` or `production`. */
  environment?: Environment | undefined;
  /** The description you sent. */
  description?: string | null | undefined;
  /** The customer as you sent them. */
  customer?: { name?: string | null | undefined; email?: string | null | undefined; phone?: string | null | undefined } | undefined;
  /** Gateway that took the payment, once known. */
  gateway?: string | null | undefined;
  /** Hosted checkout link (hosted mode). */
  checkout_url?: string | null | undefined;
  /** When the checkout session expires (ISO 8601). */
  expires_at?: string | null | undefined;
  /** Why a failed payment failed, when the service says (e.g. `INSUFFICIENT_FUNDS`). */
  failure_reason?: string | null | undefined;
  /** Creation time (ISO 8601). */
  created_at?: string | undefined;
  /** Last change (ISO 8601). */
  updated_at?: string | undefined;
  /** Fields this SDK version does not name, as the server sent them. */
  [field: string]: unknown;
}

const readPayment = (value: unknown) =>
  readRecord<PaymentRecord>(value, {
    ids: { trx_id: ['transaction_id', 'trxId'] },
    aliases: { status: ['state', 'payment_status'] },
    numbers: ['amount', 'fee', 'net_amount'],
  });

/** One payment in a list (provisional, see {@link PaymentRecord}). */
export type PaymentListItem = PaymentRecord;
/** One payment in a list. */
export const PaymentListItem: Schema<PaymentListItem> = provisional(readPayment);
/** A payment fetched by id (bare or in any envelope; provisional, see {@link PaymentRecord}). */
export const PaymentRecord: Schema<PaymentRecord> = provisional((body) => readPayment(unwrap(body, ['payment', 'transaction'])));

/** Params of `payments.push`. */
export interface PaymentPushParams {
  /** Mobile number to ring, as the customer types it (sent as international digits); optional when the payment has one from its creation. */
  customer_phone?: string | undefined;
}

/** Params of `payments.push`. */
export const PaymentPushParams: Schema<PaymentPushParams> = z
  .strictObject({ customer_phone: optional(phoneParam()) })
  .check(normalizedPhones({ customer_phone: undefined })) satisfies Schema<PaymentPushParams>;

/**
 * Result of `payments.push`. **Provisional**: the spec shows no body, so this is the
 * sandbox's shape (`{}` when the service answers with no body). `status` is the payment's
 * status, read from the resource (`data`), never from a success envelope; a body that says
 * the push failed (`{ status: "error", message }`) is an `APIError`, not a result. Every
 * other field the server sends is kept.
 */
export interface PaymentPushResult {
  /** The payment's transaction id. */
  trx_id?: string | undefined;
  /** The payment's status (`pending` while the customer decides). */
  status?: PaymentStatus | undefined;
  /** The number the push went to. */
  customer_phone?: string | undefined;
  /** How many pushes this payment has had. */
  push_count?: number | undefined;
  /** Fields this SDK version does not name, as the server sent them. */
  [field: string]: unknown;
}

/** Result of `payments.push`. */
export const PaymentPushResult: Schema<PaymentPushResult> = provisional((body) => readPayment(unwrap(body, ['payment'], 'always')));

/** Fields of a verified transaction in every state (see {@link VerifiedTransaction}). */
export interface VerifiedTransactionFields {
  /** The service's transaction id. */
  trx_id: string;
  /** Fee in currency units. */
  fee?: number | null | undefined;
  /** Amount less the fee. */
  net_amount?: number | null | undefined;
  /** The customer as you sent them. */
  customer?: { name?: string | null | undefined; email?: string | null | undefined } | null | undefined;
  /** The description you sent (the earlier generation: the service's own text once completed). */
  description?: string | null | undefined;
  /** The service's words on the state, e.g. `Payment is still pending.` (the earlier generation). */
  message?: string | null | undefined;
  /** Creation time (ISO 8601, UTC). */
  created_at?: string | null | undefined;
  /** Last change (ISO 8601, UTC). */
  updated_at?: string | null | undefined;
}

/**
 * A successful verified transaction: fulfil the order once you have checked the price with
 * {@link paidAmount} (the gross on both generations) and `currency`.
 */
export interface SuccessfulTransaction extends VerifiedTransactionFields {
  /** `success`: the payment completed. */
  status: 'success';
  /**
   * Amount in currency units (a decimal string such as `"25.00"` is read as 25). The current
   * generation reports the gross here, the earlier one the net (after its fee): compare
   * `paidAmount(tx)` with your order, not this.
   */
  amount: number;
  /** 3-letter currency code. */
  currency: string;
}

/**
 * A verified transaction that has not succeeded (yet): `pending` or `failed`. The earlier
 * generation sends only `{ status, trx_id, message }` in these states, so the amount and
 * currency may be missing.
 */
export interface UnsettledTransaction extends VerifiedTransactionFields {
  /** `pending` (still being paid) or `failed` (failed or canceled): do not fulfil. */
  status: 'pending' | 'failed';
  /** Amount in currency units, when the server sends it in this state. */
  amount?: number | undefined;
  /** 3-letter currency code, when the server sends it in this state. */
  currency?: string | undefined;
}

/**
 * A verified transaction: check `status === 'success'` before fulfilling, and the price
 * against your order (`paidAmount(tx)` and `currency`). `status` and `trx_id` are always
 * there; `amount` and `currency` are required only when `status` is `success` (the earlier
 * generation sends neither while pending or after a failure); a missing one of those fails the
 * call with `ResponseValidationError`. The other fields are kept as the server sent them. At
 * run time a status newer than this SDK passes through as it came.
 */
export type VerifiedTransaction = SuccessfulTransaction | UnsettledTransaction;

/** What `waitForOutcome` resolves to: the verified transaction, and why it failed when the service says. */
export type PaymentOutcome = VerifiedTransaction & {
  /** Why a failed payment failed, from the payment record (e.g. `INSUFFICIENT_FUNDS`). */
  failure_reason?: string | null | undefined;
  /** The service's words for the failure, when it sends them. */
  failure_message?: string | null | undefined;
};

// Both generations: amount and currency are what a merchant acts on only once it succeeded.
const onSuccess = (field: 'amount' | 'currency', type: 'number' | 'string') =>
  z.refine<{ status?: unknown; amount?: unknown; currency?: unknown }>((tx) => tx.status !== 'success' || typeof tx[field] === type, {
    path: [field],
    message: `is required (a ${type}) when status is success`,
  });

/** A verified transaction (bare or in a `{ status, data }` envelope): read tolerantly, then what you act on checked. */
export const VerifiedTransaction: Schema<VerifiedTransaction> = z
  .pipe(
    z.transform((body: unknown) => readRecord(unwrap(body), { ids: { trx_id: [] }, numbers: ['amount', 'fee', 'net_amount'] })),
    // Until it succeeded nothing else is acted on, so whatever else came is kept as it came.
    z.looseObject({ status: z.string(), trx_id: z.string() }),
  )
  .check(onSuccess('amount', 'number'), onSuccess('currency', 'string')) as unknown as Schema<VerifiedTransaction>;

/** Options of `payments.waitForOutcome`. */
export interface WaitForOutcomeOptions {
  /** Give up after this many ms. Default 120 000. */
  timeout?: number | undefined;
  /** Ms between verify calls. Default 3 000. */
  interval?: number | undefined;
  /** Stops waiting. */
  signal?: AbortSignal | undefined;
}
