import * as z from 'zod/mini';
import type { APIPromise } from '../core/api-promise.js';
import { APITimeoutError, APIUserAbortError, InvalidParamsError } from '../core/error.js';
import type { PagePromise } from '../core/pagination.js';
import { APIResource } from '../core/resource.js';
import {
  currencyCode,
  custom,
  email,
  enveloped,
  httpUrl,
  int,
  maybe,
  mobileNumber,
  oneOf,
  open,
  openEnum,
  optional,
  pageParams,
  pathId,
  text,
  type Assert,
  type Schema,
  type Ties,
  type TiesInput,
} from '../internal/fields.js';
import type { RequestOptions } from '../internal/options.js';
import { MAX_TIMEOUT_MS } from '../internal/validate.js';

/**
 * Payments: create a hosted checkout or a USSD push, follow it, verify it.
 *
 * @example
 * ```ts
 * const payment = await client.payments.create({
 *   payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1001',
 *   success_redirect: 'https://shop.example.com/thanks',
 * });
 * redirect(payment.checkout_url!);
 * ```
 */
export class Payments extends APIResource {
  /** Creates a payment (POST /api/v1/payments). Retries reuse one Idempotency-Key. */
  create(params: PaymentCreateParams, options?: RequestOptions): APIPromise<Payment> {
    return this._client.request(
      {
        operation: 'payments.create',
        method: 'POST',
        path: '/api/v1/payments',
        params: [PaymentCreateParams, params],
        httpsInProduction: URL_FIELDS,
        response: PaymentCreateResponse,
        retry: 'create',
      },
      options,
    );
  }

  /** One page of payments (GET /api/v1/payments); `for await` walks every page. */
  list(params?: PaymentListParams, options?: RequestOptions): PagePromise<PaymentListItem> {
    return this._client.requestPage(
      {
        operation: 'payments.list',
        method: 'GET',
        path: '/api/v1/payments',
        params: PaymentListParams,
        value: params,
        item: PaymentListItem,
      },
      options,
    );
  }

  /** One payment and its status (GET /api/v1/payments/{trx_id}). */
  retrieve(trxId: string, options?: RequestOptions): APIPromise<PaymentRecord> {
    return this._client.request(
      {
        operation: 'payments.retrieve',
        method: 'GET',
        path: '/api/v1/payments/{trx_id}',
        pathParams: { trx_id: [pathId, trxId] },
        response: PaymentRecord,
      },
      options,
    );
  }

  /**
   * Rings the customer's phone with a USSD push for a pending payment
   * (POST /api/v1/payments/{trx_id}/push). Not idempotent: retried only when the request
   * provably never reached the server, or on 429.
   */
  push(trxId: string, params?: PaymentPushParams, options?: RequestOptions): APIPromise<PaymentPushResult> {
    return this._client.request(
      {
        operation: 'payments.push',
        method: 'POST',
        path: '/api/v1/payments/{trx_id}/push',
        pathParams: { trx_id: [pathId, trxId] },
        params: [PaymentPushParams, params ?? {}],
        response: PaymentPushResult,
        retry: 'push',
        emptyBodyOk: true,
      },
      options,
    );
  }

  /** Verifies a transaction server-side before fulfilment (GET /api/v1/verify-payment/{trxId}). */
  verify(trxId: string, options?: RequestOptions): APIPromise<VerifiedTransaction> {
    return this._client.request(
      {
        operation: 'payments.verify',
        method: 'GET',
        path: '/api/v1/verify-payment/{trxId}',
        pathParams: { trxId: [pathId, trxId] },
        response: VerifiedTransaction,
      },
      options,
    );
  }

  /**
   * Legacy alias of `create` (POST /api/v1/initiate-payment): redirects and ipn_url required.
   *
   * @deprecated Use {@link Payments.create}: new integrations use /api/v1/payments.
   */
  initiate(params: PaymentInitiateParams, options?: RequestOptions): APIPromise<PaymentSession> {
    return this._client.request(
      {
        operation: 'payments.initiate',
        method: 'POST',
        path: '/api/v1/initiate-payment',
        params: [PaymentInitiateParams, params],
        httpsInProduction: URL_FIELDS,
        response: PaymentSession,
        retry: 'create',
      },
      options,
    );
  }

