// The one redaction rule (redactPersonalData): e-mail addresses and phone numbers in the shapes servers
// echo them, anywhere in free text; what is not customer data (dates, Unix times, amounts,
// ids) stays readable.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { redactPersonalData } from '../../src/core/personal-data.js';
import { redactBody } from '../../src/internal/redact.js';

// Tanzanian mobile numbers (the service's market) in the shapes a server echoes them; not the
// made-up example the SDK prints (621 234 567), which is kept on purpose (tested below).
const subscriber = fc.stringMatching(/^[67]\d{8}$/).filter((n) => n !== '621234567');
const phone = fc.tuple(subscriber, fc.integer({ min: 0, max: 4 })).map(([n, shape]) => {
  const [a, b, c] = [n.slice(0, 3), n.slice(3, 6), n.slice(6)];
  return [`+255 ${a} ${b} ${c}`, `255${n}`, `0${n}`, `+255${n}`, `(0${a}) ${b}-${c}`][shape]!;
});
const email = fc.emailAddress();
// Free text around them: words without digits or @, as a message would have.
const words = fc.array(fc.stringMatching(/^[A-Za-z,;:!?']{1,12}$/), { maxLength: 6 }).map((w) => w.join(' '));

describe('redactPersonalData', () => {
  test('the shapes of the review', () => {
    expect(redactPersonalData('Call +255 712 345 678 now')).toBe('Call [redacted] now');
    expect(redactPersonalData('msisdn=255712345678.')).toBe('msisdn=[redacted].');
    expect(redactPersonalData('Contact jane@example.com, please')).toBe('Contact [redacted], please');
  });

  test('a phone number in any shape, anywhere in free text, never survives', () => {
    fc.assert(
      fc.property(words, phone, words, (before, number, after) => {
        const out = redactPersonalData(`${before} ${number} ${after}`);
        expect(out).toContain('[redacted]');
        // No run of the subscriber digits is left (not even a part past the cut).
        expect(out.replace(/\D/g, '')).not.toMatch(/\d{7}/);
      }),
    );
  });

  test('an e-mail address anywhere in free text never survives', () => {
    fc.assert(
      fc.property(words, email, words, (before, address, after) => {
        const out = redactPersonalData(`${before} <${address}> ${after}`);
        expect(out).not.toContain(address);
        expect(out).not.toContain('@');
      }),
    );
  });

  test('text without customer data is left exactly as it was', () => {
    const plain = fc.oneof(
      words,
      fc.date({ min: new Date(2000, 0, 1), max: new Date(2099, 0, 1), noInvalidDate: true }).map((d) => `at ${d.toISOString()}`),
      fc
        .date({ min: new Date(2001, 9, 1), max: new Date(2033, 0, 1), noInvalidDate: true })
        .map((d) => `timestamp ${Math.floor(d.getTime() / 1000)}`),
      fc.integer({ min: 0, max: 99_999_999 }).map((n) => `amount ${n}.00 TZS`),
      fc.uuid().map((id) => `Idempotency-Key ${id}`),
      fc.stringMatching(/^TRX-\d{6,14}$/).map((id) => `payment ${id} not found`),
      fc.constant('must be 10 - 15 digits'),
    );
    fc.assert(
      fc.property(plain, (text) => {
        expect(redactPersonalData(text)).toBe(text);
      }),
    );
  });

  test("the SDK's own made-up example numbers stay; a real-looking number beside one does not", () => {
    const message =
      'must be a Tanzanian mobile number such as 0621 234 567 or +255 621 234 567 (got one ending in …987; that is not a mobile number)';
    // The example in every form the SDK prints it, and the input's last three digits, stay.
    expect(redactPersonalData(message)).toBe(message);
    expect(redactPersonalData('The customer phone must be a mobile number, e.g. 255621234567.')).toBe(
      'The customer phone must be a mobile number, e.g. 255621234567.',
    );
    expect(redactPersonalData('such as 01812-345678 or +880 1812-345678')).toBe('such as 01812-345678 or +880 1812-345678');
    // Any other number is redacted: beside an example, one digit off it, or run together with it.
    expect(redactPersonalData('e.g. 0621 234 567, not 0754 321 987')).toBe('e.g. 0621 234 567, not [redacted]');
    expect(redactPersonalData('e.g. +255 621 234 567 or +255 754 321 987')).toBe('e.g. +255 621 234 567 or [redacted]');
    expect(redactPersonalData('msisdn 255621234568')).toBe('msisdn [redacted]');
    expect(redactPersonalData('0621 234 567 0754 321 987')).toBe('[redacted]');
    // Only the forms the SDK prints: the same number written another way is redacted.
    expect(redactPersonalData('call 0621234567')).toBe('call [redacted]');
    expect(redactPersonalData('(got one ending in …987)')).toBe('(got one ending in …987)');
  });

  test('a log body: phone fields whole, and an e-mail or number in any other field', () => {
    const body = { customer_phone: '0712', customer_email: 'a@b.co', description: 'for 255712345678', items: [{ phone: 'x' }] };
    expect(redactBody(body)).toEqual({
      customer_phone: '[redacted]',
      customer_email: '[redacted]',
      description: 'for [redacted]',
      items: [{ phone: '[redacted]' }],
    });
  });
});
