// The params and results of the plan routes: types and schemas.
import * as z from 'zod/mini';
import { unwrap } from '../../internal/envelope.js';
import { amountParam, exactAmounts, optional, provisional, readRecord, type Schema } from '../../internal/fields.js';

/** How often a plan bills: the sandbox's values, as suggestions (a server may take `monthly`). */
export type PlanInterval = 'day' | 'week' | 'month' | 'year';

/**
 * Params of `billing.plans.create`. **Provisional**: the spec does not show the plan body.
 * The fields below are the sandbox's, as suggestions: `interval` takes any string
 * (`'monthly'` too), and fields the SDK does not name (`trial_days`) are sent as written.
 * Only JSON types are checked before sending; the service enforces its own rules.
 */
export interface PlanCreateParams {
  /** Plan name shown to customers (the sandbox: 1–100 characters). */
  name: string;
  /**
   * Amount per period in currency units (the sandbox: at least 1.00): a number or a decimal
   * string, sent exact at the currency's minor-unit digits (`currency`, else 2).
   */
  amount: number | string;
  /** 3-letter upper-case currency code (the sandbox's default: `TZS`). */
  currency?: string | undefined;
  /** Billing period (the sandbox: `day`, `week`, `month` or `year`; default `month`). */
  interval?: PlanInterval | (string & {}) | undefined;
  /** Periods between charges (the sandbox: 1–366; default 1). */
  interval_count?: number | undefined;
  /** Your code for the plan; the sandbox generates one when absent. */
  plan_code?: string | undefined;
  /** Description of the plan. */
  description?: string | undefined;
  /** Fields the SDK does not name, sent as written (`trial_days: 7`). */
  [field: string]: unknown;
}

const createSchema = z.looseObject({
  name: z.string(),
  amount: amountParam(() => true, '', {}),
  currency: optional(z.string()),
  interval: optional(z.string()),
  interval_count: optional(z.number()),
  plan_code: optional(z.string()),
  description: optional(z.string()),
});
/** Params of `billing.plans.create`: JSON types and the amount's digits only (the spec shows no rules). */
export const PlanCreateParams: Schema<PlanCreateParams> = createSchema.check(exactAmounts('amount', 'currency'));

/**
 * A recurring billing plan. **Provisional**: the spec names only `plan_code`; this is the
 * sandbox's shape. Every field a server sends is kept; `plan_code` is filled from `code` /
 * `plan_id` / `id` and `amount` from `price` when the server names them so, and decimal
 * strings are read as numbers.
 */
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
  interval: PlanInterval | (string & {});
  /** Periods between charges. */
  interval_count?: number | undefined;
  /** `active`. */
  status?: string | undefined;
  /** `sandbox` or `production`. */
  environment?: 'sandbox' | 'production' | undefined;
  /** Creation time (ISO 8601). */
  created_at?: string | undefined;
  /** Fields this SDK version does not name, as the server sent them. */
  [field: string]: unknown;
}

/** A billing plan (bare or in any envelope; provisional, see {@link Plan}). */
export const Plan: Schema<Plan> = provisional((body) =>
  readRecord<Plan>(unwrap(body, ['plan']), {
    ids: { plan_code: ['code', 'plan_id', 'id'] },
    aliases: { amount: ['price'] },
    numbers: ['amount', 'price', 'interval_count'],
  }),
);
