import * as z from 'zod';
import type { APIPromise } from '../core/api-promise.js';
import { APITimeoutError, APIUserAbortError, InvalidParamsError } from '../core/error.js';
import type { PagePromise } from '../core/pagination.js';
import { APIResource } from '../core/resource.js';
import { currencyCode, httpUrl, lenientRecord, mobileNumber, openEnum, pageParams, pathId, unwrapEnvelope } from '../internal/fields.js';
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
      { operation: 'payments.create', method: 'POST', path: '/api/v1/payments', params: [PaymentCreateParams, params], httpsInProduction: URL_FIELDS, response: PaymentCreateResponse, retry: 'create' },
      options,
    );
  }

  /** One page of payments (GET /api/v1/payments); `for await` walks every page. */
  list(params?: PaymentListParams, options?: RequestOptions): PagePromise<PaymentListItem> {
    return this._client.requestPage(
      { operation: 'payments.list', method: 'GET', path: '/api/v1/payments', params: PaymentListParams, value: params, item: PaymentListItem },
      options,
    );
  }

  /** One payment and its status (GET /api/v1/payments/{trx_id}). */
  retrieve(trxId: string, options?: RequestOptions): APIPromise<PaymentRecord> {
    return this._client.request(
      { operation: 'payments.retrieve', method: 'GET', path: '/api/v1/payments/{trx_id}', pathParams: { trx_id: [pathId, trxId] }, response: PaymentRecord },
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
      { operation: 'payments.push', method: 'POST', path: '/api/v1/payments/{trx_id}/push', pathParams: { trx_id: [pathId, trxId] }, params: [PaymentPushParams, params ?? {}], response: PaymentPushResult, retry: 'push', emptyBodyOk: true },
      options,
    );
  }

  /** Verifies a transaction server-side before fulfilment (GET /api/v1/verify-payment/{trxId}). */
  verify(trxId: string, options?: RequestOptions): APIPromise<VerifiedTransaction> {
    return this._client.request(
      { operation: 'payments.verify', method: 'GET', path: '/api/v1/verify-payment/{trxId}', pathParams: { trxId: [pathId, trxId] }, response: VerifiedTransaction },
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
      { operation: 'payments.initiate', method: 'POST', path: '/api/v1/initiate-payment', params: [PaymentInitiateParams, params], httpsInProduction: URL_FIELDS, response: PaymentSession, retry: 'create' },
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
  async waitForOutcome(trxId: string, options: WaitForOutcomeOptions = {}): Promise<VerifiedTransaction> {
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
        if (transaction.status !== 'pending') return transaction.status === 'failed' ? await this.#withFailure(transaction, stop) : transaction;
        await sleep(interval, stop);
      }
    } catch (cause) {
      if (signal?.aborted) throw new APIUserAbortError('payments.waitForOutcome was aborted.', { cause: signal.reason });
      if (!deadline.signal.aborted) throw cause;
      throw new APITimeoutError(`payments.waitForOutcome: ${trxId} is still pending after ${timeout} ms; check again later or wait for the webhook.`);
    } finally {
      clearTimeout(timer);
    }
  }

  // verify's documented shape has no reason; the payment record may: add it when it does.
  async #withFailure(transaction: VerifiedTransaction, signal: AbortSignal): Promise<VerifiedTransaction> {
    if (transaction.failure_reason != null) return transaction;
    const record = await this.retrieve(transaction.trx_id, { signal }).catch(() => undefined);
    if (typeof record?.failure_reason !== 'string') return transaction;
    return { ...transaction, failure_reason: record.failure_reason, failure_message: typeof record.failure_message === 'string' ? record.failure_message : null };
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
export const PaymentStatus = z.enum(['pending', 'success', 'failed']);
/** Payment status: `pending` at creation, then `success` or `failed`. */
export type PaymentStatus = z.infer<typeof PaymentStatus>;

/** `sandbox` or `production`. */
export const EnvironmentName = z.enum(['sandbox', 'production']);

