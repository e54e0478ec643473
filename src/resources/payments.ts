import type { APIPromise } from '../core/api-promise.js';
import { APIConnectionError, APIError, APITimeoutError, APIUserAbortError, InvalidParamsError } from '../core/error.js';
import type { PagePromise } from '../core/pagination.js';
import { MAX_TIMEOUT_MS, type RequestOptions } from '../internal/options.js';
import { sleep, type Pace } from '../internal/pace.js';
import { RETRYABLE_STATUS } from '../internal/retry.js';
import type {
  Payment,
  PaymentCreateParams,
  PaymentInitiateParams,
  PaymentListItem,
  PaymentListParams,
  PaymentOutcome,
  PaymentPushParams,
  PaymentPushResult,
  PaymentRecord,
  PaymentSession,
  VerifiedTransaction,
  WaitForOutcomeOptions,
} from '../schemas/payments.js';
import { APIResource } from './resource.js';

/**
 * Payments: create a hosted checkout or a USSD push, follow it, verify it.
 *
 * @example
 * ```ts
 * const payment = await client.payments.create({
 *   payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1003~a1', // one ref per attempt
 *   success_redirect: 'https://shop.example.com/thanks',
 *   ipn_url: 'https://shop.example.com/webhooks/payments', // needed unless API Config has a default
 * });
 * redirect(payment.checkout_url!);
 * ```
 */
export class Payments extends APIResource {
  // The waits in progress, by trx_id: concurrent waits on one payment share one loop.
  readonly #polls = new Map<string, Poll>();

  /** Creates a payment (POST /api/v1/payments). Retries reuse one Idempotency-Key. */
  create(params: PaymentCreateParams, options?: RequestOptions): APIPromise<Payment> {
    return this._client.post('payments.create', params, options);
  }

  /** One page of payments (GET /api/v1/payments); `for await` walks every page. */
  list(params?: PaymentListParams, options?: RequestOptions): PagePromise<PaymentListItem> {
    return this._client.getPage('payments.list', params, options);
  }

  /** One payment and its status (GET /api/v1/payments/{trx_id}). */
  retrieve(trxId: string, options?: RequestOptions): APIPromise<PaymentRecord> {
    return this._client.get('payments.retrieve', trxId, options);
  }

  /**
   * Rings the customer's phone with a USSD push for a pending payment
   * (POST /api/v1/payments/{trx_id}/push). Not idempotent: retried only when the request
   * provably never reached the server, or on 429.
   */
  push(trxId: string, params?: PaymentPushParams, options?: RequestOptions): APIPromise<PaymentPushResult> {
    return this._client.post('payments.push', trxId, params ?? {}, options);
  }

  /**
   * Verifies a transaction server-side before fulfilment (GET /api/v1/verify-payment/{trxId}).
   * An answer for another payment (its `trx_id` is not `trxId`, compared case-insensitively)
   * is refused with a `ResponseValidationError`, never returned.
   */
  verify(trxId: string, options?: RequestOptions): APIPromise<VerifiedTransaction> {
    return this._client.get('payments.verify', trxId, options);
  }

  /**
   * Creates a payment session for the hosted checkout (POST /api/v1/initiate-payment):
   * `success_redirect`, `cancel_redirect` and `ipn_url` are required. It is the only create
   * the service's earlier generation has (the servers deployed today, see docs/generations.md):
   * there it answers `payment_url` and `info` without a `trx_id`, which the IPN brings, and it
   * neither de-duplicates `ref_trx` nor honours an Idempotency-Key. On the current generation
   * prefer {@link Payments.create} (a `trx_id` at once, push mode, idempotent retries).
   *
   * @example
   * ```ts
   * const session = await client.payments.initiate({
   *   payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1001~a1', customer_name: 'Ada',
   *   ipn_url: 'https://shop.example.com/ipn',
   *   success_redirect: 'https://shop.example.com/thanks', cancel_redirect: 'https://shop.example.com/cart',
   * });
   * redirect(session.payment_url);
   * ```
   */
  initiate(params: PaymentInitiateParams, options?: RequestOptions): APIPromise<PaymentSession> {
    return this._client.post('payments.initiate', params, options);
  }

