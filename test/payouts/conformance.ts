// The conformance suite every payout intent store runs (memory, PGlite and a fake Redis in
// `npm test`; PostgreSQL and Redis servers in `npm run test:stores`): what PayoutIntentStore
// promises, checked the same way for each, memoryIntents being the reference. Each case uses
// keys of its own (a random tag), so a persistent database can be reused across runs, and a
// list reads from its tag on (`after`): the keys starting with a tag sort right after it.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { PayoutIntent, PayoutIntentState, PayoutIntentStore } from '../../src/payouts/store.js';

/** What a store's `setup` gives the suite. */
export interface IntentSetup {
  /**
   * A new store instance on the same data, as another process would make it (for a server
   * store: preferably over a connection or client of its own). `memoryIntents` answers its
   * one instance.
   */
  makeStore(): PayoutIntentStore;
  /** Closes what setup opened. */
  close(): Promise<void>;
}

/** How many instances race in the concurrent cases. */
const RACERS = 20;
const T0 = 1_700_000_000_000;

const tag = () => `c${crypto.randomUUID().slice(0, 8)}:`;

/** An intent as the kit records it (version 1, pending), with `extra` over it. */
export function intentOf(key: string, extra: Partial<PayoutIntent> = {}): PayoutIntent {
  return { key, amount: 1500, state: 'pending', version: 1, createdAt: T0, updatedAt: T0, sends: 0, ...extra };
}

/** `intent`'s next version: the change a swap writes. */
const next = (intent: PayoutIntent, change: Partial<PayoutIntent> = {}): PayoutIntent => ({
  ...intent,
  ...change,
  version: intent.version + 1,
  updatedAt: intent.updatedAt + 1,
});

/**
 * Registers the conformance cases for one store, under `payout intents: <name>` (test:stores
 * prints a line per such suite). `setup` runs once before them (60 s allowed: a server or
 * PGlite may be starting) and `close` once after.
 *
 * @example
 * ```ts
 * runIntentConformance('postgres (PGlite)', async () => {
 *   const db = await PGlite.create();
 *   return { makeStore: () => postgresStore(db).payouts!, close: () => db.close() };
 * });
 * ```
 */
