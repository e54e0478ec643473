// The reconcile step (a cron job's): for each record the service may still charge, its
// invoices as `billing.invoices.list({ subscription })` gives them (each page within the
// client's polling budget), read as the events are (invoiceFacts) and merged by the same
// reducer, so a lost `invoice.paid` still grants access and a renewal paid after a cancel is
// still reported. A record whose create was sent and never answered (its process killed
// after the service made it) is replayed with its key first, inside the key window: the
// service answers the subscription it made, and its events find their record.
import { KEY_WINDOW, type BillingBase } from './base.js';
import { invoiceFacts } from './events.js';
import type { Facts } from './reduce.js';
import type { SubscriptionRecord } from './store.js';
import { replay } from './subscribe.js';
import type { BillingReconcileReport } from './types.js';

/** The most invoices one run reads of one subscription (newest first: the older ones were read before). */
const INVOICE_CAP = 10_000;
/** The page size asked for: a slot of the polling budget is taken before each page. */
const PAGE = 100;
/** How long (ms) after its last change a record never answered is left to its sender (its answer may still come). */
const SENDER_GRACE = 60_000;

/** `reconcile()`: the invoices of every record the service may still charge, merged in. */
export async function reconcile(base: BillingBase, signal?: AbortSignal): Promise<BillingReconcileReport> {
  const report: BillingReconcileReport = { checked: 0, changed: [], errors: [] };
  for (const record of await base.all()) {
    // Refused, or stopped by the service: nothing more to come.
    if (record.error !== undefined || record.suspendedAt !== undefined || record.endedByServiceAt !== undefined) continue;
    if (record.subscriptionId === undefined && !unanswered(base, record)) continue;
    signal?.throwIfAborted();
    report.checked++;
    try {
      const from = base.standing(record).state;
      const { record: next, changed, unreadable } = await check(base, record, signal);
      if (changed) report.changed.push({ key: record.key, from, to: next.state });
      if (unreadable) report.errors.push({ key: record.key, message: unreadable });
    } catch (error) {
      signal?.throwIfAborted();
      report.errors.push({ key: record.key, message: String((error as Error)?.message ?? error) });
    }
  }
  return report;
}

// Whether a record without its subscription id is one to replay now: sent (a record never sent
// waits for its customer's next subscribe), not cancelled, left alone by its sender for a
// while, and inside the key window (past it, a replay could make a second subscription).
function unanswered(base: BillingBase, record: SubscriptionRecord): boolean {
  const now = base.now();
  return record.sends > 0 && !record.cancel && now - record.updatedAt >= SENDER_GRACE && now - record.createdAt < KEY_WINDOW;
}

// One record: replayed when never answered, then its invoices merged in.
async function check(
  base: BillingBase,
  record: SubscriptionRecord,
  signal?: AbortSignal,
): Promise<{ record: SubscriptionRecord; changed: boolean; unreadable?: string | undefined }> {
  let now = record;
  if (now.subscriptionId === undefined) {
    await base.client.pollSlot?.(signal);
    now = (await replay(base, record, signal)).record;
    if (now.subscriptionId === undefined) return { record: now, changed: now.version !== record.version };
  }
  const { facts, unreadable } = await invoicesOf(base, now.subscriptionId, signal);
  const applied = await base.apply(record.key, facts, { source: 'reconcile' });
  return { record: applied.record, changed: applied.changed || now !== record, unreadable };
}

// The facts of one subscription's invoices, as listed, and why one could not be read (the
// others are merged all the same).
export async function invoicesOf(
  base: BillingBase,
  subscription: string,
  signal?: AbortSignal,
): Promise<{ facts: Facts; unreadable: string | undefined }> {
  const facts = { paid: [], failed: [] } as Required<Pick<Facts, 'paid' | 'failed'>> & Facts;
  let unreadable: string | undefined;
  // The client's list sends its first request when called: the slot comes first.
  await base.client.pollSlot?.(signal);
  const pages = base.client.billing.invoices.list({ subscription, limit: PAGE }, { signal })[Symbol.asyncIterator]();
  for (let read = 0; read < INVOICE_CAP; read++) {
    if (read && read % PAGE === 0) await base.client.pollSlot?.(signal);
    const next = await pages.next();
    if (next.done) break;
    let found: Facts | undefined;
    try {
      found = invoiceFacts(next.value);
    } catch (error) {
      unreadable ??= (error as Error).message;
    }
    facts.paid.push(...(found?.paid ?? []));
    facts.failed.push(...(found?.failed ?? []));
    if (found?.suspendedAt !== undefined) facts.suspendedAt = Math.min(found.suspendedAt, facts.suspendedAt ?? Infinity);
  }
  await pages.return?.();
  return { facts, unreadable };
}
