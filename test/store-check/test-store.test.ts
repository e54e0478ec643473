// testStore catches what it is for: a store that breaks a promise fails the case that checks
// it, by name and with what broke, and `throwOnFailure` throws a StoreCheckError naming it; a
// store without the optional parts has their cases skipped, saying why; a store call that
// never settles fails its case instead of hanging the check. (The SDK's own stores passing it:
// test/fulfillment/stores.test.ts and test/payouts/stores.test.ts.)
import { describe, expect, test } from 'vitest';
import { memoryStore, type FulfillmentStore, type StoreClaim } from '../../src/fulfillment/store.js';
import { memoryIntents, type PayoutIntent, type PayoutIntentStore } from '../../src/payouts/store.js';
import type { SubscriptionRecord, SubscriptionStore } from '../../src/billing/store.js';
import { ConfigurationError, PaymentsError } from '../../src/index.js';
import { StoreCheckError, testStore } from '../../src/testing.js';
import { skipReasons } from './reasons.js';

const RACE = '200 concurrent claims of one key: exactly one wins, the others are busy; then all see the outcome';
const SWAP = 'swap replaces only the version before it, and bumps it; stale and skipping swaps change nothing';
const STALE_COMPLETE =
  "a stale holder's complete says so: it resolves false or rejects (the kit then never answers `ran`); a live one's does not";

/** A memory store on a clock the check moves on, and its options. */
function onClock() {
  let now = 0;
  const elapse = (ms: number) => void (now += ms);
  return { store: memoryStore({ now: () => now }), elapse };
}

/** A claim that holds nothing: what a broken store hands out instead of `{ busy: true }`. */
const hollow: StoreClaim = { complete: async () => {}, release: async () => {}, renew: async () => true };

