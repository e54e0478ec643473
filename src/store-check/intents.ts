// What the payout intent cases share: the instances they race, and intents as the kit makes them.
import type { PayoutIntent, PayoutIntentState, PayoutIntentStore } from '../payouts/store.js';

/** What the payout cases are given: `count` instances on the same data (the one instance, without `another`). */
export interface IntentsContext {
  readonly stores: (count: number) => PayoutIntentStore[];
}

export const T0 = 1_700_000_000_000;

export const tag = () => `c${crypto.randomUUID().slice(0, 8)}:`;

/** An intent as the kit records it (version 1, pending), with `extra` over it. */
export const intentOf = (key: string, extra: Partial<PayoutIntent> = {}): PayoutIntent => ({
  key,
  amount: 1500,
  state: 'pending',
  version: 1,
  createdAt: T0,
  updatedAt: T0,
  sends: 0,
  ...extra,
});

/** `intent`'s next version: the change a swap writes. */
export const next = (intent: PayoutIntent, change: Partial<PayoutIntent> = {}): PayoutIntent => ({
  ...intent,
  ...change,
  version: intent.version + 1,
  updatedAt: intent.updatedAt + 1,
});

/** The intents in `state` whose key starts with `prefix` (a case's tag), after `after`. */
export const listed = async (store: PayoutIntentStore, state: PayoutIntentState, prefix: string, after = prefix) =>
  (await store.list(state, 100, after)).filter((intent) => intent.key.startsWith(prefix));