// A gateway keyword: checked, never rewritten (the server matches it case-insensitively).
const methodKeyword = z.string().refine((keyword) => keyword.trim() !== '', 'must not be empty or blank');

const paymentFields = {
  payment_amount: z.number().finite().min(1, 'must be at least 1.00'),
  currency_code: currencyCode,
  ref_trx: z.string().min(1, 'must not be empty').max(60, 'must be at most 60 characters'),
  description: z.string().optional(),
  customer_name: z.string().max(100, 'must be at most 100 characters').optional(),
  customer_email: z.email('must be a valid e-mail address').max(100, 'must be at most 100 characters').optional(),
  customer_phone: mobileNumber.optional(),
  payment_mode: z.enum(['hosted', 'push']).optional(),
  allow_payment_methods: z
    .union([methodKeyword, z.array(methodKeyword).min(1, 'must list at least one method')])
    .optional(),
};

const pushNeedsPhone = (params: { payment_mode?: string | undefined; customer_phone?: string | undefined }, ctx: z.RefinementCtx) => {
  if (params.payment_mode === 'push' && params.customer_phone === undefined) {
    ctx.addIssue({ code: 'custom', path: ['customer_phone'], message: 'is required when payment_mode is push' });
  }
};

// zod skips refinements once another field has a type error; this rule must still run so
// InvalidParamsError lists every failing field at once. It only reads two keys, so any
// object (even one with other fields wrong) is safe to look at.
const onAnyObject = {
  when: (payload: z.core.ParsePayload) => typeof payload.value === 'object' && payload.value !== null && !Array.isArray(payload.value),
};

/**
 * Params of `payments.create`. Unknown keys are refused, so a misspelt field can never be
 * dropped silently from a payment.
 */
export const PaymentCreateParams = z
  .strictObject({
    ...paymentFields,
    success_redirect: httpUrl.optional(),
    cancel_redirect: httpUrl.optional(),
    ipn_url: httpUrl.optional(),
    /** Synonym of `ipn_url`. */
    webhook_url: httpUrl.optional(),
  })
  .superRefine(pushNeedsPhone, onAnyObject)
  .superRefine((params, ctx) => {
    if (params.ipn_url && params.webhook_url && params.ipn_url !== params.webhook_url) {
      ctx.addIssue({ code: 'custom', path: ['webhook_url'], message: 'is a synonym of ipn_url: give one, or the same URL in both' });
    }
  });
/** Params of `payments.create`. */
export type PaymentCreateParams = z.input<typeof PaymentCreateParams>;

/** Params of the legacy `payments.initiate`: the redirects and ipn_url are required there. */
export const PaymentInitiateParams = z
  .strictObject({
    ...paymentFields,
    success_redirect: httpUrl,
    cancel_redirect: httpUrl,
    ipn_url: httpUrl,
  })
  .superRefine(pushNeedsPhone, onAnyObject);
/** Params of the legacy `payments.initiate`. */
export type PaymentInitiateParams = z.input<typeof PaymentInitiateParams>;

/** The payment object of a creation response (`data`). */
export const Payment = z.looseObject({
  trx_id: z.string(),
  merchant_ref: z.string(),
  amount: z.number(),
  currency: z.string(),
  status: openEnum(PaymentStatus.options),
  // Hosted mode only: a push payment has no checkout link.
  checkout_url: z.string().nullish(),
  expires_at: z.string().nullish(),
  environment: openEnum(EnvironmentName.options),
});
/** A created payment. */
export type Payment = z.infer<typeof Payment>;

/** Creation body `{ status, data, payment_url, trx_id }`; callers get `data`. */
export const PaymentCreateResponse = z
  .looseObject({
    status: z.string(),
    data: Payment,
    payment_url: z.string().nullish(),
    trx_id: z.string(),
  })
  .transform((body) => body.data);

