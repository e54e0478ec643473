// What the fulfillment kit gives back: the kit's object (`Fulfillment`), what each report of
// an outcome came to, the reports of `reconcile` and `drain`, and its traces. Types only,
// below every step of the kit (no import circle).
import type { VerifiedTransaction } from '../schemas/payments.js';
import type { WebhookHeaders } from '../webhooks/headers.js';
import type { WebhookPayload } from '../webhooks/verify.js';
import type { NodeWebhookRequest } from './body.js';
import type { FulfillmentStore, InboxRecord, InboxState } from './store.js';

/**
 * What happened to one report of an outcome:
 * - `ran`: a handler ran now (or none was needed) and the outcome is recorded;
 * - `done`: the outcome was recorded before (a duplicate);
 * - `busy`: another claim is handling it right now;
 * - `pending`: verify does not say `success` or `failed` yet: nothing ran;
 * - `review`: a second payment of a paid order, or an amount that does not match: handed to
 *   `onDuplicatePayment` / `onMismatch`, or put on the review list. `onPaid` did not run.
 *
 * No result, a `PaymentsError`, when the kit cannot say `ran`: a handler that outlived
 * `handlerTimeout` (`… past handlerTimeout …`), or a claim whose lease ran out before its
 * handler returned (`lease lost on …`, also logged at warn: on Redis another process may have
 * run the handler too). A webhook processed in the request is then answered 500 with that message.
 */
export type SettleResult = 'ran' | 'done' | 'busy' | 'pending' | 'review';

/**
 * A payment's outcome, as {@link Fulfillment.outcome} answers it:
 * - `paid`: `onPaid` ran for it (here, in another process, or now), or its order was already
 *   paid by this same payment;
 * - `failed`: the service says it failed (`onFailed` ran);
 * - `review`: a second payment of a paid order, or an amount that does not match: `onPaid` did
 *   not run, and it went to `onDuplicatePayment` / `onMismatch` or the review list;
 * - `pending`: not final yet: the service says neither success nor failed, or another claim is
 *   settling it right now, or the wait ended first. Show "confirming", and ask again.
 */
export type PaymentState = 'paid' | 'failed' | 'review' | 'pending';

