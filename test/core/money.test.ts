// Amounts exact at the currency's minor-unit digits (src/core/money.ts): float noise removed,
// decimal strings read, more digits refused with the two nearest amounts; and the property that
// every total of a cart of 2-digit prices, summed in floating point, is sent as its exact decimal.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exactAmount, exactAt, minorDigits, sameAmount } from '../../src/core/money.js';

describe('minorDigits', () => {
  it.each([
    ['USD', 2],
    ['EUR', 2],
    ['BDT', 2],
    ['KES', 2],
    ['TZS', 2],
    ['UGX', 0],
    ['RWF', 0],
    // Currencies outside the service's markets have 2: the service's own rule decides for them.
    ['JPY', 2],
    ['XYZ', 2],
    [undefined, 2],
    ['usd', 2],
  ])('%s has %i', (currency, digits) => expect(minorDigits(currency)).toBe(digits));
});

describe('exactAmount', () => {
  it.each([
    [1.1 + 2.2, 'USD', 3.3],
    [0.07 * 100_000, 'TZS', 7000],
    [0.1 + 0.2, 'USD', 0.3],
    ['19.99', 'USD', 19.99],
    ['3.30', 'USD', 3.3],
    [' 7000 ', 'TZS', 7000],
    ['10.000', 'USD', 10],
    [12, 'UGX', 12],
    [12.0000000000001, 'UGX', 12],
    [1000.12, undefined, 1000.12],
    [123456789012.34, 'USD', 123456789012.34],
  ])('%s %s is sent as %s', (value, currency, amount) => expect(exactAmount(value, currency)).toEqual({ amount }));

  it.each([
    [10.005, 'USD', '10.00', '10.01'],
    ['10.005', 'USD', '10.00', '10.01'],
    [12.5, 'UGX', '12', '13'],
    [1000.123, undefined, '1000.12', '1000.13'],
    [123456789012.345, 'USD', '123456789012.34', '123456789012.35'],
    [0.0001, 'USD', '0.00', '0.01'],
  ])('%s %s is refused, naming %s and %s', (value, currency, low, high) => {
    const result = exactAmount(value, currency);
    expect(result).toHaveProperty('error');
    const { error } = result as { error: string };
    expect(error).toContain(`send ${low} or ${high}`);
    expect(error).toContain(String(value).trim());
  });

  it.each([NaN, Infinity, -Infinity, '1e3', '1,000.00', '', '12.', '.5', '-5', {}, null, undefined, true])(
    'refuses %s as no amount at all',
    (value) => expect(exactAmount(value, 'USD')).toEqual({ error: 'must be a number or a decimal string such as "19.99"' }),
  );

  it('refuses a string with more significant digits than a JSON number carries', () => {
    expect(exactAmount('12345678901234567.89', 'USD')).toHaveProperty('error', expect.stringContaining('15 at most'));
  });
});

describe('exactAt', () => {
  it.each([
    ['19.99', 2, 19.99],
    [1.1 + 2.2, 2, 3.3],
    [0.07 * 100_000, 0, 7000],
    [' 7000 ', 0, 7000],
    ['3.30', 2, 3.3],
  ])('%s at %i digits is %s', (value, digits, amount) => expect(exactAt(value, digits)).toBe(amount));

  it.each([
    ['abc', 2, 'not a decimal'],
    [Number.NaN, 2, 'not a finite number'],
    [undefined, 2, 'not a decimal'],
    ['12345678901234567.89', 2, 'more than 15 significant digits'],
    ['10.005', 2, 'a third decimal place'],
    [12.5, 0, 'a decimal place'],
  ])('%s at %i digits is none (%s)', (value, digits, _why) => expect(exactAt(value, digits)).toBeUndefined());
});

describe('sameAmount', () => {
  it.each([
    ['3.30', 3.3, 'USD', true],
    [1.1 + 2.2, 3.3, 'USD', true],
    ['7000.00', 0.07 * 100_000, 'TZS', true],
    [3.3, 3.31, 'USD', false],
    ['12', 12, 'UGX', true],
    ['10.005', 10.01, 'USD', false],
    ['abc', 1, 'USD', false],
    [undefined, 1, 'USD', false],
  ])('%s and %s in %s: %s', (a, b, currency, same) => expect(sameAmount(a, b, currency)).toBe(same));
});

// A cart: up to 40 lines of a 2-digit price (0.01–9,999.99) times a quantity, summed as a shop
// does in floating point. Its exact total (in cents, as integers) is what must be sent.
const cart = fc.array(fc.record({ cents: fc.integer({ min: 1, max: 999_999 }), quantity: fc.integer({ min: 1, max: 12 }) }), {
  minLength: 1,
  maxLength: 40,
});

describe('a random cart', () => {
  it('sums in floating point to an amount sent as its exact decimal, equal to the order total', () => {
    fc.assert(
      fc.property(cart, fc.constantFrom('USD', 'TZS', 'KES', 'EUR'), (lines, currency) => {
        const float = lines.reduce((sum, line) => sum + (line.cents / 100) * line.quantity, 0);
        const cents = lines.reduce((sum, line) => sum + line.cents * line.quantity, 0);
        const exact = exactAmount(float, currency);
        expect(exact).toEqual({ amount: cents / 100 });
        // As the order table's numeric(12,2) gives it back.
        expect(sameAmount((cents / 100).toFixed(2), float, currency)).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it('in a zero-digit currency sums to a whole amount', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 5_000_000 }), { minLength: 1, maxLength: 40 }), (prices) => {
        // A shop that keeps UGX prices as thousands and multiplies back.
        const float = prices.reduce((sum, price) => sum + (price / 1000) * 1000, 0);
        expect(exactAmount(float, 'UGX')).toEqual({ amount: prices.reduce((a, b) => a + b, 0) });
      }),
      { numRuns: 1_000 },
    );
  });
});
