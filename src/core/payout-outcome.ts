// How a payout's outcome word is read from whatever a server sends: the one reader, for the
// client's payout schemas and errors (src/schemas/payout-outcome.ts) and the payout kit alike.
// It imports nothing but core values: the payout kit's entry, which loads no ky, zod or
// src/internal/, may import it.
import { isRecord } from './values.js';

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

// INPROGRESS / AMBIGUOUS in any spelling: `IN_PROGRESS`, `in-progress`,
// `TRANSACTION_AMBIGUOUS`, or the word inside a message ("Payout Ambiguous").
const UNSETTLED = /(?:^|[^a-z])(in[ _-]?progress|ambiguous)(?:[^a-z]|$)/i;

/**
 * @internal INPROGRESS or AMBIGUOUS anywhere in a body (any field, any depth, a message), in
 * any spelling: its JSON text is searched, so no walk over a body nested arbitrarily deep. A
 * body too deep even to serialise counts as unsettled: money out is never sent again on a guess.
 */
export function unsettledIn(body: unknown): 'INPROGRESS' | 'AMBIGUOUS' | undefined {
  let match;
  try {
    // (A body JSON cannot write, such as a function, is `undefined`: nothing found in it.)
    match = UNSETTLED.exec(typeof body === 'string' ? body : String(JSON.stringify(body ?? null)));
  } catch {
    return 'AMBIGUOUS';
  }
  return match ? (/ambig/i.test(match[1]!) ? 'AMBIGUOUS' : 'INPROGRESS') : undefined;
}

/**
 * @internal The outcome a payout body names: INPROGRESS or AMBIGUOUS wherever it appears (a
 * code, a message, a wrapper), else its status word, read as one of the four where recognised.
 */
export function payoutOutcome(body: unknown): string | undefined {
  const unsettled = unsettledIn(body);
  if (unsettled || !isRecord(body)) return unsettled;
  const word = OUTCOME_FIELDS.map((key) => body[key]).find((value) => typeof value === 'string');
  return typeof word === 'string' ? (SPELLINGS[word.toUpperCase().replace(/[ _-]/g, '')] ?? word) : undefined;
}
