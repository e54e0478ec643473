// The earlier generation's payments: POST /api/v1/initiate-payment (no idempotency, no
// duplicate check, no trx_id in the answer nor in its link), GET /api/v1/verify-payment/{trxId} (three
// shapes; `amount` is the net) and settlement (the merchant's fee, no balance moved in the
// sandbox, the IPN). Written from the facts sheet (spec/deployed-generation.md).
import type { ApiRequest, Caller, Ctx } from './context.js';
import { EARLIER_TIMING } from './defaults.js';
import { emitIpn } from './earlier-ipn.js';
import type { EarlierPaymentRow } from './earlier-row.js';
import { validateInitiate } from './earlier-input.js';
import { trxId as newTrxId } from './ids.js';
import { earlierCheckoutLink } from './earlier-link.js';
import { eligibleGateways, narrowGateways, sessionFacts, verifiedView } from './payments.js';
import { json } from './responses.js';
import type { MockMerchant } from './types.js';
import { isOwn, round2, sharedList } from './util.js';

/** Laravel's date form: `2025-08-01T12:00:00.000000Z`. */
const laravelTime = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

const unprocessable = (error: string) => json(422, { error });

/** POST /api/v1/initiate-payment */
export async function earlierInitiate(ctx: Ctx, req: ApiRequest): Promise<Response> {
  const body = req.body;
  const invalid = validateInitiate(body);
  if (invalid) return invalid;
  const { merchant } = req.caller;
  const currency = body.currency_code as string;
  const refused = currencyRefusal(ctx, merchant, currency);
  if (refused) return refused;
  // The server reads customer_name when description is missing: PHP's warning becomes the answer.
  if (body.description == null && !('customer_name' in body)) return unprocessable('Undefined array key "customer_name"');
  const row = await newRow(ctx, req.caller, body);
  ctx.state.payments.set(row.trx_id, row as unknown as Record<string, unknown>);
  const info = infoOf(row, merchant, body);
  const { merchant_id: _id, ...echo } = info;
  row.echo = echo;
  return json(200, { payment_url: row.payment_url, info });
}

// Not in the currency table (every currency a gateway or a merchant knows), not the merchant's, no wallet.
function currencyRefusal(ctx: Ctx, merchant: MockMerchant, currency: string): Response | null {
  const table = new Set([...ctx.state.gateways.map((g) => g.currency), ...ctx.state.merchants.flatMap((m) => Object.keys(m.currencies))]);
  if (!table.has(currency)) return unprocessable('Invalid currency code.');
  const wallet = merchant.currencies[currency];
  if (!wallet) return unprocessable('Currency is not enabled for this merchant.');
  if (!wallet.wallet) return unprocessable('Receiver wallet for this currency is not available.');
  return null;
}

function allowList(value: unknown): string[] {
  if (typeof value === 'string') return value.split(',').flatMap((k) => (k.trim() ? [k.trim()] : []));
  return Array.isArray(value) ? value.filter((k): k is string => typeof k === 'string') : [];
}

async function newRow(ctx: Ctx, caller: Caller, body: Record<string, unknown>): Promise<EarlierPaymentRow> {
  const { merchant, environment } = caller;
  const now = ctx.now();
  const trx = newTrxId();
  const allow = allowList(body.allow_payment_methods);
  const { restricted, list } = eligibleGateways(merchant, ctx.state.gateways, body.currency_code as string);
  const expiresMs = now + EARLIER_TIMING.checkoutLifetimeMs;
  // The real product's signed link: the trx_id inside it is encrypted (earlier-link.ts).
  const link = await earlierCheckoutLink(ctx, caller.base, trx, expiresMs);
  const text = (field: string) => (typeof body[field] === 'string' ? body[field] : null);
  const sent = body.payment_amount as number | string;
  return {
    generation: 'earlier',
    sent_amount: sent,
    echo: {},
    trx_id: trx,
    merchant_id: merchant.id,
    environment,
    merchant_ref: body.ref_trx as string,
    amount: Number(sent),
    currency: body.currency_code as string,
    status: 'pending',
    payment_mode: 'hosted',
    description: text('description'),
    customer: { name: text('customer_name'), email: text('customer_email'), phone: null },
    ipn_url: body.ipn_url as string,
    success_redirect: body.success_redirect as string,
    cancel_redirect: body.cancel_redirect as string,
    allow_payment_methods: sharedList(allow),
    merchant_payment_methods_restricted: restricted,
    merchant_payment_method_ids: sharedList(list.map((g) => g.id)),
    merchant_payment_method_codes: sharedList(narrowGateways(list, allow).map((g) => g.code)),
    gateway: null,
    fee: 0,
    net_amount: 0,
    payment_url: link,
    checkout_url: link,
    expires_at: laravelTime(expiresMs),
    failure_reason: null,
    failure_message: null,
    push_count: 0,
    created_at: laravelTime(now),
    updated_at: laravelTime(now),
  };
}

