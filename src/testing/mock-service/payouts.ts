// Payouts of settled balance to the approved settlement mobile number. Gates: KYB approved,
// business approved, settlement number on file (else 422 Payout Rejected). Outcomes are
// chosen by amount so every branch is testable: 12.12 → INPROGRESS (SUCCESS a minute later),
// 13.13 → AMBIGUOUS (stays so), 14.14 → FAILED (refunded), anything else → SUCCESS. That is
// the `normal` payout behaviour; the behaviour switch (mock.payoutBehaviour(), the console)
// can make every new payout answer INPROGRESS or AMBIGUOUS and settle later, and lose answers.
import type { ApiRequest, Ctx, Environment } from './context.js';
import { FEES, TIMING } from './defaults.js';
import type { MockMerchant, MockPayoutBehaviour } from './types.js';
import { errorResponse, json, LOST, validationFailed } from './responses.js';
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

/** The behaviour of a service that was never given one. */
const DEFAULT_PAYOUT_BEHAVIOUR: Readonly<MockPayoutBehaviour> = Object.freeze({
  answer: 'normal',
  settleAs: 'SUCCESS',
  settleAfterMs: TIMING.payoutSettleMs,
  loseAnswer: 0,
});

/** Each service's payout behaviour, by its context. */
const BEHAVIOURS = new WeakMap<Ctx, MockPayoutBehaviour>();

/** The service's current payout behaviour (the live record: copy it before handing it out). */
function behaviourOf(ctx: Ctx): MockPayoutBehaviour {
  let behaviour = BEHAVIOURS.get(ctx);
  if (!behaviour) BEHAVIOURS.set(ctx, (behaviour = { ...DEFAULT_PAYOUT_BEHAVIOUR }));
  return behaviour;
}

const ANSWERS: readonly MockPayoutBehaviour['answer'][] = ['normal', 'INPROGRESS', 'AMBIGUOUS'];
const SETTLE_AS: readonly MockPayoutBehaviour['settleAs'][] = ['SUCCESS', 'FAILED'];
const show = (value: unknown) => (typeof value === 'string' ? JSON.stringify(value) : String(value));

/** `next` checked: the fields to change, or a TypeError / RangeError naming the bad one (`who` starts the message). */
function checkPayoutBehaviour(next: unknown, who: string): Partial<MockPayoutBehaviour> {
  if (next === undefined) return {};
  if (next === null || typeof next !== 'object' || Array.isArray(next)) {
    throw new TypeError(`${who}: expected an object such as { answer: 'INPROGRESS' }, got ${next === null ? 'null' : typeof next}.`);
  }
  const out: Partial<MockPayoutBehaviour> = {};
  for (const [key, value] of Object.entries(next)) {
    if (value === undefined) continue;
    switch (key) {
      case 'answer':
        if (typeof value !== 'string') throw new TypeError(`${who}: answer must be a string ('normal', 'INPROGRESS' or 'AMBIGUOUS').`);
        if (!ANSWERS.includes(value as MockPayoutBehaviour['answer']))
          throw new RangeError(`${who}: answer must be 'normal', 'INPROGRESS' or 'AMBIGUOUS', not ${show(value)}.`);
        out.answer = value as MockPayoutBehaviour['answer'];
        break;
      case 'settleAs':
        if (typeof value !== 'string') throw new TypeError(`${who}: settleAs must be a string ('SUCCESS' or 'FAILED').`);
        if (!SETTLE_AS.includes(value as MockPayoutBehaviour['settleAs']))
          throw new RangeError(`${who}: settleAs must be 'SUCCESS' or 'FAILED', not ${show(value)}.`);
        out.settleAs = value as MockPayoutBehaviour['settleAs'];
        break;
      case 'settleAfterMs':
        if (typeof value !== 'number') throw new TypeError(`${who}: settleAfterMs must be a number of milliseconds, not ${show(value)}.`);
        if (!Number.isFinite(value) || value < 0)
          throw new RangeError(`${who}: settleAfterMs must be a finite number of milliseconds ≥ 0, not ${show(value)}.`);
        out.settleAfterMs = value;
        break;
      case 'loseAnswer':
        if (typeof value !== 'number')
          throw new TypeError(`${who}: loseAnswer must be a number from 0 (never) to 1 (always), not ${show(value)}.`);
        if (!(value >= 0 && value <= 1))
          throw new RangeError(`${who}: loseAnswer must be from 0 (never) to 1 (always), not ${show(value)}.`);
        out.loseAnswer = value;
        break;
      default:
        throw new TypeError(`${who}: unknown field ${JSON.stringify(key)} (known: answer, settleAs, settleAfterMs, loseAnswer).`);
    }
  }
  return out;
}

