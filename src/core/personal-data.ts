// Customer data the SDK keeps out of log lines and error messages: phone numbers and e-mail
// addresses, wherever they are (a field the SDK sends, or free text a server echoes back).
// One rule, used by the logger (internal/redact.ts) and by every message built from a
// server's text (core/error.ts, internal/to-error.ts).
import { international, PLANS } from './phone-plans.js';

/** @internal The fields that hold a customer's phone number: redacted whole in log lines. */
export const PHONE_FIELDS: readonly string[] = ['customer_phone', 'destination', 'phone'];

// A run of digits with single spaces, hyphens or brackets between them (`+255 712 345 678`,
// `(0712) 345-678`, `255712345678`), not inside a word or an id (`TRX-2026112512`, a UUID).
const NUMBER_RUN = /(?<![\w.+-])\+?[(\d][\d ()-]*\d(?![\w-])/g;
// Whatever stands around an @ up to a blank, ending in a dotted name (any local part RFC 5322
// allows, brackets or quotes around it included).
const EMAIL = /\S+@\S+\.\w+/g;
// What a run can be besides a phone number: a date (`2026-11-25 12`) or Unix time in s or ms.
const NOT_A_PHONE = /^(?:\d{4}-\d\d-\d\d|1\d{9}(?:\d{3})?$)/;
// The made-up numbers the SDK prints as examples (core/phone-plans.ts), each exactly as printed
// (national and international) and as bare international digits (`e.g. 255621234567`): a
// message that shows one must keep it. Only an exact run is kept: `255621234568`, or an
// example run together with another number, is redacted.
const EXAMPLE_PHONES = new Set(
  Object.values(PLANS).flatMap((plan) => [plan.national, international(plan), international(plan).replace(/\D/g, '')]),
);

/**
 * `text` with every e-mail address and phone number replaced by `[redacted]`: the rule the
 * SDK's logger and error messages apply, for your own log lines. A phone number is a run of
 * at least 9 digits (7 after a `+`); dates, Unix times, amounts (`25000.00`), ids and the
 * SDK's own made-up example numbers (`0621 234 567`) stay as they are.
 *
 * @example
 * ```ts
 * import { redactPersonalData } from 'business-payments';
 *
 * redactPersonalData('paid by +255 712 345 678, ana@example.com: 25000.00 TZS');
 * // → 'paid by [redacted], [redacted]: 25000.00 TZS'
 * ```
 */
export function redactPersonalData(text: string): string {
  return text.replace(EMAIL, '[redacted]').replace(NUMBER_RUN, (run) => {
    const digits = run.replace(/\D/g, '').length;
    return digits < (run.startsWith('+') ? 7 : 9) || NOT_A_PHONE.test(run) || EXAMPLE_PHONES.has(run) ? run : '[redacted]';
  });
}
