// Every result shape the SDK's types describe, as zod schemas, for the contract check only
// (the drift test against the sandbox's openapi.json; doctor against the live service's).
// The client never enforces them: it reads shown shapes tolerantly and checks only what the
// merchant acts on, and reads provisional ones defensively (docs/spec-gaps.md). So they are
// not in its bundle, and the type assertions tie each to its interface.
// - Shown shapes: as the spec gives them, the fields nobody acts on optional and nullable.
// - Provisional shapes (the spec says "not shown"): the sandbox's answers.
import * as z from 'zod/mini';
import type { Invoice } from '../schemas/billing/invoices.js';
import type { Plan } from '../schemas/billing/plans.js';
import type { Subscription } from '../schemas/billing/subscriptions.js';
import type { Wallet } from '../schemas/balance.js';
import type {
  Payment,
  PaymentPushResult,
  PaymentRecord,
  PaymentSession,
  PaymentSessionInfo,
  UnsettledTransaction,
  VerifiedTransaction,
} from '../schemas/payments.js';
import type { Payout, PayoutPreview } from '../schemas/payouts.js';
import type { SiteInfo } from '../resources/site-info.js';
import { custom, maybe, open, openEnum, optional, recordTimes, type Assert, type Ties } from '../internal/fields.js';

const PAYMENT_STATUSES = ['pending', 'success', 'failed'] as const;
const ENVIRONMENTS = ['sandbox', 'production'] as const;
const PAYMENT_MODES = ['hosted', 'push'] as const;
const str = maybe(z.string());
const num = maybe(z.number());
const flag = maybe(z.boolean());

/** The creation response's `data` (shown). */
export const paymentShape = open({
  trx_id: z.string(),
  merchant_ref: str,
  amount: z.number(),
  currency: z.string(),
  status: openEnum(PAYMENT_STATUSES),
  checkout_url: str,
  expires_at: str,
  environment: maybe(openEnum(ENVIRONMENTS)),
});
type _Payment = Assert<Ties<typeof paymentShape, Payment>>;

const sessionInfoShape = open({
  ref_trx: str,
  description: str,
  ipn_url: str,
  cancel_redirect: str,
  success_redirect: str,
  customer_name: str,
  customer_email: str,
  merchant_id: maybe(z.int()),
  merchant_name: str,
  amount: num,
  currency_code: str,
  environment: maybe(openEnum(ENVIRONMENTS)),
  is_sandbox: flag,
  allow_payment_methods: maybe(z.array(z.string())),
  merchant_payment_methods_restricted: flag,
  merchant_payment_method_ids: maybe(z.array(custom<number | string>(() => true, '', { type: ['integer', 'string'] }))),
  merchant_payment_method_codes: maybe(z.array(z.string())),
});
type _PaymentSessionInfo = Assert<Ties<typeof sessionInfoShape, PaymentSessionInfo>>;

/** The legacy creation response (shown). */
export const paymentSessionShape = open({
  payment_url: z.string(),
  info: maybe(sessionInfoShape),
  data: maybe(open({ trx_id: str, checkout_url: str })),
});
type _PaymentSession = Assert<Ties<typeof paymentSessionShape, PaymentSession>>;

/** The verify response (shown): `amount` and `currency` only once it succeeded (the earlier generation). */
export const verifiedShape = open({
  status: openEnum(PAYMENT_STATUSES),
  trx_id: z.string(),
  amount: z.optional(z.number()),
  fee: num,
  currency: z.optional(z.string()),
  net_amount: num,
  customer: maybe(open({ name: str, email: str })),
  description: str,
  created_at: str,
  updated_at: str,
});
// One object type for both states: what the union's members hold together, less `message`,
// which only the earlier generation sends (and it serves no openapi.json to compare with).
type _VerifiedTransaction = Assert<
  Ties<typeof verifiedShape, Omit<UnsettledTransaction, 'status' | 'message'> & { status: VerifiedTransaction['status'] }>
>;

/** Site info (shown). */
export const siteInfoShape = open({
  site_name: str,
  site_logo: str,
  site_url: str,
  gateway_name: str,
  gateway_description: str,
  features: maybe(open({ ssl_secured: str, instant_processing: str, global_support: str, mobile_ready: str })),
  environments: maybe(open({ production: str, sandbox: str })),
  api_version: str,
  status: str,
});
type _SiteInfo = Assert<Ties<typeof siteInfoShape, SiteInfo>>;

