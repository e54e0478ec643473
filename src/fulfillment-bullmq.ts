/**
 * `bullmqTrigger(queue)`: BullMQ wakes the fulfillment kit's inbox.
 *
 * @module business-payments/fulfillment/bullmq
 */
// Entry of `business-payments/fulfillment/bullmq`. BullMQ stays the merchant's dependency:
// nothing here imports it, not even its types (the queue is anything with its `add`).
import type { FulfillmentTrigger } from './fulfillment/trigger.js';

export type { FulfillmentTrigger } from './fulfillment/trigger.js';

/** What the trigger needs of a BullMQ `Queue` (pass the queue itself). */
export interface BullMQAdder {
  /** BullMQ's `queue.add(name, data, opts)`. */
  add(name: string, data: { id: string }, opts: { jobId: string }): Promise<unknown>;
}

/**
 * A trigger on a BullMQ queue, for `createFulfillment({ trigger })`: a job `inbox` with data
 * `{ id }` for each recorded delivery, sent right after the record, its `jobId`
 * `inbox-<encodeURIComponent(id)>` (BullMQ adds a job id once: a delivery woken twice is one job).
 *
 * @example
 * ```ts
 * // inboxQueue: your BullMQ Queue; its Worker calls fulfillment.process(job.data.id), and throws on 'retry' or 'busy'.
 * const trigger = bullmqTrigger(inboxQueue); // createFulfillment({ ..., trigger })
 * ```
 */
export function bullmqTrigger(queue: BullMQAdder): FulfillmentTrigger {
  // encodeURIComponent: no `:` (BullMQ refuses it in an id); the prefix: never an integer.
  return { send: (id) => queue.add('inbox', { id }, { jobId: `inbox-${encodeURIComponent(id)}` }) };
}
