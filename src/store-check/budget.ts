// The cases of a request budget store (RequestBudgetStore, `store.budget`): take up to the
// limit then refused with a wait, record never refused and counted, the window sliding, a pause
// shared by every instance, and concurrent takes that never pass the limit. Each case uses a key
// of its own (random), so a persistent store can be checked again and again. Windows are short
// (a few hundred ms) and waited out in real time unless `elapse` moves the store's clock.
import type { RequestBudgetStore } from '../fulfillment/shared-budget.js';
import { equal, ok } from './assert.js';
import { freshKey } from './context.js';
import type { Case } from './run.js';

/** What the budget cases are given. */
export interface BudgetContext {
  /** `count` instances, as separate processes would have them (the one instance `count` times, without `another`). */
  readonly stores: (count: number) => RequestBudgetStore[];
  /** `ms` on the store's clock: moved on (`elapse`), or waited out in real time. */
  readonly wait: (ms: number) => Promise<void>;
}

/** A window no case waits out. */
const LONG = 60_000;
/** A window short enough to wait out. */
const SHORT = 400;
/** What a wait is given beyond the window: the store's clock and ours may differ by a few ms. */
const MARGIN = 100;
/** How many instances race in the concurrent case, and how many takes each. */
const RACERS = 10;
const TAKES = 5;

type Pair = [RequestBudgetStore, RequestBudgetStore];

/** That `wait` is a refusal: more than 0 ms, at most `most`. */
function refused(wait: number, most: number, what: string): void {
  ok(typeof wait === 'number' && wait > 0 && wait <= most, `${what}: expected a refusal (ms in (0, ${most}]), got ${String(wait)}`);
}

export const BUDGET_CASES: Array<Case<BudgetContext>> = [
  {
    name: 'take records a send while the window holds fewer than the limit, then refuses with the ms until room comes',
    async run({ stores }) {
      const [a, b] = stores(2) as Pair;
      const key = freshKey('budget-take');
      for (let i = 0; i < 3; i++) equal(await (i % 2 ? b : a).take(key, 3, LONG), 0, `take ${i + 1} of 3`);
      refused(await a.take(key, 3, LONG), LONG, 'a 4th take');
      refused(await b.take(key, 3, LONG), LONG, 'a 4th take from another instance');
      equal(await b.count(key, LONG), 3, 'count() (refused takes record nothing)');
      equal(await a.take(key, 4, LONG), 0, 'a take under a higher limit');
      equal(await a.count(freshKey('budget-none'), LONG), 0, 'count() of a key never written');
    },
  },
  {
    name: 'record is never refused and counts: it leaves takes less room',
    async run({ stores }) {
      const [a, b] = stores(2) as Pair;
      const key = freshKey('budget-record');
      await a.record(key, LONG);
      await b.record(key, LONG);
      equal(await a.count(key, LONG), 2, 'count() after 2 records');
      equal(await b.take(key, 3, LONG), 0, 'a take with 2 of 3 recorded');
      refused(await a.take(key, 3, LONG), LONG, 'a take with 3 of 3');
      for (let i = 0; i < 3; i++) await b.record(key, LONG);
      equal(await a.count(key, LONG), 6, 'count() after records past the limit');
    },
  },
  {
    name: 'the window slides: a send leaves it windowMs after it was made, and count reads the window asked for',
    async run({ stores, wait }) {
      const [a, b] = stores(2) as Pair;
      const key = freshKey('budget-window');
      equal(await a.take(key, 1, SHORT), 0, 'the first take');
      refused(await b.take(key, 1, SHORT), SHORT, 'a second take in the window');
      await wait(SHORT + MARGIN);
      equal(await b.count(key, SHORT), 0, 'count() once the send left the window');
      equal(await b.take(key, 1, SHORT), 0, 'a take once the send left the window');
      // The first send may have been dropped by the second take (it had left that take's window).
      const longer = await a.count(key, LONG);
      ok(longer === 1 || longer === 2, `count() over a longer window: expected 1 or 2, got ${String(longer)}`);
    },
  },
  {
    name: 'pause refuses every instance its takes until it ends; a shorter pause keeps the longer one',
    async run({ stores, wait }) {
      const [a, b] = stores(2) as Pair;
      const key = freshKey('budget-pause');
      await a.pause(key, SHORT);
      refused(await b.take(key, 10, LONG), SHORT, 'a take from another instance during the pause');
      await b.pause(key, 1);
      refused(await a.take(key, 10, LONG), SHORT, 'a take after a shorter pause');
      equal(await a.count(key, LONG), 0, 'count() (a pause records no send)');
      await wait(SHORT + MARGIN);
      equal(await b.take(key, 10, LONG), 0, 'a take once the pause ended');
      equal(await a.take(freshKey('budget-other'), 1, LONG), 0, 'a take of another key (pauses are per key)');
    },
  },
  {
    name: `concurrent takes from ${RACERS} instances never pass the limit`,
    async run({ stores }) {
      const racers = stores(RACERS);
      const key = freshKey('budget-race');
      const limit = 7;
      const answers = await Promise.all(racers.flatMap((store) => Array.from({ length: TAKES }, () => store.take(key, limit, LONG))));
      equal(answers.filter((answer) => answer === 0).length, limit, `takes answered 0 of ${answers.length} (limit ${limit})`);
      for (const answer of answers) if (answer !== 0) refused(answer, LONG, 'a refused take');
      equal(await racers[0]!.count(key, LONG), limit, 'count() after the race');
    },
  },
];
