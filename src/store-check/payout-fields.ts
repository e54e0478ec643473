// The payout intent store's round-trip case: every field of an intent comes back exactly as it
// was given (numbers bit for bit, unicode, a lone surrogate), and an absent field stays absent.
import type { PayoutIntent, PayoutIntentStore } from '../payouts/store.js';
import { equal, fail, ok, strictEqual } from './assert.js';
import { intentOf, listed, next, T0, tag, type IntentsContext } from './intents.js';
import type { Case } from './run.js';

/** An intent with every field set, at the edges of what JSON and the stores hold. */
const fullIntent = (key: string): PayoutIntent => ({
  key,
  amount: 0.1 + 0.2,
  destination: '+255 700 000 001',
  state: 'sent',
  version: 7,
  createdAt: T0,
  updatedAt: T0 + 123_456,
  sentAt: T0 + 1,
  sends: 3,
  payoutId: 'po_ünïcode_💸',
  payout: {
    id: 'po_1',
    status: 'SUCCESS',
    amount: 1e-7,
    big: 9_007_199_254_740_991,
    huge: 1.7976931348623157e308,
    small: 5e-324,
    negative: -0.000123,
    nested: { list: [1, 'two', null, true, { deep: 12345678.9 }], empty: {}, none: null },
    text: 'quote " backslash \\ newline \n tab \t nul \u0000',
  },
  matchedBy: 'list',
  note: 'cut mid-emoji: \ud83d',
  error: 'Ошибка: 服务不可用',
});

const AMOUNTS = [0.1 + 0.2, 1e-7, 123_456_789.123_456_78, Number.MAX_SAFE_INTEGER + 2, 1e21, 0];
const OPTIONAL = ['destination', 'sentAt', 'payoutId', 'payout', 'matchedBy', 'note', 'error'];

/** The round-trip case. */
export const ROUND_TRIP: Case<IntentsContext> = {
  name: 'every field round-trips exactly: decimals, tiny and large numbers, unicode, a lone surrogate; absent stays absent',
  async run({ stores }) {
    const [a, b] = stores(2) as [PayoutIntentStore, PayoutIntentStore];
    const t = tag();
    // A key of 64 characters (UTF-16 units, as the kit counts them), unicode and astral included.
    const key = (t + 'ключ-鍵-🔑-ß-'.repeat(8)).slice(0, 64);
    equal(key.length, 64, "the case's key length");
    const full = fullIntent(key);
    await a.add(full);
    strictEqual(await b.get(key), full, 'get() of the full intent');
    strictEqual(await listed(b, 'sent', t), [full], "list('sent')");
    for (const [i, amount] of AMOUNTS.entries()) {
      const sparse = intentOf(`${t}amount-${i}`, { amount });
      strictEqual((await a.add(sparse)).intent, sparse, `the intent add answers, amount ${amount}`);
      const got = (await b.get(sparse.key)) ?? fail(`get() found no intent of amount ${amount}`);
      ok(Object.is(got.amount, amount), `amount ${amount} came back as ${got.amount}`);
      strictEqual(got, sparse, `get() of the intent of amount ${amount}`);
      // Optional fields never written are absent, not null or undefined-valued.
      for (const field of OPTIONAL) ok(!(field in got), `the field ${field}, never written, is present (${String(got[field as 'note'])})`);
    }
    // Fields a swap drops are gone (undefined ones are not written).
    const cleared = next(full, { state: 'failed', note: undefined, payout: undefined, error: 'refused' });
    equal(await b.swap(cleared), true, 'a swap that drops fields');
    const got = (await a.get(key)) ?? fail('get() found no intent after the swap');
    ok(!('note' in got || 'payout' in got), 'the fields the swap dropped (note, payout) are still present');
    strictEqual(got, JSON.parse(JSON.stringify(cleared)), 'get() after the swap');
  },
};