// `info`: the fields sent (absent ones absent, empty ones null) in the rules' order, then the service's own.
function infoOf(row: EarlierPaymentRow, merchant: MockMerchant, body: Record<string, unknown>): Record<string, unknown> {
  const info: Record<string, unknown> = {};
  for (const key of ECHOED) if (key in body) info[key] = body[key] ?? null;
  return { ...info, ...sessionFacts(row, merchant, row.sent_amount) };
}

const ECHOED = ['ref_trx', 'description', 'ipn_url', 'cancel_redirect', 'success_redirect', 'customer_name', 'customer_email'] as const;

/** A payment of the caller (own merchant and environment), its id matched case-insensitively. */
function findOwn(ctx: Ctx, caller: Caller, id: string): EarlierPaymentRow | undefined {
  const wanted = id.toUpperCase();
  const direct = ctx.state.payments.get(id) ?? ctx.state.payments.get(wanted);
  const rows = direct ? [direct] : ctx.state.payments.values();
  for (const row of rows as Iterable<EarlierPaymentRow>) {
    if (row.generation === 'earlier' && row.trx_id.toUpperCase() === wanted && isOwn(caller, row)) return row;
  }
  return undefined;
}

/** GET /api/v1/verify-payment/{trxId}: success, pending or failed, each in its own shape. */
export function earlierVerify(ctx: Ctx, req: ApiRequest): Response {
  const row = findOwn(ctx, req.caller, req.params.trxId!);
  if (!row) return json(404, { error: 'Transaction not found.' });
  if (row.status === 'pending') return json(200, { status: 'pending', trx_id: row.trx_id, message: 'Payment is still pending.' });
  if (row.status === 'failed') return json(200, { status: 'failed', trx_id: row.trx_id, message: 'Payment failed or canceled.' });
  // The net as `amount`, as this generation answers.
  return json(200, verifiedView(row, row.net_amount));
}

/**
 * Settles a pending payment of the earlier generation: on success the merchant's fee, the
 * service's own description and (production only: sandbox payments move no balances) the
 * wallet credited with the net; then the IPN. False when it is not pending.
 */
export function settleEarlier(ctx: Ctx, trx: string, result: 'success' | 'failed', detail: { gateway?: string | null } = {}): boolean {
  const row = ctx.state.payments.get(trx) as EarlierPaymentRow | undefined;
  if (!row || row.status !== 'pending' || row.generation !== 'earlier') return false;
  row.status = result;
  row.updated_at = laravelTime(ctx.now());
  row.gateway = detail.gateway ?? row.merchant_payment_method_codes[0] ?? null;
  if (result === 'success') {
    row.fee = round2(row.amount * ctx.merchantFeeRate);
    row.net_amount = round2(row.amount - row.fee);
    const gateway = ctx.state.gateways.find((g) => g.code === row.gateway);
    row.description = `Payment completed via ${gateway?.name ?? 'the hosted checkout'}`;
    const wallet = ctx.state.merchants.find((m) => m.id === row.merchant_id)?.currencies[row.currency];
    if (wallet && row.environment === 'production') wallet.balance = round2(wallet.balance + row.net_amount);
  } else {
    row.failure_reason = 'FAILED';
    row.failure_message = 'Payment failed or canceled.';
  }
  emitIpn(ctx, row);
  return true;
}
