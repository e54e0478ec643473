// The simulated USSD push: the customer's phone number decides the outcome and how long it
// takes (see TEST_PHONE_NUMBERS).
import { TEST_PHONE_NUMBERS, TIMING } from './defaults.js';
import { digits } from './validation.js';

export interface PushOutcome {
  result: 'success' | 'failed';
  /** Failure code (the spec's named codes where one fits), null on success. */
  reason: 'INSUFFICIENT_FUNDS' | 'PAYMENT_DECLINED' | 'TIMEOUT' | null;
  message: string | null;
  /** Simulated time until the outcome, before timeScale. */
  delayMs: number;
}

/** The outcome of a push to `phone`. */
export function pushOutcome(phone: string): PushOutcome {
  switch (digits(phone)) {
    case TEST_PHONE_NUMBERS.insufficientFunds:
      return { result: 'failed', reason: 'INSUFFICIENT_FUNDS', message: 'Customer has insufficient funds.', delayMs: TIMING.pushAnswerMs };
    case TEST_PHONE_NUMBERS.declined:
      return {
        result: 'failed',
        reason: 'PAYMENT_DECLINED',
        message: 'The customer declined the USSD push.',
        delayMs: TIMING.pushAnswerMs,
      };
    case TEST_PHONE_NUMBERS.timeout:
      return {
        result: 'failed',
        reason: 'TIMEOUT',
        message: 'The customer did not answer the USSD push in time.',
        delayMs: TIMING.pushTimeoutMs,
      };
    default:
      return { result: 'success', reason: null, message: null, delayMs: TIMING.pushAnswerMs };
  }
}
