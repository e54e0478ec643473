// Payments: create (POST /payments and the legacy /initiate-payment), list, get, push,
// verify; the runtime decision order; settlement and its webhooks.
import type { ApiRequest, Caller, Ctx, Environment } from './context.js';
import { FEES, TIMING } from './defaults.js';
import { hmacHex } from './hmac.js';
import { pushOutcome } from './push.js';
import type { MockGateway, MockMerchant } from './types.js';
import { trxId as newTrxId } from './ids.js';
import { errorResponse, json, validationFailed } from './responses.js';
import { isOwn, isoUtc, newestPage, sharedList, round2 } from './util.js';
import { digits, FieldErrors, MOBILE, optionalString, pageParams, present, readAmount, readUrl, requiredString } from './validation.js';

/** A payment as the service keeps it (the values of `state.payments`). */
export interface PaymentRow {
  trx_id: string;
  merchant_id: number;
  environment: Environment;
  merchant_ref: string;
  amount: number;
  currency: string;
  status: 'pending' | 'success' | 'failed';
  payment_mode: 'hosted' | 'push';
  description: string | null;
  customer: { name: string | null; email: string | null; phone: string | null };
  /** Webhook target: ipn_url, webhook_url or the merchant's default URL at creation. */
  ipn_url: string | null;
  success_redirect: string;
  cancel_redirect: string;
  /** The request's allow_payment_methods filter, as a list. */
  allow_payment_methods: string[];
  merchant_payment_methods_restricted: boolean;
  /** Gateways eligible for the currency before the request's filter (decision step 5). */
  merchant_payment_method_ids: number[];
  /** Codes left after allow_payment_methods (step 6): what hosted checkout offers. */
  merchant_payment_method_codes: string[];
  /** Gateway code that settled the payment. */
  gateway: string | null;
  fee: number;
  net_amount: number;
  /** Signed, time-limited hosted checkout link. */
  payment_url: string;
  /** The checkout link in hosted mode, null for a push payment created on /payments. */
  checkout_url: string | null;
  expires_at: string;
  failure_reason: string | null;
  failure_message: string | null;
  push_count: number;
  created_at: string;
  updated_at: string;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const BAD_PHONE = 'The customer phone must be a mobile number in international digits form, e.g. 255621234567.';

/** The request's allow_payment_methods as a list of keywords (errors go to `errors`). */
function readAllowList(value: unknown, errors: FieldErrors): string[] {
  if (!present(value)) return [];
  if (typeof value === 'string')
    return value
      .split(',')
      .map((k) => k.trim())
      .filter(Boolean);
  if (Array.isArray(value)) {
    const out: string[] = [];
    value.forEach((item, i) => {
      if (typeof item !== 'string' || item.trim() === '')
        errors.add(`allow_payment_methods.${i}`, `The allow payment methods.${i} must be a non-empty string.`);
      else out.push(item.trim());
    });
    return out;
  }
  errors.add('allow_payment_methods', 'The allow payment methods must be a comma-separated string or an array of strings.');
  return [];
}

/** A given customer_phone: its digits, or null (and its error) when it is not a mobile number. */
function givenPhone(value: unknown, errors: FieldErrors): string | null {
  if (typeof value === 'string' && MOBILE.test(value)) return digits(value);
  errors.add('customer_phone', BAD_PHONE);
  return null;
}

/** What a create's validation depends on: the merchant's default webhook URL, production's https, the route. */
interface CreateRules {
  merchant: MockMerchant;
  production: boolean;
  legacy: boolean;
}

/** A create request's fields, validated. */
interface PaymentInput {
  amount: number;
  currency: string;
  ref: string;
  successRedirect: string | null;
  cancelRedirect: string | null;
  /** ipn_url, webhook_url or the merchant's default URL. */
  webhook: string | null;
  description: string | null;
  customerName: string | null;
  customerEmail: string | null;
  mode: 'hosted' | 'push';
  phone: string | null;
  allow: string[];
}

/** Validation: every failing field at once (a 422), in the order the fields are read. */
function readPaymentInput(body: Record<string, unknown>, rules: CreateRules): PaymentInput | Response {
  const { legacy } = rules;
  const errors = new FieldErrors();
  const amount = readAmount(body, 'payment_amount', errors);
  const currency = body.currency_code;
  if (!present(currency)) errors.add('currency_code', 'The currency code field is required.');
  else if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) {
    errors.add('currency_code', 'The currency code must be a 3-letter upper-case code, e.g. USD.');
  }
  const ref = requiredString(body, 'ref_trx', errors, 60);
  const successRedirect = readUrl(body, 'success_redirect', errors, { required: legacy, https: false });
  const cancelRedirect = readUrl(body, 'cancel_redirect', errors, { required: legacy, https: false });
  const webhook = readWebhook(body, rules, errors);
  const description = optionalString(body, 'description', errors);
  const customerName = optionalString(body, 'customer_name', errors, 100);
  const customerEmail = optionalString(body, 'customer_email', errors, 100);
  if (customerEmail !== null && !EMAIL.test(customerEmail)) {
    errors.add('customer_email', 'The customer email must be a valid email address.');
  }
  const mode = readMode(body, errors);
  const phone = present(body.customer_phone) ? givenPhone(body.customer_phone, errors) : null;
  if (!present(body.customer_phone) && mode === 'push') {
    errors.add('customer_phone', 'The customer phone field is required when payment mode is push.');
  }
  const allow = readAllowList(body.allow_payment_methods, errors);
  if (errors.has()) return validationFailed(errors.map);
  const fields = { successRedirect, cancelRedirect, webhook, description, customerName, customerEmail, mode, phone, allow };
  return { amount: amount!, currency: currency as string, ref: ref!, ...fields };
}

