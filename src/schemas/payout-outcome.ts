// A payout record as the client reads it, and what a failed payout's error adds to its message,
// both by the one reader of outcome words (src/core/payout-outcome.ts, which the payout kit
// reads them by too). Not exported from the package: the payout schemas (payouts.ts) and the
// route table use it; it imports neither.
import { APIError, type PaymentsError } from '../core/error.js';
import { payoutOutcome } from '../core/payout-outcome.js';
import { isRecord } from '../internal/envelope.js';
import { readRecord } from '../internal/fields.js';

/** A payout record (`P`, a `Payout`) as the server sent it, with `id` and `status` read wherever they are. */
export function readPayout<P>(value: unknown): P {
  const payout = readRecord<unknown>(value, {
    ids: { id: ['payout_id', 'uuid', 'reference'] },
    numbers: ['amount', 'fee', 'payable_amount'],
  });
  if (!isRecord(payout)) return payout as P;
  const status = payoutOutcome(payout);
  // The server's own word stays when the SDK's reading of it differs (`PENDING` → INPROGRESS).
  if (status !== undefined && status !== payout.status) {
    if (payout.status !== undefined) payout.server_status = payout.status;
    payout.status = status;
  }
  return payout as P;
}

/**
 * What a payout's error adds when its body names an unsettled outcome (INPROGRESS or
 * AMBIGUOUS), whatever the status. Other failures that leave it open get the route's words
 * (`a payout may have been made…`) where every call's error is made.
 */
export function payoutFailureHint(error: PaymentsError): string | undefined {
  const outcome = error instanceof APIError ? payoutOutcome(error.body) : undefined;
  if (outcome === 'INPROGRESS' || outcome === 'AMBIGUOUS')
    return `Its outcome is ${outcome}: the SDK did not send it again. ${PAYOUT_LOOKUP}; to retry, pass the same idempotencyKey (${error.idempotencyKey}).`;
}

/** @internal How to find a payout before paying out again. */
export const PAYOUT_LOOKUP = 'Look it up with client.payouts.list() or payouts.retrieve(id) before paying out again';
