// The fulfillment kit: every paid order fulfilled exactly once, whichever path reports the
// payment first (webhook, return page, reconcile sweep) and however many processes share
// the store. It loads in serverless handlers, so it imports neither ky nor the client: the
// merchant's PaymentsClient is passed in.
import { ConfigurationError, PaymentsError } from '../core/base-error.js';
import type { VerifiedTransaction } from '../schemas/payments.js';
import { checkSecrets, checkTimestamp, verifyWebhook } from '../webhooks/verify.js';
import { WebhookVerificationError } from '../webhooks/errors.js';
import type { WebhookEvent } from '../webhooks/events.js';
import { readSignedHeaders } from '../webhooks/headers.js';
import { memoryStore, type FulfillmentStore } from './store.js';
import { inboxWorker } from './inbox.js';
import { bodyOf } from './body.js';
import { ATTEMPT, errorClass, messageOf, named, remember, settler, text, trace, verified } from './settle.js';
import type {
  Fulfillment,
  FulfilledTransaction,
  FulfillmentClient,
  FulfillmentOptions,
  FulfillmentTrace,
  PaymentAttempt,
  ReconcileOptions,
  ReconcileReport,
  SettleResult,
  WebhookAnswer,
} from './types.js';
import { sinceMs, sinceWindow } from './window.js';

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
// The secret is checked by the rule of every secret (`checkSecrets`) here rather than at the
// first delivery, where it could only be a 500 to the service.
// The inbox is on by default where the store is durable (a memory inbox dies with its process).
// With it, a delivery is recorded, then answered: the service waits for nothing else (a retry of
// a recorded delivery is recorded once); it is processed right after, here or by drain() / work().
// handleWebhook takes a Fetch Request, `{ payload, headers }`, or a Node request. A Node request
// answered before its end (401, 413) is marked read (one read() of what it holds): Node then
// stops reading the connection once its buffer is full, keeps it for the answer, and closes it
// once idle, as after a loop over it that stopped early. Left unread, its body would be read and
// dropped to its end after the answer, however long.
export function createFulfillment<Db = undefined>(kitOptions: FulfillmentOptions<Db>): Fulfillment {
  // The store's Db only types what the handlers see; inside, a claim's db is passed through.
  const options = kitOptions as unknown as FulfillmentOptions;
  const { environment, secret, client } = options;
  const store = options.store ?? memoryStore();
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
        const id = deliveryId(event);
        await queued.add(id, JSON.stringify(event));
        noted();
        later(soon(id));
        return 'queued';
      }),
    );
  const settleTraced = (operation: 'handleVerified' | 'reconcile', tx: VerifiedTransaction, ref: string | undefined) =>
    trace(operation, environment, (info) => settle(tx, ref, { source: operation === 'reconcile' ? operation : 'verified' }, info));
  return {
    ...worker,
    handleWebhook: (async (delivery: Request & { readableEnded?: boolean; read?(): unknown }) => {
      const work = answer(delivery);
      // A Node request answered before its end is marked read (see above).
      if (typeof delivery.clone !== 'function') return work.finally(() => delivery.readableEnded || delivery.read?.());
      later(work);
      const { status, body } = await work;
      return new Response(body, { status, headers: { 'content-type': 'application/json' } });
    }) as Fulfillment['handleWebhook'],
    store,
    handleVerified: (transaction, opts) =>
      keepUnsettled(store, transaction, opts?.merchantRef, lease, (ref) => settleTraced('handleVerified', transaction, ref)),
    reconcile: (opts) => reconcile(opts, client, store, (tx, ref) => settleTraced('reconcile', tx, ref)),
    newAttempt: (orderRef) => newAttempt(store, orderRef, lease),
  };
}

// Where the kit records each attempt it hands out: `attempt:<ref_trx>` (apart from the count,
// `attempts:<order>`).
const MADE = 'attempt:';

