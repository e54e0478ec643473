import * as z from 'zod';
import type { APIPromise } from '../../core/api-promise.js';
import { APIResource } from '../../core/resource.js';
import { httpUrl, lenientRecord, tanzanianMobileNumber } from '../../internal/fields.js';
import type { RequestOptions } from '../../internal/options.js';

/** Subscriptions, created with the customer's recorded consent. */
export class Subscriptions extends APIResource {
  /**
   * Records consent and sends the first USSD push (POST /api/v1/billing/subscriptions).
   * Retries reuse one Idempotency-Key.
   */
  create(params: SubscriptionCreateParams, options?: RequestOptions): APIPromise<Subscription> {
    return this._client.request(
      { operation: 'billing.subscriptions.create', method: 'POST', path: '/api/v1/billing/subscriptions', params: [SubscriptionCreateParams, params], httpsInProduction: ['webhook_url'], response: Subscription, retry: 'create' },
      options,
    );
  }
}

/** Params of `billing.subscriptions.create`. */
export const SubscriptionCreateParams = z.strictObject({
  plan_code: z.string().min(1, 'must not be empty'),
  customer_phone: tanzanianMobileNumber,
  /** The exact recurring billing terms shown to the customer. */
  // Checked, never rewritten: the consent record must hold the terms exactly as shown.
  terms_shown: z.string().refine((terms) => terms.trim().length > 0, 'must be the exact terms shown to the customer'),
  webhook_url: httpUrl.optional(),
});
/** Params of `billing.subscriptions.create`. */
export type SubscriptionCreateParams = z.input<typeof SubscriptionCreateParams>;

/** A subscription (lenient: fields not shown in the spec; ids carry the prefix sub_). */
export const Subscription = lenientRecord({ id: z.string().optional(), plan_code: z.string().optional(), status: z.string().optional() });
/** A subscription. */
export type Subscription = z.infer<typeof Subscription>;
