// The cases of a subscription record store (SubscriptionStore, `store.subscriptions`): add
// never overwrites (the billing kit's guard against a second live subscription rests on it),
// swap is a compare-and-swap on the version, list is every record in key order, bind holds a
// subscription id for one record. Copies and the round trip: ./billing-fields.ts.
import type { SubscriptionStore } from '../billing/store.js';
import { byCodePoints, equal, matches, ok, strictEqual } from './assert.js';
import { COPIES, ROUND_TRIP } from './billing-fields.js';
import type { Case } from './run.js';
import { keys, listed, next, recordOf, T0, tag, type SubscriptionsContext } from './subscriptions.js';

/** How many instances race in the concurrent cases. */
const RACERS = 20;

type Pair = [SubscriptionStore, SubscriptionStore];

const writes: Array<Case<SubscriptionsContext>> = [
  {
    name: 'add records a new subscription (created), and never overwrites one: a second add answers the first',
    async run({ stores }) {
      const [a, b] = stores(2) as Pair;
      const first = recordOf(`${tag()}add:1`);
      strictEqual(await a.add(first), { record: first, created: true }, 'the first add');
      const second = { ...first, phone: '255700000002', sends: 1, webhookUrl: 'https://shop.example/hooks' };
      strictEqual(await b.add(second), { record: first, created: false }, 'a second add of the key from another instance');
      strictEqual(await a.add(second), { record: first, created: false }, 'a second add of the key');
      strictEqual(await b.get(first.key), first, 'get()');
    },
  },
  {
    name: 'get reads what another instance wrote; a missing record: get undefined, swap false, not created by it',
    async run({ stores }) {
      const [a, b] = stores(2) as Pair;
      const record = recordOf(`${tag()}get:1`);
      await a.add(record);
      strictEqual(await b.get(record.key), record, 'get() from another instance');
      const t = tag();
      const missing = recordOf(`${t}missing:1`);
      equal(await a.get(missing.key), undefined, 'get() of a missing key');
      equal(await a.swap(next(missing)), false, 'swap() of a missing key');
      equal(await a.swap(missing), false, 'swap() of version 1 over nothing (version 0 is no add)');
      equal(await b.get(missing.key), undefined, 'get() of the missing key after the swaps');
      equal(await listed(b, t), [], 'list() after the swaps');
    },
  },
  {
    name: 'swap replaces only the version before it, and bumps it; stale and skipping swaps change nothing',
    async run({ stores }) {
      const [a, b] = stores(2) as Pair;
      const t = tag();
      const v1 = recordOf(`${t}swap:1`);
      await a.add(v1);
      const v2 = next(v1, { subscriptionId: 'sub_1', sends: 1 });
      equal(await a.swap({ ...v1, sends: 9 }), false, 'a swap of the same version');
      equal(await a.swap(next(v2)), false, 'a swap of version 3 over 1');
      strictEqual(await b.get(v1.key), v1, 'get() after the refused swaps');
      equal(await b.swap(v2), true, 'a swap of version 2 over 1');
      strictEqual(await a.get(v1.key), v2, 'get() after it');
      equal(await a.swap({ ...v2, error: 'lost the race' }), false, 'a stale swap of version 2 again');
      const v3 = next(v2, { state: 'active', paid: [{ invoice: 'inv_1', start: T0, end: T0 + 30 * 86_400_000 }] });
      equal(await a.swap(v3), true, 'a swap of version 3 over 2');
      strictEqual(await b.get(v1.key), v3, 'get() after it');
      // Swapped, still listed once: the latest version.
      strictEqual(await listed(a, t), [v3], 'list() after the swaps');
    },
  },
];

