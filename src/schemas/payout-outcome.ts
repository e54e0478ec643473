// How a payout's outcome is read from whatever a server sends, and what a failed payout's
// error adds to its message. Not exported from the package: the payout schemas (payouts.ts)
// and the route table use it; it imports neither.
import { APIError, type PaymentsError } from '../core/error.js';
import { isRecord } from '../internal/envelope.js';
import { readRecord } from '../internal/fields.js';
import { unsettledIn } from '../internal/retry.js';

// Where servers put a payout's status word, most specific first.
const OUTCOME_FIELDS = ['status', 'payout_status', 'state', 'outcome', 'result', 'transaction_status'];
// The four outcomes of a payout (`PayoutStatus`), by the words servers use for them.
const SPELLINGS: Record<string, 'SUCCESS' | 'INPROGRESS' | 'FAILED'> = {
  SUCCESS: 'SUCCESS',
  SUCCESSFUL: 'SUCCESS',
  SUCCEEDED: 'SUCCESS',
  COMPLETED: 'SUCCESS',
  PAID: 'SUCCESS',
  FAILED: 'FAILED',
  FAILURE: 'FAILED',
  REJECTED: 'FAILED',
  DECLINED: 'FAILED',
  PENDING: 'INPROGRESS',
  PROCESSING: 'INPROGRESS',
  QUEUED: 'INPROGRESS',
};

/**
 * The outcome a payout body names: INPROGRESS or AMBIGUOUS wherever it appears (a code, a
 * message, a wrapper), else its status word, read as one of the four where recognised.
 */
function outcomeOf(body: unknown): string | undefined {
  const unsettled = unsettledIn(body);
  if (unsettled || !isRecord(body)) return unsettled;
  const word = OUTCOME_FIELDS.map((key) => body[key]).find((value) => typeof value === 'string');
  return typeof word === 'string' ? (SPELLINGS[word.toUpperCase().replace(/[ _-]/g, '')] ?? word) : undefined;
}

/** A payout record (`P`, a `Payout`) as the server sent it, with `id` and `status` read wherever they are. */
export function readPayout<P>(value: unknown): P {
  const payout = readRecord<unknown>(value, {
    ids: { id: ['payout_id', 'uuid', 'reference'] },
    numbers: ['amount', 'fee', 'payable_amount'],
  });
  if (!isRecord(payout)) return payout as P;
  const status = outcomeOf(payout);
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
  const outcome = error instanceof APIError ? outcomeOf(error.body) : undefined;
  if (outcome === 'INPROGRESS' || outcome === 'AMBIGUOUS')
    return `Its outcome is ${outcome}: the SDK did not send it again. ${PAYOUT_LOOKUP}; to retry, pass the same idempotencyKey (${error.idempotencyKey}).`;
}

/** @internal How to find a payout before paying out again. */
export const PAYOUT_LOOKUP = 'Look it up with client.payouts.list() or payouts.retrieve(id) before paying out again';
