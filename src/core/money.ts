// Amounts as the service charges them: a decimal with at most the currency's minor-unit digits.
// Pure and dependency-free: the client's params, the payout kit and the fulfilment kit's price
// check read amounts through it, so `1.1 + 2.2`, `'3.30'` (pg numeric) and `3.3` are one amount.

/**
 * @internal The minor-unit digits of `currency` (its ISO 4217 exponent) for the currencies of
 * the service's markets: 0 for UGX and RWF, 2 for USD, EUR, KES, TZS, BDT and any currency the
 * SDK does not know (the service's own rule then decides).
 */
export const minorDigits = (currency: unknown): number => (currency === 'UGX' || currency === 'RWF' ? 0 : 2);

/** @internal `value` as a number when it is a finite number or a plain decimal string (`'19.99'`, `' 7000 '`), else `undefined`. */
export function decimalValue(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  return typeof value === 'string' && /^\s*\d+(?:\.\d+)?\s*$/.test(value) ? Number(value) : undefined;
}

/** @internal Digits after the point of a number's shortest decimal form (`1e-7` counts as 7). */
export const decimals = (value: number): number => {
  const [, fraction = '', exponent = '0'] = /^-?\d+(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(value)) ?? [];
  return Math.max(0, fraction.length - Number(exponent));
};

// A string's digits are its own: '3.30' has two (trailing zeros say nothing), and more than 15
// significant digits cannot travel exactly as a JSON number.
const tooLong = (value: unknown) => typeof value === 'string' && value.replace(/\D|^[\s0.]+|\.?0*\s*$/g, '').length > 15;

/**
 * @internal `value` (a number or a decimal string) as an amount of `digits` minor-unit digits,
 * or `undefined` when it is none (not a decimal, a string longer than a JSON number carries, or
 * more decimal places than `digits`). Float noise goes: a number whose 12-significant-digit form
 * fits the digits, and differs from it by a speck of the minor unit, is that amount
 * (`1.1 + 2.2` → 3.3, `0.07 * 100000` → 7000). The one rule of {@link exactAmount} (which also
 * says why not) and {@link sameAmount} (which only compares).
 */
export function exactAt(value: unknown, digits: number): number | undefined {
  const number = decimalValue(value);
  if (number === undefined || tooLong(value)) return undefined;
  if (decimals(number) <= digits) return number;
  const clean = Number(number.toPrecision(12));
  return decimals(clean) <= digits && Math.abs(clean - number) * 10 ** digits < 1e-3 ? clean : undefined;
}

/**
 * @internal `value` (a number or a decimal string) as the amount to send in `currency` (its
 * minor-unit digits; a payout, which names none, has 2) as {@link exactAt} reads it, or why it
 * cannot be sent. More digits than the currency has (`10.005` USD, `12.5` UGX) are refused
 * with the two nearest amounts that can be sent.
 */
export function exactAmount(value: unknown, currency?: unknown): { amount: number } | { error: string } {
  const digits = minorDigits(currency);
  const amount = exactAt(value, digits);
  if (amount !== undefined) return { amount };
  const number = decimalValue(value);
  if (number === undefined) return { error: 'must be a number or a decimal string such as "19.99"' };
  if (tooLong(value)) return { error: 'has more significant digits than a JSON number carries exactly (15 at most)' };
  const unit = 10 ** digits;
  const below = Math.floor(number * unit + 1e-9) / unit;
  const [low, high] = [below, (Math.round(below * unit) + 1) / unit].map((n) => n.toFixed(digits));
  const what = typeof currency === 'string' && /^[A-Z]{3}$/.test(currency) ? currency : 'this amount';
  return { error: `has more decimal places than ${what} takes (${digits}): ${String(value).trim()} is not sent; send ${low} or ${high}` };
}

/**
 * @internal Whether two amounts are the same at `currency`'s minor-unit digits: `'3.30'` (pg
 * numeric) and `3.3`, or `3.3000000000000003` and `3.3`. An amount that the currency cannot
 * carry (`10.005` USD) equals nothing: a price no payment can match exactly.
 */
export function sameAmount(a: unknown, b: unknown, currency: unknown): boolean {
  const digits = minorDigits(currency);
  const [x, y] = [exactAt(a, digits), exactAt(b, digits)];
  return x !== undefined && y !== undefined && Math.round(x * 10 ** digits) === Math.round(y * 10 ** digits);
}