/** ipn_url (required on the legacy route), or its synonym webhook_url, or the merchant's default. */
function readWebhook(body: Record<string, unknown>, { merchant, production, legacy }: CreateRules, errors: FieldErrors): string | null {
  const ipnUrl = readUrl(body, 'ipn_url', errors, { required: legacy, https: production });
  if (legacy) return ipnUrl ?? merchant.defaultWebhookUrl;
  const webhookUrl = readUrl(body, 'webhook_url', errors, { required: false, https: production });
  if (ipnUrl && webhookUrl && ipnUrl !== webhookUrl) {
    errors.add('webhook_url', 'The webhook url is a synonym of ipn url: give one of them, or the same URL in both.');
  }
  if (!present(body.ipn_url) && !present(body.webhook_url) && !merchant.defaultWebhookUrl) {
    errors.add('ipn_url', 'The ipn url field is required when no default webhook URL is set on API Config.');
  }
  return ipnUrl ?? webhookUrl ?? merchant.defaultWebhookUrl;
}

function readMode(body: Record<string, unknown>, errors: FieldErrors): 'hosted' | 'push' {
  if (!present(body.payment_mode)) return 'hosted';
  if (body.payment_mode === 'hosted' || body.payment_mode === 'push') return body.payment_mode;
  errors.add('payment_mode', 'The selected payment mode is invalid (hosted or push).');
  return 'hosted';
}

/** Gateways eligible for `currency` (decision step 5). */
export function eligibleGateways(
  merchant: MockMerchant,
  gateways: MockGateway[],
  currency: string,
): { restricted: boolean; list: MockGateway[] } {
  const restricted = merchant.selectedGatewayIds.length > 0;
  const list = gateways.filter((g) => g.active && g.currency === currency && (!restricted || merchant.selectedGatewayIds.includes(g.id)));
  return { restricted, list };
}

/** allow_payment_methods: case-insensitive keyword in the gateway's name or code (step 6). */
export function narrowGateways(list: MockGateway[], keywords: string[]): MockGateway[] {
  if (keywords.length === 0) return list;
  const lower = keywords.map((k) => k.toLowerCase());
  return list.filter((g) => lower.some((k) => g.code.toLowerCase().includes(k) || g.name.toLowerCase().includes(k)));
}

/** The signed, time-limited hosted checkout link of a payment. */
async function checkoutLink(ctx: Ctx, base: string, trx: string, expiresMs: number): Promise<string> {
  const expires = Math.floor(expiresMs / 1000);
  const signature = await hmacHex(ctx.checkoutKey, `${trx}.${expires}`);
  return `${base}/checkout/${encodeURIComponent(trx)}?expires=${expires}&signature=${signature}`;
}

/** Where a ref_trx is unique: one merchant and environment. */
const referenceKey = (merchantId: number, environment: Environment, ref: string): string => `${merchantId} ${environment} ${ref}`;

// The index only points: the payment row decides (it may have been trimmed from the bounded
// store, or edited in mock.state, since), so a forgotten payment frees its reference.
function referenceTaken(ctx: Ctx, merchantId: number, environment: Environment, ref: string): boolean {
  const trx = ctx.references.get(referenceKey(merchantId, environment, ref));
  const row = trx === undefined ? undefined : (ctx.state.payments.get(trx) as PaymentRow | undefined);
  return row?.merchant_id === merchantId && row.environment === environment && row.merchant_ref === ref;
}

