// What a return or checkout page asks of the kit: `handleVerified` (a transaction the merchant
// verified) and `outcome` (a payment's outcome from the store when it is recorded, else verified
// once in its claim), both settled through the settle step's once-only path, as a delivery is.
// With `wait`, `outcome` asks again every 3 s until the outcome is final or the wait ends; the
// callers waiting on one payment in this process share one loop.
import { PaymentsError } from '../core/base-error.js';
import { open, pause, remember, trace } from './base.js';
import type { FulfillmentOptions } from './options.js';
import type { Fulfillment, PaymentState } from './results.js';
import type { Asked, Settle } from './settle.js';
import type { FulfillmentStore } from './store.js';

// One payment's loop: its callers now (the last to leave stops it) and what it comes to.
interface Poll {
  callers: number;
  stop: AbortController;
  done: Promise<PaymentState>;
}

/** The page's side of the kit: `handleVerified` and `outcome`. */
// The payment's order comes from the reference the service sent (the transaction's own), else
// the one recorded for its trx_id (an earlier-generation IPN's, recorded as it came, or the first
// page's that could not settle: read inside the payment's claim), else the caller's. A payment a
// page could not settle (pending, busy elsewhere, a handler threw) is remembered for `reconcile`
// with the caller's reference, once per call or loop: on the earlier generation nothing else may
// report it again (its IPN is sent once, and it has no payment list). The loop's verifies wait
// for their slot in the polling budget until it stops.
export function pages(options: FulfillmentOptions, store: FulfillmentStore, lease: number, settle: Settle) {
  const polls = new Map<string, Poll>();
  const report = reporter(options, store, lease, settle);
  const ask = async (trxId: string, ref: string | undefined, signal?: AbortSignal, kept?: { kept?: true }): Promise<PaymentState> => {
    const asked: Asked = {};
    const result = await report('outcome', trxId, ref, asked, signal, kept);
    const word = asked.outcome!;
    return open(result) ? 'pending' : result === 'review' || word.startsWith('review') ? 'review' : (word as PaymentState);
  };
  const loop = async (trxId: string, ref: string | undefined, signal: AbortSignal): Promise<PaymentState> => {
    const kept = {};
    for (let state; ; await pause(3_000, signal), signal.throwIfAborted())
      if ((state = await ask(trxId, ref, signal, kept)) !== 'pending') return state;
  };
  const handleVerified: Fulfillment['handleVerified'] = (tx, opts) => report('handleVerified', tx, opts?.merchantRef, {});
  const outcome: Fulfillment['outcome'] = async (trxId, { merchantRef, wait, signal } = {}) => {
    if (wait !== undefined && !(wait >= 0 && wait < 2 ** 31))
      throw new PaymentsError(`fulfillment.outcome({ wait }): ${wait} is not ms from 0`);
    signal?.throwIfAborted();
    if (!wait) return ask(trxId, merchantRef, signal);
    let poll = polls.get(trxId);
    if (!poll) {
      const stop = new AbortController();
      polls.set(trxId, (poll = { callers: 0, stop, done: loop(trxId, merchantRef, stop.signal) }));
      poll.done.catch(() => {}); // it may end (stopped) after its last caller left
    }
    poll.callers++;
    // This caller's wait: its timer goes when it leaves.
    const end = new AbortController();
    try {
      const timer = pause(wait, signal ? AbortSignal.any([signal, end.signal]) : end.signal);
      const state = await Promise.race([poll.done, timer.then((): PaymentState => 'pending')]);
      signal?.throwIfAborted();
      return state;
    } finally {
      end.abort();
      // The last caller out ends the loop (a loop stays in the map while it has callers, so it is this one).
      if (!--poll.callers) {
        polls.delete(trxId);
        poll.stop.abort();
      }
    }
  };
  return { handleVerified, outcome };
}

// A page's report settled, and remembered for `reconcile` when it could not be (see above).
function reporter(options: FulfillmentOptions, store: FulfillmentStore, lease: number, settle: Settle) {
  return async (
    operation: 'handleVerified' | 'outcome',
    source: Parameters<Settle['payment']>[0],
    ref: string | undefined,
    asked: Asked,
    signal?: AbortSignal,
    kept: { kept?: true } = {},
  ) => {
    const trxId = typeof source === 'string' ? source : source?.trx_id;
    const keep = async () => {
      if (kept.kept || typeof trxId !== 'string') return;
      kept.kept = true;
      await remember(store, trxId, ref, lease);
    };
    try {
      const result = await trace(operation, options.environment, (info) =>
        settle.payment(source, ref, { source: 'verified' }, info, signal, asked),
      );
      if (open(result)) await keep();
      return result;
    } catch (error) {
      await keep().catch(() => {});
      throw error;
    }
  };
}
