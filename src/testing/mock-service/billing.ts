// Recurring billing: plans, subscriptions created with recorded consent, invoices. Every
// charge is a simulated USSD push to the subscription's phone (outcome by the test phone
// numbers). A failed charge is retried 1 and 2 days after the previous failure (× timeScale);
// after the third failure the invoice is uncollectible and the subscription suspended.
// A paid invoice opens the next one at the end of its period.
import type { ApiRequest, Ctx, Environment } from './context.js';
import { FEES, TIMING } from './defaults.js';
import { pushOutcome } from './push.js';
import type { MockMerchant } from './types.js';
import { prefixedId } from './ids.js';
import { errorResponse, json, validationFailed } from './responses.js';
import { isOwn, isoUtc, newestPage, round2, withoutMerchant } from './util.js';
import { digits, FieldErrors, optionalString, pageParams, present, readAmount, readUrl, requiredString, TZ_MOBILE } from './validation.js';

const INTERVAL_MS = { day: 86_400_000, week: 7 * 86_400_000, month: 30 * 86_400_000, year: 365 * 86_400_000 } as const;
type Interval = keyof typeof INTERVAL_MS;
/** Charge attempts per invoice (the first and two dunning retries). */
const MAX_CHARGE_ATTEMPTS = TIMING.dunningRetryMs.length + 1;

interface PlanRow {
  plan_code: string;
  merchant_id: number;
  environment: Environment;
  name: string;
  description: string | null;
  amount: number;
  currency: string;
  interval: Interval;
  interval_count: number;
  status: 'active';
  created_at: string;
}

interface SubscriptionRow {
  id: string;
  merchant_id: number;
  environment: Environment;
  plan_code: string;
  /** pending (until the first invoice is paid), active, past_due (a charge failed), suspended. */
  status: 'pending' | 'active' | 'past_due' | 'suspended';
  customer_phone: string;
  webhook_url: string | null;
  consent: { terms_shown: string; accepted_at: string; ip_address: string };
  amount: number;
  currency: string;
  current_period_start: string | null;
  current_period_end: string | null;
  latest_invoice: string | null;
  created_at: string;
  updated_at: string;
}

interface InvoiceRow {
  id: string;
  merchant_id: number;
  environment: Environment;
  subscription: string;
  plan_code: string;
  amount: number;
  currency: string;
  fee: number;
  net_amount: number;
  /** open (awaiting a charge), paid, uncollectible (dunning exhausted). */
  status: 'open' | 'paid' | 'uncollectible';
  attempt_count: number;
  next_attempt_at: string | null;
  failure_reason: string | null;
  period_start: string;
  period_end: string;
  paid_at: string | null;
  created_at: string;
  updated_at: string;
}

const PLAN_CODE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** POST /api/v1/billing/plans */
export function createPlan(ctx: Ctx, req: ApiRequest): Response {
  const { caller } = req;
  const plan = readPlan(ctx, req.body);
  if (plan instanceof Response) return plan;
  const wallet = caller.merchant.currencies[plan.currency];
  if (!wallet) {
    return errorResponse(
      422,
      'Currency is not enabled for this merchant',
      `${plan.currency} is not in this merchant's supported currencies.`,
    );
  }
  if (!wallet.wallet) {
    return errorResponse(422, 'Receiver wallet for this currency is not available', `The merchant has no active ${plan.currency} wallet.`);
  }
  const row: PlanRow = {
    plan_code: plan.code,
    merchant_id: caller.merchant.id,
    environment: caller.environment,
    name: plan.name,
    description: plan.description,
    amount: plan.amount,
    currency: plan.currency,
    interval: plan.interval,
    interval_count: plan.count,
    status: 'active',
    created_at: isoUtc(ctx.now()),
  };
  ctx.state.plans.set(row.plan_code, row as unknown as Record<string, unknown>);
  return json(200, { status: 'success', data: withoutMerchant(row) });
}

