// The fulfillment kit's types: its options, what it returns and reports, and what its
// handlers get. Apart from the code so that create.ts, settle.ts and inbox.ts all read them
// from here and none of those imports another's types (no import circle).
import type { PaymentRecord, VerifiedTransaction } from '../schemas/payments.js';
import type { WebhookEvent } from '../webhooks/events.js';
import type { WebhookHeaders } from '../webhooks/headers.js';
import type { WebhookPayload } from '../webhooks/verify.js';
import type { NodeWebhookRequest } from './body.js';
import type { FulfillmentStore, InboxRecord, InboxState } from './store.js';

/** What the kit needs of a `PaymentsClient` (pass the client itself). */
export interface FulfillmentClient {
  /** The client's environment: it must be the kit's. */
  readonly environment: 'sandbox' | 'production';
  /** `verify` confirms each outcome; `list` is walked by `reconcile`. */
  readonly payments: {
    /** `client.payments.verify`: confirms an outcome before any handler runs. */
    verify(trxId: string): PromiseLike<VerifiedTransaction>;
    /** `client.payments.list`: walked by `reconcile`. */
    list(params?: { limit?: number }): AsyncIterable<PaymentRecord>;
  };
  /** The client's polling budget: each verify the kit sends on its own waits for a slot (a client without it is not paced). */
  pollSlot?(signal?: AbortSignal): Promise<void>;
  /** The client's logger at warn: why a delivery was refused. */
  warn?(line: string): void;
}

/** A verified transaction as the handlers get it: with your order reference when known. */
export type FulfilledTransaction = VerifiedTransaction & {
  /** Your `ref_trx`, from the webhook (or, when the service sent none, the `merchantRef` you passed), when known. */
  merchant_ref?: string | undefined;
  /**
   * The order this payment was an attempt at: `merchant_ref` without its attempt suffix
   * (`order-1001~a2` → `order-1001`, see {@link Fulfillment.newAttempt}), else `merchant_ref`
   * itself. An order is paid once across its attempts.
   */
  order_ref?: string | undefined;
};

/** An order's price, as {@link FulfillmentOptions.expect} gives it. */
export interface ExpectedPrice {
  /** The amount the customer should have paid: a number, or a decimal string (pg's `numeric`). */
  amount: number | string;
  /** Its 3-letter currency code. */
  currency: string;
}

/** What a handler gets beside the transaction or event. */
export interface FulfillmentContext<Db = unknown> {
  /**
   * The claim's own database handle (`postgresStore`: the claim's transaction, so what you
   * write through it commits with the claim, exactly once); `undefined` for other stores.
   */
  db: Db;
  /** Which path reported it. */
  source: 'webhook' | 'verified' | 'reconcile';
  /** The webhook event, when a delivery reported it. */
  event?: WebhookEvent | undefined;
  /** `onMismatch`: the price `expect` gave for the order. */
  expected?: ExpectedPrice | undefined;
  /**
   * A key for what this handler does, the same for every run of it for this payment (or event)
   * and outcome, in any process: `payment:<trx_id>:paid` (`onPaid`, `expect`),
   * `payment:<trx_id>:failed`, `payment:<trx_id>:review:<reason>`, `event:<id>:handled` (an
   * event without an id gets one of its own each time). Pass it as the idempotency key of an
   * effect outside `ctx.db` (a warehouse API, an e-mail): where a handler can run twice (Redis
   * and memory stores: a crash, or a holder paused past its lease), the effect then happens once.
   */
  effectKey: string;
  /**
   * Aborts when the kit stops waiting for this handler (`handlerTimeout`). Pass it on (`fetch`,
   * your driver) to stop then: the claim is held until the handler returns, whatever the kit
   * answered. (A handler run without a claim, for an event without an id, gets one that never aborts.)
   */
  signal: AbortSignal;
}

/** A handler of the kit: the verified transaction (or event) and its context; may be async. */
export type Handler<T, Db = unknown> = (value: T, context: FulfillmentContext<Db>) => unknown;

/**
 * Options of {@link createFulfillment}. `Db` is what the store's claims hand the handlers as
 * `ctx.db`: inferred from `store` (`postgresStore`: `PostgresClaimDb`, the claim's own
 * transaction; `memoryStore` and `redisStore`: `undefined`).
 */
