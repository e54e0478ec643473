// The cases of a payout intent store (PayoutIntentStore): add never overwrites, swap is a
// compare-and-swap on the version, list is by state in key order, bind holds a payout id for
// one intent, and every field round-trips. Each case uses keys of its own (a random tag), so a
// persistent database can be checked again and again, and a list reads from its tag on
// (`after`): the keys starting with a tag sort right after it.
import type { PayoutIntent, PayoutIntentStore } from '../payouts/store.js';
import { byCodePoints, equal, matches, ok, strictEqual } from './assert.js';
import { intentOf, listed, next, T0, tag, type IntentsContext } from './intents.js';
import { ROUND_TRIP } from './payout-fields.js';
import type { Case } from './run.js';

/** How many instances race in the concurrent cases. */
const RACERS = 20;

const keys = (intents: PayoutIntent[]) => intents.map((intent) => intent.key);
type Pair = [PayoutIntentStore, PayoutIntentStore];

const writes: Array<Case<IntentsContext>> = [
  {
    name: 'add records a new intent (created), and never overwrites one: a second add answers the first',
    async run({ stores }) {
      const [a, b] = stores(2) as Pair;
      const first = intentOf(`${tag()}add`, { destination: '255700000001' });
      strictEqual(await a.add(first), { intent: first, created: true }, 'the first add');
      const second = { ...first, amount: 99, destination: '255700000002', note: 'another send' };
      strictEqual(await b.add(second), { intent: first, created: false }, 'a second add of the key from another instance');
      strictEqual(await a.add(second), { intent: first, created: false }, 'a second add of the key');
      strictEqual(await b.get(first.key), first, 'get()');
    },
  },
  {
    name: 'get reads what another instance wrote; a missing intent: get undefined, swap false, not created by it',
    async run({ stores }) {
      const [a, b] = stores(2) as Pair;
      const intent = intentOf(`${tag()}get`);
      await a.add(intent);
      strictEqual(await b.get(intent.key), intent, 'get() from another instance');
      const t = tag();
      const missing = intentOf(`${t}missing`);
      equal(await a.get(missing.key), undefined, 'get() of a missing key');
      equal(await a.swap(next(missing)), false, 'swap() of a missing key');
      equal(await a.swap(missing), false, 'swap() of version 1 over nothing (version 0 is no add)');
      equal(await b.get(missing.key), undefined, 'get() of the missing key after the swaps');
      equal(await listed(b, 'pending', t), [], "list('pending') after the swaps");
    },
  },
  {
    name: 'swap replaces only the version before it, and bumps it; stale and skipping swaps change nothing',
    async run({ stores }) {
      const [a, b] = stores(2) as Pair;
      const v1 = intentOf(`${tag()}swap`);
      await a.add(v1);
      const v2 = next(v1, { state: 'unknown', sends: 1, sentAt: T0 + 5 });
      equal(await a.swap({ ...v1, note: 'same version' }), false, 'a swap of the same version');
      equal(await a.swap(next(v2)), false, 'a swap of version 3 over 1');
      strictEqual(await b.get(v1.key), v1, 'get() after the refused swaps');
      equal(await b.swap(v2), true, 'a swap of version 2 over 1');
      strictEqual(await a.get(v1.key), v2, 'get() after it');
      equal(await a.swap({ ...v2, note: 'lost the race' }), false, 'a stale swap of version 2 again');
      const v3 = next(v2, { state: 'sent', payoutId: 'po_1', matchedBy: 'answer' });
      equal(await a.swap(v3), true, 'a swap of version 3 over 2');
      strictEqual(await b.get(v1.key), v3, 'get() after it');
    },
  },
];

const races: Array<Case<IntentsContext>> = [
  {
    name: `${RACERS} concurrent swaps of one version from as many instances: exactly one wins, and it is what is stored`,
    async run({ stores }) {
      const racers = stores(RACERS);
      const v1 = intentOf(`${tag()}race-swap`);
      await racers[0]!.add(v1);
      const tries = racers.map((_, i) => next(v1, { state: 'unknown', note: `racer ${i}` }));
      const won = await Promise.all(racers.map((store, i) => store.swap(tries[i]!)));
      equal(won.filter(Boolean).length, 1, 'swaps that won');
      strictEqual(await racers[1]!.get(v1.key), tries[won.indexOf(true)], 'get() after the race');
      // And the next round again: one of the racers' version 3.
      const again = await Promise.all(racers.map((store, i) => store.swap(next(tries[won.indexOf(true)]!, { note: `round 2: ${i}` }))));
      equal(again.filter(Boolean).length, 1, 'swaps that won the second round');
      matches(await racers[2]!.get(v1.key), { version: 3, note: `round 2: ${again.indexOf(true)}` }, 'get() after round 2');
    },
  },
  {
    name: `${RACERS} concurrent adds of one key: exactly one created, every one answers it`,
    async run({ stores }) {
      const racers = stores(RACERS);
      const t = tag();
      const key = `${t}race-add`;
      const tries = racers.map((_, i) => intentOf(key, { amount: i + 1 }));
      const answers = await Promise.all(racers.map((store, i) => store.add(tries[i]!)));
      const created = answers.filter((answer) => answer.created);
      equal(created.length, 1, 'adds that created it');
      const winner = tries[answers.indexOf(created[0]!)];
      for (const [i, answer] of answers.entries()) strictEqual(answer.intent, winner, `the intent answered to add ${i + 1}`);
      strictEqual(await racers[3]!.get(key), winner, 'get()');
      equal(keys(await listed(racers[4]!, 'pending', t)), [key], "list('pending')");
    },
  },
  {
    name: `${RACERS} concurrent binds of one payout id to different keys: one owner, every one answers it`,
    async run({ stores }) {
      const racers = stores(RACERS);
      const t = tag();
      const answers = await Promise.all(racers.map((store, i) => store.bind(`${t}po`, `${t}key-${i}`)));
      equal(new Set(answers).size, 1, 'the different keys answered');
      ok(new RegExp(`^${t}key-\\d+$`).test(answers[0]!), `bind answered ${answers[0]}, none of the keys bound`);
      equal(await racers[5]!.owner(`${t}po`), answers[0], 'owner()');
    },
  },
];