  /**
   * Polls `verify` until the payment is no longer `pending`, and resolves to that verified
   * transaction (`success`, `failed`, or a status newer than this SDK: treat anything but
   * `success` as not paid). A failed payment carries `failure_reason` / `failure_message`
   * when the service says why. Throws `APITimeoutError` when it is still pending at the
   * deadline, which bounds everything, the calls in flight included.
   *
   * @example
   * ```ts
   * const outcome = await client.payments.waitForOutcome(payment.trx_id, { timeout: 90_000 });
   * if (outcome.status === 'success') fulfil(outcome);
   * ```
   */
  async waitForOutcome(trxId: string, options: WaitForOutcomeOptions = {}): Promise<PaymentOutcome> {
    const { timeout = 120_000, interval = 3_000, signal } = options;
    const errors: Record<string, string[]> = {};
    // A timer cannot hold more than 2^31 - 1 ms (a longer one fires at once).
    const valid = (ms: number) => typeof ms === 'number' && ms > 0 && ms <= MAX_TIMEOUT_MS;
    if (!valid(timeout)) errors.timeout = [`must be a number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`];
    if (!valid(interval)) errors.interval = [`must be a number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`];
    if (Object.keys(errors).length) throw new InvalidParamsError('payments.waitForOutcome', errors);

    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), timeout);
    const stop = signal ? AbortSignal.any([signal, deadline.signal]) : deadline.signal;
    try {
      for (;;) {
        const transaction = await this.verify(trxId, { signal: stop });
        if (transaction.status !== 'pending')
          return transaction.status === 'failed' ? await this.#withFailure(transaction, stop) : transaction;
        await sleep(interval, stop);
      }
    } catch (cause) {
      if (signal?.aborted) throw new APIUserAbortError('payments.waitForOutcome was aborted.', { cause: signal.reason });
      if (!deadline.signal.aborted) throw cause;
      throw new APITimeoutError(
        `payments.waitForOutcome: ${trxId} is still pending after ${timeout} ms; check again later or wait for the webhook.`,
      );
    } finally {
      clearTimeout(timer);
    }
  }

  // verify's documented shape has no reason; the payment record may: add it when it does.
  async #withFailure(transaction: PaymentOutcome, signal: AbortSignal): Promise<PaymentOutcome> {
    if (transaction.failure_reason != null) return transaction;
    const record = await this.retrieve(transaction.trx_id, { signal }).catch(() => undefined);
    if (typeof record?.failure_reason !== 'string') return transaction;
    // failure_message is not in the record's documented shape: read only when a server sends it.
    const message = (record as { failure_message?: unknown }).failure_message;
    return { ...transaction, failure_reason: record.failure_reason, failure_message: typeof message === 'string' ? message : null };
  }
}

/** Resolves after `ms`, or rejects when `signal` aborts (and leaves no timer behind). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

// URL fields that carry payment data to the merchant: HTTPS only in production.
const URL_FIELDS = ['ipn_url', 'webhook_url'] as const;

/** Payment status: `pending` at creation, then `success` or `failed`. */
export type PaymentStatus = 'pending' | 'success' | 'failed';
/** How the customer pays: on the hosted checkout page, or by approving a USSD push. */
export type PaymentMode = 'hosted' | 'push';
/** `sandbox` or `production`. */
export type EnvironmentName = 'sandbox' | 'production';

const PAYMENT_STATUSES = ['pending', 'success', 'failed'] as const;
const ENVIRONMENTS = ['sandbox', 'production'] as const;
const PAYMENT_MODES = ['hosted', 'push'] as const;

// A gateway keyword: checked, never rewritten (the server matches it case-insensitively).
const isKeyword = (keyword: unknown): boolean => typeof keyword === 'string' && keyword.trim() !== '';

