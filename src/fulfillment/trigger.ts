// Triggers: the merchant's own queue engine (pg-boss, BullMQ, a push queue) wakes a worker for
// each recorded delivery, instead of a poll. The engine only wakes: the inbox record stays the
// authority (its take and the claims fence every run), so an engine that delivers a job twice
// fulfils once. Here the interface, the push-queue trigger and the recording step; the engines'
// triggers have entries of their own (fulfillment-pg-boss.ts, fulfillment-bullmq.ts).
import type { PostgresQueryable } from './postgres-session.js';
import type { InboxStore } from './store.js';

/**
 * What wakes a worker for a recorded delivery (`createFulfillment({ trigger })`): the kit sends
 * it the inbox record's id, and the engine's worker calls `fulfillment.process(id)`. With a
 * trigger nothing polls: no `work()`, no in-process retry timers. Ready-made:
 * `pgBossTrigger` (`business-payments/fulfillment/pg-boss`), `bullmqTrigger`
 * (`business-payments/fulfillment/bullmq`), {@link queueTrigger} (push queues).
 */
export interface FulfillmentTrigger {
  /** Enqueues a job for the inbox record `id` (after the record is committed). A rejection answers the delivery 500: the service delivers again, and the kit sends again. */
  send(id: string): Promise<unknown>;
  /**
   * Enqueues the job inside the inbox row's own transaction (`db`, Postgres stores), so a
   * rolled-back insert never wakes a worker and a committed one always has its job. Used
   * instead of `send` where the store can; a rejection rolls the record back (the delivery is
   * answered 500, and comes again).
   */
  sendInTransaction?(db: PostgresQueryable, id: string): Promise<unknown>;
}

/**
 * A trigger for a push queue you send to yourself (Vercel Queues, Cloudflare Queues, SQS):
 * `send` gets the message `{ id }`; your consumer calls `fulfillment.process(message.id)`.
 *
 * @example
 * ```ts
 * // queue: your push queue's producer (a Cloudflare Queue binding, Vercel's send, an SQS client's wrapper).
 * const trigger = queueTrigger({ send: (message) => queue.send(message) }); // createFulfillment({ ..., trigger })
 * ```
 */
export function queueTrigger(queue: { send(message: { id: string }): Promise<unknown> }): FulfillmentTrigger {
  return { send: (id) => queue.send({ id }) };
}

/** Records a delivery in `queue` and, with a trigger, wakes a worker for it. */
// Inside the insert's transaction where both can, else after it. A delivery recorded before wakes
// again while its record is pending (its job may be lost, or its retries spent); the take answers
// a job too many.
export async function recordDelivery(queue: InboxStore, trigger: FulfillmentTrigger | undefined, id: string, event: string) {
  let sent = false;
  const inTx = trigger?.sendInTransaction?.bind(trigger);
  const added = await queue.add(id, event, undefined, inTx && (async (db) => void (await inTx(db, id), (sent = true))));
  if (trigger && !sent && (added || ((await queue.get?.(id)) ?? { state: 'pending' }).state === 'pending')) await trigger.send(id);
}
