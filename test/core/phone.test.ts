// normalizePhone / checkPhone: the forms people type, per country, become the international
// digits; anything that is not a mobile number of the country is refused with a message that
// shows the expected form (a made-up example) and the input's last three digits only.
import { describe, expect, test } from 'vitest';
import { InvalidParamsError } from '../../src/core/error.js';
import { redactPersonalData } from '../../src/core/personal-data.js';
import { checkPhone, normalizePhone, phoneCountryError, type PhoneCountry } from '../../src/core/phone.js';
import { TEST_PHONE_NUMBERS, defaultMerchant } from '../../src/testing/mock-service/defaults.js';

interface CountryCases {
  /** The example every refusal shows: national, international. */
  example: readonly [string, string];
  /** Input → international digits. */
  accepted: readonly (readonly [string, string])[];
  /** What the row is → input. */
  refused: readonly (readonly [string, unknown])[];
}

// Not strings: refused for every country, the value never shown.
const NOT_STRINGS = [
  ['a number', 255754321987],
  ['null', null],
  ['undefined', undefined],
  ['an object', { phone: '0754321987' }],
  ['an array', ['0754321987']],
  ['a boolean', true],
] as const;

// The ranges are libphonenumber v9.0.35's resources/PhoneNumberMetadata.xml `<mobile>` patterns
// (and its `<fixedLine>` examples for the landlines), after each regulator's numbering plan.
const CASES: Record<PhoneCountry, CountryCases> = {
  TZ: {
    example: ['0621 234 567', '+255 621 234 567'],
    // Mobile (?:6[1-35-9]|7\d)\d{7}: TCRA plan, ITU-T E.164 notification T02020000CB.
    accepted: [
      ['0712 345 678', '255712345678'],
      ['+255 712-345-678', '255712345678'],
      ['00255712345678', '255712345678'],
      ['0712-345-678', '255712345678'],
      ['0712.345.678', '255712345678'],
      ['(0712) 345 678', '255712345678'],
      ['+255 (0)712 345 678', '255712345678'],
      ['255712345678', '255712345678'],
      ['712345678', '255712345678'],
      [' 0754 321 987 ', '255754321987'],
      ['0621 234 567', '255621234567'], // libphonenumber's mobile example, the 6x range
      ['0699 000 111', '255699000111'],
      ['0700 000 001', '255700000001'], // 70 (in the plan since libphonenumber v9.0.24)
      ['0720 111 222', '255720111222'], // 72 (since v9.0.34)
    ],
    refused: [
      ['a landline (Dar es Salaam, fixed 2[2-8])', '0222 345 678'],
      ['a range that is not mobile (64)', '0641 234 567'],
      ['a toll-free number', '0800 123 456'],
      ['a Kenyan number', '+254 754 321 987'],
      ['a Kenyan number in bare digits', '254754321987'],
      ['a number of a country the SDK does not know', '+1 202 555 0143'],
      ['too short', '0754 321 98'],
      ['too long', '0754 321 9876'],
      ['too short after +255', '+255 754 321 98'],
      ['letters', '0754 ABC 987'],
      ['a letter O for the 0', 'O754 321 987'],
      ['a + inside', '0754+321987'],
      ['an empty string', ''],
      ['blanks only', '   '],
      ['only a +', '+'],
    ],
  },
  KE: {
    example: ['0712 123456', '+254 712 123456'],
    // Mobile (?:1(?:0[0-8]|[18]\d|2[014]|30|4[0-5])|7\d\d)\d{6}: Communications Authority of
    // Kenya plan (ca.go.ke), ITU-T E.164 notification T0202000070.
    accepted: [
      ['0712 123456', '254712123456'],
      ['+254 712 123 456', '254712123456'],
      ['00254712123456', '254712123456'],
      ['0712-123-456', '254712123456'],
      ['0712.123.456', '254712123456'],
      ['(0712) 123456', '254712123456'],
      ['254712123456', '254712123456'],
      ['712123456', '254712123456'],
      ['0110 123456', '254110123456'], // 11x: Safaricom's 1xx block
      ['0100 987654', '254100987654'], // 10x: Airtel's
      ['0799 000111', '254799000111'],
    ],
    refused: [
      ['a landline (Nairobi, 020)', '020 2012345'],
      ['a 1xx block not assigned (19x)', '0190 123456'],
      ['a Tanzanian number', '+255 754 321 987'],
      ['a Ugandan number in bare digits', '256772987654'],
      ['too short', '0722 98765'],
      ['too long', '0722 9876543'],
      ['letters', '0722 98765X'],
      ['an empty string', ''],
    ],
  },
  UG: {
    example: ['0712 345678', '+256 712 345678'],
    // Mobile 7280\d{5}|7(?:[014-8]\d|2[01467]|3[0167]|9[0-589])\d{6}: Uganda Communications
    // Commission plan, ITU-T E.164 notification T02020000F1.
    accepted: [
      ['0712 345678', '256712345678'],
      ['+256 712 345 678', '256712345678'],
      ['00256712345678', '256712345678'],
      ['0712-345-678', '256712345678'],
      ['0712.345.678', '256712345678'],
      ['(0712) 345678', '256712345678'],
      ['256712345678', '256712345678'],
      ['712345678', '256712345678'],
      ['0772 987654', '256772987654'], // 77
      ['0701 234567', '256701234567'], // 70
      ['0728 012345', '256728012345'], // the 7280 block
    ],
    refused: [
      ['a landline (Kampala, 031)', '0312 345678'],
      ['a 72x block not in use (722)', '0722 123456'],
      ['a Rwandan number', '+250 788 987 654'],
      ['too short', '0772 98765'],
      ['too long', '0772 9876543'],
      ['letters', 'call 0772 987654'],
      ['an empty string', ''],
    ],
  },
  RW: {
    example: ['0720 123 456', '+250 720 123 456'],
    // Mobile 7[237-9]\d{7}: RURA's numbering plan (rura.rw, key ICT documents); 75 (Rwandatel)
    // revoked.
    accepted: [
      ['0720 123 456', '250720123456'],
      ['+250 720-123-456', '250720123456'],
      ['00250720123456', '250720123456'],
      ['0788-987-654', '250788987654'],
      ['0788.987.654', '250788987654'],
      ['(0788) 987 654', '250788987654'],
      ['250788987654', '250788987654'],
      ['788987654', '250788987654'],
      ['0731 234 567', '250731234567'], // 73
      ['0791 234 567', '250791234567'], // 79
    ],
    refused: [
      ['a landline (Kigali, 252)', '0252 987 654'],
      ['the revoked 75 range', '0751 234 567'],
      ['a Ugandan number', '+256 772 987 654'],
      ['too short', '0788 987 65'],
      ['too long', '0788 987 6543'],
      ['letters', '0788 987 65a'],
      ['an empty string', ''],
    ],
  },
  BD: {
    example: ['01812-345678', '+880 1812-345678'],
    // Mobile (?:1[13-9]\d|644)\d{7}|(?:3[78]|44|66)[02-9]\d{7}: BTRC national numbering plan,
    // ITU-T E.164 notification T0202000012.
    accepted: [
      ['01812-345678', '8801812345678'],
      ['+880 1812-345678', '8801812345678'],
      ['008801812345678', '8801812345678'],
      ['01812 345 678', '8801812345678'],
      ['01812.345.678', '8801812345678'],
      ['(01812) 345678', '8801812345678'],
      ['8801812345678', '8801812345678'],
      ['1812345678', '8801812345678'],
      ['01712 987654', '8801712987654'], // 017
      ['01312 987654', '8801312987654'], // 013
      ['01999 000111', '8801999000111'], // 019
    ],
    refused: [
      ['a landline (Dhaka, 02)', '02-7111234'],
      ['a range that is not mobile (012)', '01212 987654'],
      ['a Tanzanian number', '+255 754 321 987'],
      ['a Kenyan number in bare digits', '254712987654'],
      ['too short', '01712-98765'],
      ['too long', '01712-9876543'],
      ['letters', '01712-98765B'],
      ['an empty string', ''],
    ],
  },
};