const paymentFields = {
  payment_amount: z.number().check(z.minimum(1, 'must be at least 1.00')),
  currency_code: currencyCode,
  ref_trx: text(60, 1),
  description: optional(z.string()),
  customer_name: optional(text(100)),
  customer_email: optional(email),
  customer_phone: optional(mobileNumber),
  payment_mode: optional(oneOf(PAYMENT_MODES, 'must be hosted or push')),
  allow_payment_methods: optional(
    custom<string | string[]>(
      (value) => isKeyword(value) || (Array.isArray(value) && value.length > 0 && value.every(isKeyword)),
      'must be a method keyword or a non-empty list of them (none blank)',
      { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
    ),
  ),
};

// zod skips refinements once another field has a type error; this rule must still run so
// InvalidParamsError lists every failing field at once. It only reads two keys, so any
// object (even one with other fields wrong) is safe to look at.
const pushNeedsPhone = z.refine<{ payment_mode?: string | undefined; customer_phone?: string | undefined }>(
  (params) => params.payment_mode !== 'push' || params.customer_phone !== undefined,
  {
    path: ['customer_phone'],
    message: 'is required when payment_mode is push',
    when: (payload) => typeof payload.value === 'object' && payload.value !== null && !Array.isArray(payload.value),
  },
);

/** Fields both creation routes take. */
interface PaymentFields {
  /** Amount in currency units, at least 1.00. */
  payment_amount: number;
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
  /** Mobile number in international digits, e.g. `255712345678`; required for `push`. */
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
  z.refine((params) => !(params.ipn_url && params.webhook_url && params.ipn_url !== params.webhook_url), {
    path: ['webhook_url'],
    message: 'is a synonym of ipn_url: give one, or the same URL in both',
  }),
);

/** Params of the legacy `payments.initiate`: the redirects and ipn_url are required there. */
export interface PaymentInitiateParams extends PaymentFields {
  /** Where the checkout sends the customer after paying (http(s) URL). */
  success_redirect: string;
  /** Where the checkout sends the customer on cancel (http(s) URL). */
  cancel_redirect: string;
  /** Your webhook endpoint (https:// in production). */
  ipn_url: string;
}

const initiateParamsSchema = z.strictObject({ ...paymentFields, success_redirect: httpUrl, cancel_redirect: httpUrl, ipn_url: httpUrl });
type _PaymentInitiateParams = Assert<TiesInput<typeof initiateParamsSchema, PaymentInitiateParams>>;
/** Params of the legacy `payments.initiate`: the redirects and ipn_url are required there. */
export const PaymentInitiateParams: Schema<PaymentInitiateParams> = initiateParamsSchema.check(pushNeedsPhone);

/** A created payment (the `data` of the creation response). */
export interface Payment {
  /** The service's transaction id: keep it to verify the payment. */
  trx_id: string;
  /** Your order reference (the `ref_trx` you sent). */
  merchant_ref: string;
  /** Amount in currency units. */
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
  environment: EnvironmentName;
}

const paymentSchema = open({
  trx_id: z.string(),
  merchant_ref: z.string(),
  amount: z.number(),
  currency: z.string(),
  status: openEnum(PAYMENT_STATUSES),
  checkout_url: maybe(z.string()),
  expires_at: maybe(z.string()),
  environment: openEnum(ENVIRONMENTS),
});
type _Payment = Assert<Ties<typeof paymentSchema, Payment>>;
/** A created payment. */
export const Payment: Schema<Payment> = paymentSchema;

/** @internal Creation body `{ status, data, payment_url, trx_id }`; callers get `data`. */
export const PaymentCreateResponse: Schema<Payment> = z.pipe(
  open({ status: z.string(), data: paymentSchema, payment_url: maybe(z.string()), trx_id: z.string() }),
  z.transform((body) => body.data),
);

/** `info` of a legacy payment session. Echoes of optional inputs may be null or absent. */
export interface PaymentSessionInfo {
  /** Your order reference. */
  ref_trx: string;
  /** The description you sent. */
  description?: string | null | undefined;
  /** Your webhook endpoint. */
  ipn_url: string;
  /** Cancel redirect. */
  cancel_redirect: string;
  /** Success redirect. */
  success_redirect: string;
  /** Customer name you sent. */
  customer_name?: string | null | undefined;
  /** Customer e-mail you sent. */
  customer_email?: string | null | undefined;
  /** Your numeric merchant id. */
  merchant_id: number;
  /** Your business name. */
  merchant_name: string;
  /** Amount in currency units. */
  amount: number;
  /** 3-letter currency code. */
  currency_code: string;
  /** `sandbox` or `production`. */
  environment: EnvironmentName;
  /** Whether this is a sandbox session. */
  is_sandbox: boolean;
  /** Echo of the method filter you sent. */
  allow_payment_methods?: string[] | null | undefined;
  /** True when you selected specific gateways in the dashboard. */
  merchant_payment_methods_restricted: boolean;
  /** Ids of the deposit methods eligible for this currency. */
  merchant_payment_method_ids: (number | string)[];
  /** Codes of the methods the hosted checkout may show. */
  merchant_payment_method_codes: string[];
}

const sessionInfoSchema = open({
  ref_trx: z.string(),
  description: maybe(z.string()),
  ipn_url: z.string(),
  cancel_redirect: z.string(),
  success_redirect: z.string(),
  customer_name: maybe(z.string()),
  customer_email: maybe(z.string()),
  merchant_id: int(),
  merchant_name: z.string(),
  amount: z.number(),
  currency_code: z.string(),
  environment: openEnum(ENVIRONMENTS),
  is_sandbox: z.boolean(),
  allow_payment_methods: maybe(z.array(z.string())),
  merchant_payment_methods_restricted: z.boolean(),
  merchant_payment_method_ids: z.array(
    custom<number | string>((id) => typeof id === 'string' || Number.isSafeInteger(id), 'must be a whole number or a string', {
      type: ['integer', 'string'],
    }),
  ),
  merchant_payment_method_codes: z.array(z.string()),
});
type _PaymentSessionInfo = Assert<Ties<typeof sessionInfoSchema, PaymentSessionInfo>>;
/** `info` of a legacy payment session. */
export const PaymentSessionInfo: Schema<PaymentSessionInfo> = sessionInfoSchema;

/** Legacy creation response: a signed, time-limited `payment_url` and the session `info`. */
export interface PaymentSession {
  /** Signed, time-limited checkout link. */
  payment_url: string;
  /** The session as the service recorded it. */
  info: PaymentSessionInfo;
  /** The transaction id and checkout link, when the server sends them. */
  data?: { trx_id?: string | undefined; checkout_url?: string | null | undefined } | undefined;
}

const sessionSchema = open({
  payment_url: z.string(),
  info: sessionInfoSchema,
  data: optional(open({ trx_id: optional(z.string()), checkout_url: maybe(z.string()) })),
});
type _PaymentSession = Assert<Ties<typeof sessionSchema, PaymentSession>>;
/** Legacy creation response. */
export const PaymentSession: Schema<PaymentSession> = sessionSchema;

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

/** A payment as the list and retrieve routes show it (the sandbox's shape; the spec shows none). */
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
  environment?: EnvironmentName | undefined;
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
}

