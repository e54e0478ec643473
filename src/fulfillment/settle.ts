// The once-only core of the fulfillment kit: claims (renewed while a handler runs), a payment
// settled once per trx_id and an order paid once across its attempts, the price check, and
// the review path. createFulfillment (create.ts) wires it to the webhook, the return page,
// reconcile and the inbox.
import { PaymentsError } from '../core/base-error.js';
import { sameAmount } from '../core/money.js';
import { paidAmount } from '../core/paid-amount.js';
import type { VerifiedTransaction } from '../schemas/payments.js';
import type { WebhookEvent } from '../webhooks/events.js';
import type {
  ExpectedPrice,
  FulfilledTransaction,
  FulfillmentClient,
  FulfillmentContext,
  FulfillmentOptions,
  FulfillmentTrace,
  Handler,
  SettleResult,
} from './types.js';
import type { FulfillmentStore, StoreClaim } from './store.js';
import { listened, traced, tracingChannel } from '../internal/trace.js';

/** What a handler gets beside its value, but what its claim gives (`db`, `effectKey`, `signal`). */
export type Context = Omit<FulfillmentContext, 'db' | 'effectKey' | 'signal'>;

// The body of a claim: `held` are the claims renewed while it runs (it may add its own), `signal`
// the handler's (aborted when the kit stops waiting for it).
type Body = (claimed: StoreClaim, held: StoreClaim[], signal: AbortSignal) => Promise<string | undefined>;
type Run = (key: string, body: Body) => Promise<SettleResult>;
type Once = <T>(key: string, outcome: string, handler: Handler<T> | undefined, value: T, context: Context) => Promise<SettleResult>;

/** `<order>~a<n>`: what newAttempt makes, and how a payment finds its order again. */
export const ATTEMPT = /^(.+)~a(\d+)$/;

/** The kit's settlement, `[settle, fromEvent]`: a verified transaction, or a verified webhook event. */
// `settle` refuses a transaction without trx_id (every such call would share one key,
// `payment:undefined`), and gives the handlers the reference the service sent over the caller's
// (a return page's URL is anyone's to write). Each handler gets `effectKey`, `<key>:<outcome>`:
// the same for every run of it, wherever it runs.
export function settler(options: FulfillmentOptions, store: FulfillmentStore, lease: number) {
  const run = runner(options, store, lease);
  const once: Once = (key, outcome, handler, value, context) =>
    run(key, async ({ db }, _, signal) => (await handler?.(value, { ...context, db, effectKey: `${key}:${outcome}`, signal }), outcome));
  const paid = paying(options, store, lease, run, once);
  const settle = async (
    tx: VerifiedTransaction,
    merchantRef: string | undefined,
    context: Context,
    info: FulfillmentTrace,
  ): Promise<SettleResult> => {
    const trxId = tx?.trx_id;
    if (!trxId || typeof trxId !== 'string') throw new PaymentsError('fulfillment: a transaction without trx_id cannot be settled');
    const ref = (tx as FulfilledTransaction).merchant_ref ?? merchantRef;
    const value = ref == null ? tx : { ...tx, merchant_ref: ref, order_ref: ATTEMPT.exec(ref)?.[1] ?? ref };
    const { status } = tx;
    info.trxId = trxId;
    return (info.result =
      status === 'success'
        ? await paid(value, context)
        : status === 'failed'
          ? await once(`payment:${trxId}`, status, options.onFailed, value, context)
          : 'pending');
  };
  // `signal` (drain(), work()) ends a wait for a verify's slot.
  const fromEvent = async (
    event: WebhookEvent,
    info: FulfillmentTrace,
    recorded: () => void,
    signal?: AbortSignal,
  ): Promise<SettleResult> => {
    const data = event.data as { trx_id?: unknown; merchant_ref?: unknown } | null | undefined;
    const trxId = data?.trx_id;
    const { onEvent } = options;
    const context: Context = { source: 'webhook', event };
    named(event, info);
    // Only the two payment outcomes are verified and settled; any other type (a `payment.*` this
    // SDK does not know yet included) goes to onEvent, never to onPaid or onFailed.
    if ((event.type === 'payment.completed' || event.type === 'payment.failed') && typeof trxId === 'string') {
      info.trxId = trxId;
      // The earlier generation sends its IPN once, never again: its trx_id is recorded first, so
      // that whatever happens next, `reconcile` finds it (that generation has no payment list).
      if (event.format === 'legacy' && (await remember(store, trxId, text(data!.merchant_ref), lease))) recorded();
      // Verified before any handler: the event says what happened, the service confirms it.
      return settle(await verified(options.client, trxId, signal), text(data!.merchant_ref), context, info);
    }
    if (!onEvent) return 'ran';
    // An event without an id cannot be de-duplicated: it runs each time it comes.
    if (typeof event.id !== 'string') return (await onEvent(event, unclaimed(context)), 'ran');
    return once(`event:${event.id}`, 'handled', onEvent, event, context);
  };
  return [settle, fromEvent] as const;
}

