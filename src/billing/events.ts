// The events step: a subscription.* or invoice.* event read into facts, which the reducer
// merges into the record holding its subscription. The spec shows no payload for these, so
// they are read defensively: ids under `id`, `subscription_id` or `subscription` (or one level
// down, `data.invoice`), periods as ISO 8601 strings or epoch ms or s, statuses in any case.
// reconcile.ts reads the invoices it lists the same way (invoiceFacts).
import { isRecord } from '../core/values.js';
import type { WebhookEvent } from '../webhooks/events.js';
import type { BillingBase } from './base.js';
import { BillingError } from './errors.js';
import type { Facts } from './reduce.js';
import type { PaidPeriod } from './store.js';

/** `handleEvent`: the event's facts recorded on the record holding its subscription; other types ignored. */
export async function handleEvent(base: BillingBase, event: WebhookEvent, context?: unknown): Promise<void> {
  const told = eventFacts(event);
  if (!told) return;
  const key = await base.records.owner(told.subscription);
  // The create's answer may not be recorded yet (its event can come first): an inbox retries it.
  if (!key)
    throw new BillingError(
      'unknown_subscription',
      `billing.handleEvent: no record holds ${told.subscription} (yet: ${String(event.type)} ${String(event.id ?? '')})`,
    );
  await base.apply(key, told.facts, { source: 'event', event, context });
}

/**
 * What an event tells, and of which subscription: undefined for a type that tells no fact
 * (payment.*, subscription.created, an invoice opened, newer types). Pure.
 */
export function eventFacts(event: WebhookEvent): { subscription: string; facts: Facts } | undefined {
  const type = String(event?.type);
  const invoice = type.startsWith('invoice.');
  if (!invoice && !type.startsWith('subscription.')) return;
  const data = isRecord(event.data) ? event.data : {};
  const object = record(data[invoice ? 'invoice' : 'subscription']) ?? data;
  const facts = invoice ? invoiceFacts(object, type) : subscriptionFacts(object, type, event);
  if (!facts) return;
  const subscription = invoice
    ? idIn(object.subscription, object.subscription_id)
    : idIn(object.id, object.subscription_id, object.subscription);
  if (!subscription)
    throw new BillingError('unreadable_event', `billing.handleEvent: ${type} ${String(event.id ?? '')} names no subscription id`);
  return { subscription, facts };
}

/**
 * What an invoice tells (`type`: the event it came in, none when listed): paid, its period;
 * its charge failed; uncollectible (the service gave up: it suspends the subscription). An
 * invoice still open and never charged tells nothing.
 */
export function invoiceFacts(invoice: Record<string, unknown>, type?: string): Facts | undefined {
  const status = String(invoice.status).toLowerCase();
  const paid = type === 'invoice.paid' || (type !== 'invoice.payment_failed' && status === 'paid');
  const failed = !paid && (type === 'invoice.payment_failed' || status === 'uncollectible' || present(invoice.failure_reason));
  if (!paid && !failed) return;
  const id = idIn(invoice.id, invoice.invoice_id);
  const period = record(invoice.period);
  const start = time(invoice.period_start ?? invoice.current_period_start ?? period?.start);
  const end = time(invoice.period_end ?? invoice.current_period_end ?? period?.end);
  if (paid && !(id && start !== undefined && end !== undefined && end > start))
    throw new BillingError('unreadable_event', `billing: a paid invoice ${id ?? '(no id)'} without a readable id and period`);
  if (!id) throw new BillingError('unreadable_event', 'billing: a failed invoice without an id');
  const entry: PaidPeriod = { invoice: id, start: start ?? 0, end: end ?? start ?? 0 };
  if (paid) return { paid: [entry] };
  if (status !== 'uncollectible') return { failed: [entry] };
  return { failed: [entry], suspendedAt: time(invoice.updated_at) ?? entry.end };
}

// What a subscription event tells: suspended (or a status that says so), cancelled by the service.
function subscriptionFacts(subscription: Record<string, unknown>, type: string, event: WebhookEvent): Facts | undefined {
  const status = String(subscription.status).toLowerCase();
  // When it happened: the object's last change, else the event's time (the same on every delivery).
  const at = time(subscription.updated_at) ?? time(event.created_at) ?? 0;
  if (type === 'subscription.suspended' || status === 'suspended') return { suspendedAt: at };
  if (type === 'subscription.cancelled' || status === 'cancelled' || status === 'canceled') return { endedByServiceAt: at };
}

// The first of `values` that is an id: a non-empty string, or an object's `id`.
function idIn(...values: unknown[]): string | undefined {
  for (const value of values) {
    const id = isRecord(value) ? value.id : value;
    if (typeof id === 'string' && id) return id;
  }
}

// A time as ms since the epoch: an ISO 8601 string, or epoch ms or s (a number or digits).
function time(value: unknown): number | undefined {
  const number = typeof value === 'string' && /^\d+(\.\d+)?$/.test(value) ? Number(value) : value;
  if (typeof number === 'number') return number > 0 && number < Infinity ? (number < 1e11 ? number * 1000 : number) : undefined;
  const parsed = typeof value === 'string' ? Date.parse(value) : NaN;
  return parsed === parsed ? parsed : undefined;
}

const record = (value: unknown) => (isRecord(value) ? value : undefined);
const present = (value: unknown) => value !== undefined && value !== null && value !== '';