/**
 * mock.payoutBehaviour(next): merges the checked `next` (all or nothing) and returns a copy of
 * the behaviour. Only new payouts follow a change; those made before settle as they were told.
 */
export function payoutBehaviour(ctx: Ctx, next?: unknown, who = 'payoutBehaviour'): MockPayoutBehaviour {
  const changes = checkPayoutBehaviour(next, who);
  return { ...Object.assign(behaviourOf(ctx), changes) };
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
    errors.add('destination', 'The destination must be a mobile number in international digits form, e.g. 255621234567.');
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
  const behaviour = behaviourOf(ctx);
  const plan = settlementPlan(behaviour, amount!);
  const row: PayoutRow = {
    id: crypto.randomUUID(),
    merchant_id: merchant.id,
    environment,
    ...quote(amount!),
    currency,
    destination: digits(merchant.settlementNumber),
    status: plan.status,
    created_at: isoUtc(now),
    updated_at: isoUtc(now),
  };
  if (plan.status !== 'FAILED') wallet.balance = round2(wallet.balance - row.amount);
  ctx.state.payouts.set(row.id, row as unknown as Record<string, unknown>);
  if (plan.later) settleLater(ctx, row.id, plan.status, plan.later.as, plan.later.afterMs);
  const response = json(200, { status: 'success', data: withoutMerchant(row) });
  // Lost after the idempotency step keeps it (a 2xx like any other): the front door withholds it.
  if (behaviour.loseAnswer > 0 && Math.random() < behaviour.loseAnswer) LOST.add(response);
  return response;
}

/** What a new payout answers, and how (if ever) it settles later. */
function settlementPlan(
  behaviour: MockPayoutBehaviour,
  amount: number,
): { status: PayoutRow['status']; later?: { as: 'SUCCESS' | 'FAILED'; afterMs: number } } {
  if (behaviour.answer !== 'normal') {
    return { status: behaviour.answer, later: { as: behaviour.settleAs, afterMs: behaviour.settleAfterMs } };
  }
  if (amount === PAYOUT_TEST_AMOUNTS.inProgress) return { status: 'INPROGRESS', later: { as: 'SUCCESS', afterMs: TIMING.payoutSettleMs } };
  if (amount === PAYOUT_TEST_AMOUNTS.ambiguous) return { status: 'AMBIGUOUS' };
  if (amount === PAYOUT_TEST_AMOUNTS.failed) return { status: 'FAILED' };
  return { status: 'SUCCESS' };
}

/** `afterMs` (scaled) from now, a payout still `from` becomes `as`; FAILED refunds the wallet. */
function settleLater(ctx: Ctx, id: string, from: PayoutRow['status'], as: 'SUCCESS' | 'FAILED', afterMs: number): void {
  ctx.scheduler.after(ctx.scaled(afterMs), `payout ${id}`, () => {
    const current = ctx.state.payouts.get(id) as PayoutRow | undefined;
    if (current?.status !== from) return; // trimmed, or changed through mock.state
    current.status = as;
    current.updated_at = isoUtc(ctx.now());
    if (as !== 'FAILED') return;
    const wallet = ctx.state.merchants.find((m) => m.id === current.merchant_id)?.currencies[current.currency];
    if (wallet) wallet.balance = round2(wallet.balance + current.amount);
  });
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
