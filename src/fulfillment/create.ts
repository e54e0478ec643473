// The fulfillment kit: every paid order fulfilled exactly once, whichever path reports the
// payment first (webhook, return page, reconcile sweep) and however many processes share
// the store. It loads in serverless handlers, so it imports neither ky nor the client: the
// merchant's PaymentsClient is passed in.
import { ConfigurationError, PaymentsError } from '../core/base-error.js';
import type { PaymentRecord, VerifiedTransaction } from '../resources/payments.js';
import { checkSecrets, checkTimestamp, verifyWebhook } from '../webhooks/verify.js';
import { WebhookVerificationError } from '../webhooks/errors.js';
import type { WebhookEvent } from '../webhooks/events.js';
import { readSignedHeaders, type WebhookHeaders } from '../webhooks/headers.js';
import type { WebhookPayload } from '../webhooks/verify.js';
import { memoryStore, type FulfillmentStore, type InboxRecord, type InboxState } from './store.js';
import { inboxWorker } from './inbox.js';
import { bodyOf, type NodeWebhookRequest } from './body.js';
import { ATTEMPT, errorClass, messageOf, named, remember, settler, text, trace, verified } from './settle.js';
import { sinceWindow } from './window.js';

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
  /** Runs once per event id for every other event (subscription.*, invoice.*, newer types); `ctx.db` is `undefined` for an event without an id (no claim). */
  onEvent?: Handler<WebhookEvent, Db | undefined> | undefined;
  /** How long a claim keeps others out if its holder crashes, ms. Default 300 000 (5 minutes). */
  lease?: number | undefined;
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
  /** Processes the inbox records that are due (a cron job, a serverless schedule), at most `limit` (default 1,000). */
  drain(options?: { signal?: AbortSignal | undefined; limit?: number | undefined }): Promise<DrainReport>;
  /** Processes the inbox until `signal` aborts (a worker process), waiting `idleMs` (default 1,000) when nothing is due. */
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

// Not settled: busy elsewhere, or pending at the service (the service delivers again).
const open = (result: SettleResult | 'queued') => result === 'busy' || result === 'pending';

/**
 * Creates the fulfillment kit: each paid order fulfilled exactly once.
 *
 * @example
 * ```ts
 * const fulfillment = createFulfillment({
 *   environment: 'production',
 *   secret: process.env.BUSINESS_PAYMENTS_WEBHOOK_SECRET!,
 *   client,
 *   store: postgresStore(pool),
 *   expect: async (tx, { db }) => priceOf(db, tx.order_ref),
 *   onPaid: async (tx, { db }) => shipOrder(db, tx.order_ref),
 * });
 * export const POST = (request: Request) => fulfillment.handleWebhook(request);
 * ```
 * @throws {ConfigurationError} when the secret is not set or has leading or trailing whitespace,
 * the client is for the other environment, `inbox: true` with a store that has no inbox, or
 * `maxBodyBytes` is not a whole number more than 0.
 */
export function createFulfillment<Db = undefined>(kitOptions: FulfillmentOptions<Db>): Fulfillment {
  // The store's Db only types what the handlers see; inside, a claim's db is passed through.
  const options = kitOptions as unknown as FulfillmentOptions;
  const { environment, secret, client } = options;
  const store = options.store ?? memoryStore();
  // The secret, by the rule of every secret (`checkSecrets`), refused here rather than at the
  // first delivery, where it could only be a 500 to the service.
  try {
    checkSecrets(secret);
  } catch (error) {
    const { message } = error as Error;
    throw new ConfigurationError(
      `createFulfillment({ secret }): ${message}${/not set/.test(message) ? ' Pass the webhook signing secret, e.g. process.env.BUSINESS_PAYMENTS_WEBHOOK_SECRET.' : ''}`,
    );
  }
  if (client?.environment !== environment) {
    throw new ConfigurationError(
      `createFulfillment: the client is for ${String(client?.environment)}, the kit for ${environment}: pass a ${environment} client.`,
    );
  }
  const { inbox } = store;
  // The inbox is on by default where the store is durable: a memory inbox dies with its process.
  const queued = (options.inbox ?? store.durable !== false) && inbox;
  if (options.inbox && !inbox) throw new ConfigurationError('createFulfillment({ inbox: true }): this store has no inbox');
  const lease = options.lease ?? 300_000; // 5 minutes
  const max = options.maxBodyBytes ?? 1 << 20; // 1 MiB
  if (!(Number.isSafeInteger(max) && max > 0))
    throw new ConfigurationError(`createFulfillment({ maxBodyBytes }): ${max} is not a whole number more than 0`);
  const [settle, fromEvent] = settler(options, store, lease);
  // The worker's own steps stay inside: the kit's object carries only its documented methods.
  const { processOne: _processOne, soon, ...worker } = inboxWorker(options, store, lease, fromEvent);
  const later = (work: Promise<unknown>) => options.waitUntil?.(work);

  const answer = (delivery: Parameters<typeof bodyOf>[0]) =>
    trace('handleWebhook', environment, (info) =>
      answerDelivery(delivery, max, { secret, environment }, info, client, async (event, noted) => {
        if (!queued) return fromEvent(event, info, noted);
        named(event, info);
        // Recorded, then answered: the service waits for nothing else (a retry of a recorded
        // delivery is recorded once). Processed right after, here or by drain() / work().
        const id = deliveryId(event);
        await queued.add(id, JSON.stringify(event));
        noted();
        later(soon(id));
        return 'queued';
      }),
    );
  // handleVerified and reconcile: one traced settlement each.
  const settleTraced = (operation: 'handleVerified' | 'reconcile', tx: VerifiedTransaction, ref: string | undefined) =>
    trace(operation, environment, (info) => settle(tx, ref, { source: operation === 'reconcile' ? operation : 'verified' }, info));

  return {
    ...worker,
    // A Fetch Request, `{ payload, headers }`, or a Node request.
    handleWebhook: (async (delivery: Request & { readableEnded?: boolean; read?(): unknown }) => {
      const work = answer(delivery);
      // A Node request answered before its end (401, 413) is marked read (one read() of what
      // it holds): Node then stops reading the connection once its buffer is full, keeps it
      // for the answer, and closes it once idle, as after a loop over it that stopped early.
      // Left unread, its body would be read and dropped to its end after the answer, however long.
      if (typeof delivery.clone !== 'function') return work.finally(() => delivery.readableEnded || delivery.read?.());
      later(work);
      const { status, body } = await work;
      return new Response(body, { status, headers: { 'content-type': 'application/json' } });
    }) as Fulfillment['handleWebhook'],
    store,
    handleVerified: (transaction, opts) =>
      keepUnsettled(store, transaction?.trx_id, opts?.merchantRef, lease, settleTraced('handleVerified', transaction, opts?.merchantRef)),
    reconcile: (opts) => reconcile(opts, client, store, (tx, ref) => settleTraced('reconcile', tx, ref)),
    newAttempt: (orderRef) => newAttempt(store, orderRef),
  };
}