// The context of a handler run without a claim (an event without an id): an effectKey of its own
// (it runs each time it comes), a signal that never aborts.
const unclaimed = (context: Context) => ({
  ...context,
  db: undefined,
  effectKey: `event:${crypto.randomUUID()}`,
  signal: new AbortController().signal,
});

// `run` claims `key` and runs `body` in it, renewing the claim (and any `body` holds) every third
// of the lease while it runs, so a slow handler is never run twice; `body` gives the outcome to
// record, or undefined (also when it throws) to release the claim. The kit waits for it
// `handlerTimeout` at most: then it aborts the handler's signal and fails this attempt, but the
// claim stays held and renewed until the body does end (releasing it would let a second run start
// beside one that may still act), and the key's attempts here fail at once meanwhile, so that an
// inbox record goes dead rather than busy for ever. A claim that complete() says was lost (its
// lease ran out before the body ended: on Redis, another may have run it too) is no `ran`.
function runner(options: FulfillmentOptions, store: FulfillmentStore, lease: number): Run {
  const limit = Math.min(options.handlerTimeout ?? 300_000, 2 ** 31 - 1); // 5 minutes
  const late = new Set<string>();
  const overdue = (key: string) =>
    new PaymentsError(`fulfillment: the handler for ${key} outlived handlerTimeout (${limit} ms); its claim is held until it returns`);
  return async (key, body) => {
    if (late.has(key)) throw overdue(key);
    const result = await store.claim(key, lease);
    if (!('claimed' in result)) return 'busy' in result ? 'busy' : 'done';
    const { claimed } = result;
    const held = [claimed];
    const stop = new AbortController();
    const renewing = setInterval(() => held.map((claim) => void claim.renew?.().catch(() => {})), lease / 3);
    (renewing as { unref?: () => void }).unref?.();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ended = (async () => {
      let outcome: string | undefined;
      // `false`: the claim was no longer this holder's (a store that cannot tell resolves nothing).
      let kept: boolean | undefined;
      try {
        outcome = await body(claimed, held, stop.signal);
      } finally {
        clearInterval(renewing);
        clearTimeout(timer);
        late.delete(key);
        kept = (await (outcome === undefined ? claimed.release() : claimed.complete(outcome))) as boolean | undefined;
      }
      return kept;
    })();
    ended.catch(() => {}); // it may end after the kit stopped waiting
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => (reject(overdue(key)), late.add(key), stop.abort()), limit);
    });
    if ((await Promise.race([ended, timedOut])) === false) {
      const message = `fulfillment: lease lost on ${key} while its handler ran: another process may have run it too`;
      console.warn(`[business-payments] ${message}`);
      throw new PaymentsError(message);
    }
    return 'ran';
  };
}