/** 409: the spec's DUPLICATE_REFERENCE, with the field it is about. */
const duplicateReference = (): Response =>
  errorResponse(409, 'DUPLICATE_REFERENCE', 'Transaction reference already exists', {
    errors: { ref_trx: ['Transaction reference already exists'] },
  });

/** POST /api/v1/payments */
export const createPayment = (ctx: Ctx, req: ApiRequest): Promise<Response> => create(ctx, req, false);
/** POST /api/v1/initiate-payment: the legacy create (redirects and ipn_url required, the session shape). */
export const initiatePayment = (ctx: Ctx, req: ApiRequest): Promise<Response> => create(ctx, req, true);

async function create(ctx: Ctx, req: ApiRequest, legacy: boolean): Promise<Response> {
  const { merchant, environment } = req.caller;
  const input = readPaymentInput(req.body, { merchant, production: environment === 'production', legacy });
  if (input instanceof Response) return input;
  // ref_trx is unique per merchant and environment (a replay with the same Idempotency-Key
  // never gets here: the idempotency layer answers it first).
  if (referenceTaken(ctx, merchant.id, environment, input.ref)) return duplicateReference();
  const gateways = decideGateways(ctx, merchant, input.currency, input.allow);
  if (gateways instanceof Response) return gateways;
  const row = await newPayment(ctx, req.caller, input, gateways, legacy);
  // Checked again after the await above: a concurrent create may have taken the reference.
  if (referenceTaken(ctx, merchant.id, environment, row.merchant_ref)) return duplicateReference();
  ctx.state.payments.set(row.trx_id, row as unknown as Record<string, unknown>);
  // Deleted first so the entry moves to the end: the index is trimmed oldest first, as payments are.
  const refKey = referenceKey(merchant.id, environment, row.merchant_ref);
  ctx.references.delete(refKey);
  ctx.references.set(refKey, row.trx_id);
  if (input.mode === 'push') startPush(ctx, row, input.phone!);
  return json(200, legacy ? sessionView(row, merchant) : createdView(row));
}

/** The gateways of a payment by the runtime decision order (authentication and availability passed). */
interface Gateways {
  restricted: boolean;
  eligible: MockGateway[];
  offered: MockGateway[];
}

/** The runtime decision order after validation: currency, wallet, eligible gateways, allow_payment_methods. */
function decideGateways(ctx: Ctx, merchant: MockMerchant, currency: string, allow: string[]): Gateways | Response {
  const wallet = merchant.currencies[currency];
  if (!wallet) {
    const supported = Object.keys(merchant.currencies).join(', ') || 'none';
    return errorResponse(
      422,
      'Currency is not enabled for this merchant',
      `${currency} is not in this merchant's supported currencies (${supported}).`,
    );
  }
  if (!wallet.wallet) {
    return errorResponse(
      422,
      'Receiver wallet for this currency is not available',
      `The merchant has no active ${currency} wallet to receive this payment.`,
    );
  }
  const { restricted, list: eligible } = eligibleGateways(merchant, ctx.state.gateways, currency);
  if (eligible.length === 0) {
    return errorResponse(
      422,
      'No payment method available',
      restricted ? `None of the gateways selected on API Config serves ${currency}.` : `No active gateway serves ${currency}.`,
    );
  }
  const offered = narrowGateways(eligible, allow);
  if (offered.length === 0) {
    return errorResponse(
      422,
      'No payment method matches allow_payment_methods',
      `allow_payment_methods (${allow.join(', ')}) matches none of the ${currency} gateways this merchant can offer (${eligible.map((g) => g.code).join(', ')}).`,
    );
  }
  return { restricted, eligible, offered };
}

