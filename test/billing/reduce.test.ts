// The reducer is commutative and idempotent: a year of one subscription's events (monthly
// invoices paid, paid after failed charges, or left uncollectible and the subscription
// suspended; a local cancel kept with its paidThrough), read as handleEvent reads them and
// merged in any order with duplicates, gives the same facts, state, paidThrough and access for
// every customer as in order, and as worked out from the year itself. 10,000 orderings in all
// (1,000 years of 1 to 3 customers, 10 orderings of their events each), then the same through
// the whole kit (handleEvent on a store, entitlement) for fewer.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { WebhookEvent } from '../../src/webhooks.js';
import { eventFacts } from '../../src/billing/events.js';
import { merge, standing, type Standing } from '../../src/billing/reduce.js';
import { createBilling, memoryStore, type BillingClient, type SubscriptionRecord } from '../../src/billing.js';

const DAY = 86_400_000;
const MONTH = 30 * DAY;
const T0 = Date.parse('2026-01-01T00:00:00Z');
const GRACE = 3 * DAY;
const iso = (ms: number) => new Date(ms).toISOString();

/** One month's invoice: paid after `failures` failed charges, or uncollectible after 3. */
type Month = { failures: number; paid: boolean };
/** One customer's year: its months (up to the first uncollectible one), and a cancel at a month, if any. */
type Year = { id: string; months: Month[]; cancelAt?: number };

const month = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Month>({ failures: 0, paid: true }) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 2 }).map<Month>((failures) => ({ failures, paid: true })) },
  { weight: 1, arbitrary: fc.constant<Month>({ failures: 3, paid: false }) },
);
const year = (id: string) =>
  fc
    .record({
      months: fc.array(month, { minLength: 1, maxLength: 12 }),
      cancelAt: fc.option(fc.integer({ min: 0, max: 12 }), { nil: undefined }),
    })
    .map(({ months, cancelAt }): Year => {
      const end = months.findIndex((m) => !m.paid);
      return { id, months: end === -1 ? months : months.slice(0, end + 1), ...(cancelAt === undefined ? {} : { cancelAt }) };
    });
const customers = fc.integer({ min: 1, max: 3 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => year(`sub_${i + 1}`))));

/** The events the service sends for a year, as the sandbox shapes them (each once). */
function eventsOf({ id, months }: Year): WebhookEvent[] {
  const events: Array<{ type: string; data: Record<string, unknown> }> = [
    { type: 'subscription.created', data: { id, status: 'pending' } },
  ];
  months.forEach(({ failures, paid }, i) => {
    const start = T0 + i * MONTH;
    const invoice = { id: `inv_${id}_${i}`, subscription: id, period_start: iso(start), period_end: iso(start + MONTH), amount: 10_000 };
    events.push({ type: 'invoice.created', data: { ...invoice, status: 'open' } });
    for (let f = 1; f <= failures; f++)
      events.push({ type: 'invoice.payment_failed', data: { ...invoice, status: f === 3 ? 'uncollectible' : 'open', attempt_count: f } });
    if (paid) events.push({ type: 'invoice.paid', data: { ...invoice, status: 'paid', paid_at: iso(start + 3 * DAY) } });
    else events.push({ type: 'subscription.suspended', data: { id, status: 'suspended', updated_at: iso(start + 2 * DAY) } });
  });
  return events.map((event, i) => ({ id: `evt_${id}_${i}`, ...event }) as WebhookEvent);
}

/** The cancel fact of a year: at the start of month `cancelAt`, with the paidThrough of the months paid before it. */
function cancelOf({ months, cancelAt }: Year): SubscriptionRecord['cancel'] {
  if (cancelAt === undefined) return;
  const before = months.slice(0, cancelAt).filter((m) => m.paid).length;
  return {
    at: T0 + cancelAt * MONTH,
    paidThrough: before ? T0 + months.slice(0, cancelAt).findLastIndex((m) => m.paid) * MONTH + MONTH : 0,
  };
}

/** A recorded subscription, as subscribe leaves it (with the year's cancel, when it has one). */
function blank(year: Year): SubscriptionRecord {
  const record: SubscriptionRecord = {
    ...{ key: `sub:${year.id}:pro:1`, customer: year.id, plan: 'pro', n: 1, version: 1, state: 'pending', createdAt: T0, updatedAt: T0 },
    ...{ subscriptionId: year.id, sends: 1, phone: '255712345678', termsShown: 'terms', paid: [], failed: [], chargedAfterCancel: [] },
  };
  const cancel = cancelOf(year);
  return cancel ? { ...record, cancel } : record;
}

