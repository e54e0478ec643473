// The payout kit's one error class: a call it refuses (`reason` says why).
import { PaymentsError } from '../core/base-error.js';

/**
 * A payout intent refused: `reason` says why (`invalid_params`: a bad key, amount or
 * destination; `key_conflict`: the key is recorded with other parameters; `not_found`: no
 * intent has the key; `not_allowed`: `confirmResend` on an intent that does not need review).
 */
export class PayoutIntentError extends PaymentsError {
  override name = 'PayoutIntentError';
  /** Why it was refused. */
  readonly reason: 'invalid_params' | 'key_conflict' | 'not_found' | 'not_allowed';
  constructor(reason: PayoutIntentError['reason'], message: string) {
    super(message);
    this.reason = reason;
  }
}