/** The new pending payment, with its signed checkout link. */
async function newPayment(ctx: Ctx, caller: Caller, input: PaymentInput, gateways: Gateways, legacy: boolean): Promise<PaymentRow> {
  const { merchant, environment } = caller;
  const now = ctx.now();
  const trx = newTrxId();
  const expiresMs = now + TIMING.checkoutLifetimeMs;
  const link = await checkoutLink(ctx, caller.base, trx, expiresMs);
  const createdAt = isoUtc(now);
  return {
    trx_id: trx,
    merchant_id: merchant.id,
    environment,
    merchant_ref: input.ref,
    amount: input.amount,
    currency: input.currency,
    status: 'pending',
    payment_mode: input.mode,
    description: input.description,
    customer: { name: input.customerName, email: input.customerEmail, phone: input.phone },
    ipn_url: input.webhook,
    success_redirect: input.successRedirect ?? merchant.siteUrl,
    cancel_redirect: input.cancelRedirect ?? merchant.siteUrl,
    // Shared with other rows of the same lists (read-only), and one string for both times.
    allow_payment_methods: sharedList(input.allow),
    merchant_payment_methods_restricted: gateways.restricted,
    merchant_payment_method_ids: sharedList(gateways.eligible.map((g) => g.id)),
    merchant_payment_method_codes: sharedList(gateways.offered.map((g) => g.code)),
    gateway: null,
    fee: 0,
    net_amount: 0,
    payment_url: link,
    checkout_url: input.mode === 'hosted' || legacy ? link : null,
    expires_at: isoUtc(expiresMs),
    failure_reason: null,
    failure_message: null,
    push_count: 0,
    created_at: createdAt,
    updated_at: createdAt,
  };
}

/** What a payment session's `info` says of the merchant and the payment (both generations). */
export function sessionFacts(row: PaymentRow, merchant: MockMerchant, amount: unknown) {
  return {
    merchant_id: merchant.id,
    merchant_name: merchant.name,
    amount,
    currency_code: row.currency,
    environment: row.environment,
    is_sandbox: row.environment === 'sandbox',
    allow_payment_methods: row.allow_payment_methods,
    merchant_payment_methods_restricted: row.merchant_payment_methods_restricted,
    merchant_payment_method_ids: row.merchant_payment_method_ids,
    merchant_payment_method_codes: row.merchant_payment_method_codes,
  };
}

/** The answer of POST /initiate-payment: the spec's payment session. */
function sessionView(row: PaymentRow, merchant: MockMerchant) {
  return {
    payment_url: row.payment_url,
    info: {
      ref_trx: row.merchant_ref,
      description: row.description,
      ipn_url: row.ipn_url,
      cancel_redirect: row.cancel_redirect,
      success_redirect: row.success_redirect,
      customer_name: row.customer.name,
      customer_email: row.customer.email,
      ...sessionFacts(row, merchant, row.amount),
    },
    data: { trx_id: row.trx_id, checkout_url: row.checkout_url },
  };
}

/** The answer of POST /payments. */
function createdView(row: PaymentRow) {
  return {
    status: 'success',
    trx_id: row.trx_id,
    payment_url: row.checkout_url,
    data: {
      trx_id: row.trx_id,
      merchant_ref: row.merchant_ref,
      amount: row.amount,
      currency: row.currency,
      status: 'pending',
      checkout_url: row.checkout_url,
      expires_at: row.expires_at,
      environment: row.environment,
    },
  };
}

/** Rings the customer's phone; the outcome lands after the simulated answer time. */
function startPush(ctx: Ctx, row: PaymentRow, phone: string): void {
  row.push_count += 1;
  const outcome = pushOutcome(phone);
  ctx.scheduler.after(ctx.scaled(outcome.delayMs), `push ${row.trx_id}`, () => {
    settlePayment(ctx, row.trx_id, outcome.result, { reason: outcome.reason, message: outcome.message });
  });
}

/**
 * Settles a pending payment (success or failed), credits the wallet on success and queues
 * payment.completed / payment.failed. Returns false when the payment is not pending.
 */
export function settlePayment(
  ctx: Ctx,
  trx: string,
  result: 'success' | 'failed',
  detail: { reason?: string | null; message?: string | null; gateway?: string | null } = {},
): boolean {
  const row = ctx.state.payments.get(trx) as PaymentRow | undefined;
  if (!row || row.status !== 'pending') return false;
  const now = ctx.now();
  row.status = result;
  row.updated_at = isoUtc(now);
  row.gateway = detail.gateway ?? row.merchant_payment_method_codes[0] ?? null;
  const merchant = ctx.state.merchants.find((m) => m.id === row.merchant_id);
  if (result === 'success') {
    row.fee = round2(row.amount * FEES.paymentRate);
    row.net_amount = round2(row.amount - row.fee);
    const wallet = merchant?.currencies[row.currency];
    if (wallet) wallet.balance = round2(wallet.balance + row.net_amount);
  } else {
    row.failure_reason = detail.reason ?? 'FAILED';
    row.failure_message = detail.message ?? 'The payment failed.';
  }
  if (merchant) {
    const money = (value: number) => ({ value, currency: row.currency });
    ctx.emit({
      merchant,
      environment: row.environment,
      type: result === 'success' ? 'payment.completed' : 'payment.failed',
      url: row.ipn_url,
      data: {
        trx_id: row.trx_id,
        merchant_ref: row.merchant_ref,
        status: result === 'success' ? 'completed' : 'failed',
        amount: money(row.amount),
        settlement: { gross: money(row.amount), fees: money(row.fee), net: money(row.net_amount) },
        customer: { name: row.customer.name, email: row.customer.email, phone: row.customer.phone },
        environment: row.environment,
      },
    });
  }
  return true;
}