/** `info` of a legacy payment session. Echoes of optional inputs may be null or absent. */
export const PaymentSessionInfo = z.looseObject({
  ref_trx: z.string(),
  description: z.string().nullish(),
  ipn_url: z.string(),
  cancel_redirect: z.string(),
  success_redirect: z.string(),
  customer_name: z.string().nullish(),
  customer_email: z.string().nullish(),
  merchant_id: z.int(),
  merchant_name: z.string(),
  amount: z.number(),
  currency_code: z.string(),
  environment: openEnum(EnvironmentName.options),
  is_sandbox: z.boolean(),
  allow_payment_methods: z.array(z.string()).nullish(),
  merchant_payment_methods_restricted: z.boolean(),
  merchant_payment_method_ids: z.array(z.union([z.int(), z.string()])),
  merchant_payment_method_codes: z.array(z.string()),
});

/** Legacy creation response: a signed, time-limited `payment_url` and the session `info`. */
export const PaymentSession = z.looseObject({
  payment_url: z.string(),
  info: PaymentSessionInfo,
  // The alias also carries trx_id and checkout_url in data; not every server sends it.
  data: z.looseObject({ trx_id: z.string().optional(), checkout_url: z.string().nullish() }).optional(),
});
/** Legacy payment session. */
export type PaymentSession = z.infer<typeof PaymentSession>;

/** Params of `payments.list`. */
export const PaymentListParams = z
  .strictObject({
    ...pageParams,
    status: z.string().min(1).optional(),
    merchant_ref: z.string().min(1).max(60, 'must be at most 60 characters').optional(),
  })
  .optional();
/** Params of `payments.list`. */
export type PaymentListParams = z.input<typeof PaymentListParams>;

// List and retrieve bodies are not shown in the spec: known fields are typed when present,
// nothing is required, unknown fields are kept.
const paymentRecordShape = {
  trx_id: z.string().optional(),
  merchant_ref: z.string().nullish(),
  amount: z.number().optional(),
  currency: z.string().optional(),
  status: z.string().optional(),
  environment: z.string().optional(),
  /** Why a failed payment failed, when the service says. */
  failure_reason: z.string().nullish(),
  /** The service's words for the failure, when it says. */
  failure_message: z.string().nullish(),
};

/** One payment in a list (lenient: the spec does not show list bodies). */
export const PaymentListItem = z.looseObject(paymentRecordShape);
/** One payment in a list. */
export type PaymentListItem = z.infer<typeof PaymentListItem>;

/** A payment fetched by id (lenient: the spec only says it carries the status). */
export const PaymentRecord = lenientRecord(paymentRecordShape);
/** A payment fetched by id. */
export type PaymentRecord = z.infer<typeof PaymentRecord>;

/** Params of `payments.push`. */
export const PaymentPushParams = z.strictObject({ customer_phone: mobileNumber.optional() });
/** Params of `payments.push`. */
export type PaymentPushParams = z.input<typeof PaymentPushParams>;

/** Result of `payments.push` (lenient: the spec does not show it). */
export const PaymentPushResult = lenientRecord({ trx_id: z.string().optional(), status: z.string().optional() });
/** Result of `payments.push`. */
export type PaymentPushResult = z.infer<typeof PaymentPushResult>;

/** A verified transaction: check `status === 'success'` before fulfilling. */
export const VerifiedTransaction = z.preprocess(
  unwrapEnvelope,
  z.looseObject({
    status: openEnum(PaymentStatus.options),
    trx_id: z.string(),
    amount: z.number(),
    fee: z.number(),
    currency: z.string(),
    net_amount: z.number(),
    customer: z.looseObject({ name: z.string().nullable(), email: z.string().nullable() }),
    description: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    /** Why a failed payment failed, when the service says (e.g. `INSUFFICIENT_FUNDS`). */
    failure_reason: z.string().nullish(),
    /** The service's words for the failure, when it says. */
    failure_message: z.string().nullish(),
  }),
);
/** A verified transaction. */
export type VerifiedTransaction = z.infer<typeof VerifiedTransaction>;

/** Options of `payments.waitForOutcome`. */
export interface WaitForOutcomeOptions {
  /** Give up after this many ms. Default 120 000. */
  timeout?: number;
  /** Ms between verify calls. Default 3 000. */
  interval?: number;
  /** Stops waiting. */
  signal?: AbortSignal;
}