/** Options of {@link Fulfillment.outcome}. */
export interface OutcomeOptions {
  /**
   * Your reference for the payment (the attempt's `ref_trx` from your own records, never from
   * the URL): its order when the kit has none recorded (as for `handleVerified`).
   */
  merchantRef?: string | undefined;
  /**
   * Asks again every 3 s for at most this many ms while the outcome is `pending`; then answers
   * `pending` (no error). Default 0: one answer, at once. The callers waiting on one payment in
   * this process share one loop (one verify at a time), started with the first one's `merchantRef`.
   */
  wait?: number | undefined;
  /** Ends this caller's wait: the promise rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
}

/** A Node-style webhook answer: status and JSON body text. */
export interface WebhookAnswer {
  /** HTTP status to send back. */
  status: number;
  /** JSON text to send back. */
  body: string;
}

/** Options of {@link Fulfillment.reconcile}. */
export interface ReconcileOptions {
  /** Payments created at or after this moment (a Date, or ms since the epoch). */
  since: Date | number;
  /** Skip payments younger than this, ms (their webhook may still come). Default 600 000 (10 minutes). */
  olderThan?: number | undefined;
  /** Stops the walk. */
  signal?: AbortSignal | undefined;
  /** Called after each payment looked at. */
  onProgress?: ((report: ReconcileReport) => void) | undefined;
}

/** What {@link Fulfillment.reconcile} found. */
export interface ReconcileReport {
  /** Payments the list walk yielded. */
  seen: number;
  /** In the window (`since` … now − `olderThan`) and without a recorded outcome: verified. */
  checked: number;
  /** Settled as paid now (`onPaid` ran). */
  paid: number;
  /** Settled as failed now. */
  failed: number;
  /** Still pending at the service. */
  pending: number;
  /** Handled elsewhere at the same moment (another claim held it). */
  busy: number;
  /** Payments whose verify or handler threw: `trx_id` and the message (at most 1,000 listed). */
  errors: Array<{ trx_id: string; message: string }>;
  /**
   * Payments this store never saw an attempt for (an attempt reference, `<order>~a<n>`, that
   * `newAttempt` never made here): not settled, and not errors (at most 1,000 listed).
   */
  unknown: string[];
  /** Payments handed to `onDuplicatePayment` / `onMismatch` or the review list: not errors (at most 1,000 listed). */
  review: string[];
  /**
   * `store` when the server has no payment list (the earlier generation): the payments the
   * store was told of and has no outcome for were walked instead, oldest first. Absent when
   * the service's payment list was walked.
   */
  walked?: 'store' | undefined;
}

/** A new attempt at paying an order ({@link Fulfillment.newAttempt}). */
export interface PaymentAttempt {
  /** The `ref_trx` to create the payment with: `<order>~a<n>`. */
  ref_trx: string;
  /** The Idempotency-Key to create it with (one per attempt). */
  idempotencyKey: string;
  /** `n`: 1 for the order's first attempt. */
  attempt: number;
}

/** What {@link Fulfillment.drain} did. */
export interface DrainReport {
  /** Inbox records processed. */
  processed: number;
  /** Done now. */
  done: number;
  /** Failed (or busy elsewhere) and due again later. */
  retried: number;
  /** Failed for the `maxAttempts`-th time: `dead`. */
  dead: number;
}

/** What {@link createFulfillment} returns. */
export interface Fulfillment {
  /**
   * A Fetch API webhook route: verifies, settles, answers (401 unsigned, bad signature or
   * stale timestamp, 400 not an event, 409 in flight elsewhere, 413 body over `maxBodyBytes`,
   * 500 a handler threw). The headers are checked before the body is read, and the body is
   * read through its stream, at most `maxBodyBytes` of it (the stream is cancelled past that).
   */
  handleWebhook(request: Request): Promise<Response>;
  /** The same for Lambda and a body already read: the raw body and the headers in, `{ status, body }` out (a `payload` over `maxBodyBytes` is 413). */
  handleWebhook(delivery: { payload: WebhookPayload; headers: WebhookHeaders }): Promise<WebhookAnswer>;
  /**
   * The same for node:http and Express: the request itself (`handleWebhook(req)`), its body
   * not yet read. The headers are checked first, then at most `maxBodyBytes` are read. Send
   * the answer as it is: after a 401 or 413 Node stops reading that connection, writes the
   * answer, and closes the connection once idle. (Closing it under the upload, with
   * `connection: close` or `req.socket.destroy()`, can cost the client the answer: a reset.)
   *
   * @example
   * ```ts
   * import { createServer } from 'node:http';
   *
   * createServer(async (req, res) => {
   *   const { status, body } = await fulfillment.handleWebhook(req);
   *   res.writeHead(status, { 'content-type': 'application/json' }).end(body);
   * });
   * ```
   */
  handleWebhook(request: NodeWebhookRequest): Promise<WebhookAnswer>;
  /** Settles a transaction you verified yourself (return page, `waitForOutcome`). Throws what a handler threw. */
  handleVerified(transaction: VerifiedTransaction, options?: { merchantRef?: string | undefined }): Promise<SettleResult>;
  /**
   * A payment's outcome for a return or checkout page, asked of the kit rather than the client:
   * from the store when it is recorded (no call). Else the payment is verified once, in its
   * claim and within the client's polling budget, and settled through the same once-only path
   * as a delivery: the page that finds it paid before the webhook fulfils it (`onPaid` runs
   * once, here or for the delivery, never twice), and the delivery then costs no verify. What
   * it could not settle is kept for `reconcile`. Throws what verify or a handler threw.
   *
   * @example
   * ```ts
   * const state = await fulfillment.outcome(trxId, { merchantRef: 'order-1001~a1', wait: 30_000 });
   * // 'paid' | 'failed' | 'review' | 'pending'
   * ```
   */
  outcome(trxId: string, options?: OutcomeOptions): Promise<PaymentState>;
  /** Walks every payment created since `since` and settles each one the store has no outcome for. */
  reconcile(options: ReconcileOptions): Promise<ReconcileReport>;
  /** The store the kit records claims and outcomes in. */
  readonly store: FulfillmentStore;
  /**
   * A new attempt at paying `orderRef`: create the payment with its `ref_trx` and
   * `idempotencyKey`. Each call makes a new one (`order-1001~a1`, `~a2`, …), so an order whose
   * payment failed, was cancelled or expired can be paid again; the kit pays the order once
   * across its attempts. Keep `ref_trx` with the order: it finds the `trx_id` later.
   */
  newAttempt(orderRef: string): Promise<PaymentAttempt>;
  /**
   * Processes the inbox records that are due (a cron job, a serverless schedule), at most `limit`
   * (default 1,000). `signal` stops it between records, and at once while a verify waits for its
   * slot in the polling budget (that record is due again, no attempt counted); a handler running
   * is waited for (`handlerTimeout` at most).
   */
  drain(options?: { signal?: AbortSignal | undefined; limit?: number | undefined }): Promise<DrainReport>;
  /** Processes the inbox until `signal` aborts (a worker process), waiting `idleMs` (default 1,000) when nothing is due; `signal` as for `drain`. */
  work(options: { signal: AbortSignal; idleMs?: number | undefined }): Promise<void>;
  /** Inbox records in `state`, oldest first, at most `limit` (default 100): `dead` ones, the `review` list. */
  inbox(options: { state: InboxState; limit?: number | undefined }): Promise<InboxRecord[]>;
  /** Makes the record `id` pending again with no attempts, and processes it now; `false` when there is none. */
  replay(id: string): Promise<boolean>;
  /**
   * Processes the inbox record `id` as `drain()` would: what a trigger's worker calls with its
   * job's id (`createFulfillment({ trigger })`). Engines deliver at least once: a job delivered
   * again is answered from the store, and fulfils once. See {@link ProcessResult} for what
   * to tell the engine.
   */
  process(id: string): Promise<ProcessResult>;
}

/**
 * What {@link Fulfillment.process} did with a job's record:
 * - `done`: processed now, or before (a redelivered job); acknowledge the job;
 * - `retry`: processing failed (a handler threw, verify said pending): due again after the
 *   kit's `retryDelay`, `dead` after `maxAttempts`; make the engine retry the job later;
 * - `busy`: not takeable now (another worker holds it, or its retry is not due yet); retry
 *   the job later too (its holder may die);
 * - `dead`: failed `maxAttempts` times (`inbox({ state: 'dead' })`, `replay(id)`); acknowledge;
 * - `unknown`: the store has no such record; acknowledge.
 *
 * To make an engine retry, fail the job: throw from a pg-boss or BullMQ handler (pg-boss:
 * the queue's `retryLimit`, `retryDelay`, `retryBackoff`; BullMQ: the job's `attempts` and
 * `backoff`), or do not acknowledge a push queue's message (throw, or answer it with a 5xx).
 * Give the engine a backoff no shorter than the kit's `retryDelay` and at least `maxAttempts`
 * retries: a retry that comes before the record is due is answered `busy`.
 */
export type ProcessResult = 'done' | 'busy' | 'retry' | 'dead' | 'unknown';

/**
 * What the kit publishes on the TracingChannel `business-payments:fulfillment`: one trace
 * per webhook delivery (`handleWebhook`), per `handleVerified` and per payment `reconcile`
 * settles. Never a secret, a signature, a body or a customer's details.
 */
export interface FulfillmentTrace {
  /** Which entry point: `handleWebhook`, `handleVerified`, `outcome`, `reconcile`, or `inbox` (processing a recorded delivery). */
  operation: 'handleWebhook' | 'handleVerified' | 'outcome' | 'reconcile' | 'inbox';
  /** The kit's environment. */
  environment: 'sandbox' | 'production';
  /** The transaction settled, once known. */
  trxId?: string | undefined;
  /** The delivery's event type and id, once verified. */
  eventType?: string | undefined;
  /** The delivery's event id. */
  eventId?: string | undefined;
  /** What happened: `ran`, `done`, `busy` or `pending`. */
  result?: SettleResult | undefined;
  /** The HTTP status the delivery was answered with (`handleWebhook`). */
  status?: number | undefined;
  /** The class of the error a handler, verify or the store threw. */
  errorClass?: string | undefined;
}