/** A payment of the caller (own merchant, same environment), else undefined. */
function ownPayment(ctx: Ctx, req: ApiRequest, trx: string): PaymentRow | undefined {
  const row = ctx.state.payments.get(trx) as PaymentRow | undefined;
  return row && isOwn(req.caller, row) ? row : undefined;
}

const notFound = (trx: string, environment: string) =>
  errorResponse(404, 'Not Found', `No payment ${JSON.stringify(trx)} for this merchant in the ${environment} environment.`);

/** The public view of a payment (GET /payments/{trx_id} and the list). */
function paymentView(row: PaymentRow) {
  return {
    trx_id: row.trx_id,
    merchant_ref: row.merchant_ref,
    amount: row.amount,
    fee: row.fee,
    net_amount: row.net_amount,
    currency: row.currency,
    status: row.status,
    payment_mode: row.payment_mode,
    environment: row.environment,
    description: row.description,
    customer: { ...row.customer },
    gateway: row.gateway,
    checkout_url: row.checkout_url,
    expires_at: row.expires_at,
    failure_reason: row.failure_reason,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** GET /api/v1/payments */
export function listPayments(ctx: Ctx, req: ApiRequest): Response {
  const errors = new FieldErrors();
  const { limit, offset } = pageParams(req.query, errors);
  const status = req.query.get('status');
  if (status !== null && status !== '' && !['pending', 'success', 'failed'].includes(status)) {
    errors.add('status', 'The selected status is invalid (pending, success or failed).');
  }
  if (errors.has()) return validationFailed(errors.map);
  const ref = req.query.get('merchant_ref');
  const keep = (r: PaymentRow) => isOwn(req.caller, r) && (!status || r.status === status) && (!ref || r.merchant_ref === ref);
  return json(200, newestPage(ctx.state.payments.values() as Iterable<PaymentRow>, keep, paymentView, limit, offset));
}

/** GET /api/v1/payments/{trx_id} */
export function getPayment(ctx: Ctx, req: ApiRequest): Response {
  const row = ownPayment(ctx, req, req.params.trx_id!);
  if (!row) return notFound(req.params.trx_id!, req.caller.environment);
  return json(200, { status: 'success', data: paymentView(row) });
}

/** POST /api/v1/payments/{trx_id}/push */
export function pushPayment(ctx: Ctx, req: ApiRequest): Response {
  const row = ownPayment(ctx, req, req.params.trx_id!);
  if (!row) return notFound(req.params.trx_id!, req.caller.environment);
  if (row.status !== 'pending') {
    return errorResponse(
      422,
      'Payment is not pending',
      `Payment ${row.trx_id} is already ${row.status}; a USSD push applies to a pending payment only.`,
    );
  }
  const given = req.body.customer_phone;
  const errors = new FieldErrors();
  let phone = row.customer.phone;
  if (present(given)) phone = givenPhone(given, errors);
  else if (!phone) {
    errors.add('customer_phone', 'The customer phone field is required: the payment has no phone number from its creation.');
  }
  if (errors.has()) return validationFailed(errors.map);
  row.customer.phone = phone;
  row.updated_at = isoUtc(ctx.now());
  startPush(ctx, row, phone!);
  return json(200, {
    status: 'success',
    message: 'USSD push sent; the customer approves it with their PIN.',
    data: { trx_id: row.trx_id, status: row.status, customer_phone: phone, push_count: row.push_count },
  });
}

/** GET /api/v1/verify-payment/{trxId}: the spec's Verified transaction shape. */
export function verifyPayment(ctx: Ctx, req: ApiRequest): Response {
  const row = ownPayment(ctx, req, req.params.trxId!);
  if (!row) return notFound(req.params.trxId!, req.caller.environment);
  return json(200, verifiedView(row, row.amount));
}

/** The Verified transaction shape of `row`, with `amount` as the generation reports it (the earlier one: the net). */
export function verifiedView(row: PaymentRow, amount: number) {
  return {
    status: row.status,
    trx_id: row.trx_id,
    amount,
    fee: row.fee,
    currency: row.currency,
    net_amount: row.net_amount,
    customer: { name: row.customer.name, email: row.customer.email },
    description: row.description,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
