// The fulfilment store's cases beyond the claim itself: what a handler writes through
// `claimed.db` (committed with the claim, or not at all), the keys remembered as unsettled, and
// the attempt counter. Each runs only where the store (or the options) has its part.
import type { FulfillmentStore } from '../fulfillment/store.js';
import { equal } from './assert.js';
import { claimWithin, freshKey, LEASE, LONG, won, type ClaimsContext } from './context.js';
import type { Case } from './run.js';

type Pair = [FulfillmentStore, FulfillmentStore];

const noWrites = ({ writes }: ClaimsContext) =>
  writes ? undefined : 'no `transactionalDb` option: what a handler writes through `claimed.db` is not checked';

// `count` reads outside any claim: a store on a single connection has none open then.
const transactional: Array<Case<ClaimsContext>> = [
  {
    name: 'claimed.db: a write commits with complete and is rolled back by release',
    skip: noWrites,
    async run({ stores, writes }) {
      const db = await writes!();
      const [store] = stores(1) as [FulfillmentStore];
      const kept = freshKey('db-complete');
      const claim = won(await store.claim(kept, LONG));
      await db.write(claim.db, kept);
      await claim.complete('paid');
      equal(await db.count(kept), 1, 'rows written through a completed claim');

      const undone = freshKey('db-release');
      const first = won(await store.claim(undone, LONG));
      await db.write(first.db, undone);
      await first.release();
      equal(await db.count(undone), 0, 'rows written through a released claim');
      // The retry (the delivery comes again) writes once: exactly once in all.
      const retry = won(await store.claim(undone, LONG));
      await db.write(retry.db, undone);
      await retry.complete('paid');
      equal(await db.count(undone), 1, 'rows after the retry completed');
    },
  },
  {
    name: 'claimed.db: a holder that dies (lease out, or killed) leaves no write; the next holder writes exactly once',
    skip: noWrites,
    async run({ stores, writes, wait, kill }) {
      const db = await writes!();
      const [a, b] = stores(2) as Pair;
      const key = freshKey('db-lease');
      const stale = won(await a.claim(key, LEASE));
      await db.write(stale.db, key);
      await wait(LEASE);
      const fresh = await claimWithin(b, key, 1_000);
      await db.write(stale.db, key).catch(() => {}); // too late: must not commit
      await db.write(fresh.db, key);
      await stale.complete('stale').catch(() => {});
      await fresh.complete('paid');
      equal(await db.count(key), 1, 'rows after a stale holder and the next one wrote');
      equal(await a.outcome(key), 'paid', 'outcome()');

      if (!kill) return;
      const killedKey = freshKey('db-kill');
      const killed = won(await a.claim(killedKey, LONG));
      await db.write(killed.db, killedKey);
      await kill(killed);
      const next = await claimWithin(b, killedKey, 1_000);
      await db.write(next.db, killedKey);
      await next.complete('paid');
      equal(await db.count(killedKey), 1, 'rows after a killed holder and the next one wrote');
      await killed.release(); // gives its dead connection back (else its lease would, a minute on)
    },
  },
];

const unsettled: Case<ClaimsContext> = {
  name: 'remember/unsettled: reported keys without an outcome, oldest first, once each, from every instance; settled ones drop out',
  skip: ({ store }) => (store.remember && store.unsettled ? undefined : 'the store has no remember/unsettled'),
  async run({ stores }) {
    const [a, b] = stores(2) as Pair;
    const [first, paid, last] = ['first', 'paid', 'last'].map((what) => freshKey(`open-${what}`)) as [string, string, string];
    const done = freshKey('open-done');
    await won(await a.claim(done, LONG)).complete('paid');
    for (const key of [first, paid, done, last, first]) await a.remember!(key);
    const mine = (keys: string[]) => keys.filter((key) => [first, paid, last, done].includes(key));
    equal(mine(await b.unsettled!(100_000)), [first, paid, last], "unsettled(), this case's keys");
    await won(await b.claim(paid, LONG)).complete('paid');
    equal(mine(await a.unsettled!(100_000)), [first, last], "unsettled() after one was settled, this case's keys");
    // The limit counts unsettled keys only.
    equal((await a.unsettled!(1)).length, 1, 'keys answered by unsettled(1)');
  },
};

const attempts: Case<ClaimsContext> = {
  name: 'attempt(order) counts 1, 2, 3… across instances, concurrently without a gap or a repeat; outcome("attempts:" + order) reads it',
  skip: ({ store }) => (store.attempt ? undefined : 'the store has no attempt'),
  async run({ stores }) {
    const order = freshKey('order');
    const all = stores(4);
    const numbers = await Promise.all(Array.from({ length: 40 }, (_, i) => all[i % all.length]!.attempt!(order)));
    equal(
      [...numbers].sort((x, y) => x - y),
      Array.from({ length: 40 }, (_, i) => i + 1),
      'the numbers of 40 concurrent attempts, sorted',
    );
    equal(await all[1]!.outcome(`attempts:${order}`), '40', 'outcome("attempts:" + order)');
    equal(await all[2]!.attempt!(freshKey('other-order')), 1, "another order's first attempt");
  },
};

/** The cases of the optional parts, in the order they run. */
export const RECORD_CASES: ReadonlyArray<Case<ClaimsContext>> = [unsettled, attempts, ...transactional];
