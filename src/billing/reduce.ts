// The reducer: a record's standing worked out from the facts it holds (paid periods, the
// service's suspension or cancel, the local cancel), never from the last event seen. Pure:
// no clock of its own, no store. Facts merge as sets (each invoice once, the earliest time of
// each suspension), so the same facts in any order, any number of times, give the same record.
import type { PaidPeriod, SubscriptionRecord, SubscriptionState } from './store.js';

/** What an event or an invoice list tells of a subscription, as the reducer merges it. */
export interface Facts {
  /** Invoices paid, with their period. */
  paid?: PaidPeriod[] | undefined;
  /** Invoices whose charge failed. */
  failed?: PaidPeriod[] | undefined;
  /** When the service suspended it. */
  suspendedAt?: number | undefined;
  /** When the service said it was cancelled. */
  endedByServiceAt?: number | undefined;
}

/** A record's standing at one time. */
export interface Standing {
  /** Its state then. */
  state: SubscriptionState;
  /** Whether it grants access then. */
  active: boolean;
  /** The latest end of a paid period that counts (none: undefined). */
  paidThrough: number | undefined;
}

/**
 * Whether a paid period is one charged after the local cancel: it starts at or after the
 * `paidThrough` the record had when it was cancelled, or was reported so before (a cancel
 * taken back does not make a period already reported for a refund count again).
 */
function afterCancel(record: Pick<SubscriptionRecord, 'cancel' | 'chargedAfterCancel'>, period: PaidPeriod): boolean {
  return record.chargedAfterCancel.includes(period.invoice) || (record.cancel !== undefined && period.start >= record.cancel.paidThrough);
}

/** The latest end of a paid period that counts (charged-after-cancel ones never do), or undefined. */
function paidThrough(record: Pick<SubscriptionRecord, 'paid' | 'cancel' | 'chargedAfterCancel'>): number | undefined {
  let end: number | undefined;
  for (const period of record.paid) if (!afterCancel(record, period) && (end === undefined || period.end > end)) end = period.end;
  return end;
}

/** The record's standing at `now`, with `grace` ms of access kept past `paidThrough` for a late renewal. */
export function standing(record: SubscriptionRecord, now: number, grace: number): Standing {
  const through = paidThrough(record);
  const paid = through !== undefined && now < through;
  const at = (state: SubscriptionState, active = false): Standing => ({ state, active, paidThrough: through });
  if (record.error !== undefined) return at('ended');
  // The service stopped charging it: no access from then on (suspended says so while the period lasts).
  if (record.suspendedAt !== undefined || record.endedByServiceAt !== undefined) return at(paid ? 'suspended' : 'ended');
  if (record.cancel) return paid ? at('cancelled', true) : at('ended');
  if (through === undefined) return at('pending');
  return paid ? at('active', true) : at('past_due', now < through + grace);
}

/**
 * The record with `facts` merged in (and the paid periods they make charged after the cancel
 * added to `chargedAfterCancel`), or undefined when they tell it nothing new. Its version,
 * times and `state` are the caller's to set.
 */
export function merge(record: SubscriptionRecord, facts: Facts): SubscriptionRecord | undefined {
  const paid = union(record.paid, facts.paid);
  const failed = union(record.failed, facts.failed);
  const suspendedAt = earliest(record.suspendedAt, facts.suspendedAt);
  const endedByServiceAt = earliest(record.endedByServiceAt, facts.endedByServiceAt);
  const next = { ...record, paid, failed, suspendedAt, endedByServiceAt };
  next.chargedAfterCancel = reported(next);
  const same =
    paid === record.paid &&
    failed === record.failed &&
    suspendedAt === record.suspendedAt &&
    endedByServiceAt === record.endedByServiceAt &&
    next.chargedAfterCancel.length === record.chargedAfterCancel.length;
  return same ? undefined : next;
}

/** `chargedAfterCancel` as the record's facts make it: those reported and each paid period after the cancel, once each, sorted. */
function reported(record: SubscriptionRecord): string[] {
  const fresh = record.paid.filter((period) => afterCancel(record, period) && !record.chargedAfterCancel.includes(period.invoice));
  return fresh.length ? [...record.chargedAfterCancel, ...fresh.map((period) => period.invoice)].sort() : record.chargedAfterCancel;
}

// The periods of `known` and `more`, each invoice once, ordered by invoice (the same whatever
// the order they came in); `known` itself when `more` adds nothing. One invoice told twice
// with other periods keeps the earlier one: the merge stays the same in any order.
function union(known: PaidPeriod[], more: PaidPeriod[] | undefined): PaidPeriod[] {
  if (!more?.length) return known;
  const byInvoice = new Map(known.map((period) => [period.invoice, period]));
  let changed = false;
  for (const period of more) {
    const had = byInvoice.get(period.invoice);
    if (had && (had.start < period.start || (had.start === period.start && had.end <= period.end))) continue;
    byInvoice.set(period.invoice, { invoice: period.invoice, start: period.start, end: period.end });
    changed = true;
  }
  if (!changed) return known;
  return [...byInvoice.values()].sort((a, b) => (a.invoice < b.invoice ? -1 : a.invoice > b.invoice ? 1 : 0));
}

// The earlier of two times, either of which may be missing.
function earliest(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}