export interface FulfillmentOptions<Db = unknown> {
  /** Deliveries for the other environment are refused, and the client must be of this one. */
  environment: 'sandbox' | 'production';
  /**
   * The webhook signing secret (an array during rotation). On the service's earlier
   * generation, which has no webhook secret, the **API secret**: its IPN is signed with it
   * (during a move between generations, `[webhookSecret, apiSecret]`). Checked by
   * `createFulfillment`: not set, or leading or trailing whitespace (never trimmed), is a
   * `ConfigurationError`.
   */
  secret: string | readonly string[];
  /**
   * The `PaymentsClient` of that environment: it verifies every outcome before a handler runs.
   * A delivery `handleWebhook` refuses (401, 400) is logged through its `logger` at `warn`
   * (with `logLevel` `warn` or more): `webhook refused, <reason>: <why>`, e.g.
   * `timestamp_too_old: Timestamp 3600 s old (tolerance 300 s)` from a clock that is off;
   * never the secret, the signature or the body.
   */
  client: FulfillmentClient;
  /** Where claims and outcomes live. Default `memoryStore()`: one process only. */
  store?: FulfillmentStore<Db> | undefined;
  /** Runs once per `trx_id`, with the verified transaction, only when its status is `success`. Check the amount and currency against your order here. */
  onPaid: Handler<FulfilledTransaction, Db>;
  /** Runs at most once per `trx_id` when verify says `failed`, never after `onPaid`. */
  onFailed?: Handler<FulfilledTransaction, Db> | undefined;
  /**
   * The price of the order a payment is for (`tx.order_ref`), read in the claim (`ctx.db`):
   * the kit compares it with {@link paidAmount}`(tx)` and the currency, and on a mismatch runs
   * `onMismatch` (or puts the payment on the review list, `inbox({ state: 'review' })`), never
   * `onPaid`. Return `undefined` to skip the check for a payment.
   */
  expect?:
    | ((tx: FulfilledTransaction, context: FulfillmentContext<Db>) => ExpectedPrice | undefined | PromiseLike<ExpectedPrice | undefined>)
    | undefined;
  /** Runs once per `trx_id` for a payment whose amount or currency is not what `expect` gave (`ctx.expected`). Without it, the payment goes on the review list. */
  onMismatch?: Handler<FulfilledTransaction, Db> | undefined;
  /**
   * Runs once per `trx_id` for a second successful payment of an order already paid (another
   * attempt of it): refund it, or tell a person. Without it, the payment goes on the review list.
   */
  onDuplicatePayment?: Handler<FulfilledTransaction, Db> | undefined;
  /** Runs once per event id for every other event (subscription.*, invoice.*, a `payment.*` other than `payment.completed` / `payment.failed`, newer types); `ctx.db` is `undefined` for an event without an id (no claim). */
  onEvent?: Handler<WebhookEvent, Db | undefined> | undefined;
  /** How long a claim keeps others out if its holder crashes, ms. Default 300 000 (5 minutes). */
  lease?: number | undefined;
  /**
   * How long the kit waits for a handler (`expect` and `onPaid`, or `onFailed`, `onEvent`…, in
   * one claim), ms. Default 300 000 (5 minutes). Past it the kit aborts `ctx.signal` and fails
   * the attempt (an inbox delivery is retried on its backoff, then `dead`; in the request, a
   * 500), but the claim stays held, and renewed, until the handler does return, so that a second
   * run never starts beside one that may still act: meanwhile the key's attempts in this process
   * fail at once, and other processes find it busy.
   */
  handlerTimeout?: number | undefined;
  /** Keeps a serverless runtime alive for work after the response (Workers' `ctx.waitUntil`). */
  waitUntil?: ((promise: Promise<unknown>) => void) | undefined;
  /**
   * `true` (the default with a durable store that has one): `handleWebhook` verifies a
   * delivery, records it in the store's inbox and answers 200 at once; it is processed right
   * after (in the background, or through `waitUntil`), and by `drain()` / `work()` if that
   * did not finish. `false`: processed inside the request, as the service waits.
   */
  inbox?: boolean | undefined;
  /** Processing attempts of an inbox record before it is `dead`. Default 8. */
  maxAttempts?: number | undefined;
  /** How long an inbox record waits after its `attempts`-th failure, ms. Default 10 s × 2^(attempts − 1), at most an hour. */
  retryDelay?: ((attempts: number) => number) | undefined;
  /**
   * The most bytes of a webhook body `handleWebhook` reads. A longer one (by its declared
   * `content-length`, as it streams in, or a `payload` given) is answered 413
   * `{ error: 'payload_too_large' }` and the rest is not read. Default 1,048,576 (1 MiB; a
   * delivery is a few KB). A whole number more than 0, else a `ConfigurationError`.
   */
  maxBodyBytes?: number | undefined;
}

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
}

/**
 * What the kit publishes on the TracingChannel `business-payments:fulfillment`: one trace
 * per webhook delivery (`handleWebhook`), per `handleVerified` and per payment `reconcile`
 * settles. Never a secret, a signature, a body or a customer's details.
 */
export interface FulfillmentTrace {
  /** Which entry point: `handleWebhook`, `handleVerified`, `reconcile`, or `inbox` (processing a recorded delivery). */
  operation: 'handleWebhook' | 'handleVerified' | 'reconcile' | 'inbox';
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