/** A plan request's fields, validated (every failing field at once: a 422). */
function readPlan(ctx: Ctx, body: Record<string, unknown>) {
  const errors = new FieldErrors();
  const name = requiredString(body, 'name', errors, 100);
  const amount = readAmount(body, 'amount', errors);
  const currency = present(body.currency) ? body.currency : 'TZS';
  if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency))
    errors.add('currency', 'The currency must be a 3-letter upper-case code, e.g. TZS.');
  const interval = present(body.interval) ? body.interval : 'month';
  if (typeof interval !== 'string' || !(interval in INTERVAL_MS))
    errors.add('interval', 'The selected interval is invalid (day, week, month or year).');
  const count = present(body.interval_count) ? body.interval_count : 1;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > 366) {
    errors.add('interval_count', 'The interval count must be an integer between 1 and 366.');
  }
  const code = readPlanCode(ctx, body.plan_code, errors);
  const description = optionalString(body, 'description', errors);
  if (errors.has()) return validationFailed(errors.map);
  return {
    code,
    name: name!,
    description,
    amount: amount!,
    currency: currency as string,
    interval: interval as Interval,
    count: count as number,
  };
}

/** The given plan_code when it is well-formed and free, else a new one. */
function readPlanCode(ctx: Ctx, code: unknown, errors: FieldErrors): string {
  if (!present(code)) return prefixedId('plan', 12);
  if (typeof code !== 'string' || !PLAN_CODE.test(code)) {
    errors.add('plan_code', 'The plan code may only hold letters, digits, _, - and . (at most 64 characters).');
  } else if (ctx.state.plans.has(code)) {
    errors.add('plan_code', 'The plan code has already been taken.');
  }
  return code as string;
}

/** POST /api/v1/billing/subscriptions */
export function createSubscription(ctx: Ctx, req: ApiRequest): Response {
  const { body, caller } = req;
  const errors = new FieldErrors();

  let plan: PlanRow | undefined;
  const code = requiredString(body, 'plan_code', errors);
  if (code !== null) {
    plan = ctx.state.plans.get(code) as PlanRow | undefined;
    if (!plan || !isOwn(caller, plan)) {
      plan = undefined;
      errors.add('plan_code', 'The selected plan code is invalid.');
    }
  }

  const phone = body.customer_phone;
  if (!present(phone)) errors.add('customer_phone', 'The customer phone field is required.');
  else if (typeof phone !== 'string' || !TZ_MOBILE.test(phone)) {
    errors.add('customer_phone', 'The customer phone must be a Tanzanian mobile number in international form, e.g. 255621234567.');
  }

  const terms = body.terms_shown;
  if (!present(terms)) errors.add('terms_shown', 'The terms shown field is required.');
  else if (typeof terms !== 'string' || terms.trim() === '')
    errors.add('terms_shown', 'The terms shown must be the exact recurring billing terms shown to the customer.');

  const webhookUrl = readUrl(body, 'webhook_url', errors, { required: false, https: caller.environment === 'production' });

  if (errors.has()) return validationFailed(errors.map);

  const now = ctx.now();
  const sub: SubscriptionRow = {
    id: prefixedId('sub', 16),
    merchant_id: caller.merchant.id,
    environment: caller.environment,
    plan_code: plan!.plan_code,
    status: 'pending',
    customer_phone: digits(phone as string),
    webhook_url: webhookUrl,
    // Consent: the terms exactly as given, when and from where.
    consent: { terms_shown: terms as string, accepted_at: isoUtc(now), ip_address: caller.clientIp },
    amount: plan!.amount,
    currency: plan!.currency,
    current_period_start: null,
    current_period_end: null,
    latest_invoice: null,
    created_at: isoUtc(now),
    updated_at: isoUtc(now),
  };
  ctx.state.subscriptions.set(sub.id, sub as unknown as Record<string, unknown>);
  emitBilling(ctx, sub, 'subscription.created', subscriptionView(sub));
  openInvoice(ctx, sub, now);
  return json(200, { status: 'success', data: subscriptionView(sub) });
}

/** GET /api/v1/billing/invoices */
export function listInvoices(ctx: Ctx, req: ApiRequest): Response {
  const errors = new FieldErrors();
  const { limit, offset } = pageParams(req.query, errors);
  const subscription = req.query.get('subscription');
  if (subscription !== null && subscription !== '' && !/^sub_[A-Za-z0-9_-]+$/.test(subscription)) {
    errors.add('subscription', 'The subscription must be a subscription id starting with sub_.');
  }
  if (errors.has()) return validationFailed(errors.map);
  const keep = (r: InvoiceRow) => isOwn(req.caller, r) && (!subscription || r.subscription === subscription);
  return json(200, newestPage(ctx.state.invoices.values() as Iterable<InvoiceRow>, keep, withoutMerchant, limit, offset));
}

function subscriptionView(sub: SubscriptionRow) {
  return withoutMerchant(sub);
}