const reads: Array<Case<IntentsContext>> = [
  {
    name: 'list: by state, ordered by key (code points: uppercase before lowercase), at most limit, from after',
    async run({ stores }) {
      const [a, b] = stores(2) as Pair;
      const t = tag();
      // Added out of order; what sorts by locale (a < B) or by UTF-16 (astral vs U+E000…) apart is left out, but C order is in.
      for (const name of ['b', 'B', 'a', 'A', 'é', '日本', '😀', 'a0', 'Z']) await a.add(intentOf(t + name));
      await a.add(intentOf(`${t}failed-1`, { state: 'failed' }));
      const sorted = ['A', 'B', 'Z', 'a', 'a0', 'b', 'é', '日本', '😀'].map((name) => t + name);
      equal(keys(await listed(b, 'pending', t)), sorted, "list('pending'), this case's keys");
      equal(keys(await b.list('pending', 3, t)), sorted.slice(0, 3), "list('pending', 3, tag)");
      equal(keys(await b.list('pending', 3, sorted[2])), sorted.slice(3, 6), "list('pending', 3, its third key)");
      equal(keys(await b.list('pending', 2, `${t}a`)), [`${t}a0`, `${t}b`], 'list after a key (exclusive)');
      equal(keys(await listed(b, 'pending', t, sorted[7])), sorted.slice(8), 'list after its eighth key');
      equal(keys(await listed(b, 'failed', t)), [`${t}failed-1`], "list('failed')");
      equal(await listed(b, 'sent', t), [], "list('sent')");
      equal(await b.list('pending', 0, t), [], 'list with limit 0');
      equal((await b.list('pending', 1.5, t)).length, 1, 'intents answered with limit 1.5');
      // The intents themselves, whole; and without after: from the first key, in order.
      strictEqual(await b.list('pending', 1, t), [intentOf(sorted[0]!)], "list('pending', 1, tag)");
      const all = keys(await b.list('pending', 100_000));
      equal(all, [...all].sort(byCodePoints), "list('pending') without after, in code-point order");
      ok(
        sorted.every((key) => all.includes(key)),
        "list('pending') without after lacks keys of this case",
      );
    },
  },
  {
    name: 'an intent moved to another state is listed in its new state only',
    async run({ stores }) {
      const [a, b] = stores(2) as Pair;
      const t = tag();
      const [one, two] = [intentOf(`${t}1`), intentOf(`${t}2`)];
      await a.add(one);
      await a.add(two);
      const moved = next(one, { state: 'in_progress', payout: { id: 'po_9', status: 'INPROGRESS' } });
      equal(await b.swap(moved), true, "a swap to 'in_progress'");
      equal(keys(await listed(a, 'pending', t)), [two.key], "list('pending')");
      strictEqual(await listed(a, 'in_progress', t), [moved], "list('in_progress')");
      // A swap that keeps its state keeps it listed there once; then on to a final state.
      const noted = next(moved, { note: 'still in progress' });
      equal(await b.swap(noted), true, 'a swap that keeps the state');
      strictEqual(await listed(a, 'in_progress', t), [noted], "list('in_progress') after it");
      equal(await b.swap(next(noted, { state: 'needs_review', note: 'resolve could not tell' })), true, "a swap to 'needs_review'");
      equal(await listed(a, 'in_progress', t), [], "list('in_progress') after it");
      equal(keys(await listed(a, 'needs_review', t)), [one.key], "list('needs_review')");
      // A failed swap moves nothing.
      equal(await b.swap({ ...next(two, { state: 'sent' }), version: 5 }), false, 'a swap of version 5 over 1');
      equal(keys(await listed(a, 'pending', t)), [two.key], "list('pending') after it");
      equal(await listed(a, 'sent', t), [], "list('sent') after it");
    },
  },
  {
    name: 'bind: the first binder holds the payout id, a second gets its key; owner reads it',
    async run({ stores }) {
      const [a, b] = stores(2) as Pair;
      const t = tag();
      const id = `${t}po_1`;
      equal(await a.owner(id), undefined, 'owner() of an unbound id');
      equal(await a.bind(id, `${t}first`), `${t}first`, 'the first bind');
      equal(await b.bind(id, `${t}second`), `${t}first`, 'a bind of the id to another key');
      equal(await b.bind(id, `${t}first`), `${t}first`, 'a bind of the id to its key again');
      equal(await b.owner(id), `${t}first`, 'owner()');
      equal(await a.bind(`${t}po_2`, `${t}second`), `${t}second`, 'a bind of another id');
      equal(await a.owner(`${t}po_2`), `${t}second`, 'owner() of the other id');
      equal(await a.owner(`${t}po_3`), undefined, 'owner() of an id never bound');
    },
  },
];

/** The payout intent cases, in the order they run. */
export const PAYOUT_CASES: ReadonlyArray<Case<IntentsContext>> = [...writes, ...races, ...reads, ROUND_TRIP];