// A new attempt at an order: its count from the store, as `<order>~a<n>`.
async function newAttempt(store: FulfillmentStore, orderRef: string): Promise<PaymentAttempt> {
  if (typeof orderRef !== 'string' || !orderRef.trim())
    throw new PaymentsError('fulfillment.newAttempt(orderRef): pass your order reference (a non-empty string)');
  if (!store.attempt) throw new ConfigurationError('fulfillment.newAttempt: this store has no attempt()');
  const attempt = await store.attempt(orderRef);
  const ref_trx = `${orderRef}~a${attempt}`;
  // The service takes a ref_trx of at most 60 characters.
  if (ref_trx.length > 60)
    throw new PaymentsError(`fulfillment.newAttempt: '${ref_trx}' is longer than ref_trx's 60 characters: use a shorter order reference`);
  return { ref_trx, idempotencyKey: ref_trx, attempt };
}

// An inbox record's id: the event's, or for an IPN (which has none) its payment and outcome;
// an event with neither is its own record.
const deliveryId = (event: WebhookEvent): string => {
  const trxId = (event.data as { trx_id?: unknown } | null)?.trx_id;
  return typeof event.id === 'string' ? event.id : typeof trxId === 'string' ? `ipn:${trxId}:${String(event.type)}` : crypto.randomUUID();
};

// A return page that could not settle (busy elsewhere, pending, a handler threw) leaves its
// trx_id in the store for `reconcile`: on the earlier generation nothing else may ever report
// that payment again (its IPN is sent once, and it has no payment list).
async function keepUnsettled(
  store: FulfillmentStore,
  trxId: unknown,
  ref: string | undefined,
  lease: number,
  settling: Promise<SettleResult>,
): Promise<SettleResult> {
  const keep = () => (typeof trxId === 'string' ? remember(store, trxId, ref, lease) : undefined);
  try {
    const result = await settling;
    if (open(result)) await keep();
    return result;
  } catch (error) {
    await keep()?.catch(() => {});
    throw error;
  }
}

