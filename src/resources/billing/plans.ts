import type { APIPromise } from '../../core/api-promise.js';
import type { RequestOptions } from '../../internal/options.js';
import type { Plan, PlanCreateParams } from '../../schemas/billing/plans.js';
import { APIResource } from '../resource.js';

/** Recurring billing plans. */
export class Plans extends APIResource {
  /** Creates a recurring plan (POST /api/v1/billing/plans). Retries reuse one Idempotency-Key. */
  create(params: PlanCreateParams, options?: RequestOptions): APIPromise<Plan> {
    return this._client.post('billing.plans.create', params, options);
  }
}

export * from '../../schemas/billing/plans.js';