// A new attempt at an order, `<order>~a<n>`: n from the store's count, and the attempt recorded
// under its own key (a claim completed at once). A number recorded already (or being recorded)
// is passed over and the count taken again, so a count the store lost (its key evicted or
// deleted) never hands out a used ref_trx and key again. (A store that lost everything knows
// nothing: see docs/fulfillment.md.) A store whose claims never succeed fails after 1,000 tries.
async function newAttempt(store: FulfillmentStore, orderRef: string, lease: number): Promise<PaymentAttempt> {
  if (typeof orderRef !== 'string' || !orderRef.trim())
    throw new PaymentsError('fulfillment.newAttempt(orderRef): pass your order reference (a non-empty string)');
  if (!store.attempt) throw new ConfigurationError('fulfillment.newAttempt: this store has no attempt()');
  for (let tries = 0; tries < 1_000; tries++) {
    const attempt = await store.attempt(orderRef);
    const ref_trx = `${orderRef}~a${attempt}`;
    // The service takes a ref_trx of at most 60 characters.
    if (ref_trx.length > 60)
      throw new PaymentsError(`fulfillment.newAttempt: '${ref_trx}' is longer than ref_trx's 60 characters: use a shorter order reference`);
    const found = await store.claim(MADE + ref_trx, lease);
    // Recorded now (a claim whose lease ran out before it completed may be another's: passed over too).
    if ('claimed' in found && ((await found.claimed.complete('made')) as boolean | undefined) !== false)
      return { ref_trx, idempotencyKey: ref_trx, attempt };
  }
  throw new PaymentsError(`fulfillment.newAttempt: no claim of the store's succeeded in 1,000 tries`);
}

// Whether this store made the attempt `ref` names: its count reached it, or the attempt's own
// record is there (the count may have been lost). A reference of another form is its own order.
async function made(store: FulfillmentStore, ref: string): Promise<boolean> {
  const attempt = ATTEMPT.exec(ref);
  return (
    !attempt ||
    Number((await store.outcome(`attempts:${attempt[1]}`)) ?? 0) >= Number(attempt[2]) ||
    (await store.outcome(MADE + ref)) !== undefined
  );
}

// An inbox record's id: the event's, or for an IPN (which has none) its payment and outcome;
// an event with neither is its own record.
const deliveryId = (event: WebhookEvent): string => {
  const trxId = (event.data as { trx_id?: unknown } | null)?.trx_id;
  return typeof event.id === 'string' ? event.id : typeof trxId === 'string' ? `ipn:${trxId}:${String(event.type)}` : crypto.randomUUID();
};

// handleVerified. The payment's order comes from the reference the service sent: the
// transaction's own, else the one recorded for its trx_id (an earlier-generation IPN's, recorded
// as it came, or the first report's that could not settle); the caller's only where there is
// neither (verify's answer carries none, on either generation).
// A return page that could not settle (busy elsewhere, pending, a handler threw) leaves its
// trx_id in the store for `reconcile`: on the earlier generation nothing else may ever report
// that payment again (its IPN is sent once, and it has no payment list).
async function keepUnsettled(
  store: FulfillmentStore,
  tx: VerifiedTransaction,
  caller: string | undefined,
  lease: number,
  settle: (ref: string | undefined) => Promise<SettleResult>,
): Promise<SettleResult> {
  const trxId = tx?.trx_id;
  const recorded = typeof trxId === 'string' && !(tx as FulfilledTransaction).merchant_ref && (await store.outcome(`ref:${trxId}`));
  const ref = recorded || caller;
  const keep = () => (typeof trxId === 'string' ? remember(store, trxId, ref, lease) : undefined);
  try {
    const result = await settle(ref);
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
    client.warn?.(`webhook refused, ${error.reason}: ${error.message}`);
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

// Each payment in the window not settled yet is verified and settled, but one this app never
// made: an attempt reference neither counted nor recorded by `newAttempt` (listed as unknown),
// so a count the store lost still settles its order's payments (the order's one-payment rule
// with them). `since` is checked before any call. Any other reference
// is taken as an order id (the pattern before attempts), and none as unknown here (the list may
// not show references). A payment without a readable creation time (NaN, never less or more) is
// checked: better a verify than a miss.
async function reconcile(
  options: ReconcileOptions,
  client: FulfillmentClient,
  store: FulfillmentStore,
  settle: (tx: VerifiedTransaction, merchantRef: string | undefined) => Promise<SettleResult>,
): Promise<ReconcileReport> {
  const { since, olderThan = 600_000 /* 10 minutes */, signal, onProgress } = options;
  const from = sinceMs(since);
  const until = Date.now() - olderThan;
  const report: ReconcileReport = { seen: 0, checked: 0, paid: 0, failed: 0, pending: 0, busy: 0, errors: [], unknown: [], review: [] };
  // The lists are bounded (the counts are not): a run over a long history keeps little.
  const note = <T>(list: T[], item: T) => list.length < 1_000 && list.push(item);
  const check = async (trxId: string, merchantRef: string | undefined) => {
    if (merchantRef && !(await made(store, merchantRef))) return note(report.unknown, trxId);
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
