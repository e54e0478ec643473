import type { APIPromise } from '../../core/api-promise.js';
import type { RequestOptions } from '../../internal/options.js';
import type { Subscription, SubscriptionCreateParams } from '../../schemas/billing/subscriptions.js';
import { APIResource } from '../resource.js';

/** Subscriptions, created with the customer's recorded consent. */
export class Subscriptions extends APIResource {
  /**
   * Records consent and sends the first USSD push (POST /api/v1/billing/subscriptions).
   * Retries reuse one Idempotency-Key.
   */
  create(params: SubscriptionCreateParams, options?: RequestOptions): APIPromise<Subscription> {
    return this._client.post('billing.subscriptions.create', params, options);
  }
}

export * from '../../schemas/billing/subscriptions.js';
