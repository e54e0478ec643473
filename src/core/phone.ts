// Phone numbers as customers type them (`0712 345 678`, `+255 712-345-678`), made exact before
// anything is sent: the international digits without `+`, of a mobile number of one country.
// normalizePhone, the public form, throws the client's InvalidParamsError; the rules it applies
// (core/phone-check.ts) throw nothing, and the kits import them from there.
import { InvalidParamsError } from './error.js';
import { checkPhone, phoneCountryError } from './phone-check.js';
import type { PhoneCountry } from './phone-plans.js';

/** @internal The rules themselves, for the client's schemas and options (and the tests). */
export { checkPhone, PHONE_COUNTRIES, phoneCountryError } from './phone-check.js';
export type { PhoneCountry };

/** Options of {@link normalizePhone}. */
export interface NormalizePhoneOptions {
  /** The country the number belongs to, whose local forms (`0…`) are read: default `'TZ'`. */
  country?: PhoneCountry | undefined;
}

/**
 * A customer's phone number in the form the service takes: the international digits, without
 * `+`, of a mobile number of `options.country` (default `'TZ'`, Tanzania). It accepts what
 * people type: spaces, dashes, dots and parentheses, a leading `+` or `00` and the country
 * code, the national trunk `0`, or the bare digits with or without the country code.
 *
 * @throws {InvalidParamsError} when `input` is not a mobile number of that country (a landline,
 * another country's number, too short or too long, letters), with `errors.phone` saying the
 * form expected, with a made-up example, and the input's last three digits only.
 *
 * @example
 * ```ts
 * import { normalizePhone } from 'business-payments';
 *
 * normalizePhone('0712 345 678'); // '255712345678'
 * normalizePhone('+255 712-345-678'); // '255712345678'
 * normalizePhone('0712 123456', { country: 'KE' }); // '254712123456'
 * ```
 */
export function normalizePhone(input: string, options?: NormalizePhoneOptions): string {
  const country = options?.country ?? 'TZ';
  const unknown = phoneCountryError(country);
  if (unknown) throw new InvalidParamsError('normalizePhone', { country: [unknown] });
  const result = checkPhone(input, country);
  if ('message' in result) throw new InvalidParamsError('normalizePhone', { phone: [result.message] });
  return result.phone;
}