const paymentRecordSchema = open({
  trx_id: z.string(),
  merchant_ref: maybe(z.string()),
  amount: z.number(),
  fee: optional(z.number()),
  net_amount: optional(z.number()),
  currency: z.string(),
  status: openEnum(PAYMENT_STATUSES),
  payment_mode: optional(openEnum(PAYMENT_MODES)),
  environment: optional(openEnum(ENVIRONMENTS)),
  description: maybe(z.string()),
  customer: optional(open({ name: maybe(z.string()), email: maybe(z.string()), phone: maybe(z.string()) })),
  gateway: maybe(z.string()),
  checkout_url: maybe(z.string()),
  expires_at: maybe(z.string()),
  failure_reason: maybe(z.string()),
  created_at: optional(z.string()),
  updated_at: optional(z.string()),
});
type _PaymentRecord = Assert<Ties<typeof paymentRecordSchema, PaymentRecord>>;

/** One payment in a list. */
export type PaymentListItem = PaymentRecord;
/** One payment in a list. */
export const PaymentListItem: Schema<PaymentListItem> = paymentRecordSchema;
/** A payment fetched by id (bare or in a `{ status, data }` envelope). */
export const PaymentRecord: Schema<PaymentRecord> = enveloped(paymentRecordSchema);

/** Params of `payments.push`. */
export interface PaymentPushParams {
  /** Mobile number to ring; optional when the payment has one from its creation. */
  customer_phone?: string | undefined;
}