/** Refused, with the example and nothing of the input but its last three digits. */
function expectRefused(country: PhoneCountry, input: unknown): string {
  const [national, international] = CASES[country].example;
  const result = checkPhone(input, country);
  expect(result).not.toHaveProperty('phone');
  const { message } = result as { message: string };
  expect(message).toContain(`such as ${national} or ${international}`);
  // Apart from the example, no four digits in a row: the input's last three at most.
  expect(message.replace(national, '').replace(international, '')).not.toMatch(/\d{4}/);
  if (typeof input === 'string') {
    const digits = input.replace(/\D/g, '');
    if (digits.length > 3) {
      expect(message).not.toContain(input.trim());
      expect(message).toContain(`(got one ending in …${digits.slice(-3)}`);
    }
  } else {
    expect(message).toMatch(/^must be a string /);
    if (typeof input === 'number') expect(message).not.toContain(String(input));
  }
  return message;
}

describe.each(Object.keys(CASES) as PhoneCountry[])('checkPhone, %s', (country) => {
  const { accepted, refused } = CASES[country];

  test.each(accepted)('accepts %j', (input, phone) => {
    expect(checkPhone(input, country)).toEqual({ phone });
  });

  test.each([...refused, ...NOT_STRINGS])('refuses %s (%j)', (_what, input) => {
    expectRefused(country, input);
  });

  test('its refusals survive the redaction of log lines and error messages as they are', () => {
    for (const [, input] of refused) {
      const message = expectRefused(country, input);
      expect(redactPersonalData(message)).toBe(message);
    }
  });
});

