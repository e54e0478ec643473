// The billing kit's one error class: a call or an event it refuses (`code` says why).
import { PaymentsError } from '../core/base-error.js';

/**
 * Thrown by the billing kit: `code` says why. `invalid_params`: a bad customer, plan, phone,
 * terms or option (nothing was recorded or sent); `unknown_subscription`: an event for a
 * subscription no record holds (yet: the create's answer may not be recorded, so an inbox
 * retries it); `unreadable_event`: an event or invoice whose ids or period cannot be read;
 * `bad_answer`: the service answered a create without a subscription id, or with one another
 * record holds; `needs_review`: a create never answered whose key the service has forgotten
 * (sending it again could make a second subscription); `contention`: a record kept changing
 * under this change.
 */
export class BillingError extends PaymentsError {
  override name = 'BillingError';
  /** Why it was thrown. */
  readonly code: 'invalid_params' | 'unknown_subscription' | 'unreadable_event' | 'bad_answer' | 'needs_review' | 'contention';
  constructor(code: BillingError['code'], message: string) {
    super(message);
    this.code = code;
  }
}
