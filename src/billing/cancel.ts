// The cancel step: the local end of a record (the API has no cancel route). Access ends at the
// `paidThrough` kept with the cancel, so that paidThrough must count every period paid before
// it: the record's invoices are read first (one list, within the polling budget), or an
// invoice.paid that was lost or is late would count as charged after the cancel, refunded, and
// the customer would lose a period paid before cancelling.
import type { BillingBase } from './base.js';
import { invoicesOf } from './reconcile.js';
import type { SubscriptionRecord } from './store.js';

/** `cancel`: the latest record of the pair cancelled here (access ends at its paidThrough), or undefined when there is none. */
export async function cancel(base: BillingBase, customer: string, plan: string): Promise<SubscriptionRecord | undefined> {
  const latest = (await base.chain(customer, plan, 'cancel')).at(-1);
  if (!latest) return;
  if (latest.subscriptionId !== undefined && !latest.cancel) {
    // Best effort: the service unreachable must not keep a customer from cancelling.
    const read = await invoicesOf(base, latest.subscriptionId).catch(() => undefined);
    if (read) await base.apply(latest.key, read.facts, { source: 'cancel' });
  }
  const { record } = await base.update(
    latest.key,
    (record) => {
      const { state, paidThrough = 0 } = base.standing(record);
      // Kept with the cancel: a period paid from there on never extends access.
      return state === 'pending' || state === 'active' || state === 'past_due' ? { cancel: { at: base.now(), paidThrough } } : undefined;
    },
    { source: 'cancel' },
  );
  return base.current(record);
}
