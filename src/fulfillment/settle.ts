// The once-only core of the fulfillment kit: claims (renewed while a handler runs), a payment
// settled once per trx_id and an order paid once across its attempts, the price check, and
// the review path. createFulfillment (create.ts) wires it to the webhook, the return page,
// reconcile and the inbox.
import { PaymentsError } from '../core/base-error.js';
import { paidAmount } from '../core/paid-amount.js';
import type { VerifiedTransaction } from '../resources/payments.js';
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
} from './create.js';
import type { FulfillmentStore, StoreClaim } from './store.js';
import { listened, traced, tracingChannel } from '../internal/trace.js';

/** What the parts of one kit share. */
export interface Kit {
  options: FulfillmentOptions;
  store: FulfillmentStore;
  lease: number;
}

/** What a handler gets beside its value, but the store's `db`. */
export type Context = Omit<FulfillmentContext, 'db'>;

type Ran = { done: string } | { busy: true } | { ran: string | undefined };

const OUTCOMES: Record<string, string> = { success: 'paid', failed: 'failed' };
/** `<order>~a<n>`: what newAttempt makes, and how a payment finds its order again. */
export const ATTEMPT = /^(.+)~a(\d+)$/;

// Claims `key` and runs `body` in it, renewing the claim (and any `body` keeps) every third of
// the lease while it runs, so a slow handler is never run twice; `body` gives the outcome to
// record, or undefined to release the claim.
function claims({ store, lease }: Kit) {
  const run = async (
    key: string,
    body: (db: unknown, claimed: StoreClaim, keep: (claim: StoreClaim) => void) => Promise<string | undefined>,
  ): Promise<Ran> => {
    const result = await store.claim(key, lease);
    if (!('claimed' in result)) return result;
    const { claimed } = result;
    const held = [claimed];
    const renewing = setInterval(() => held.map((claim) => void claim.renew?.().catch(() => {})), lease / 3);
    (renewing as { unref?: () => void }).unref?.();
    let outcome: string | undefined;
    try {
      outcome = await body(claimed.db, claimed, (claim) => held.push(claim));
    } catch (error) {
      clearInterval(renewing);
      await claimed.release();
      throw error;
    }
    clearInterval(renewing);
    await (outcome === undefined ? claimed.release() : claimed.complete(outcome));
    return { ran: outcome };
  };
  const once = async <T>(
    key: string,
    outcome: string,
    handler: Handler<T> | undefined,
    value: T,
    context: Context,
  ): Promise<SettleResult> => {
    const result = await run(key, async (db) => (await handler?.(value, { ...context, db }), outcome));
    return 'busy' in result ? 'busy' : 'done' in result ? 'done' : 'ran';
  };
  return { run, once };
}

// A successful payment, once: in the payment's claim, and when its order is known in the
// order's too (nested: on Postgres in the same transaction), whose outcome is the paying
// trx_id. Another trx_id there means the order was paid by another attempt: a review.
function paying(kit: Kit, { run, once }: ReturnType<typeof claims>) {
  const { options, store, lease } = kit;
  // A payment that needs a person: its handler, or the review list (recorded first, so that it
  // is never lost, and outside any claim, which a store on one connection could not serve).
  const review = async (
    value: FulfilledTransaction,
    reason: string,
    handler: Handler<FulfilledTransaction> | undefined,
    context: Context,
  ) => {
    const trxId = value.trx_id;
    if (!handler) {
      if (!store.inbox)
        console.warn(`[business-payments] payment ${trxId} needs review (${reason}): give it a handler, or a store with an inbox`);
      await store.inbox?.add(`review:${trxId}`, JSON.stringify({ type: 'payment.review', reason, data: value }), 'review');
    }
    return (await once(`payment:${trxId}`, `review:${reason}`, handler, value, context)) === 'busy' ? 'busy' : 'review';
  };
  return async (value: FulfilledTransaction, context: Context): Promise<SettleResult> => {
    const { trx_id: trxId, order_ref: order } = value;
    let ran = false;
    let reason: string | undefined;
    let expected: ExpectedPrice | undefined;
    const result = await run(`payment:${trxId}`, async (db, claimed, keep) => {
      const ctx = { ...context, db };
      let orderClaim: StoreClaim | undefined;
      if (order) {
        const found = await (claimed.claim ? claimed.claim(`order:${order}`) : store.claim(`order:${order}`, lease));
        if ('busy' in found) return void (reason = 'busy');
        if ('done' in found) return same(found.done, trxId) ? 'paid' : void (reason = 'duplicate');
        keep((orderClaim = found.claimed));
      }
      try {
        expected = await options.expect?.(value, ctx);
        if (expected && !priced(value, expected)) reason = 'mismatch';
        else await options.onPaid(value, ctx);
      } catch (error) {
        await orderClaim?.release();
        throw error;
      }
      if (reason) return void (await orderClaim?.release());
      await orderClaim?.complete(trxId);
      ran = true;
      return 'paid';
    });
    if ('busy' in result || reason === 'busy') return 'busy';
    if (reason === 'duplicate') return review(value, reason, options.onDuplicatePayment, context);
    if (reason) return review(value, reason, options.onMismatch, { ...context, expected });
    return ran ? 'ran' : 'done';
  };
}