describe('checkPhone: what each refusal says to fix', () => {
  test.each([
    ['TZ', '+254 754 321 987', "this looks like a Kenyan number (+254): pass { country: 'KE' } or the client's phoneCountry option"],
    ['TZ', '254754321987', "pass { country: 'KE' }"],
    ['KE', '256772987654', "this looks like a Ugandan number (+256): pass { country: 'UG' }"],
    ['UG', '+250 788 987 654', "this looks like a Rwandan number (+250): pass { country: 'RW' }"],
    ['RW', '+256 772 987 654', "pass { country: 'UG' }"],
    ['BD', '+255 754 321 987', "this looks like a Tanzanian number (+255): pass { country: 'TZ' }"],
    ['TZ', '+880 1712-987654', "this looks like a Bangladeshi number (+880): pass { country: 'BD' }"],
    ['TZ', '+1 202 555 0143', 'that is not a +255 number'],
    ['TZ', '0222 345 678', 'that is not a mobile number'],
    ['TZ', '0754 321 98', 'too short: 9 digits belong after the 0 or +255'],
    ['BD', '01712-9876543', 'too long: 10 digits belong after the 0 or +880'],
    ['TZ', '0754 ABC 987', 'use only digits, spaces, dashes, dots, parentheses and a leading +'],
    ['TZ', '', '(got an empty string)'],
    ['TZ', '+', '(got no digits)'],
    ['TZ', '07', '(got only 2 digits'],
  ] as const)('%s %j: %s', (country, input, says) => {
    expect(expectRefused(country, input)).toContain(says);
  });

  test('the message in full', () => {
    expect(checkPhone('0222 345 678')).toEqual({
      message:
        'must be a Tanzanian mobile number such as 0621 234 567 or +255 621 234 567 (got one ending in …678; that is not a mobile number)',
    });
    expect(checkPhone(712345678)).toEqual({
      message: 'must be a string holding a Tanzanian mobile number such as 0621 234 567 or +255 621 234 567 (got a number)',
    });
  });

  test('an unknown country is refused, never read as another (normalizePhone says which)', () => {
    for (const country of ['XX', 'tz', 'toString', '__proto__', 255, null]) {
      expect(checkPhone('0712 345 678', country as PhoneCountry)).toEqual({ message: 'must be a mobile number of a known phone country' });
      expect(phoneCountryError(country)).toMatch(/^unknown phone country .*: use one of 'TZ', 'KE', 'UG', 'RW', 'BD'$/);
      // null, like undefined, is normalizePhone's default country.
      if (country !== null)
        expect(() => normalizePhone('0712 345 678', { country: country as PhoneCountry })).toThrow(
          /normalizePhone: country: unknown phone country/,
        );
    }
    expect(checkPhone('0712 345 678', undefined)).toEqual({ phone: '255712345678' });
    expect(phoneCountryError('KE')).toBeUndefined();
  });
});

describe('normalizePhone', () => {
  test('the local forms of the default country, Tanzania', () => {
    expect(normalizePhone('0712 345 678')).toBe('255712345678');
    expect(normalizePhone('+255 712-345-678')).toBe('255712345678');
    expect(normalizePhone('00255712345678')).toBe('255712345678');
    expect(normalizePhone('0712 345 678', { country: undefined })).toBe('255712345678');
  });

  test('another country with { country }', () => {
    expect(normalizePhone('0712 123456', { country: 'KE' })).toBe('254712123456');
    expect(normalizePhone('01812-345678', { country: 'BD' })).toBe('8801812345678');
  });

  test('a refusal throws InvalidParamsError with errors.phone', () => {
    let error: unknown;
    try {
      normalizePhone('0222 345 678');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidParamsError);
    const { errors, message } = error as InvalidParamsError;
    expect(errors).toEqual({ phone: [(checkPhone('0222 345 678') as { message: string }).message] });
    expect(message).toMatch(/^Invalid params for normalizePhone: phone: must be a Tanzanian mobile number .*Nothing was sent\.$/);
    expect(message).not.toContain('0222 345 678');
    expect(() => normalizePhone(255712345678 as unknown as string)).toThrow(InvalidParamsError);
  });
});

describe("the sandbox's phone numbers", () => {
  // The simulated service's fixed test phones (mock-service/defaults.ts, read by push.ts) and
  // the demo merchant's settlement number: all in Tanzania's 7x mobile range, kept as they are.
  test.each([...Object.values(TEST_PHONE_NUMBERS), defaultMerchant().settlementNumber ?? ''])('%s is accepted for TZ', (phone) => {
    expect(normalizePhone(phone)).toBe(phone);
    expect(normalizePhone(`+${phone}`)).toBe(phone);
    expect(normalizePhone(`0${phone.slice(3)}`)).toBe(phone);
  });
});
