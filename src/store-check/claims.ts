// The claim cases of the fulfilment store: one winner among racing claims, what complete and
// release leave, a holder that dies or goes stale, and renewal. Real timers throughout (leases
// of a few hundred ms), so a store's own clock and its server's are what is checked.
import type { FulfillmentStore } from '../fulfillment/store.js';
import { equal, ok, rejects } from './assert.js';
import { claimWithin, freshKey, LEASE, LONG, won, type ClaimsContext } from './context.js';
import { skip, type Case } from './run.js';

type Pair = [FulfillmentStore, FulfillmentStore];

const exclusion: Array<Case<ClaimsContext>> = [
  {
    name: '200 concurrent claims of one key: exactly one wins, the others are busy; then all see the outcome',
    async run({ stores }) {
      const key = freshKey('race');
      const all = stores(4);
      const claimAll = () => Promise.all(Array.from({ length: 200 }, (_, i) => all[i % all.length]!.claim(key, LONG)));
      const results = await claimAll();
      const winners = results.filter((result) => 'claimed' in result);
      equal(winners.length, 1, 'claims won');
      equal(results.filter((result) => 'busy' in result).length, 199, 'claims answered { busy: true }');
      await won(winners[0]!).complete('paid');
      equal(
        await claimAll(),
        Array.from({ length: 200 }, () => ({ done: 'paid' })),
        'the claims after complete',
      );
    },
  },
  {
    name: '200 concurrent claims racing the winner completing: one runs, the others are busy or see its outcome',
    async run({ stores }) {
      const key = freshKey('race-complete');
      const all = stores(4);
      const results = await Promise.all(
        Array.from({ length: 200 }, async (_, i) => {
          const result = await all[i % all.length]!.claim(key, LONG);
          if ('claimed' in result) await result.claimed.complete('paid');
          return result;
        }),
      );
      equal(results.filter((result) => 'claimed' in result).length, 1, 'claims won');
      const odd = results.filter((result) => !('claimed' in result) && !('busy' in result) && result.done !== 'paid');
      equal(odd, [], 'answers neither busy nor { done: "paid" }');
      equal(await all[0]!.outcome(key), 'paid', 'outcome()');
    },
  },
  {
    name: 'concurrent claims of 20 keys: one winner per key, none blocks another',
    async run({ stores }) {
      const keys = Array.from({ length: 20 }, (_, i) => freshKey(`many-${i}`));
      const all = stores(4);
      const results = await Promise.all(
        keys.flatMap((key, k) =>
          [0, 1, 2, 3, 4].map(async (i) => {
            const result = await all[(k + i) % all.length]!.claim(key, LONG);
            if ('claimed' in result) await result.claimed.complete(`outcome-${k}`);
            return { key, won: 'claimed' in result };
          }),
        ),
      );
      for (const [k, key] of keys.entries())
        equal(results.filter((result) => result.key === key && result.won).length, 1, `claims won of key ${k}`);
      equal(
        await Promise.all(keys.map((key) => all[1]!.outcome(key))),
        keys.map((_, k) => `outcome-${k}`),
        'the outcomes',
      );
    },
  },
];

const ends: Array<Case<ClaimsContext>> = [
  {
    name: 'complete records the outcome: later claims get { done }, outcome() returns it',
    async run({ stores }) {
      const key = freshKey('complete');
      const [store] = stores(1) as [FulfillmentStore];
      await won(await store.claim(key, LONG)).complete('paid');
      equal(await store.claim(key, LONG), { done: 'paid' }, 'a claim after complete');
      equal(await store.outcome(key), 'paid', 'outcome()');
      equal(await store.outcome(freshKey('never-claimed')), undefined, 'outcome() of a key never claimed');
    },
  },
  {
    name: 'an outcome persists: a new instance on the same data (a new process) reads what the first recorded',
    skip: ({ shared }) => (shared ? undefined : 'no `another` option: there is no second instance on the same data'),
    async run({ stores }) {
      const key = freshKey('persist');
      const [store, fresh] = stores(2) as Pair;
      await won(await store.claim(key, LONG)).complete('paid');
      equal(await fresh.claim(key, LONG), { done: 'paid' }, "the new instance's claim");
      equal(await fresh.outcome(key), 'paid', "the new instance's outcome()");
    },
  },
  {
    name: 'release frees the key at once and records nothing',
    async run({ stores }) {
      const key = freshKey('release');
      const [a, b] = stores(2) as Pair;
      const claim = won(await a.claim(key, LONG));
      equal(await b.claim(key, LONG), { busy: true }, 'a claim while it is held');
      // Asked while the claim is held (a store on one connection answers once it is free).
      const during = a.outcome(key);
      during.catch(() => {}); // awaited below, after release
      await claim.release();
      equal(await during, undefined, 'outcome() asked while it was held');
      const next = won(await b.claim(key, LONG));
      await next.release();
      equal(await a.outcome(key), undefined, 'outcome() after release');
      await won(await a.claim(key, LONG)).complete('failed');
      equal(await b.outcome(key), 'failed', 'outcome() after a claim since completed');
    },
  },
];

