// The attempts step: `newAttempt` hands out a new attempt at paying an order (`<order>~a<n>`),
// and `made` tells whether this store handed out the attempt a payment names (reconcile
// settles only those). Below it the shared base.
import { ConfigurationError, PaymentsError } from '../core/base-error.js';
import { ATTEMPT } from './base.js';
import type { PaymentAttempt } from './results.js';
import type { FulfillmentStore } from './store.js';

// Where the kit records each attempt it hands out: `attempt:<ref_trx>` (apart from the count,
// `attempts:<order>`).
const MADE = 'attempt:';

/** A new attempt at paying `orderRef`, `<order>~a<n>` (`fulfillment.newAttempt`). */
// n from the store's count, and the attempt recorded under its own key (a claim completed at
// once). A number recorded already (or being recorded) is passed over and the count taken again,
// so a count the store lost (its key evicted or deleted) never hands out a used ref_trx and key
// again. (A store that lost everything knows nothing: see docs/fulfillment.md.) A store whose
// claims never succeed fails after 1,000 tries.
export async function newAttempt(store: FulfillmentStore, orderRef: string, lease: number): Promise<PaymentAttempt> {
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

/** Whether this store made the attempt `ref` names; a reference of another form is its own order. */
// Made: its count reached it, or the attempt's own record is there (the count may have been lost).
export async function made(store: FulfillmentStore, ref: string): Promise<boolean> {
  const attempt = ATTEMPT.exec(ref);
  return (
    !attempt ||
    Number((await store.outcome(`attempts:${attempt[1]}`)) ?? 0) >= Number(attempt[2]) ||
    (await store.outcome(MADE + ref)) !== undefined
  );
}