/** Params of `payments.push`. */
export const PaymentPushParams: Schema<PaymentPushParams> = z.strictObject({
  customer_phone: optional(mobileNumber),
}) satisfies Schema<PaymentPushParams>;

/** Result of `payments.push` (the sandbox's shape; `{}` when the service answers with no body). */
export interface PaymentPushResult {
  /** The payment's transaction id. */
  trx_id?: string | undefined;
  /** The payment's status (`pending` while the customer decides). */
  status?: PaymentStatus | undefined;
  /** The number the push went to. */
  customer_phone?: string | undefined;
  /** How many pushes this payment has had. */
  push_count?: number | undefined;
}

const pushResultSchema = open({
  trx_id: optional(z.string()),
  status: optional(openEnum(PAYMENT_STATUSES)),
  customer_phone: optional(z.string()),
  push_count: optional(z.number()),
});
type _PaymentPushResult = Assert<Ties<typeof pushResultSchema, PaymentPushResult>>;
/** Result of `payments.push`. */
export const PaymentPushResult: Schema<PaymentPushResult> = enveloped(pushResultSchema);

/** A verified transaction: check `status === 'success'` before fulfilling. */
export interface VerifiedTransaction {
  /** `pending`, `success` or `failed`: fulfil only on `success`. */
  status: PaymentStatus;
  /** The service's transaction id. */
  trx_id: string;
  /** Amount in currency units. */
  amount: number;
  /** Fee in currency units. */
  fee: number;
  /** 3-letter currency code. */
  currency: string;
  /** Amount less the fee. */
  net_amount: number;
  /** The customer as you sent them. */
  customer: { name: string | null; email: string | null };
  /** The description you sent. */
  description: string | null;
  /** Creation time (ISO 8601, UTC). */
  created_at: string;
  /** Last change (ISO 8601, UTC). */
  updated_at: string;
}

/** What `waitForOutcome` resolves to: the verified transaction, and why it failed when the service says. */
export interface PaymentOutcome extends VerifiedTransaction {
  /** Why a failed payment failed, from the payment record (e.g. `INSUFFICIENT_FUNDS`). */
  failure_reason?: string | null | undefined;
  /** The service's words for the failure, when it sends them. */
  failure_message?: string | null | undefined;
}

const verifiedSchema = open({
  status: openEnum(PAYMENT_STATUSES),
  trx_id: z.string(),
  amount: z.number(),
  fee: z.number(),
  currency: z.string(),
  net_amount: z.number(),
  customer: open({ name: z.nullable(z.string()), email: z.nullable(z.string()) }),
  description: z.nullable(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
});
type _VerifiedTransaction = Assert<Ties<typeof verifiedSchema, VerifiedTransaction>>;
/** A verified transaction (bare or in a `{ status, data }` envelope). */
export const VerifiedTransaction: Schema<VerifiedTransaction> = enveloped(verifiedSchema);

/** Options of `payments.waitForOutcome`. */
export interface WaitForOutcomeOptions {
  /** Give up after this many ms. Default 120 000. */
  timeout?: number | undefined;
  /** Ms between verify calls. Default 3 000. */
  interval?: number | undefined;
  /** Stops waiting. */
  signal?: AbortSignal | undefined;
}
