/**
 * `pgBossTrigger(boss)`: pg-boss wakes the fulfillment kit's inbox, its job sent in the inbox
 * row's own transaction.
 *
 * @module business-payments/fulfillment/pg-boss
 */
// Entry of `business-payments/fulfillment/pg-boss`. pg-boss stays the merchant's dependency:
// nothing here imports it, not even its types (the boss is anything with its `send`).
import type { FulfillmentTrigger } from './fulfillment/trigger.js';

export type { FulfillmentTrigger } from './fulfillment/trigger.js';

/** What the trigger needs of a pg-boss instance (pass the `PgBoss` itself, started). */
export interface PgBossSender {
  /** pg-boss's `send(name, data, options)`; `options.db` runs its insert on that connection. */
  send(
    name: string,
    data: { id: string },
    options?: { db?: { executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> } },
  ): Promise<string | null>;
}

/**
 * A trigger on pg-boss (10 or later), for `createFulfillment({ trigger })`: a job `{ id }` on
 * `queue` (default `business-payments-inbox`; create it first, with its retry policy) for each
 * recorded delivery. On a `postgresStore` in the same database as pg-boss, the job is sent in
 * the inbox row's own transaction: a delivery rolled back never wakes a worker, and a committed
 * one always has its job. (Elsewhere, it is sent right after the record.)
 *
 * @example
 * ```ts
 * // The queue created once (await boss.createQueue('business-payments-inbox', { retryLimit: 10, retryBackoff: true })),
 * // the kit given the trigger: createFulfillment({ ..., store: postgresStore(pool), trigger: pgBossTrigger(boss) }).
 * const trigger = pgBossTrigger(boss);
 * await boss.work<{ id: string }>('business-payments-inbox', async ([job]) => {
 *   const result = await fulfillment.process(job!.data.id);
 *   if (result === 'retry' || result === 'busy') throw new Error(`inbox ${job!.data.id}: ${result}`); // pg-boss retries it
 * });
 * ```
 */
export function pgBossTrigger(boss: PgBossSender, options: { queue?: string | undefined } = {}): FulfillmentTrigger {
  const { queue = 'business-payments-inbox' } = options;
  return {
    send: (id) => boss.send(queue, { id }),
    sendInTransaction: (db, id) => boss.send(queue, { id }, { db: { executeSql: (text, values) => db.query(text, values) } }),
  };
}