const death: Array<Case<ClaimsContext>> = [
  {
    name: 'a holder that dies (its lease runs out, never completed nor released): another claimer then wins',
    async run({ stores, wait }) {
      const key = freshKey('lease');
      const [a, b] = stores(2) as Pair;
      won(await a.claim(key, LEASE)); // its holder is gone: nothing ends this claim but its lease
      equal(await b.claim(key, LONG), { busy: true }, 'a claim within the lease');
      await wait(LEASE);
      await (await claimWithin(b, key, 1_000)).complete('paid');
      equal(await a.outcome(key), 'paid', 'outcome()');
    },
  },
  {
    name: 'a holder whose connection drops (a crash) frees the key without waiting for its lease',
    skip: ({ kill }) => (kill ? undefined : 'no `kill` option: only the lease running out is checked'),
    async run({ stores, kill }) {
      const key = freshKey('kill');
      const [a, b] = stores(2) as Pair;
      const holder = won(await a.claim(key, LONG));
      equal(await b.claim(key, LONG), { busy: true }, 'a claim while it is held');
      await kill!(holder);
      await (await claimWithin(b, key, 1_000)).complete('paid');
      equal(await a.outcome(key), 'paid', 'outcome()');
      await rejects(holder.complete('stale'), "the killed holder's complete");
      equal(await b.outcome(key), 'paid', "outcome() after the killed holder's complete");
    },
  },
  {
    name: 'a stale holder (lease ran out, taken over) cannot end the new claim nor overwrite its outcome',
    async run({ stores, wait }) {
      const key = freshKey('stale');
      const [a, b, c] = stores(3) as [FulfillmentStore, FulfillmentStore, FulfillmentStore];
      const stale = won(await a.claim(key, LEASE));
      await wait(LEASE);
      const fresh = await claimWithin(b, key, 1_000);
      await stale.complete('stale').catch(() => {}); // a store may reject it or ignore it
      await stale.release().catch(() => {});
      equal(await c.claim(key, LONG), { busy: true }, "a claim after the stale holder's complete and release");
      await fresh.complete('fresh');
      equal(await c.claim(key, LONG), { done: 'fresh' }, "a claim after the new holder's complete");
      equal(await a.outcome(key), 'fresh', 'outcome()');
    },
  },
  {
    name: "a stale holder's complete says so: it resolves false or rejects (the kit then never answers `ran`); a live one's does not",
    async run({ stores, wait }) {
      const key = freshKey('lost');
      const [a, b] = stores(2) as Pair;
      const stale = won(await a.claim(key, LEASE));
      await wait(LEASE);
      const fresh = await claimWithin(b, key, 1_000);
      equal(await stale.complete('stale').catch(() => false), false, "the stale holder's complete");
      ok((await fresh.complete('fresh')) !== false, "the live holder's complete resolved false");
      equal(await a.outcome(key), 'fresh', 'outcome()');
    },
  },
];

const renewal: Case<ClaimsContext> = {
  name: 'renew keeps a claim past its lease (no one else wins meanwhile); a stale holder cannot renew',
  async run({ stores, wait }) {
    const key = freshKey('renew');
    const [a, b] = stores(2) as Pair;
    const holder = won(await a.claim(key, LEASE));
    if (typeof holder.renew !== 'function') {
      await holder.release();
      skip('its claims have no renew: a handler slower than its lease can run twice');
    }
    // Renewed every third of the lease for three leases: busy throughout.
    for (let i = 0; i < 9; i++) {
      await wait(LEASE / 3);
      equal(await holder.renew(), true, `renew ${i + 1} of 9`);
      equal(await b.claim(key, LONG), { busy: true }, `a claim after renew ${i + 1} of 9`);
    }
    await holder.complete('paid');
    equal(await b.outcome(key), 'paid', 'outcome()');

    const staleKey = freshKey('renew-stale');
    const stale = won(await a.claim(staleKey, LEASE));
    await wait(LEASE);
    const fresh = await claimWithin(b, staleKey, 1_000);
    equal(await stale.renew!().catch(() => false), false, "the stale holder's renew");
    await fresh.complete('fresh');
    equal(await a.outcome(staleKey), 'fresh', "outcome() after the stale holder's renew");
  },
};

/** The claim cases, in the order they run. */
export const CLAIM_CASES: ReadonlyArray<Case<ClaimsContext>> = [...exclusion, ...ends, ...death, renewal];
