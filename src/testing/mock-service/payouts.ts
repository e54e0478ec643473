// Payouts of settled balance to the approved settlement mobile number. Gates: KYB approved,
// business approved, settlement number on file (else 422 Payout Rejected). Outcomes are
// chosen by amount so every branch is testable: 12.12 → INPROGRESS (SUCCESS a minute later),
// 13.13 → AMBIGUOUS (stays so), 14.14 → FAILED (refunded), anything else → SUCCESS.
import type { ApiRequest, Ctx, Environment } from './context.js';
import { FEES, TIMING } from './defaults.js';
import type { MockMerchant } from './types.js';
import { errorResponse, json, validationFailed } from './responses.js';
import { isOwn, isoUtc, newestPage, round2, withoutMerchant } from './util.js';
import { digits, FieldErrors, MOBILE, pageParams, present, readAmount } from './validation.js';

/** Amounts that pick a payout outcome. */
export const PAYOUT_TEST_AMOUNTS = { inProgress: 12.12, ambiguous: 13.13, failed: 14.14 } as const;

export interface PayoutRow {
  id: string;
  merchant_id: number;
  environment: Environment;
  amount: number;
  fee: number;
  payable_amount: number;
  currency: string;
  destination: string;
  status: 'SUCCESS' | 'INPROGRESS' | 'AMBIGUOUS' | 'FAILED';
  created_at: string;
  updated_at: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Payouts are paid from the TZS wallet when there is one, else the first active wallet. */
function payoutCurrency(merchant: MockMerchant): string | null {
  if (merchant.currencies.TZS?.wallet) return 'TZS';
  return Object.keys(merchant.currencies).find((c) => merchant.currencies[c]!.wallet) ?? null;
}

const quote = (amount: number) => {
  const fee = round2(amount * FEES.payoutRate);
  return { amount, fee, payable_amount: round2(amount - fee) };
};

/** POST /api/v1/payouts/preview */
export function previewPayout(_ctx: Ctx, req: ApiRequest): Response {
  const errors = new FieldErrors();
  const amount = readAmount(req.body, 'amount', errors, 'positive');
  if (errors.has()) return validationFailed(errors.map);
  return json(200, { ...quote(amount!), currency: payoutCurrency(req.caller.merchant) });
}

const rejected = (message: string) => errorResponse(422, 'Payout Rejected', message);

/** POST /api/v1/payouts */
export function createPayout(ctx: Ctx, req: ApiRequest): Response {
  const { merchant, environment } = req.caller;
  const errors = new FieldErrors();
  const amount = readAmount(req.body, 'amount', errors, 'positive');
  const destination = req.body.destination;
  const hasDestination = present(destination);
  if (hasDestination && (typeof destination !== 'string' || !MOBILE.test(destination))) {
    errors.add('destination', 'The destination must be a mobile number in international digits form, e.g. 255712345678.');
  }
  if (errors.has()) return validationFailed(errors.map);

  if (!merchant.kybApproved) return rejected('Payouts need KYB approval: complete business verification (KYB) on the dashboard first.');
  if (merchant.status !== 'approved') return rejected('Payouts need an approved business.');
  if (!merchant.settlementNumber) return rejected('Payouts need an approved settlement mobile number on file.');
  if (hasDestination && digits(destination as string) !== digits(merchant.settlementNumber)) {
    return rejected('The destination must equal the approved settlement mobile number on file.');
  }
  const currency = payoutCurrency(merchant);
  const wallet = currency ? merchant.currencies[currency] : undefined;
  if (!currency || !wallet) return rejected('The business has no active wallet to pay out from.');
  if (amount! > wallet.balance) return rejected(`Insufficient balance: ${wallet.balance} ${currency} available.`);

  const now = ctx.now();
  const status: PayoutRow['status'] =
    amount === PAYOUT_TEST_AMOUNTS.inProgress
      ? 'INPROGRESS'
      : amount === PAYOUT_TEST_AMOUNTS.ambiguous
        ? 'AMBIGUOUS'
        : amount === PAYOUT_TEST_AMOUNTS.failed
          ? 'FAILED'
          : 'SUCCESS';
  const row: PayoutRow = {
    id: crypto.randomUUID(),
    merchant_id: merchant.id,
    environment,
    ...quote(amount!),
    currency,
    destination: digits(merchant.settlementNumber),
    status,
    created_at: isoUtc(now),
    updated_at: isoUtc(now),
  };
  if (status !== 'FAILED') wallet.balance = round2(wallet.balance - row.amount);
  ctx.state.payouts.set(row.id, row as unknown as Record<string, unknown>);
  if (status === 'INPROGRESS') {
    ctx.scheduler.after(ctx.scaled(TIMING.payoutSettleMs), `payout ${row.id}`, () => {
      const current = ctx.state.payouts.get(row.id) as PayoutRow | undefined;
      if (current?.status === 'INPROGRESS') {
        current.status = 'SUCCESS';
        current.updated_at = isoUtc(ctx.now());
      }
    });
  }
  return json(200, { status: 'success', data: withoutMerchant(row) });
}

/** GET /api/v1/payouts */
export function listPayouts(ctx: Ctx, req: ApiRequest): Response {
  const errors = new FieldErrors();
  const { limit, offset } = pageParams(req.query, errors);
  if (errors.has()) return validationFailed(errors.map);
  const keep = (r: PayoutRow) => isOwn(req.caller, r);
  return json(200, newestPage(ctx.state.payouts.values() as Iterable<PayoutRow>, keep, withoutMerchant, limit, offset));
}

/** GET /api/v1/payouts/{id}: a non-UUID id is 404 like an unknown one. */
export function getPayout(ctx: Ctx, req: ApiRequest): Response {
  const id = req.params.id!;
  const row = UUID.test(id) ? (ctx.state.payouts.get(id.toLowerCase()) as PayoutRow | undefined) : undefined;
  if (!row || !isOwn(req.caller, row)) {
    return errorResponse(
      404,
      'Not Found',
      UUID.test(id)
        ? `No payout ${id} for this business in the ${req.caller.environment} environment.`
        : 'Payout ids are UUIDs: no payout has this id.',
    );
  }
  return json(200, { status: 'success', data: withoutMerchant(row) });
}
