// The billing kit's memory store: subscription records in this process, for tests and
// one-process scripts. Kept as JSON text, as the payout intents' memory store keeps its own,
// so a caller never holds the stored object.
import type { SubscriptionRecord, SubscriptionStore } from './store.js';

/* eslint-disable @typescript-eslint/require-await -- the memory store answers at once: `async` makes its promises */

/**
 * A store of subscription records in this process's memory, for tests and one-process scripts:
 * it forgets with its process (`durable: false`). In production pass `postgresStore(pool)` or
 * `redisStore(redis)`, which hold the records beside the other kits'.
 *
 * @example
 * ```ts
 * import { createBilling, memoryStore } from 'business-payments/billing';
 *
 * const billing = createBilling({ client, store: memoryStore() });
 * ```
 */
export function memoryStore(): { readonly durable: false; readonly subscriptions: SubscriptionStore } {
  return { durable: false, subscriptions: memorySubscriptions() };
}

/**
 * @internal The records of `memoryStore()`: Maps in this process, kept as JSON text, so a caller
 * never holds the stored object.
 */
export function memorySubscriptions(): SubscriptionStore {
  const records = new Map<string, string>();
  const owners = new Map<string, string>();
  // Synchronous: a swap reads and writes in one turn of the event loop, so none comes between.
  const read = (key: string) => {
    const text = records.get(key);
    return text === undefined ? undefined : (JSON.parse(text) as SubscriptionRecord);
  };
  return {
    async add(record) {
      const created = !records.has(record.key);
      if (created) records.set(record.key, JSON.stringify(record));
      return { record: read(record.key)!, created };
    },
    get: async (key) => read(key),
    swap: async (next) => read(next.key)?.version === next.version - 1 && !!records.set(next.key, JSON.stringify(next)),
    list: async (limit, after = '') =>
      [...records.keys()]
        .filter((key) => key > after)
        .sort()
        .slice(0, limit)
        .map((key) => read(key)!),
    bind: async (subscriptionId, key) => owners.get(subscriptionId) ?? (owners.set(subscriptionId, key), key),
    owner: async (subscriptionId) => owners.get(subscriptionId),
  };
}