  /**
   * Polls `verify` until the payment is `success` or `failed`, and resolves to that verified
   * transaction. Any other status (`pending`, or one newer than this SDK such as
   * `processing`) keeps it polling: the payment is still being paid. A failed payment
   * carries `failure_reason` / `failure_message` when the service says why. At the deadline,
   * which bounds everything (the calls in flight included), it throws `APITimeoutError`
   * whose `lastStatus` is the last status verify returned.
   *
   * Its polls keep within the client's `pollingBudget` (they wait while the last minute holds
   * 9/10 of it, and after a 429), and concurrent waits on one payment share one poll, at the
   * shortest of their intervals; each keeps its own timeout and signal.
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
    for (const [name, ms] of Object.entries({ timeout, interval }))
      if (!(typeof ms === 'number' && ms > 0 && ms <= MAX_TIMEOUT_MS))
        errors[name] = [`must be a number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`];
    if (Object.keys(errors).length) throw new InvalidParamsError('payments.waitForOutcome', errors);

    // Aborted when this wait ends: its deadline's timer goes with it.
    const end = new AbortController();
    const stop = signal ? AbortSignal.any([signal, end.signal]) : end.signal;
    let poll: Poll | undefined;
    try {
      stop.throwIfAborted();
      poll = this.#polls.get(trxId);
      // The waits on one payment share one loop: the first one starts it, the last one to leave
      // ends it (a wait that joins a loop just ended gets its outcome, which is final).
      if (!poll) {
        this.#polls.set(trxId, (poll = Object.assign([], { stop: new AbortController() }) as unknown as Poll));
        (poll.done = this.#poll(trxId, poll)).catch(() => {});
      }
      poll.push(interval);
      // The outcome, or this wait's own deadline (undefined) or signal (rejects), whichever
      // comes first, whatever the loop is doing.
      const outcome = await Promise.race([poll.done, sleep(timeout, stop)]);
      if (outcome) return outcome;
      const last = poll.last;
      const status = last === undefined ? 'not verified yet' : `still ${last}`;
      // The last failure the polls waited through, if any, says why (a 429, a 5xx).
      const error = new APITimeoutError(
        `payments.waitForOutcome: ${trxId} is ${status} after ${timeout} ms; treat it as not paid yet, and check again later or wait for the webhook.`,
        { cause: poll.error },
      );
      throw Object.assign(error, { lastStatus: last });
    } catch (cause) {
      if (signal?.aborted) throw new APIUserAbortError('payments.waitForOutcome was aborted.', { cause: signal.reason });
      throw cause;
    } finally {
      end.abort();
      if (poll) {
        poll.splice(poll.indexOf(interval), 1);
        // The last wait gone: the loop stops, the verify in flight with it.
        if (!poll.length) {
          this.#polls.delete(trxId);
          poll.stop.abort();
        }
      }
    }
  }

  // The loop of the waits on one payment: verify (within the client's polling budget) until
  // success or failed, sleeping the shortest interval of the waits there at the time.
  async #poll(trxId: string, poll: Poll): Promise<PaymentOutcome> {
    const { signal } = poll.stop;
    const pace = this._client.pace;
    for (;;) {
      await pace.slot(signal);
      // One send per slot: no retries under it. A failure ky would retry for a read (a 429,
      // which pauses the pacer, a 408 or 5xx, a connection) waits for the next slot instead.
      const transaction = await this.verify(trxId, { signal, maxRetries: 0 }).catch((error: unknown) => {
        if (!passing(error)) throw error;
        poll.error = error;
      });
      if (transaction) {
        const status = (poll.last = transaction.status);
        if (status === 'success') return transaction;
        if (status === 'failed') return this.#withFailure(transaction, signal, pace);
      }
      await sleep(Math.min(...poll), signal);
    }
  }

  // verify's documented shape has no reason; the payment record may: add it when it does.
  // The earlier generation's failed answer (no amount) has its words in `message` and no
  // payment record to ask (that route is missing there).
  async #withFailure(transaction: PaymentOutcome, signal: AbortSignal, pace: Pace): Promise<PaymentOutcome> {
    if (transaction.failure_reason != null) return transaction;
    if (transaction.amount === undefined)
      return { ...transaction, failure_message: transaction.failure_message ?? transaction.message ?? null };
    const record = await pace
      .slot(signal)
      .then(() => this.retrieve(transaction.trx_id, { signal, maxRetries: 0 }))
      .catch(() => undefined);
    if (typeof record?.failure_reason !== 'string') return transaction;
    // failure_message is not in the record's documented shape: read only when a server sends it.
    const message = (record as { failure_message?: unknown }).failure_message;
    return { ...transaction, failure_reason: record.failure_reason, failure_message: typeof message === 'string' ? message : null };
  }
}

/** A failure ky retries for a read (a 429, a 408 or 5xx, a connection that failed, an attempt past its timeout). */
const passing = (error: unknown): boolean =>
  error instanceof APIConnectionError || (error instanceof APIError && RETRYABLE_STATUS.includes(error.status));

/** The verify loop of one payment, shared by a client's waits on it: the interval of each wait there now. */
interface Poll extends Array<number> {
  /** The outcome, or the error that ended the loop. */
  done: Promise<PaymentOutcome>;
  /** The last status verify returned. */
  last?: string | undefined;
  /** The last failure a poll waited through (a 429, a 5xx, a connection). */
  error?: unknown;
  /** Aborted when the last wait leaves: ends the loop. */
  stop: AbortController;
}

export * from '../schemas/payments.js';