// A successful payment, once: in the payment's claim, and when its order is known in the
// order's too (nested: on Postgres in the same transaction), whose outcome is the paying
// trx_id. Another trx_id there means the order was paid by another attempt: a review.
function paying(options: FulfillmentOptions, store: FulfillmentStore, lease: number, run: Run, once: Once) {
  return async (value: FulfilledTransaction, context: Context): Promise<SettleResult> => {
    const { trx_id: trxId, order_ref: order } = value;
    let ran = false;
    let reason: string | undefined;
    let expected: ExpectedPrice | undefined;
    const key = `payment:${trxId}`;
    const result = await run(key, async (claimed, held, signal) => {
      const ctx = { ...context, db: claimed.db, effectKey: `${key}:paid`, signal };
      let orderClaim: StoreClaim | undefined;
      if (order) {
        const found = await (claimed.claim?.(`order:${order}`) ?? store.claim(`order:${order}`, lease));
        if ('busy' in found) return void (reason = 'busy');
        if ('done' in found) return same(found.done, trxId) ? 'paid' : void (reason = 'duplicate');
        held.push((orderClaim = found.claimed));
      }
      // The order's claim: its outcome (this trx_id) recorded when onPaid ran, else released.
      try {
        expected = await options.expect?.(value, ctx);
        if (expected && !priced(value, expected)) reason = 'mismatch';
        else {
          await options.onPaid(value, ctx);
          ran = true;
        }
      } finally {
        await (ran ? orderClaim?.complete(trxId) : orderClaim?.release());
      }
      return ran ? 'paid' : undefined;
    });
    if (result === 'busy' || reason === 'busy') return 'busy';
    if (!reason) return ran ? 'ran' : 'done';
    // A payment that needs a person: its handler, or the review list (recorded first, so that
    // it is never lost, and outside any claim, which a store on one connection could not serve).
    const duplicate = reason === 'duplicate';
    const handler = duplicate ? options.onDuplicatePayment : options.onMismatch;
    if (!handler) {
      if (!store.inbox)
        console.warn(`[business-payments] payment ${trxId} needs review (${reason}): give it a handler, or a store with an inbox`);
      await store.inbox?.add(`review:${trxId}`, JSON.stringify({ type: 'payment.review', reason, data: value }), 'review');
    }
    const reviewed = await once(key, `review:${reason}`, handler, value, duplicate ? context : { ...context, expected });
    return reviewed === 'busy' ? 'busy' : 'review';
  };
}

/**
 * Records a payment reported and not settled yet (`false` where the store cannot): its trx_id
 * for `reconcile`, and its reference (`ref:<trx_id>`), which the earlier generation's verify
 * does not carry, so that the payment still finds its order there.
 */
export async function remember(store: FulfillmentStore, trxId: string, ref: string | undefined, lease: number): Promise<boolean> {
  if (!store.remember) return false;
  // The reference first: a reconcile that finds the trx_id finds its reference with it (another
  // report writing it right now is waited for, up to 2 s).
  let found = ref ? await store.claim(`ref:${trxId}`, lease) : undefined;
  for (let i = 0; found && 'busy' in found && i < 100; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    found = await store.claim(`ref:${trxId}`, lease);
  }
  if (found && 'claimed' in found) await found.claimed.complete(ref!);
  await store.remember(`payment:${trxId}`);
  return true;
}

/** One trace around `work` when someone listens; the trace's `info` is filled in as the work goes. */
export function trace<T>(
  operation: FulfillmentTrace['operation'],
  environment: FulfillmentTrace['environment'],
  work: (info: FulfillmentTrace) => Promise<T>,
): Promise<T> {
  const info: FulfillmentTrace = { operation, environment };
  const tracing = tracingChannel('business-payments:fulfillment');
  return listened(tracing)
    ? traced(
        tracing,
        info,
        () => work(info),
        (context, error) => (context.errorClass = errorClass(error)),
      )
    : work(info);
}

/** The class name of what was thrown, for traces. */
export const errorClass = (error: unknown): string => (error as Error | undefined)?.name ?? 'Error';

/** What was thrown, as a message. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** `value` when it is a string. */
export const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

// The paid gross against the order's price at the currency's minor-unit digits (pg's numeric
// '3.30' is a paid 3.3), and the currency.
const priced = (tx: FulfilledTransaction, expected: ExpectedPrice) =>
  same(tx.currency, expected.currency) && sameAmount(paidAmount(tx), expected.amount, String(tx.currency).toUpperCase());

// The trace's event type and id.
export const named = (event: WebhookEvent, info: FulfillmentTrace) => {
  info.eventType = String(event.type);
  if (typeof event.id === 'string') info.eventId = event.id;
};

// Ids compare as the earlier generation matches them, case-insensitively.
const same = (a: unknown, b: unknown) => String(a).toUpperCase() === String(b).toUpperCase();

// The service's answer for `trxId`, refused when it is about another payment (a proxy's
// cache, a hostile server): acting on it would settle one order with another's payment.
// It waits for a slot in the client's polling budget (`pollSlot`; a test's fake client may have
// none), until `signal` aborts.
export async function verified(client: FulfillmentClient, trxId: string, signal?: AbortSignal): Promise<VerifiedTransaction> {
  await client.pollSlot?.(signal);
  const tx = await client.payments.verify(trxId);
  if (!same(tx?.trx_id, trxId)) throw new PaymentsError(`fulfillment: verify(${trxId}) answered for ${String(tx?.trx_id)}`);
  return tx;
}
