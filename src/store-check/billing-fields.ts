// The subscription record store's cases on what a record holds: a record read is a copy (what
// a caller does to it, or to the record it gave, never changes what is stored), and every field
// comes back exactly as it was given (numbers bit for bit, unicode, a lone surrogate), an absent
// field staying absent.
import type { SubscriptionRecord, SubscriptionStore } from '../billing/store.js';
import { equal, fail, ok, strictEqual } from './assert.js';
import type { Case } from './run.js';
import { listed, next, recordOf, T0, tag, type SubscriptionsContext } from './subscriptions.js';

const DAY = 86_400_000;

/** A record as JSON keeps it: what the store must answer for `record` from then on. */
const asStored = (record: SubscriptionRecord) => JSON.parse(JSON.stringify(record)) as SubscriptionRecord;

/** Changes every part of `record` in place: its fields, its arrays, its nested objects. */
function scribble(record: SubscriptionRecord): void {
  record.state = 'ended';
  record.version += 10;
  record.paid.push({ invoice: 'inv_scribbled', start: 0, end: 1 });
  if (record.paid[0]) record.paid[0].end = 0;
  record.chargedAfterCancel.push('inv_scribbled');
  if (record.consent) record.consent.at = 0;
  record.cancel = { at: 1, paidThrough: 1 };
}

/** The copies case. */
export const COPIES: Case<SubscriptionsContext> = {
  name: 'records are copies: changing a record given to add or swap, or one answered by add, get or list, changes nothing stored',
  async run({ stores }) {
    const [a, b] = stores(2) as [SubscriptionStore, SubscriptionStore];
    const t = tag();
    const record = recordOf(`${t}copies:1`, { consent: { at: T0 }, paid: [{ invoice: 'inv_1', start: T0, end: T0 + 30 * DAY }] });
    const stored = asStored(record);
    const given = asStored(record);
    const added = await a.add(given);
    scribble(given);
    strictEqual(await b.get(record.key), stored, 'get() after the record given to add was changed');
    scribble(added.record);
    strictEqual(await a.get(record.key), stored, 'get() after the record add answered was changed');
    scribble((await a.add(recordOf(record.key))).record);
    strictEqual(await a.get(record.key), stored, 'get() after the record a second add answered was changed');
    scribble((await a.get(record.key)) ?? fail('get() found no record'));
    strictEqual(await a.get(record.key), stored, 'get() after the record get answered was changed');
    for (const found of await listed(a, t)) scribble(found);
    strictEqual(await a.get(record.key), stored, 'get() after the records list answered were changed');
    // A swap's record: kept as it was when swapped.
    const v2 = next(stored, { state: 'active', subscriptionId: 'sub_1' });
    const swapped = asStored(v2);
    equal(await a.swap(v2), true, 'a swap of version 2 over 1');
    scribble(v2);
    strictEqual(await b.get(record.key), swapped, 'get() after the record given to swap was changed');
  },
};

/** A record with every field set, at the edges of what JSON and the stores hold. */
const fullRecord = (key: string): SubscriptionRecord => ({
  key,
  customer: 'клиника-42 "ü" \\ 💊',
  plan: 'plan/ünïcode 月',
  n: 7,
  version: 5,
  state: 'cancelled',
  createdAt: T0,
  updatedAt: T0 + 123_456,
  subscriptionId: 'sub_ünïcode_🔁',
  sends: 3,
  phone: '255712345678',
  termsShown: 'quote " backslash \\ newline \n tab \t nul \u0000 — TZS 10,000/month',
  consent: { at: '2024-02-29T23:59:59.999+03:00', ip: '2001:db8::1', userAgent: 'Mozilla/5.0 (ユーザー)', termsVersion: 'v2.1-ß' },
  webhookUrl: 'https://shop.example/hooks/billing?x=1&y=é',
  paid: [
    { invoice: 'inv_2', start: T0 + 30 * DAY, end: T0 + 60 * DAY },
    { invoice: 'inv_1', start: T0, end: T0 + 30 * DAY },
    { invoice: 'inv_edge', start: -1, end: 8.64e15 },
  ],
  failed: [{ invoice: 'inv_3', start: 0.5, end: Number.MAX_SAFE_INTEGER }],
  suspendedAt: T0 + 61 * DAY,
  endedByServiceAt: T0 + 62 * DAY,
  cancel: { at: T0 + 45 * DAY, paidThrough: T0 + 60 * DAY },
  chargedAfterCancel: ['inv_4', 'inv_5 ✓'],
  error: 'cut mid-emoji: \ud83d',
});

const OPTIONAL = ['subscriptionId', 'consent', 'webhookUrl', 'suspendedAt', 'endedByServiceAt', 'cancel', 'error'];

/** The round-trip case. */
export const ROUND_TRIP: Case<SubscriptionsContext> = {
  name: 'every field round-trips exactly: periods, nested consent and cancel, unicode, a lone surrogate; absent stays absent',
  async run({ stores }) {
    const [a, b] = stores(2) as [SubscriptionStore, SubscriptionStore];
    const t = tag();
    // A long key, unicode and astral included (a customer id and a plan code as merchants spell them).
    const key = `${t}${'ключ-鍵-🔑-ß-'.repeat(8)}:plan:7`;
    const full = fullRecord(key);
    await a.add(full);
    strictEqual(await b.get(key), full, 'get() of the full record');
    strictEqual(await listed(b, t), [full], 'list()');
    // Optional fields never written are absent, not null or undefined-valued; nested ones too.
    const sparse = recordOf(`${t}sparse:1`, { consent: { at: T0 } });
    strictEqual((await a.add(sparse)).record, sparse, 'the record add answers, sparse');
    const got = (await b.get(sparse.key)) ?? fail('get() found no sparse record');
    strictEqual(got, sparse, 'get() of the sparse record');
    for (const field of OPTIONAL.filter((name) => name !== 'consent'))
      ok(!(field in got), `the field ${field}, never written, is present (${String(got[field as 'error'])})`);
    ok(!('ip' in got.consent! || 'termsVersion' in got.consent!), 'consent fields never written are present');
    // Fields a swap drops are gone (undefined ones are not written).
    const cleared = next(full, { state: 'active', cancel: undefined, error: undefined, consent: undefined });
    equal(await b.swap(cleared), true, 'a swap that drops fields');
    const after = (await a.get(key)) ?? fail('get() found no record after the swap');
    ok(
      !('cancel' in after || 'error' in after || 'consent' in after),
      'the fields the swap dropped (cancel, error, consent) are still present',
    );
    strictEqual(after, JSON.parse(JSON.stringify(cleared)), 'get() after the swap');
  },
};