/** The kit's settlement: a verified transaction (`settle`), or a verified webhook event (`fromEvent`). */
export function settler(kit: Kit) {
  const { options, store } = kit;
  const c = claims(kit);
  const paid = paying(kit, c);
  const settle = async (
    tx: VerifiedTransaction,
    merchantRef: string | undefined,
    context: Context,
    info: FulfillmentTrace,
  ): Promise<SettleResult> => {
    const value = fulfilled(tx, merchantRef);
    info.trxId = tx.trx_id;
    const outcome = OUTCOMES[tx.status];
    return (info.result = !outcome
      ? 'pending'
      : outcome === 'paid'
        ? await paid(value, context)
        : await c.once(`payment:${tx.trx_id}`, outcome, options.onFailed, value, context));
  };
  const fromEvent = async (event: WebhookEvent, info: FulfillmentTrace, recorded: () => void): Promise<SettleResult> => {
    const data = event.data as { trx_id?: unknown; merchant_ref?: unknown } | null | undefined;
    const { onEvent } = options;
    named(event, info);
    if (String(event.type).startsWith('payment.') && typeof data?.trx_id === 'string') {
      const ref = typeof data.merchant_ref === 'string' ? data.merchant_ref : undefined;
      info.trxId = data.trx_id;
      await rememberOnce(store, event, data.trx_id, recorded);
      // Verified before any handler: the event says what happened, the service confirms it.
      return settle(await verified(options.client, data.trx_id), ref, { source: 'webhook', event }, info);
    }
    if (!onEvent) return 'ran';
    // An event without an id cannot be de-duplicated: it runs each time it comes.
    if (typeof event.id !== 'string') return (await onEvent(event, { source: 'webhook', event, db: undefined }), 'ran');
    return c.once(`event:${event.id}`, 'handled', onEvent, event, { source: 'webhook', event });
  };
  return { settle, fromEvent };
}

/** One trace around `work` when someone listens; `info` is filled in as the work goes. */
export function trace<T>(info: FulfillmentTrace, work: () => Promise<T>): Promise<T> {
  const tracing = tracingChannel('business-payments:fulfillment');
  return listened(tracing) ? traced(tracing, info, work, (context, error) => (context.errorClass = errorClass(error))) : work();
}

/** The class name of what was thrown, for traces. */
export const errorClass = (error: unknown): string => (error as Error | undefined)?.name ?? 'Error';

// The paid gross against the order's price, as decimals (pg's numeric is a string), and the currency.
const priced = (tx: FulfilledTransaction, expected: ExpectedPrice) =>
  paidAmount(tx) === Number(expected.amount) && same(tx.currency, expected.currency);

// The trace's event type and id.
export const named = (event: WebhookEvent, info: FulfillmentTrace) => {
  info.eventType = String(event.type);
  if (typeof event.id === 'string') info.eventId = event.id;
};

// Ids compare as the earlier generation matches them, case-insensitively.
const same = (a: unknown, b: unknown) => String(a).toUpperCase() === String(b).toUpperCase();

// What the handlers get. No trx_id, no claim (every such call would share one key,
// `payment:undefined`); a reference the service sent wins over the caller's (a return page's
// URL is anyone's to write).
function fulfilled(tx: VerifiedTransaction, merchantRef: string | undefined): FulfilledTransaction {
  if (typeof tx?.trx_id !== 'string' || !tx.trx_id) throw new PaymentsError('fulfillment: a transaction without trx_id cannot be settled');
  const ref = (tx as FulfilledTransaction).merchant_ref ?? merchantRef;
  return ref == null ? tx : { ...tx, merchant_ref: ref, order_ref: ATTEMPT.exec(ref)?.[1] ?? ref };
}

// The service's answer for `trxId`, refused when it is about another payment (a proxy's
// cache, a hostile server): acting on it would settle one order with another's payment.
// Ids are compared as the earlier generation matches them, case-insensitively.
export async function verified(client: FulfillmentClient, trxId: string): Promise<VerifiedTransaction> {
  const tx = await client.payments.verify(trxId);
  if (String(tx?.trx_id).toUpperCase() !== trxId.toUpperCase())
    throw new PaymentsError(`fulfillment: verify(${trxId}) answered for ${String(tx?.trx_id)}`);
  return tx;
}

// The earlier generation sends its IPN once, never again: its trx_id is recorded first, so
// that whatever happens next, `reconcile` finds it (that generation has no payment list).
async function rememberOnce(store: FulfillmentStore, event: WebhookEvent, trxId: string, recorded: () => void): Promise<void> {
  if (event.format !== 'legacy' || !store.remember) return;
  await store.remember(`payment:${trxId}`);
  recorded();
}