// A delivery, verified (signature, window, environment) before anything else, then settled.
// Its headers are checked before its body is read, and at most `max` bytes of that.
async function answerDelivery(
  delivery: Parameters<typeof bodyOf>[0],
  max: number,
  keys: { secret: string | readonly string[]; environment: 'sandbox' | 'production' },
  info: FulfillmentTrace,
  client: FulfillmentClient,
  settle: (event: WebhookEvent, recorded: () => void) => Promise<SettleResult | 'queued'>,
): Promise<WebhookAnswer> {
  const answer = (status: number, body: unknown): WebhookAnswer => ((info.status = status), { status, body: JSON.stringify(body) });
  let event: WebhookEvent;
  try {
    // verifyWebhook's own cheap checks (its default window), before a byte of the body: an
    // unsigned or stale delivery costs nothing to refuse. (The earlier form's timestamp is in its body.)
    const { headers } = delivery;
    const { timestamp } = readSignedHeaders(headers, undefined);
    if (timestamp !== undefined) checkTimestamp(timestamp, Date.now(), 300);
    const payload = await bodyOf(delivery, max);
    if (payload === undefined) return answer(413, { error: 'payload_too_large', message: 'Body over maxBodyBytes: not read.' });
    event = await verifyWebhook({ ...keys, payload, headers });
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    // The spec: a bad signature (or timestamp) gets 401, and so does an unsigned delivery
    // (no signature header); a body that is not an event 400.
    // Why, in the client's log at warn (a clock that is off refuses them all): the reason and the
    // verifier's words (for a timestamp, its seconds), never a secret, a signature or the body.
    (client as unknown as Record<symbol, ((line: string) => void) | undefined>)[Symbol.for('business-payments.log')]?.(
      `webhook refused, ${error.reason}: ${error.message}`,
    );
    return answer(/signature|timestamp|header/.test(error.reason) ? 401 : 400, { error: error.reason, message: error.message });
  }
  // Set once an earlier-generation delivery's trx_id is in the store: from then on `reconcile`
  // settles it, so it is acknowledged whatever happens (that generation never re-sends).
  let recorded = false;
  try {
    const result = await settle(event, () => (recorded = true));
    return answer(open(result) ? (recorded ? 202 : 409) : 200, { received: true, result });
  } catch (error) {
    info.errorClass = errorClass(error);
    if (recorded) return answer(202, { received: true, result: 'recorded' });
    // A 5xx makes the service deliver again, after the claim was released. A handler's words (a
    // database error, an order's details) go to your log, never to whoever sent the delivery;
    // the SDK's own (a verify that failed, already redacted) are said (doctor reads them).
    if (error instanceof PaymentsError) return answer(500, { error: 'handler_failed', message: error.message });
    console.error('[business-payments] fulfillment: a handler failed; answered 500, so the delivery comes again:', error);
    return answer(500, { error: 'handler_failed', message: 'A handler failed; deliver again later.' });
  }
}

async function reconcile(
  options: ReconcileOptions,
  client: FulfillmentClient,
  store: FulfillmentStore,
  settle: (tx: VerifiedTransaction, merchantRef: string | undefined) => Promise<SettleResult>,
): Promise<ReconcileReport> {
  const { since, olderThan = 600_000 /* 10 minutes */, signal, onProgress } = options;
  const from = +since;
  const until = Date.now() - olderThan;
  const report: ReconcileReport = { seen: 0, checked: 0, paid: 0, failed: 0, pending: 0, busy: 0, errors: [], unknown: [], review: [] };
  // The lists are bounded (the counts are not): a run over a long history keeps little.
  const note = <T>(list: T[], item: T) => list.length < 1_000 && list.push(item);
  const check = async (trxId: string, merchantRef: string | undefined) => {
    // A payment this app never made: an attempt reference `newAttempt` never counted. Any other
    // reference is taken as an order id (the pattern before attempts), and none as unknown
    // here (the list may not show references): those are verified and settled.
    const attempt = merchantRef && ATTEMPT.exec(merchantRef);
    if (attempt && Number((await store.outcome(`attempts:${attempt[1]}`)) ?? 0) < Number(attempt[2])) return note(report.unknown, trxId);
    report.checked++;
    try {
      const tx = await verified(client, trxId);
      const result = await settle(tx, merchantRef);
      if (result === 'ran') report[tx.status === 'success' ? 'paid' : 'failed']++;
      else if (result === 'review') note(report.review, trxId);
      else if (result !== 'done') report[result]++;
    } catch (error) {
      note(report.errors, { trx_id: trxId, message: messageOf(error) });
    }
  };
  const past = sinceWindow(from);
  try {
    // Any status on the server: a paid payment whose webhook was lost reads `success` there.
    for await (const payment of client.payments.list({ limit: 100 })) {
      signal?.throwIfAborted();
      report.seen++;
      const created = Date.parse(payment.created_at!);
      const trxId = payment.trx_id;
      if (past(created)) break;
      // A payment without a readable creation time (NaN, never less or more) is checked:
      // better a verify than a miss.
      if (typeof trxId === 'string' && !(created < from || created > until) && (await store.outcome(`payment:${trxId}`)) === undefined)
        await check(trxId, text(payment.merchant_ref));
      onProgress?.(report);
    }
  } catch (error) {
    // The earlier generation has no payment list (a RouteNotSupportedError, named so the kit
    // need not load the client): walk what the store knows is open instead.
    if ((error as Error | undefined)?.name !== 'RouteNotSupportedError' || report.seen) throw error;
    if (!store.unsettled) {
      throw new ConfigurationError('fulfillment.reconcile: no payment list here, and the store has no unsettled()', { cause: error });
    }
    report.walked = 'store';
    // One run re-verifies at most 10,000 of them.
    for (const key of await store.unsettled(10_000)) {
      signal?.throwIfAborted();
      report.seen++;
      const trxId = key.slice('payment:'.length);
      await check(trxId, await store.outcome(`ref:${trxId}`));
      onProgress?.(report);
    }
  }
  return report;
}