describe('a fulfilment store that breaks a promise', () => {
  // Its claim never says busy: a second claimer of a held key wins too.
  const neverBusy = (): FulfillmentStore => {
    const { store } = onClock();
    return {
      ...store,
      claim: async (key, leaseMs) => ((result) => ('busy' in result ? { claimed: hollow } : result))(await store.claim(key, leaseMs)),
    };
  };

  test('fails the case that checks it, by name and with what broke', async () => {
    const report = await testStore(neverBusy(), { kit: 'fulfillment', elapse: () => {} });
    expect(report.ok).toBe(false);
    expect(report.failed[0]).toEqual({ name: RACE, message: 'claims won: expected 1, got 200' });
    expect(report.failed.map(({ name }) => name)).toContain('release frees the key at once and records nothing');
    expect(report.passed).toContain('complete records the outcome: later claims get { done }, outcome() returns it');
  });

  test('throwOnFailure: throws a StoreCheckError naming the first case that fails, and runs no case after it', async () => {
    const error: unknown = await testStore(neverBusy(), { kit: 'fulfillment', throwOnFailure: true }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(StoreCheckError);
    const { caseName, message, report, name } = error as StoreCheckError;
    expect({ caseName, name }).toEqual({ caseName: RACE, name: 'StoreCheckError' });
    expect(message).toBe(`testStore (fulfillment): "${RACE}" failed: claims won: expected 1, got 200`);
    expect(report.failed).toEqual([{ name: RACE, message: 'claims won: expected 1, got 200' }]);
    expect(report.passed).toEqual([]);
  });

  test("a stale holder's complete that resolves true (the kit would answer `ran` twice) fails its case", async () => {
    const { store, elapse } = onClock();
    const claim: FulfillmentStore['claim'] = async (key, leaseMs) => {
      const result = await store.claim(key, leaseMs);
      if (!('claimed' in result)) return result;
      const { claimed } = result;
      return { claimed: { ...claimed, complete: async (outcome) => void (await claimed.complete(outcome)) } };
    };
    const report = await testStore({ ...store, claim }, { kit: 'fulfillment', elapse });
    expect(report.failed).toEqual([{ name: STALE_COMPLETE, message: "the stale holder's complete: expected false, got undefined" }]);
  });

  test('a store call that never settles fails its case after caseTimeoutMs, and the check goes on', async () => {
    const { store, elapse } = onClock();
    const hangs: FulfillmentStore = { ...store, attempt: () => new Promise<number>(() => {}) };
    const report = await testStore(hangs, { kit: 'fulfillment', elapse, caseTimeoutMs: 200 });
    expect(report.failed).toEqual([
      {
        name: expect.stringMatching(/^attempt\(order\) counts/),
        message: 'did not finish within 200 ms (a store call that never settles?)',
      },
    ]);
    expect(report.passed.length).toBeGreaterThan(10);
  });

  test('what a store throws is the message', async () => {
    const { store, elapse } = onClock();
    const throws: FulfillmentStore = { ...store, outcome: () => Promise.reject(new RangeError('no such table')) };
    const report = await testStore(throws, { kit: 'fulfillment', elapse });
    expect(report.failed[0]).toEqual({
      name: '200 concurrent claims racing the winner completing: one runs, the others are busy or see its outcome',
      message: 'threw RangeError: no such table',
    });
  });
});

describe('a fulfilment store without the optional parts', () => {
  test('passes the cases of claims and outcomes; the others are skipped, each saying what the store lacks', async () => {
    const { store, elapse } = onClock();
    const bare: FulfillmentStore = {
      claim: async (key, leaseMs) => {
        const result = await store.claim(key, leaseMs);
        return 'claimed' in result ? { claimed: { complete: result.claimed.complete, release: result.claimed.release } } : result;
      },
      outcome: store.outcome,
    };
    const report = await testStore(bare, { kit: 'fulfillment', elapse });
    expect(report.failed).toEqual([]);
    expect(skipReasons(report)).toEqual([
      'another',
      'kill',
      'renew',
      'remember/unsettled',
      'attempt',
      'transactionalDb',
      'transactionalDb',
      'inbox',
      'inbox',
      'inbox',
      'inbox',
    ]);
    expect(report.passed).toHaveLength(8);
  });
});

describe('a payout intent store that breaks a promise', () => {
  // Its swap ignores the version: any change of an intent that exists is written.
  const ignoresVersion = (): PayoutIntentStore => {
    const intents = memoryIntents();
    const written = new Map<string, PayoutIntent>();
    return {
      ...intents,
      get: async (key) => written.get(key) ?? (await intents.get(key)),
      swap: async (next) => (await intents.get(next.key)) !== undefined && !!written.set(next.key, next),
    };
  };

  test('fails the case that checks it, by name and with what broke', async () => {
    const report = await testStore(ignoresVersion(), { kit: 'payouts' });
    expect(report.failed.map(({ name }) => name)).toContain(SWAP);
    expect(report.failed.find(({ name }) => name === SWAP)?.message).toBe('a swap of the same version: expected false, got true');
  });

  test('throwOnFailure: throws a StoreCheckError naming it', async () => {
    await expect(testStore(ignoresVersion(), { kit: 'payouts', throwOnFailure: true })).rejects.toMatchObject({
      name: 'StoreCheckError',
      caseName: SWAP,
      message: `testStore (payouts): "${SWAP}" failed: a swap of the same version: expected false, got true`,
    });
  });
});

describe('a subscription store that breaks a promise', () => {
  const COPIES = 'records are copies: changing a record given to add or swap, or one answered by add, get or list, changes nothing stored';
  const ROUND_TRIP = 'every field round-trips exactly: periods, nested consent and cancel, unicode, a lone surrogate; absent stays absent';
  const RACE_ADD = '20 concurrent adds of one key: exactly one created, every one answers it';
  const SWAP_CASE = 'swap replaces only the version before it, and bumps it; stale and skipping swaps change nothing';

  // Keeps the records it is given and hands them out as they are: a caller's change is the
  // store's, and an undefined-valued field stays as given. `gap` awaits between add's look and
  // its write (not atomic); `anyVersion` swaps whatever the version.
  const byReference = ({ gap = false, anyVersion = false } = {}): SubscriptionStore => {
    const records = new Map<string, SubscriptionRecord>();
    const owners = new Map<string, string>();
    return {
      async add(record) {
        const found = records.get(record.key);
        if (gap) await new Promise((resolve) => setTimeout(resolve, 1));
        if (found) return { record: found, created: false };
        records.set(record.key, record);
        return { record, created: true };
      },
      get: async (key) => records.get(key),
      swap: async (next) =>
        (anyVersion ? records.has(next.key) : records.get(next.key)?.version === next.version - 1) && !!records.set(next.key, next),
      list: async (limit, after = '') =>
        [...records.keys()]
          .sort()
          .filter((key) => key > after)
          .slice(0, limit)
          .map((key) => records.get(key)!),
      bind: async (id, key) => owners.get(id) ?? (owners.set(id, key), key),
      owner: async (id) => owners.get(id),
    };
  };

  test('a store that hands out what it holds fails the copies case (and the round trip: a dropped field stays, undefined)', async () => {
    const report = await testStore(byReference(), { kit: 'billing' });
    expect(report.kit).toBe('billing');
    expect(report.failed.map(({ name }) => name)).toEqual([COPIES, ROUND_TRIP]);
    expect(report.failed[0]?.message).toMatch(/^get\(\) after the record given to add was changed: expected exactly/);
    expect(report.passed).toHaveLength(8);
  });

  test('an add that is not atomic fails the race, a swap that ignores the version fails the swap case', async () => {
    const racy = await testStore(byReference({ gap: true }), { kit: 'billing' });
    expect(racy.failed.map(({ name }) => name)).toContain(RACE_ADD);
    expect(racy.failed.find(({ name }) => name === RACE_ADD)?.message).toBe('adds that created it: expected 1, got 20');
    await expect(testStore(byReference({ anyVersion: true }), { kit: 'billing', throwOnFailure: true })).rejects.toMatchObject({
      name: 'StoreCheckError',
      caseName: SWAP_CASE,
      message: `testStore (billing): "${SWAP_CASE}" failed: a swap of the same version: expected false, got true`,
    });
  });
});

describe('testStore refuses what is not a store of its kit', () => {
  test('a fulfilment store checked as payouts, a kit it does not know', async () => {
    const store = memoryStore();
    await expect(testStore(store as never, { kit: 'payouts' })).rejects.toThrow(/pass store\.payouts/);
    await expect(testStore(store as never, { kit: 'billing' })).rejects.toThrow(/pass store\.subscriptions/);
    await expect(testStore(store, { kit: 'ledger' } as never)).rejects.toThrow(
      /kit must be 'fulfillment', 'payouts', 'billing' or 'budget', not "ledger"/,
    );
    await expect(testStore(store as never, { kit: 'budget' })).rejects.toThrow(/pass store\.budget/);
    await expect(testStore(memoryIntents() as never, { kit: 'fulfillment' })).rejects.toThrow(/FulfillmentStore/);
    // A typed error of the SDK, as every refusal of the package is; a failed case is one too.
    await expect(testStore(store as never, { kit: 'payouts' })).rejects.toBeInstanceOf(ConfigurationError);
    expect(
      new StoreCheckError('a case', 'broke', { kit: 'payouts', ok: false, passed: [], failed: [], skipped: [], ms: 0 }, undefined),
    ).toBeInstanceOf(PaymentsError);
  });
});
