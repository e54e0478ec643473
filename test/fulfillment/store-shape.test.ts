// FulfillmentStore is the composition of the per-concern interfaces (claims, the unsettled list,
// attempts, the inbox): for a store's author it is the same type as the one interface it was,
// member for member, optional where it was. Checked by the compiler (`npm run typecheck`).
import { expect, expectTypeOf, test } from 'vitest';
import type {
  AttemptStore,
  ClaimResult,
  ClaimStore,
  FulfillmentStore,
  InboxStore,
  PayoutIntentStore,
  UnsettledStore,
} from '../../src/fulfillment.js';
import type { SubscriptionStore } from '../../src/billing/store.js';
import type { RequestBudget } from '../../src/index.js';

// The interface as it was before the concerns were named.
interface Before<Db = unknown> {
  claim(key: string, leaseMs: number): Promise<ClaimResult<Db>>;
  outcome(key: string): Promise<string | undefined>;
  remember?(key: string): Promise<void>;
  unsettled?(limit: number): Promise<string[]>;
  readonly durable?: boolean;
  attempt?(order: string): Promise<number>;
  readonly inbox?: InboxStore | undefined;
  readonly payouts?: PayoutIntentStore | undefined;
  readonly subscriptions?: SubscriptionStore | undefined;
  // Added with the shared request budget (issue 40): optional, so a store of yours still is one.
  readonly budget?: RequestBudget | undefined;
}

// Identical, not just assignable both ways: the same members, optional and readonly alike.
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const same: Same<FulfillmentStore, Before> & Same<FulfillmentStore<{ db: 1 }>, Before<{ db: 1 }>> = true;

test('FulfillmentStore is the same type it was, made of its concerns', () => {
  expect(same).toBe(true);
  expectTypeOf<FulfillmentStore>().toEqualTypeOf<Before>();
  expectTypeOf<FulfillmentStore>().toMatchTypeOf<ClaimStore & Partial<UnsettledStore> & Partial<AttemptStore>>();
  expectTypeOf<Required<Pick<FulfillmentStore, 'remember' | 'unsettled'>>>().toEqualTypeOf<UnsettledStore>();
  expectTypeOf<Required<Pick<FulfillmentStore, 'attempt'>>>().toEqualTypeOf<AttemptStore>();
  expectTypeOf<Pick<FulfillmentStore, 'claim' | 'outcome'>>().toEqualTypeOf<ClaimStore>();
});
