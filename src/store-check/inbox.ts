// The inbox cases of the fulfilment store (where it has one): a record added once, leased to
// one taker at a time and finished only with its token; due times on the store's clock; replay
// and the review list.
import type { InboxStore } from '../fulfillment/store.js';
import { equal, fail, matches, ok } from './assert.js';
import { freshKey, LEASE, LONG, type ClaimsContext } from './context.js';
import type { Case } from './run.js';

type Pair = [InboxStore, InboxStore];

const inboxes = ({ stores }: ClaimsContext, count: number): InboxStore[] =>
  stores(count).map((store) => store.inbox ?? fail('an instance made by `another` has no inbox'));
const event = (id: string) => JSON.stringify({ id, type: 'payment.completed', data: { trx_id: id } });
const noInbox = ({ store }: ClaimsContext) => (store.inbox ? undefined : 'the store has no inbox');
const has = (records: Array<{ id: string }>, id: string) => records.some((record) => record.id === id);

const leases: Array<Case<ClaimsContext>> = [
  {
    name: 'inbox: add is once per id; take leases a due record to one taker of many; finish is fenced by the token',
    skip: noInbox,
    async run(context) {
      const [a, b, c] = inboxes(context, 3) as [InboxStore, InboxStore, InboxStore];
      const id = freshKey('delivery');
      equal(await a.add(id, event(id)), true, 'the first add');
      equal(await b.add(id, 'another body'), false, 'a second add of the id');
      // Many takers of that one id at once: exactly one gets it.
      const taken = (await Promise.all([a, b, c, a, b, c].map((inbox) => inbox.take(LONG, id)))).filter((lease) => lease !== undefined);
      equal(taken.length, 1, 'takers of 6 that got the record');
      const lease = taken[0]!;
      matches(lease, { id, state: 'pending', event: event(id), attempts: 0 }, 'the lease');
      equal(typeof lease.token, 'string', "the lease's token type");
      ok(Math.abs(lease.at - Date.now()) < 60_000, `the record's at (${lease.at}) is not within a minute of now`);
      equal(await b.take(LONG, id), undefined, 'a take of the leased record');
      // A forged token finishes nothing.
      equal(await c.finish({ ...lease, token: 'not-yours' }, { state: 'done', attempts: 0 }), false, 'finish with a forged token');
      equal(await b.finish(lease, { state: 'done', attempts: 0 }), true, "finish with the lease's token");
      equal(await c.take(LONG, id), undefined, 'a take of the done record');
      ok(has(await a.list('done', 100_000), id), "list('done') does not hold the finished record");
      ok(!has(await a.list('pending', 100_000), id), "list('pending') still holds the finished record");
    },
  },
  {
    name: 'inbox: a taker that dies loses its lease; the record is taken again, and the stale token is refused',
    skip: noInbox,
    async run(context) {
      const [a, b] = inboxes(context, 2) as Pair;
      const id = freshKey('delivery-lease');
      await a.add(id, event(id));
      const first = (await a.take(LEASE, id)) ?? fail('the record was not taken');
      equal(await b.take(LONG, id), undefined, 'a take within the lease');
      await context.wait(LEASE + 50);
      const second = (await b.take(LONG, id)) ?? fail('the record was not taken again after its lease ran out');
      ok(second.token !== first.token, "the second take has the first one's token");
      equal(await a.finish(first, { state: 'done', attempts: 0 }), false, "finish with the stale taker's token");
      const retry = { state: 'pending', attempts: 1, delayMs: LONG, error: 'verify timed out' } as const;
      equal(await b.finish(second, retry), true, "finish with the live taker's token");
      // Pending again, but not due: no taker gets it, and it is listed with its error.
      equal(await a.take(LONG, id), undefined, 'a take of the record not due yet');
      const listed = (await b.list('pending', 100_000)).find((record) => record.id === id);
      matches(listed, { attempts: 1, error: 'verify timed out' }, "the record in list('pending')");
    },
  },
];

const queue: Array<Case<ClaimsContext>> = [
  {
    name: 'inbox: take without an id takes due records, each once, across takers; a delay makes a record due later',
    skip: noInbox,
    async run(context) {
      const [a, b] = inboxes(context, 2) as Pair;
      const ids = [0, 1, 2, 3, 4].map((i) => freshKey(`queue-${i}`));
      for (const id of ids) await a.add(id, event(id));
      const got: string[] = [];
      // Takes until these five are taken (records of other cases, or of earlier runs on a kept
      // database, may be due too: they are taken and finished as done).
      for (let i = 0; i < 10_000 && got.length < ids.length; i++) {
        const lease = await [a, b][i % 2]!.take(LONG);
        if (!lease) break;
        if (ids.includes(lease.id)) got.push(lease.id);
        const next =
          lease.id === ids[0] ? ({ state: 'pending', attempts: 1, delayMs: LEASE } as const) : ({ state: 'done', attempts: 0 } as const);
        await [b, a][i % 2]!.finish(lease, next);
      }
      equal([...got].sort(), [...ids].sort(), "this case's records taken, sorted");
      equal(await a.take(LONG, ids[0]), undefined, 'a take of the delayed record before its delay');
      await context.wait(LEASE + 50);
      const again = (await b.take(LONG, ids[0])) ?? fail('the delayed record was not due again after its delay');
      equal(again.attempts, 1, "the delayed record's attempts");
      await b.finish(again, { state: 'dead', attempts: 2, error: 'gave up' });
      const dead = (await a.list('dead', 100_000)).find((record) => record.id === ids[0]);
      matches(dead, { attempts: 2, error: 'gave up', state: 'dead' }, "the record in list('dead')");
    },
  },
  {
    name: 'inbox: replay makes a dead or done record pending and due at once, attempts 0; an unknown id is false; review records are listed',
    skip: noInbox,
    async run(context) {
      const [a, b] = inboxes(context, 2) as Pair;
      const id = freshKey('dead');
      await a.add(id, event(id));
      const lease = (await a.take(LONG, id)) ?? fail('the record was not taken');
      await a.finish(lease, { state: 'dead', attempts: 5, error: 'ERP down' });
      equal(await b.take(LONG, id), undefined, 'a take of the dead record');
      equal(await b.replay(id), true, 'replay of the dead record');
      equal(await b.replay(freshKey('never')), false, 'replay of an unknown id');
      const again = (await a.take(LONG, id)) ?? fail('the record was not due after its replay');
      matches(again, { id, state: 'pending', attempts: 0 }, 'the replayed record');
      ok(!has(await b.list('dead', 100_000), id), "list('dead') still holds the replayed record");

      const review = freshKey('review');
      equal(await a.add(review, JSON.stringify({ trx_id: review, reason: 'duplicate' }), 'review'), true, "add in state 'review'");
      equal(await b.take(LONG, review), undefined, 'a take of the review record');
      const listed = (await b.list('review', 100_000)).filter((record) => record.id === review);
      matches(listed, [{ id: review, state: 'review', attempts: 0 }], "the record in list('review')");
      // Oldest first, and the limit holds.
      equal((await b.list('review', 1)).length, 1, "records answered by list('review', 1)");
      if (context.shared)
        ok(has(await inboxes(context, 3)[2]!.list('review', 100_000), review), "a new instance's list('review') lacks it");
    },
  },
];

/** The inbox cases, in the order they run. */
export const INBOX_CASES: ReadonlyArray<Case<ClaimsContext>> = [...leases, ...queue];
