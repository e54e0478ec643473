import * as z from 'zod';
import type { APIPromise } from '../../core/api-promise.js';
import { APIResource } from '../../core/resource.js';
import { lenientRecord } from '../../internal/fields.js';
import type { RequestOptions } from '../../internal/options.js';

/** Recurring billing plans. */
export class Plans extends APIResource {
  /** Creates a recurring plan (POST /api/v1/billing/plans). Retries reuse one Idempotency-Key. */
  create(params: PlanCreateParams, options?: RequestOptions): APIPromise<Plan> {
    return this._client.request(
      { operation: 'billing.plans.create', method: 'POST', path: '/api/v1/billing/plans', params: [PlanCreateParams, params], response: Plan, retry: 'create' },
      options,
    );
  }
}

// The spec does not show the plan request body: any JSON object is sent as given, with
// plan_code (the one named field) checked when present.
/** Params of `billing.plans.create` (body not shown in the spec: passed through). */
export const PlanCreateParams = z.looseObject({ plan_code: z.string().min(1, 'must not be empty').optional() });
/** Params of `billing.plans.create`. */
export type PlanCreateParams = z.input<typeof PlanCreateParams>;

/** A billing plan (lenient: only plan_code is named by the spec). */
export const Plan = lenientRecord({ plan_code: z.string().optional() });
/** A billing plan. */
export type Plan = z.infer<typeof Plan>;
