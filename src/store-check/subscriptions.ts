// What the subscription record cases share: the instances they race, and records as the billing
// kit makes them. Each case's keys start with a tag of its own (random), so a persistent
// database can be checked again and again, and a list reads from its tag on (`after`).
import type { SubscriptionRecord, SubscriptionStore } from '../billing/store.js';

/** What the billing cases are given: `count` instances on the same data (the one instance, without `another`). */
export interface SubscriptionsContext {
  readonly stores: (count: number) => SubscriptionStore[];
}

export const T0 = 1_700_000_000_000;

/** A case's key prefix, shaped as the kit's keys are (`sub:<customer>:…`): the keys starting with it sort right after it. */
export const tag = () => `sub:c${crypto.randomUUID().slice(0, 8)}:`;

/** A record as the kit adds it (version 1, pending, nothing paid yet), with `extra` over it. */
export const recordOf = (key: string, extra: Partial<SubscriptionRecord> = {}): SubscriptionRecord => ({
  key,
  customer: 'clinic-42',
  plan: 'basic-monthly',
  n: 1,
  version: 1,
  state: 'pending',
  createdAt: T0,
  updatedAt: T0,
  sends: 0,
  phone: '255712345678',
  termsShown: 'TZS 10,000 a month, charged to your phone until you cancel.',
  paid: [],
  failed: [],
  chargedAfterCancel: [],
  ...extra,
});

/** `record`'s next version: the change a swap writes. */
export const next = (record: SubscriptionRecord, change: Partial<SubscriptionRecord> = {}): SubscriptionRecord => ({
  ...record,
  ...change,
  version: record.version + 1,
  updatedAt: record.updatedAt + 1,
});

/** The records whose key starts with `prefix` (a case's tag), after `after`. */
export const listed = async (store: SubscriptionStore, prefix: string, after = prefix) =>
  (await store.list(100, after)).filter((record) => record.key.startsWith(prefix));

export const keys = (records: SubscriptionRecord[]) => records.map((record) => record.key);