/** The events of all customers in one random order, some of them twice or three times (mulberry32 on `seed`). */
function shuffled(events: WebhookEvent[], seed: number): WebhookEvent[] {
  let a = seed >>> 0;
  const random = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...events, ...events.filter(() => random() < 0.3), ...events.filter(() => random() < 0.1)];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The records after `events`, each read as handleEvent reads it and merged by the reducer. */
function fold(years: Year[], events: WebhookEvent[]): Map<string, SubscriptionRecord> {
  const records = new Map(years.map((y) => [y.id, blank(y)]));
  for (const event of events) {
    const told = eventFacts(event);
    if (!told) continue;
    const record = records.get(told.subscription)!;
    records.set(told.subscription, merge(record, told.facts) ?? record);
  }
  return records;
}

/** The times each record's standing is compared at: inside the year, at its end, and past the grace. */
const TIMES = [T0 + DAY, T0 + 5.5 * MONTH, T0 + 12 * MONTH + DAY, T0 + 13 * MONTH + GRACE];
const facts = ({ paid, failed, suspendedAt, chargedAfterCancel }: SubscriptionRecord) => ({
  paid,
  failed,
  suspendedAt,
  chargedAfterCancel,
});
const standings = (record: SubscriptionRecord) => TIMES.map((now) => standing(record, now, GRACE));

/** The standing worked out from the year itself, apart from the reducer. */
function expected(year: Year, now: number): Standing {
  const cancel = cancelOf(year);
  const ends = year.months.flatMap((m, i) => (m.paid && (!cancel || T0 + i * MONTH < cancel.paidThrough) ? [T0 + (i + 1) * MONTH] : []));
  const paidThrough = ends.length ? Math.max(...ends) : undefined;
  const paid = paidThrough !== undefined && now < paidThrough;
  if (year.months.some((m) => !m.paid)) return { state: paid ? 'suspended' : 'ended', active: false, paidThrough };
  if (cancel) return { state: paid ? 'cancelled' : 'ended', active: paid, paidThrough };
  if (paidThrough === undefined) return { state: 'pending', active: false, paidThrough };
  return paid ? { state: 'active', active: true, paidThrough } : { state: 'past_due', active: now < paidThrough + GRACE, paidThrough };
}

describe('the reducer: the same events in any order, any number of times, give the same record', () => {
  test('10,000 random orderings with duplicates of a year of events: the same facts, state, paidThrough and access for every customer', () => {
    let orderings = 0;
    fc.assert(
      fc.property(customers, fc.array(fc.integer(), { minLength: 10, maxLength: 10 }), (years, seeds) => {
        const all = years.flatMap(eventsOf);
        const inOrder = fold(years, all);
        for (const year of years) {
          const record = inOrder.get(year.id)!;
          expect(standings(record)).toEqual(TIMES.map((now) => expected(year, now)));
          // Each renewal paid after the cancel is on the review list, once.
          const cancel = cancelOf(year);
          const after = year.months.flatMap((m, i) =>
            m.paid && cancel && T0 + i * MONTH >= cancel.paidThrough ? [`inv_${year.id}_${i}`] : [],
          );
          expect(record.chargedAfterCancel).toEqual(after.sort());
        }
        for (const seed of seeds) {
          const records = fold(years, shuffled(all, seed));
          for (const year of years) {
            expect(facts(records.get(year.id)!)).toEqual(facts(inOrder.get(year.id)!));
            expect(standings(records.get(year.id)!)).toEqual(standings(inOrder.get(year.id)!));
          }
          orderings++;
        }
      }),
      { numRuns: 1_000 },
    );
    expect(orderings).toBe(10_000);
  });

  test('through the kit: handleEvent on a store in any order with duplicates, the same entitlement as in order', async () => {
    const client: BillingClient = {
      billing: { subscriptions: { create: () => Promise.reject(new Error('not used')) }, invoices: { list: async function* () {} } },
    };
    const entitlements = async (years: Year[], events: WebhookEvent[]) => {
      const store = memoryStore();
      for (const y of years) {
        await store.subscriptions.add(blank(y));
        await store.subscriptions.bind(y.id, blank(y).key);
      }
      const billing = createBilling({ client, store, grace: GRACE, now: () => T0 + 12 * MONTH + DAY });
      for (const event of events) await billing.handleEvent(event);
      return Promise.all(years.map(async (y) => ({ ...(await billing.entitlement(y.id, 'pro')), subscription: undefined })));
    };
    await fc.assert(
      fc.asyncProperty(customers, fc.integer(), async (years, seed) => {
        const all = years.flatMap(eventsOf);
        expect(await entitlements(years, shuffled(all, seed))).toEqual(await entitlements(years, all));
      }),
      { numRuns: 200 },
    );
  });
});
