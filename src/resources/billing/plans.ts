import * as z from 'zod/mini';
import type { APIPromise } from '../../core/api-promise.js';
import { APIResource } from '../../core/resource.js';
import {
  currencyCode,
  enveloped,
  int,
  oneOf,
  maybe,
  open,
  openEnum,
  optional,
  text,
  type Assert,
  type Schema,
  type Ties,
  type TiesInput,
} from '../../internal/fields.js';
import type { RequestOptions } from '../../internal/options.js';

/** Recurring billing plans. */
export class Plans extends APIResource {
  /** Creates a recurring plan (POST /api/v1/billing/plans). Retries reuse one Idempotency-Key. */
  create(params: PlanCreateParams, options?: RequestOptions): APIPromise<Plan> {
    return this._client.request(
      {
        operation: 'billing.plans.create',
        method: 'POST',
        path: '/api/v1/billing/plans',
        params: [PlanCreateParams, params],
        response: Plan,
        retry: 'create',
      },
      options,
    );
  }
}

/** How often a plan bills. */
export type PlanInterval = 'day' | 'week' | 'month' | 'year';
const INTERVALS = ['day', 'week', 'month', 'year'] as const;

// The spec does not show the plan body: these are the rules the service enforces (the
// sandbox's, checked against its openapi.json by the drift test).
/** Params of `billing.plans.create`. */
export interface PlanCreateParams {
  /** Plan name shown to customers, 1–100 characters. */
  name: string;
  /** Amount per period in currency units, at least 1.00. */
  amount: number;
  /** 3-letter upper-case currency code; default `TZS`. */
  currency?: string | undefined;
  /** Billing period unit; default `month`. */
  interval?: PlanInterval | undefined;
  /** Periods between charges, 1–366; default 1. */
  interval_count?: number | undefined;
  /** Your code for the plan (letters, digits, `_`, `-`, `.`; at most 64); generated when absent. */
  plan_code?: string | undefined;
  /** Description of the plan. */
  description?: string | undefined;
}

const createSchema = z.strictObject({
  name: text(100, 1),
  amount: z.number().check(z.minimum(1, 'must be at least 1.00')),
  currency: optional(currencyCode),
  interval: optional(oneOf(INTERVALS, 'must be day, week, month or year')),
  interval_count: optional(int(1, 366)),
  plan_code: optional(
    z
      .string()
      .check(
        z.regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'must be letters, digits, _, - or . (at most 64, starting with a letter or digit)'),
      ),
  ),
  description: optional(z.string()),
});
type _PlanCreateParams = Assert<TiesInput<typeof createSchema, PlanCreateParams>>;
/** Params of `billing.plans.create`. */
export const PlanCreateParams: Schema<PlanCreateParams> = createSchema;

/** A recurring billing plan (the sandbox's shape; the spec names only `plan_code`). */
export interface Plan {
  /** The plan's code: pass it to `subscriptions.create`. */
  plan_code: string;
  /** Plan name. */
  name?: string | undefined;
  /** Description, if any. */
  description?: string | null | undefined;
  /** Amount per period in currency units. */
  amount: number;
  /** 3-letter currency code. */
  currency: string;
  /** Billing period unit. */
  interval: PlanInterval;
  /** Periods between charges. */
  interval_count?: number | undefined;
  /** `active`. */
  status?: string | undefined;
  /** `sandbox` or `production`. */
  environment?: 'sandbox' | 'production' | undefined;
  /** Creation time (ISO 8601). */
  created_at?: string | undefined;
}

const planSchema = open({
  plan_code: z.string(),
  name: optional(z.string()),
  description: maybe(z.string()),
  amount: z.number(),
  currency: z.string(),
  interval: openEnum(INTERVALS),
  interval_count: optional(z.number()),
  status: optional(z.string()),
  environment: optional(openEnum(['sandbox', 'production'])),
  created_at: optional(z.string()),
});
type _Plan = Assert<Ties<typeof planSchema, Plan>>;
/** A billing plan (bare or in a `{ status, data }` envelope). */
export const Plan: Schema<Plan> = enveloped(planSchema);
