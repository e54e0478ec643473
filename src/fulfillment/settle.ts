// The settle step: a verified payment's outcome handled once. A success runs `onPaid` once
// per trx_id and once per order across its attempts, inside the claims (renewed while it runs),
// after the price check; a second payment of a paid order, or a price that does not match,
// goes to review. A failure runs `onFailed` once. Below it the shared base; above it the
// delivery, the return page (`handleVerified`, here too) and reconcile, wired by create.ts.
import { PaymentsError } from '../core/base-error.js';
import { sameAmount } from '../core/money.js';
import { paidAmount } from '../core/paid-amount.js';
import type { VerifiedTransaction } from '../schemas/payments.js';
import { ATTEMPT, same, verified, type Context } from './base.js';
import type { ExpectedPrice, FulfilledTransaction, FulfillmentOptions, Handler } from './options.js';
import type { FulfillmentTrace, SettleResult } from './results.js';
import type { FulfillmentStore, StoreClaim } from './store.js';

// The body of a claim: `held` are the claims renewed while it runs (it may add its own), `signal`
// the handler's (aborted when the kit stops waiting for it).
type Body = (claimed: StoreClaim, held: StoreClaim[], signal: AbortSignal) => Promise<string | undefined>;
/** `outcome`: the outcome recorded for the key, found (`done`) or recorded now. */
export type Asked = { outcome?: string };
type Run = (key: string, body: Body, note?: Asked) => Promise<SettleResult>;

/** `handler` run once for `key`, in its claim; the claim then records `outcome`. */
type Once = <T>(key: string, outcome: string, handler: Handler<T> | undefined, value: T, context: Context) => Promise<SettleResult>;

/** The settle step, as the kit's other steps use it. */
export interface Settle {
  /**
   * A payment settled once, in its claim: `onPaid` (or review) on success, `onFailed` on
   * failure, else `pending`. Given a trx_id, it is verified inside the claim (within the polling
   * budget, until `signal` aborts), so a recorded or busy payment costs no call. `asked` (a
   * return page's ask, `fulfillment.outcome`): the reference recorded for it is read there
   * first (over the caller's), and `asked.outcome` is the outcome recorded, found or now.
   */
  payment(
    source: VerifiedTransaction | string,
    merchantRef: string | undefined,
    context: Context,
    info: FulfillmentTrace,
    signal?: AbortSignal,
    asked?: Asked,
  ): Promise<SettleResult>;
  /** A handler run once per key (a webhook event's `onEvent`). */
  once: Once;
}