const races: Array<Case<SubscriptionsContext>> = [
  {
    name: `${RACERS} concurrent adds of one key: exactly one created, every one answers it`,
    async run({ stores }) {
      const racers = stores(RACERS);
      const t = tag();
      const key = `${t}race-add:1`;
      const tries = racers.map((_, i) => recordOf(key, { sends: i + 1, phone: `2557000000${String(i).padStart(2, '0')}` }));
      const answers = await Promise.all(racers.map((store, i) => store.add(tries[i]!)));
      const created = answers.filter((answer) => answer.created);
      equal(created.length, 1, 'adds that created it');
      const winner = tries[answers.indexOf(created[0]!)];
      for (const [i, answer] of answers.entries()) strictEqual(answer.record, winner, `the record answered to add ${i + 1}`);
      strictEqual(await racers[3]!.get(key), winner, 'get()');
      equal(keys(await listed(racers[4]!, t)), [key], 'list()');
    },
  },
  {
    name: `${RACERS} concurrent swaps of one version from as many instances: exactly one wins, and it is what is stored`,
    async run({ stores }) {
      const racers = stores(RACERS);
      const v1 = recordOf(`${tag()}race-swap:1`);
      await racers[0]!.add(v1);
      const tries = racers.map((_, i) => next(v1, { subscriptionId: `sub_${i}`, sends: 1 }));
      const won = await Promise.all(racers.map((store, i) => store.swap(tries[i]!)));
      equal(won.filter(Boolean).length, 1, 'swaps that won');
      strictEqual(await racers[1]!.get(v1.key), tries[won.indexOf(true)], 'get() after the race');
      // And the next round again: one of the racers' version 3.
      const again = await Promise.all(racers.map((store, i) => store.swap(next(tries[won.indexOf(true)]!, { error: `round 2: ${i}` }))));
      equal(again.filter(Boolean).length, 1, 'swaps that won the second round');
      matches(await racers[2]!.get(v1.key), { version: 3, error: `round 2: ${again.indexOf(true)}` }, 'get() after round 2');
    },
  },
  {
    name: `${RACERS} concurrent binds of one subscription id to different keys: one owner, every one answers it`,
    async run({ stores }) {
      const racers = stores(RACERS);
      const t = tag();
      const answers = await Promise.all(racers.map((store, i) => store.bind(`${t}sub_1`, `${t}key:${i}`)));
      equal(new Set(answers).size, 1, 'the different keys answered');
      ok(new RegExp(`^${t}key:\\d+$`).test(answers[0]!), `bind answered ${answers[0]}, none of the keys bound`);
      equal(await racers[5]!.owner(`${t}sub_1`), answers[0], 'owner()');
    },
  },
];

const reads: Array<Case<SubscriptionsContext>> = [
  {
    name: 'list: every record, ordered by key (code points: uppercase before lowercase), at most limit, from after',
    async run({ stores }) {
      const [a, b] = stores(2) as Pair;
      const t = tag();
      // Added out of order, in any state; what sorts by locale (a < B) or by UTF-16 apart is left out, but C order is in.
      const names = ['b', 'B', 'a', 'A', 'é', '日本', '😀', 'a0', 'Z'];
      const added = names.map((name, i) => recordOf(t + name, i % 2 ? { state: 'ended', error: 'refused' } : {}));
      for (const record of added) await a.add(record);
      const sorted = ['A', 'B', 'Z', 'a', 'a0', 'b', 'é', '日本', '😀'].map((name) => t + name);
      equal(keys(await listed(b, t)), sorted, "list(), this case's keys");
      equal(keys(await b.list(3, t)), sorted.slice(0, 3), 'list(3, tag)');
      equal(keys(await b.list(3, sorted[2])), sorted.slice(3, 6), 'list(3, its third key)');
      equal(keys(await b.list(2, `${t}a`)), [`${t}a0`, `${t}b`], 'list after a key (exclusive)');
      equal(keys(await listed(b, t, sorted[7])), sorted.slice(8), 'list after its eighth key');
      equal(await b.list(0, t), [], 'list with limit 0');
      equal((await b.list(1.5, t)).length, 1, 'records answered with limit 1.5');
      // The records themselves, whole; and without after: from the first key, in order.
      strictEqual(
        await b.list(1, t),
        added.filter((record) => record.key === sorted[0]),
        'list(1, tag)',
      );
      const all = keys(await b.list(100_000));
      equal(all, [...all].sort(byCodePoints), 'list() without after, in code-point order');
      ok(
        sorted.every((key) => all.includes(key)),
        'list() without after lacks keys of this case',
      );
    },
  },
  {
    name: 'bind: the first binder holds the subscription id, a second gets its key; owner reads it',
    async run({ stores }) {
      const [a, b] = stores(2) as Pair;
      const t = tag();
      const id = `${t}sub_1`;
      equal(await a.owner(id), undefined, 'owner() of an unbound id');
      equal(await a.bind(id, `${t}first:1`), `${t}first:1`, 'the first bind');
      equal(await b.bind(id, `${t}second:1`), `${t}first:1`, 'a bind of the id to another key');
      equal(await b.bind(id, `${t}first:1`), `${t}first:1`, 'a bind of the id to its key again');
      equal(await b.owner(id), `${t}first:1`, 'owner()');
      equal(await a.bind(`${t}sub_2`, `${t}second:1`), `${t}second:1`, 'a bind of another id');
      equal(await a.owner(`${t}sub_2`), `${t}second:1`, 'owner() of the other id');
      equal(await a.owner(`${t}sub_3`), undefined, 'owner() of an id never bound');
    },
  },
];

/** The subscription record cases, in the order they run. */
export const BILLING_CASES: ReadonlyArray<Case<SubscriptionsContext>> = [...writes, ...races, ...reads, COPIES, ROUND_TRIP];