export function runIntentConformance(name: string, setup: () => Promise<IntentSetup>): void {
  describe(`payout intents: ${name}`, () => {
    let given: IntentSetup | undefined;
    beforeAll(async () => void (given = await setup()), 60_000);
    afterAll(() => given?.close(), 30_000);
    const store = () => (given ?? expect.fail('setup failed')).makeStore();
    const stores = (count: number) => Array.from({ length: count }, store);
    // The intents in `state` whose key starts with `prefix` (a case's tag), after `after`.
    const listed = async (s: PayoutIntentStore, state: PayoutIntentState, prefix: string, after = prefix) =>
      (await s.list(state, 100, after)).filter((intent) => intent.key.startsWith(prefix));
    const keys = (intents: PayoutIntent[]) => intents.map((intent) => intent.key);

    test('add records a new intent (created), and never overwrites one: a second add answers the first', async () => {
      const [a, b] = stores(2);
      const first = intentOf(`${tag()}add`, { destination: '255700000001' });
      expect(await a!.add(first)).toStrictEqual({ intent: first, created: true });
      const second = { ...first, amount: 99, destination: '255700000002', note: 'another send' };
      expect(await b!.add(second)).toStrictEqual({ intent: first, created: false });
      expect(await a!.add(second)).toStrictEqual({ intent: first, created: false });
      expect(await b!.get(first.key)).toStrictEqual(first);
    });

    test('get reads what another instance wrote; a missing intent: get undefined, swap false, not created by it', async () => {
      const [a, b] = stores(2);
      const intent = intentOf(`${tag()}get`);
      await a!.add(intent);
      expect(await b!.get(intent.key)).toStrictEqual(intent);
      const t = tag();
      const missing = intentOf(`${t}missing`);
      expect(await a!.get(missing.key)).toBeUndefined();
      expect(await a!.swap(next(missing))).toBe(false);
      expect(await a!.swap(missing)).toBe(false); // version 1 over nothing (version 0) is no add
      expect(await b!.get(missing.key)).toBeUndefined();
      expect(await listed(b!, 'pending', t)).toEqual([]);
    });

    test('swap replaces only the version before it, and bumps it; stale and skipping swaps change nothing', async () => {
      const [a, b] = stores(2);
      const v1 = intentOf(`${tag()}swap`);
      await a!.add(v1);
      const v2 = next(v1, { state: 'unknown', sends: 1, sentAt: T0 + 5 });
      expect(await a!.swap({ ...v1, note: 'same version' })).toBe(false);
      expect(await a!.swap(next(v2))).toBe(false); // version 3 over 1
      expect(await b!.get(v1.key)).toStrictEqual(v1);
      expect(await b!.swap(v2)).toBe(true);
      expect(await a!.get(v1.key)).toStrictEqual(v2);
      expect(await a!.swap({ ...v2, note: 'lost the race' })).toBe(false); // v2 again: stale
      const v3 = next(v2, { state: 'sent', payoutId: 'po_1', matchedBy: 'answer' });
      expect(await a!.swap(v3)).toBe(true);
      expect(await b!.get(v1.key)).toStrictEqual(v3);
    });

    test(`${RACERS} concurrent swaps of one version from as many instances: exactly one wins, and it is what is stored`, async () => {
      const racers = stores(RACERS);
      const v1 = intentOf(`${tag()}race-swap`);
      await racers[0]!.add(v1);
      const tries = racers.map((_, i) => next(v1, { state: 'unknown', note: `racer ${i}` }));
      const won = await Promise.all(racers.map((s, i) => s.swap(tries[i]!)));
      expect(won.filter(Boolean)).toHaveLength(1);
      expect(await racers[1]!.get(v1.key)).toStrictEqual(tries[won.indexOf(true)]);
      // And the next round again: one of the racers' version 3.
      const again = await Promise.all(racers.map((s, i) => s.swap(next(tries[won.indexOf(true)]!, { note: `round 2: ${i}` }))));
      expect(again.filter(Boolean)).toHaveLength(1);
      expect(await racers[2]!.get(v1.key)).toMatchObject({ version: 3, note: `round 2: ${again.indexOf(true)}` });
    });

    test(`${RACERS} concurrent adds of one key: exactly one created, every one answers it`, async () => {
      const racers = stores(RACERS);
      const t = tag();
      const key = `${t}race-add`;
      const tries = racers.map((_, i) => intentOf(key, { amount: i + 1 }));
      const answers = await Promise.all(racers.map((s, i) => s.add(tries[i]!)));
      const created = answers.filter((answer) => answer.created);
      expect(created).toHaveLength(1);
      const winner = tries[answers.indexOf(created[0]!)];
      for (const answer of answers) expect(answer.intent).toStrictEqual(winner);
      expect(await racers[3]!.get(key)).toStrictEqual(winner);
      expect(keys(await listed(racers[4]!, 'pending', t))).toEqual([key]);
    });

    test('list: by state, ordered by key (code points: uppercase before lowercase), at most limit, from after', async () => {
      const [a, b] = stores(2);
      const t = tag();
      // Added out of order; what sorts by locale (a < B) or by UTF-16 (astral vs U+E000…) apart is left out, but C order is in.
      const names = ['b', 'B', 'a', 'A', 'é', '日本', '😀', 'a0', 'Z'];
      for (const name of names) await a!.add(intentOf(t + name));
      await a!.add(intentOf(`${t}failed-1`, { state: 'failed' }));
      const sorted = ['A', 'B', 'Z', 'a', 'a0', 'b', 'é', '日本', '😀'].map((name) => t + name);
      expect(keys(await listed(b!, 'pending', t))).toEqual(sorted);
      expect(keys(await b!.list('pending', 3, t))).toEqual(sorted.slice(0, 3));
      expect(keys(await b!.list('pending', 3, sorted[2]))).toEqual(sorted.slice(3, 6));
      expect(keys(await b!.list('pending', 2, `${t}a`))).toEqual([`${t}a0`, `${t}b`]); // after is exclusive, any string
      expect(keys(await listed(b!, 'pending', t, sorted[7]))).toEqual(sorted.slice(8));
      expect(keys(await listed(b!, 'failed', t))).toEqual([`${t}failed-1`]);
      expect(await listed(b!, 'sent', t)).toEqual([]);
      expect(await b!.list('pending', 0, t)).toEqual([]);
      expect(await b!.list('pending', 1.5, t)).toHaveLength(1);
      // The intents themselves, whole; and without after: from the first key, in order (byte-wise
      // is code points: the keys of this suite never tell it apart from memoryIntents' UTF-16 order).
      expect(await b!.list('pending', 1, t)).toStrictEqual([intentOf(sorted[0]!)]);
      const all = keys(await b!.list('pending', 100_000));
      expect(all).toEqual([...all].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))));
      expect(all).toEqual(expect.arrayContaining(sorted));
    });

    test('an intent moved to another state is listed in its new state only', async () => {
      const [a, b] = stores(2);
      const t = tag();
      const [one, two] = [intentOf(`${t}1`), intentOf(`${t}2`)];
      await a!.add(one);
      await a!.add(two);
      const moved = next(one, { state: 'in_progress', payout: { id: 'po_9', status: 'INPROGRESS' } });
      expect(await b!.swap(moved)).toBe(true);
      expect(keys(await listed(a!, 'pending', t))).toEqual([two.key]);
      expect(await listed(a!, 'in_progress', t)).toStrictEqual([moved]);
      // A swap that keeps its state keeps it listed there once; then on to a final state.
      const noted = next(moved, { note: 'still in progress' });
      expect(await b!.swap(noted)).toBe(true);
      expect(await listed(a!, 'in_progress', t)).toStrictEqual([noted]);
      expect(await b!.swap(next(noted, { state: 'needs_review', note: 'resolve could not tell' }))).toBe(true);
      expect(await listed(a!, 'in_progress', t)).toEqual([]);
      expect(keys(await listed(a!, 'needs_review', t))).toEqual([one.key]);
      // A failed swap moves nothing.
      expect(await b!.swap({ ...next(two, { state: 'sent' }), version: 5 })).toBe(false);
      expect(keys(await listed(a!, 'pending', t))).toEqual([two.key]);
      expect(await listed(a!, 'sent', t)).toEqual([]);
    });

    test('bind: the first binder holds the payout id, a second gets its key; owner reads it', async () => {
      const [a, b] = stores(2);
      const t = tag();
      const id = `${t}po_1`;
      expect(await a!.owner(id)).toBeUndefined();
      expect(await a!.bind(id, `${t}first`)).toBe(`${t}first`);
      expect(await b!.bind(id, `${t}second`)).toBe(`${t}first`);
      expect(await b!.bind(id, `${t}first`)).toBe(`${t}first`);
      expect(await b!.owner(id)).toBe(`${t}first`);
      expect(await a!.bind(`${t}po_2`, `${t}second`)).toBe(`${t}second`);
      expect(await a!.owner(`${t}po_2`)).toBe(`${t}second`);
      expect(await a!.owner(`${t}po_3`)).toBeUndefined();
    });

    test(`${RACERS} concurrent binds of one payout id to different keys: one owner, every one answers it`, async () => {
      const racers = stores(RACERS);
      const t = tag();
      const answers = await Promise.all(racers.map((s, i) => s.bind(`${t}po`, `${t}key-${i}`)));
      expect(new Set(answers).size).toBe(1);
      expect(answers[0]).toMatch(new RegExp(`^${t}key-\\d+$`));
      expect(await racers[5]!.owner(`${t}po`)).toBe(answers[0]);
    });

    test('every field round-trips exactly: decimals, tiny and large numbers, unicode, a lone surrogate; absent stays absent', async () => {
      const [a, b] = stores(2);
      const t = tag();
      // A key of 64 characters (UTF-16 units, as the kit counts them), unicode and astral included.
      const key = (t + 'ключ-鍵-🔑-ß-'.repeat(8)).slice(0, 64);
      expect(key).toHaveLength(64);
      const full: PayoutIntent = {
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
      };
      const amounts = [0.1 + 0.2, 1e-7, 123_456_789.123_456_78, Number.MAX_SAFE_INTEGER + 2, 1e21, 0];
      await a!.add(full);
      expect(await b!.get(key)).toStrictEqual(full);
      expect(await listed(b!, 'sent', t)).toStrictEqual([full]);
      for (const [i, amount] of amounts.entries()) {
        const sparse = intentOf(`${t}amount-${i}`, { amount });
        expect((await a!.add(sparse)).intent).toStrictEqual(sparse);
        const got = (await b!.get(sparse.key)) ?? expect.fail('not found');
        expect(Object.is(got.amount, amount)).toBe(true);
        expect(got).toStrictEqual(sparse);
        // Optional fields never written are absent, not null or undefined-valued.
        for (const field of ['destination', 'sentAt', 'payoutId', 'payout', 'matchedBy', 'note', 'error']) expect(field in got).toBe(false);
      }
      // Fields a swap drops are gone (undefined ones are not written).
      const cleared = next(full, { state: 'failed', note: undefined, payout: undefined, error: 'refused' });
      expect(await b!.swap(cleared)).toBe(true);
      const got = (await a!.get(key)) ?? expect.fail('not found');
      expect('note' in got || 'payout' in got).toBe(false);
      expect(got).toStrictEqual(JSON.parse(JSON.stringify(cleared)));
    });
  });
}
