// The params and results of the subscription routes: types and schemas.
import * as z from 'zod/mini';
import { unwrap } from '../../internal/envelope.js';
import {
  httpUrl,
  optional,
  normalizedPhones,
  phoneParam,
  text,
  provisional,
  readRecord,
  type Assert,
  type RecordTimes,
  type Schema,
  type TiesInput,
} from '../../internal/fields.js';

/** Params of `billing.subscriptions.create`. */
export interface SubscriptionCreateParams {
  /** The plan to subscribe to (from `plans.create`). */
  plan_code: string;
  /** Tanzanian mobile number that approves each charge, as written (`0712 345 678`), sent as `255712345678`. */
  customer_phone: string;
  /** The exact recurring billing terms shown to the customer (recorded as consent). */
  terms_shown: string;
  /** Override of your webhook endpoint for subscription and invoice events. */
  webhook_url?: string | undefined;
}

const createSchema = z.strictObject({
  plan_code: text(64, 1),
  // The spec: "Tanzanian mobile number for the USSD push", whatever the client's phoneCountry.
  customer_phone: phoneParam('TZ'),
  // Checked, never rewritten: the consent record must hold the terms exactly as shown.
  terms_shown: z.string().check(z.refine((terms) => terms.trim().length > 0, 'must be the exact terms shown to the customer')),
  webhook_url: optional(httpUrl),
});
type _SubscriptionCreateParams = Assert<TiesInput<typeof createSchema, SubscriptionCreateParams>>;
/** Params of `billing.subscriptions.create`. */
export const SubscriptionCreateParams: Schema<SubscriptionCreateParams> = createSchema.check(normalizedPhones({ customer_phone: 'TZ' }));

/** Subscription state: `pending` until the first invoice is paid, then `active`; `past_due` after a failed charge; `suspended`. */
export type SubscriptionStatus = 'pending' | 'active' | 'past_due' | 'suspended';

/**
 * A subscription. **Provisional**: the spec shows no body; this is the sandbox's shape.
 * Every field a server sends is kept, `id` is filled from `subscription_id` when the server
 * names it so, and decimal strings are read as numbers.
 */
export interface Subscription extends RecordTimes {
  /** Subscription id, `sub_…`. */
  id: string;
  /** The plan subscribed to. */
  plan_code: string;
  /** `pending`, `active`, `past_due` or `suspended`. */
  status: SubscriptionStatus;
  /** The number each charge is pushed to. */
  customer_phone?: string | undefined;
  /** Webhook override, if any. */
  webhook_url?: string | null | undefined;
  /** The consent record: the terms as shown, when and from where they were accepted. */
  consent?: { terms_shown: string; accepted_at: string; ip_address?: string | undefined } | undefined;
  /** Amount per period in currency units. */
  amount?: number | undefined;
  /** 3-letter currency code. */
  currency?: string | undefined;
  /** Start of the current period (ISO 8601), once paid. */
  current_period_start?: string | null | undefined;
  /** End of the current period (ISO 8601), once paid. */
  current_period_end?: string | null | undefined;
  /** Id of the latest invoice, if any. */
  latest_invoice?: string | null | undefined;
  /** Fields this SDK version does not name, as the server sent them. */
  [field: string]: unknown;
}

/** A subscription (bare or in any envelope; provisional, see {@link Subscription}). */
export const Subscription: Schema<Subscription> = provisional((body) =>
  readRecord<Subscription>(unwrap(body, ['subscription']), { ids: { id: ['subscription_id'] }, numbers: ['amount'] }),
);