function merchantOf(ctx: Ctx, id: number): MockMerchant | undefined {
  return ctx.state.merchants.find((m) => m.id === id);
}

function emitBilling(ctx: Ctx, sub: SubscriptionRow, type: string, data: Record<string, unknown>): void {
  const merchant = merchantOf(ctx, sub.merchant_id);
  if (!merchant) return;
  ctx.emit({ merchant, environment: sub.environment, type, url: sub.webhook_url ?? merchant.defaultWebhookUrl, data });
}

function periodMs(ctx: Ctx, sub: SubscriptionRow): number {
  const plan = ctx.state.plans.get(sub.plan_code) as PlanRow | undefined;
  const interval = plan?.interval ?? 'month';
  return ctx.scaled(INTERVAL_MS[interval] * (plan?.interval_count ?? 1));
}

/** Opens an invoice for the period starting at `start`, announces it and charges it. */
function openInvoice(ctx: Ctx, sub: SubscriptionRow, start: number): void {
  const now = ctx.now();
  const invoice: InvoiceRow = {
    id: prefixedId('inv', 16),
    merchant_id: sub.merchant_id,
    environment: sub.environment,
    subscription: sub.id,
    plan_code: sub.plan_code,
    amount: sub.amount,
    currency: sub.currency,
    fee: 0,
    net_amount: 0,
    status: 'open',
    attempt_count: 0,
    next_attempt_at: isoUtc(now),
    failure_reason: null,
    period_start: isoUtc(start),
    period_end: isoUtc(start + periodMs(ctx, sub)),
    paid_at: null,
    created_at: isoUtc(now),
    updated_at: isoUtc(now),
  };
  ctx.state.invoices.set(invoice.id, invoice as unknown as Record<string, unknown>);
  sub.latest_invoice = invoice.id;
  emitBilling(ctx, sub, 'invoice.created', withoutMerchant(invoice));
  charge(ctx, sub.id, invoice.id);
}

/** One charge attempt: a USSD push to the subscription's phone. */
function charge(ctx: Ctx, subId: string, invoiceId: string): void {
  const sub = ctx.state.subscriptions.get(subId) as SubscriptionRow | undefined;
  const invoice = ctx.state.invoices.get(invoiceId) as InvoiceRow | undefined;
  if (!sub || !invoice || invoice.status !== 'open') return;
  invoice.attempt_count += 1;
  invoice.next_attempt_at = null;
  const outcome = pushOutcome(sub.customer_phone);
  ctx.scheduler.after(ctx.scaled(outcome.delayMs), `charge ${invoice.id} attempt ${invoice.attempt_count}`, () => {
    const now = ctx.now();
    invoice.updated_at = isoUtc(now);
    sub.updated_at = isoUtc(now);
    if (outcome.result === 'success') {
      invoice.status = 'paid';
      invoice.paid_at = isoUtc(now);
      invoice.failure_reason = null;
      invoice.fee = round2(invoice.amount * FEES.paymentRate);
      invoice.net_amount = round2(invoice.amount - invoice.fee);
      const wallet = merchantOf(ctx, sub.merchant_id)?.currencies[invoice.currency];
      if (wallet) wallet.balance = round2(wallet.balance + invoice.net_amount);
      sub.status = 'active';
      sub.current_period_start = invoice.period_start;
      sub.current_period_end = invoice.period_end;
      emitBilling(ctx, sub, 'invoice.paid', withoutMerchant(invoice));
      const end = Date.parse(invoice.period_end);
      ctx.scheduler.at(end, `renew ${sub.id}`, () => {
        if (sub.status === 'active') openInvoice(ctx, sub, end);
      });
      return;
    }
    invoice.failure_reason = outcome.reason;
    if (invoice.attempt_count < MAX_CHARGE_ATTEMPTS) {
      const retryAt = now + ctx.scaled(TIMING.dunningRetryMs[invoice.attempt_count - 1]!);
      invoice.next_attempt_at = isoUtc(retryAt);
      sub.status = 'past_due';
      emitBilling(ctx, sub, 'invoice.payment_failed', withoutMerchant(invoice));
      ctx.scheduler.at(retryAt, `dunning ${invoice.id}`, () => charge(ctx, sub.id, invoice.id));
      return;
    }
    invoice.status = 'uncollectible';
    sub.status = 'suspended';
    emitBilling(ctx, sub, 'invoice.payment_failed', withoutMerchant(invoice));
    emitBilling(ctx, sub, 'subscription.suspended', subscriptionView(sub));
  });
}
