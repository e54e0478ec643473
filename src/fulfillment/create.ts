// The fulfillment kit: every paid order fulfilled exactly once, whichever path reports the
// payment first (webhook, return page, reconcile sweep) and however many processes share
// the store. It loads in serverless handlers, so it imports neither ky nor the client: the
// merchant's PaymentsClient is passed in.
import { ConfigurationError, PaymentsError } from '../core/base-error.js';
import type { PaymentRecord, VerifiedTransaction } from '../resources/payments.js';
import { checkSecrets, verifyWebhook } from '../webhooks/verify.js';
import { WebhookVerificationError } from '../webhooks/errors.js';
import type { WebhookEvent } from '../webhooks/events.js';
import type { WebhookHeaders } from '../webhooks/headers.js';
import type { WebhookPayload } from '../webhooks/verify.js';
import { memoryStore, type FulfillmentStore } from './store.js';
import { listened, traced, tracingChannel } from '../internal/trace.js';

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
  /** Your `ref_trx`, from the webhook or the `merchantRef` you passed, when known. */
  merchant_ref?: string | undefined;
};

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
  /** The `PaymentsClient` of that environment: it verifies every outcome before a handler runs. */
  client: FulfillmentClient;
  /** Where claims and outcomes live. Default `memoryStore()`: one process only. */
  store?: FulfillmentStore<Db> | undefined;
  /** Runs once per `trx_id`, with the verified transaction, only when its status is `success`. Check the amount and currency against your order here. */
  onPaid: Handler<FulfilledTransaction, Db>;
  /** Runs at most once per `trx_id` when verify says `failed`, never after `onPaid`. */
  onFailed?: Handler<FulfilledTransaction, Db> | undefined;
  /** Runs once per event id for every other event (subscription.*, invoice.*, newer types); `ctx.db` is `undefined` for an event without an id (no claim). */
  onEvent?: Handler<WebhookEvent, Db | undefined> | undefined;
  /** How long a claim keeps others out if its holder crashes, ms. Default 300 000 (5 minutes). */
  lease?: number | undefined;
  /** Keeps a serverless runtime alive for work after the response (Workers' `ctx.waitUntil`). */
  waitUntil?: ((promise: Promise<unknown>) => void) | undefined;
}

/**
 * What happened to one report of an outcome:
 * - `ran`: a handler ran now (or none was needed) and the outcome is recorded;
 * - `done`: the outcome was recorded before (a duplicate);
 * - `busy`: another claim is handling it right now;
 * - `pending`: verify does not say `success` or `failed` yet: nothing ran.
 */
export type SettleResult = 'ran' | 'done' | 'busy' | 'pending';

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
  /** Payments whose verify or handler threw: `trx_id` and the message. */
  errors: Array<{ trx_id: string; message: string }>;
  /**
   * `store` when the server has no payment list (the earlier generation): the payments the
   * store was told of and has no outcome for were walked instead, oldest first. Absent when
   * the service's payment list was walked.
   */
  walked?: 'store' | undefined;
}

/** What {@link createFulfillment} returns. */
export interface Fulfillment {
  /** A Fetch API webhook route: verifies, settles, answers (401 bad signature, 400 not an event, 409 in flight elsewhere, 500 a handler threw). */
  handleWebhook(request: Request): Promise<Response>;
  /** The same for Express, node:http and Lambda: the raw body and the headers in, `{ status, body }` out. */
  handleWebhook(delivery: { payload: WebhookPayload; headers: WebhookHeaders }): Promise<WebhookAnswer>;
  /** Settles a transaction you verified yourself (return page, `waitForOutcome`). Throws what a handler threw. */
  handleVerified(transaction: VerifiedTransaction, options?: { merchantRef?: string | undefined }): Promise<SettleResult>;
  /** Walks every payment created since `since` and settles each one the store has no outcome for. */
  reconcile(options: ReconcileOptions): Promise<ReconcileReport>;
  /** The store the kit records claims and outcomes in. */
  readonly store: FulfillmentStore;
}

/**
 * What the kit publishes on the TracingChannel `business-payments:fulfillment`: one trace
 * per webhook delivery (`handleWebhook`), per `handleVerified` and per payment `reconcile`
 * settles. Never a secret, a signature, a body or a customer's details.
 */
