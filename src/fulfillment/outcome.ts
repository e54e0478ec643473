// The kit's answer to a return or checkout page (`fulfillment.outcome`): a payment's outcome
// from the store when it is recorded, else verified once and settled through the settle step's
// once-only path, as a delivery is. With `wait`, it asks again every 3 s until the outcome is
// final or the wait ends; the callers waiting on one payment in this process share one loop.
import { PaymentsError } from '../core/base-error.js';
import { sleep } from '../internal/pace.js';
import { open, remember, trace } from './base.js';
import type { FulfillmentOptions } from './options.js';
import type { Fulfillment, PaymentState, SettleResult } from './results.js';
import type { Asked, Settle } from './settle.js';
import type { FulfillmentStore } from './store.js';

// One payment's loop: its callers now (the last to leave stops it) and what it comes to.
interface Poll {
  callers: number;
  stop: AbortController;
  done: Promise<PaymentState>;
}

/** `fulfillment.outcome`. */
// A payment it could not settle (pending, busy elsewhere, a handler threw) is remembered for
// `reconcile` with the caller's reference, once per call or loop: on the earlier generation
// nothing else may report it again. The loop's verifies wait for their slot in the polling
// budget until it stops.
export function outcomes(options: FulfillmentOptions, store: FulfillmentStore, lease: number, settle: Settle): Fulfillment['outcome'] {
  const polls = new Map<string, Poll>();
  const ask = async (trxId: string, ref: string | undefined, signal: AbortSignal | undefined, kept: { kept?: true }) => {
    const keep = () => kept.kept || ((kept.kept = true), remember(store, trxId, ref, lease).catch(() => {}));
    const asked: Asked = {};
    let result: SettleResult;
    try {
      result = await trace('outcome', options.environment, (info) =>
        settle.payment(trxId, ref, { source: 'verified' }, info, signal, asked),
      );
    } catch (error) {
      await keep();
      throw error;
    }
    if (open(result)) return (await keep(), 'pending');
    const word = asked.outcome!;
    return result === 'review' || word.startsWith('review') ? 'review' : (word as PaymentState);
  };
  const loop = async (trxId: string, ref: string | undefined, signal: AbortSignal): Promise<PaymentState> => {
    const kept = {};
    for (let state; ; await sleep(3_000, signal)) if ((state = await ask(trxId, ref, signal, kept)) !== 'pending') return state;
  };
  return async (trxId, { merchantRef, wait, signal } = {}) => {
    if (typeof trxId !== 'string' || !trxId) throw new PaymentsError('fulfillment.outcome: pass the trx_id of the payment');
    if (wait !== undefined && !(wait >= 0 && wait < 2 ** 31))
      throw new PaymentsError(`fulfillment.outcome({ wait }): ${wait} is not ms from 0`);
    signal?.throwIfAborted();
    if (!wait) return ask(trxId, merchantRef, signal, {});
    let poll = polls.get(trxId);
    if (!poll) {
      const stop = new AbortController();
      const mine: Poll = (poll = { callers: 0, stop, done: loop(trxId, merchantRef, stop.signal) });
      polls.set(trxId, mine);
      // Once it ends, the next caller asks afresh (the store answers a final outcome).
      const gone = () => void (polls.get(trxId) === mine && polls.delete(trxId));
      mine.done.then(gone, gone);
    }
    poll.callers++;
    // This caller's wait: its timer goes when it leaves.
    const end = new AbortController();
    try {
      const timer = sleep(wait, signal ? AbortSignal.any([signal, end.signal]) : end.signal);
      return await Promise.race([poll.done, timer.then((): PaymentState => 'pending')]);
    } finally {
      end.abort();
      if (!--poll.callers) {
        if (polls.get(trxId) === poll) polls.delete(trxId);
        poll.stop.abort();
      }
    }
  };
}