/** The kit's settle step. */
// `payment` refuses a transaction without trx_id (every such call would share one key,
// `payment:undefined`). A transaction in hand that is not final needs no claim. Each handler
// gets `effectKey`, `<key>:<outcome>`: the same for every run of it, wherever it runs.
export function settler(options: FulfillmentOptions, store: FulfillmentStore, lease: number): Settle {
  const run = runner(options, store, lease);
  const once: Once = (key, outcome, handler, value, context) =>
    run(key, async ({ db }, _, signal) => (await handler?.(value, { ...context, db, effectKey: `${key}:${outcome}`, signal }), outcome));
  const paid = paying(options, store, lease, run, once);
  const payment: Settle['payment'] = async (source, merchantRef, context, info, signal, asked) => {
    const given = typeof source === 'string' ? undefined : source;
    const trxId = given ? given.trx_id : source;
    if (!trxId || typeof trxId !== 'string') throw new PaymentsError('fulfillment: a transaction without trx_id cannot be settled');
    info.trxId = trxId;
    const final = !given || given.status === 'success' || given.status === 'failed';
    return (info.result = final ? await paid(trxId, given, merchantRef, context, signal, asked) : 'pending');
  };
  return { payment, once };
}

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
  return async (key, body, note = {}) => {
    if (late.has(key)) throw overdue(key);
    const result = await store.claim(key, lease);
    if (!('claimed' in result)) return 'busy' in result ? 'busy' : ((note.outcome = result.done), 'done');
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
        kept = (await (outcome === undefined ? claimed.release() : claimed.complete((note.outcome = outcome)))) as boolean | undefined;
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

// A payment, once: verified (when not in hand) inside the payment's claim, so that a payment
// whose outcome is recorded (`done`) or in hand elsewhere (`busy`) costs no verify. A failure runs
// onFailed there; a success, when its order is known, claims the order too (nested: on Postgres
// in the same transaction), whose outcome is the paying trx_id. Another trx_id there means the
// order was paid by another attempt: a review. Pending: the claim is released.
function paying(options: FulfillmentOptions, store: FulfillmentStore, lease: number, run: Run, once: Once) {
  const review = reviewer(options, store, once);
  return async (
    trxId: string,
    tx: VerifiedTransaction | undefined,
    merchantRef: string | undefined,
    context: Context,
    signal?: AbortSignal,
    asked?: Asked,
  ): Promise<SettleResult> => {
    let ran = false;
    let reason: string | undefined;
    let expected: ExpectedPrice | undefined;
    let value: FulfilledTransaction | undefined;
    const key = `payment:${trxId}`;
    const result = await run(
      key,
      async (claimed, held, stop) => {
        tx ??= await verified(options.client, trxId, signal);
        // The reference the service sent over the caller's (a return page's URL is anyone's to write).
        const ref =
          (tx as FulfilledTransaction).merchant_ref ?? (asked ? await recordedRef(store, claimed, trxId) : undefined) ?? merchantRef;
        const order = ref == null ? undefined : (ATTEMPT.exec(ref)?.[1] ?? ref);
        value = ref == null ? tx : { ...tx, merchant_ref: ref, order_ref: order };
        const { status } = tx;
        const ctx = { ...context, db: claimed.db, effectKey: `${key}:${status === 'failed' ? status : 'paid'}`, signal: stop };
        if (status === 'failed') return (await options.onFailed?.(value, ctx), (ran = true), status);
        if (status !== 'success') return void (reason = 'pending');
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
          else await options.onPaid(value, ctx);
          ran = !reason;
        } finally {
          await (ran ? orderClaim?.complete(trxId) : orderClaim?.release());
        }
        return ran ? 'paid' : undefined;
      },
      asked,
    );
    // Busy here (the payment's claim) or on its order, or pending: nothing ran.
    if (result === 'busy' || reason === 'busy' || reason === 'pending') return (reason ?? result) as 'busy' | 'pending';
    if (!reason) return ran ? 'ran' : 'done';
    if (asked) asked.outcome = `review:${reason}`;
    return review(reason, value!, duplicate(reason) ? context : { ...context, expected });
  };
}

const duplicate = (reason: string) => reason === 'duplicate';

// A payment that needs a person: its handler, or the review list (recorded first, so that it is
// never lost, and outside any claim, which a store on one connection could not serve).
function reviewer(options: FulfillmentOptions, store: FulfillmentStore, once: Once) {
  return async (reason: string, value: FulfilledTransaction, context: Context): Promise<SettleResult> => {
    const { trx_id: trxId } = value;
    const handler = duplicate(reason) ? options.onDuplicatePayment : options.onMismatch;
    if (!handler) {
      if (!store.inbox)
        console.warn(`[business-payments] payment ${trxId} needs review (${reason}): give it a handler, or a store with an inbox`);
      await store.inbox?.add(`review:${trxId}`, JSON.stringify({ type: 'payment.review', reason, data: value }), 'review');
    }
    return (await once(`payment:${trxId}`, `review:${reason}`, handler, value, context)) === 'busy' ? 'busy' : 'review';
  };
}

// The reference recorded for a payment (`ref:<trx_id>`), read inside its claim: on Postgres
// through the claim's own transaction (a single connection is the claim's while it is held).
async function recordedRef(store: FulfillmentStore, claimed: StoreClaim, trxId: string): Promise<string | undefined> {
  if (!claimed.claim) return store.outcome(`ref:${trxId}`);
  const found = await claimed.claim(`ref:${trxId}`);
  return 'done' in found ? found.done : undefined;
}

// The paid gross against the order's price at the currency's minor-unit digits (pg's numeric
// '3.30' is a paid 3.3), and the currency.
const priced = (tx: FulfilledTransaction, expected: ExpectedPrice) =>
  same(tx.currency, expected.currency) && sameAmount(paidAmount(tx), expected.amount, String(tx.currency).toUpperCase());