/** The payout fee preview (shown). */
export const payoutPreviewShape = open({ amount: num, fee: z.number(), payable_amount: z.number(), currency: str });
type _PayoutPreview = Assert<Ties<typeof payoutPreviewShape, PayoutPreview>>;

/** A payment of the list and retrieve routes. */
export const paymentRecordShape = open({
  trx_id: z.string(),
  merchant_ref: maybe(z.string()),
  amount: z.number(),
  fee: optional(z.number()),
  net_amount: optional(z.number()),
  currency: z.string(),
  status: openEnum(PAYMENT_STATUSES),
  payment_mode: optional(openEnum(PAYMENT_MODES)),
  environment: optional(openEnum(ENVIRONMENTS)),
  description: maybe(z.string()),
  customer: optional(open({ name: maybe(z.string()), email: maybe(z.string()), phone: maybe(z.string()) })),
  gateway: maybe(z.string()),
  checkout_url: maybe(z.string()),
  expires_at: maybe(z.string()),
  failure_reason: maybe(z.string()),
  created_at: optional(z.string()),
  updated_at: optional(z.string()),
});
type _PaymentRecord = Assert<Ties<typeof paymentRecordShape, PaymentRecord>>;

/** The push result. */
export const pushResultShape = open({
  trx_id: optional(z.string()),
  status: optional(openEnum(PAYMENT_STATUSES)),
  customer_phone: optional(z.string()),
  push_count: optional(z.number()),
});
type _PaymentPushResult = Assert<Ties<typeof pushResultShape, PaymentPushResult>>;

/** A payout record. */
export const payoutShape = open({
  id: z.string(),
  amount: z.number(),
  fee: optional(z.number()),
  payable_amount: optional(z.number()),
  currency: optional(z.string()),
  destination: maybe(z.string()),
  status: openEnum(['SUCCESS', 'INPROGRESS', 'AMBIGUOUS', 'FAILED']),
  ...recordTimes,
});
type _Payout = Assert<Ties<typeof payoutShape, Payout>>;

/** One wallet of the balance. */
export const walletShape = open({ currency: z.string(), balance: z.number() });
type _Wallet = Assert<Ties<typeof walletShape, Wallet>>;

/** A billing plan. */
export const planShape = open({
  plan_code: z.string(),
  name: optional(z.string()),
  description: maybe(z.string()),
  amount: z.number(),
  currency: z.string(),
  interval: openEnum(['day', 'week', 'month', 'year']),
  interval_count: optional(z.number()),
  status: optional(z.string()),
  environment: optional(openEnum(ENVIRONMENTS)),
  created_at: optional(z.string()),
});
// The plan's interval is wider in the type (`(string & {})`): the shape must fit the type.
type _PlanFits = Assert<z.output<typeof planShape> extends Plan ? true : false>;

/** A subscription. */
export const subscriptionShape = open({
  id: z.string(),
  plan_code: z.string(),
  status: openEnum(['pending', 'active', 'past_due', 'suspended']),
  customer_phone: optional(z.string()),
  webhook_url: maybe(z.string()),
  consent: optional(open({ terms_shown: z.string(), accepted_at: z.string(), ip_address: optional(z.string()) })),
  amount: optional(z.number()),
  currency: optional(z.string()),
  current_period_start: maybe(z.string()),
  current_period_end: maybe(z.string()),
  latest_invoice: maybe(z.string()),
  ...recordTimes,
});
type _Subscription = Assert<Ties<typeof subscriptionShape, Subscription>>;

/** An invoice. */
export const invoiceShape = open({
  id: z.string(),
  subscription: z.string(),
  status: openEnum(['open', 'paid', 'uncollectible']),
  amount: z.number(),
  currency: z.string(),
  plan_code: optional(z.string()),
  fee: optional(z.number()),
  net_amount: optional(z.number()),
  attempt_count: optional(z.number()),
  next_attempt_at: maybe(z.string()),
  failure_reason: maybe(z.string()),
  period_start: optional(z.string()),
  period_end: optional(z.string()),
  paid_at: maybe(z.string()),
  ...recordTimes,
});
type _Invoice = Assert<Ties<typeof invoiceShape, Invoice>>;