export interface FulfillmentTrace {
  /** Which entry point: `handleWebhook`, `handleVerified` or `reconcile`. */
  operation: 'handleWebhook' | 'handleVerified' | 'reconcile';
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

function checkClient(client: FulfillmentClient | undefined, environment: string): void {
  if (client?.environment !== environment) {
    throw new ConfigurationError(
      `createFulfillment: the client is for ${String(client?.environment)}, the kit for ${environment}: pass the client of that environment.`,
    );
  }
}

// One trace around `work` when someone listens; `info` is filled in as the work goes.
function trace<T>(info: FulfillmentTrace, work: () => Promise<T>): Promise<T> {
  const tracing = tracingChannel('business-payments:fulfillment');
  return listened(tracing) ? traced(tracing, info, work, (context, error) => (context.errorClass = errorClass(error))) : work();
}

const errorClass = (error: unknown): string => (error as Error | undefined)?.name ?? 'Error';

const DEFAULT_LEASE_MS = 300_000;
const DEFAULT_OLDER_THAN_MS = 600_000;
const OUTCOMES: Record<string, string> = { success: 'paid', failed: 'failed' };
const ANSWERS: Record<SettleResult, number> = { ran: 200, done: 200, busy: 409, pending: 409 };

/** What a handler gets beside its value, but the store's `db`. */
type Context = Omit<FulfillmentContext, 'db'>;

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
 *   onPaid: async (tx, { db }) => {
 *     const order = await findOrder(db, tx.merchant_ref);
 *     if (tx.amount !== order.amount || tx.currency !== order.currency) throw new Error('amount mismatch');
 *     await shipOrder(db, order);
 *   },
 * });
 * export const POST = (request: Request) => fulfillment.handleWebhook(request);
 * ```
 * @throws {ConfigurationError} when the secret is not set or has leading or trailing whitespace,
 * or the client is for the other environment.
 */
export function createFulfillment<Db = undefined>(kitOptions: FulfillmentOptions<Db>): Fulfillment {
  // The store's Db only types what the handlers see; inside, a claim's db is passed through.
  const options = kitOptions as unknown as FulfillmentOptions;
  const { environment, secret, client, onPaid, onFailed, onEvent } = options;
  const store = options.store ?? memoryStore();
  const lease = options.lease ?? DEFAULT_LEASE_MS;
  checkKitSecret(secret);
  checkClient(client, environment);

  const once = <T>(key: string, outcome: string, handler: Handler<T> | undefined, value: T, context: Context) =>
    claimAndRun(store, lease, key, outcome, handler, value, context);

  const settle = async (tx: VerifiedTransaction, merchantRef: string | undefined, context: Context, info: FulfillmentTrace) => {
    const value = fulfilled(tx, merchantRef);
    info.trxId = tx.trx_id;
    const outcome = OUTCOMES[tx.status];
    if (!outcome) return (info.result = 'pending');
    return (info.result = await once(`payment:${tx.trx_id}`, outcome, outcome === 'paid' ? onPaid : onFailed, value, context));
  };

  const fromEvent = async (event: WebhookEvent, info: FulfillmentTrace, recorded: () => void): Promise<SettleResult> => {
    const data = event.data as { trx_id?: unknown; merchant_ref?: unknown } | null | undefined;
    info.eventType = String(event.type);
    if (typeof event.id === 'string') info.eventId = event.id;
    if (String(event.type).startsWith('payment.') && typeof data?.trx_id === 'string') {
      const ref = typeof data.merchant_ref === 'string' ? data.merchant_ref : undefined;
      info.trxId = data.trx_id;
      await rememberOnce(store, event, data.trx_id, recorded);
      // Verified before any handler: the event says what happened, the service confirms it.
      return settle(await verified(client, data.trx_id), ref, { source: 'webhook', event }, info);
    }
    if (!onEvent) return 'ran';
    // An event without an id cannot be de-duplicated: it runs each time it comes.
    if (typeof event.id !== 'string') return (await onEvent(event, { source: 'webhook', event, db: undefined }), 'ran');
    return once(`event:${event.id}`, 'handled', onEvent, event, { source: 'webhook', event });
  };

  const answer = (payload: WebhookPayload, headers: WebhookHeaders) => {
    const info: FulfillmentTrace = { operation: 'handleWebhook', environment };
    return trace(info, () => answerDelivery({ payload, headers, secret, environment }, (e, noted) => fromEvent(e, info, noted), info));
  };
  // handleVerified and reconcile: one traced settlement each.
  const settleTraced = (operation: 'handleVerified' | 'reconcile', tx: VerifiedTransaction, ref: string | undefined) => {
    const info: FulfillmentTrace = { operation, environment };
    return trace(info, () => settle(tx, ref, { source: operation === 'reconcile' ? 'reconcile' : 'verified' }, info));
  };

  async function handleWebhook(input: Request | { payload: WebhookPayload; headers: WebhookHeaders }): Promise<Response | WebhookAnswer> {
    if (typeof (input as Request).clone !== 'function') {
      const { payload, headers } = input as { payload: WebhookPayload; headers: WebhookHeaders };
      return answer(payload, headers);
    }
    const request = input as Request;
    const work = answer(await request.arrayBuffer(), request.headers);
    options.waitUntil?.(work);
    const { status, body } = await work;
    return new Response(body, { status, headers: { 'content-type': 'application/json' } });
  }

  return {
    handleWebhook: handleWebhook as Fulfillment['handleWebhook'],
    store,
    handleVerified: (transaction, opts) =>
      keepUnsettled(store, transaction?.trx_id, settleTraced('handleVerified', transaction, opts?.merchantRef)),
    reconcile: (opts) => reconcile(opts, client, store, (tx, ref) => settleTraced('reconcile', tx, ref)),
  };
}

// What the handlers get. No trx_id, no claim (every such call would share one key,
// `payment:undefined`); a reference the service sent wins over the caller's (a return page's
// URL is anyone's to write).
function fulfilled(tx: VerifiedTransaction, merchantRef: string | undefined): FulfilledTransaction {
  if (typeof tx?.trx_id !== 'string' || !tx.trx_id) throw new PaymentsError('fulfillment: a transaction without trx_id cannot be settled');
  return merchantRef === undefined || (tx as FulfilledTransaction).merchant_ref != null ? tx : { ...tx, merchant_ref: merchantRef };
}

// The service's answer for `trxId`, refused when it is about another payment (a proxy's
// cache, a hostile server): acting on it would settle one order with another's payment.
// Ids are compared as the earlier generation matches them, case-insensitively.
async function verified(client: FulfillmentClient, trxId: string): Promise<VerifiedTransaction> {
  const tx = await client.payments.verify(trxId);
  if (String(tx?.trx_id).toUpperCase() !== trxId.toUpperCase())
    throw new PaymentsError(`fulfillment: verify(${trxId}) answered for ${String(tx?.trx_id)}`);
  return tx;
}

// A return page that could not settle (busy elsewhere, pending, a handler threw) leaves its
// trx_id in the store for `reconcile`: on the earlier generation nothing else may ever report
// that payment again (its IPN is sent once, and it has no payment list).
async function keepUnsettled(store: FulfillmentStore, trxId: unknown, settling: Promise<SettleResult>): Promise<SettleResult> {
  const keep = () => (typeof trxId === 'string' ? store.remember?.(`payment:${trxId}`) : undefined);
  try {
    const result = await settling;
    if (result === 'busy' || result === 'pending') await keep();
    return result;
  } catch (error) {
    await keep()?.catch(() => {});
    throw error;
  }
}

// The earlier generation sends its IPN once, never again: its trx_id is recorded first, so
// that whatever happens next, `reconcile` finds it (that generation has no payment list).
async function rememberOnce(store: FulfillmentStore, event: WebhookEvent, trxId: string, recorded: () => void): Promise<void> {
  if (event.format !== 'legacy' || !store.remember) return;
  await store.remember(`payment:${trxId}`);
  recorded();
}

// The kit's secret, by the rule of every secret (`checkSecrets`), refused here rather than
// at the first delivery, where it could only be a 500 to the service.
function checkKitSecret(secret: unknown): void {
  try {
    checkSecrets(secret);
  } catch (error) {
    const { message } = error as Error;
    throw new ConfigurationError(
      `createFulfillment({ secret }): ${message}${/not set/.test(message) ? ' Pass the webhook signing secret, e.g. process.env.BUSINESS_PAYMENTS_WEBHOOK_SECRET.' : ''}`,
    );
  }
}

// The once-only core: claim the key, run the handler, record the outcome (or release the
// claim and rethrow, so the next report runs it again).
async function claimAndRun<T>(
  store: FulfillmentStore,
  lease: number,
  key: string,
  outcome: string,
  handler: Handler<T> | undefined,
  value: T,
  context: Omit<FulfillmentContext, 'db'>,
): Promise<SettleResult> {
  const result = await store.claim(key, lease);
  if ('done' in result) return 'done';
  if ('busy' in result) return 'busy';
  const { claimed } = result;
  try {
    await handler?.(value, { ...context, db: claimed.db });
  } catch (error) {
    await claimed.release();
    throw error;
  }
  await claimed.complete(outcome);
  return 'ran';
}

// A delivery, verified (signature, window, environment) before anything else, then settled.
async function answerDelivery(
  delivery: { payload: WebhookPayload; headers: WebhookHeaders; secret: string | readonly string[]; environment: 'sandbox' | 'production' },
  settle: (event: WebhookEvent, recorded: () => void) => Promise<SettleResult>,
  info: FulfillmentTrace,
): Promise<WebhookAnswer> {
  const answer = (status: number, body: unknown): WebhookAnswer => ((info.status = status), { status, body: JSON.stringify(body) });
  let event: WebhookEvent;
  try {
    event = await verifyWebhook(delivery);
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    // The spec: a bad signature (or timestamp) gets 401; a body that is not an event 400.
    return answer(/signature|timestamp/.test(error.reason) ? 401 : 400, { error: error.reason, message: error.message });
  }
  // Set once an earlier-generation delivery's trx_id is in the store: from then on `reconcile`
  // settles it, so it is acknowledged whatever happens (that generation never re-sends).
  let recorded = false;
  try {
    const result = await settle(event, () => (recorded = true));
    return answer(recorded && ANSWERS[result] !== 200 ? 202 : ANSWERS[result], { received: true, result });
  } catch (error) {
    info.errorClass = errorClass(error);
    if (recorded) return answer(202, { received: true, result: 'recorded' });
    // A 5xx makes the service deliver again, after the claim was released.
    return answer(500, { error: 'handler_failed', message: error instanceof Error ? error.message : String(error) });
  }
}

async function reconcile(
  options: ReconcileOptions,
  client: FulfillmentClient,
  store: FulfillmentStore,
  settle: (tx: VerifiedTransaction, merchantRef: string | undefined) => Promise<SettleResult>,
): Promise<ReconcileReport> {
  const { since, olderThan = DEFAULT_OLDER_THAN_MS, signal, onProgress } = options;
  const from = +since;
  const until = Date.now() - olderThan;
  const report: ReconcileReport = { seen: 0, checked: 0, paid: 0, failed: 0, pending: 0, busy: 0, errors: [] };
  const check = async (trxId: string, merchantRef: string | undefined) => {
    report.checked++;
    try {
      const tx = await verified(client, trxId);
      const result = await settle(tx, merchantRef);
      if (result === 'ran') report[tx.status === 'success' ? 'paid' : 'failed']++;
      else if (result !== 'done') report[result]++;
    } catch (error) {
      report.errors.push({ trx_id: trxId, message: error instanceof Error ? error.message : String(error) });
    }
  };
  try {
    // Any status on the server: a paid payment whose webhook was lost reads `success` there.
    for await (const payment of client.payments.list({ limit: 100 })) {
      signal?.throwIfAborted();
      report.seen++;
      const created = Date.parse(payment.created_at ?? '');
      const trxId = payment.trx_id;
      // A payment without a readable creation time is checked: better a verify than a miss.
      const inWindow = Number.isNaN(created) || (created >= from && created <= until);
      if (typeof trxId === 'string' && inWindow && (await store.outcome(`payment:${trxId}`)) === undefined) {
        await check(trxId, typeof payment.merchant_ref === 'string' ? payment.merchant_ref : undefined);
      }
      onProgress?.(report);
    }
  } catch (error) {
    // The earlier generation has no payment list (a RouteNotSupportedError, named so the kit
    // need not load the client): walk what the store knows is open instead.
    if ((error as Error | undefined)?.name !== 'RouteNotSupportedError' || report.seen > 0) throw error;
    if (!store.unsettled) {
      throw new ConfigurationError('fulfillment.reconcile: no payment list here, and the store has no unsettled()', { cause: error });
    }
    report.walked = 'store';
    for (const key of await store.unsettled(MAX_UNSETTLED)) {
      signal?.throwIfAborted();
      report.seen++;
      await check(key.slice('payment:'.length), undefined);
      onProgress?.(report);
    }
  }
  return report;
}

// One run re-verifies at most this many of the store's open payments (oldest first).
const MAX_UNSETTLED = 10_000;
