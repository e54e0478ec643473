// The numbering plans core/phone.ts reads, as far as mobile numbers go: data only, so that
// core/personal-data.ts can keep their made-up examples readable without importing phone.ts
// (which imports the errors, which import personal-data.ts).

/**
 * The countries whose mobile numbers {@link normalizePhone} knows: Tanzania (`'TZ'`, +255, the
 * default: the service's market), Kenya (`'KE'`, +254), Uganda (`'UG'`, +256), Rwanda
 * (`'RW'`, +250) and Bangladesh (`'BD'`, +880).
 */
export type PhoneCountry = 'TZ' | 'KE' | 'UG' | 'RW' | 'BD';

/** One country's numbering plan, as far as mobile numbers go. */
export interface Plan {
  /** Country calling code (ITU-T E.164). */
  code: string;
  /** Adjective for messages. */
  name: string;
  /** Digits of the national significant number (after the trunk `0` or the code). */
  length: number;
  /** The national significant numbers of mobile phones. */
  mobile: RegExp;
  /** A made-up example in national form, as messages print it (the international form is made from it). */
  national: string;
}

// The mobile ranges are Google libphonenumber's `<mobile>` nationalNumberPattern, copied from
// resources/PhoneNumberMetadata.xml of release v9.0.35 (2026-07-16), which states its sources
// above each territory: the regulator's national numbering plan and the ITU-T E.164 national
// numbering plan notification (itu.int/oth/T0202…). The examples are libphonenumber's
// `<exampleNumber>` for mobile, written in its number formats: made up, and none of them the
// number the test suite uses as a customer's (255712345678), which must stay redacted.
// core/personal-data.ts keeps these examples readable in redacted text (it reads this table).
export const PLANS: Record<PhoneCountry, Plan> = {
  // Tanzania: TCRA plan, ITU T02020000CB; 61-63, 65-69 and 70-79 (70 listed since v9.0.24, 72 since
  // v9.0.34: the sandbox's test phones 2557000000xx are in range).
  TZ: {
    code: '255',
    name: 'Tanzanian',
    length: 9,
    mobile: /^(?:6[1-35-9]|7\d)\d{7}$/,
    national: '0621 234 567',
  },
  // Kenya: Communications Authority plan (ca.go.ke), ITU T0202000070; 7xx and the assigned
  // 10x-14x and 18x blocks.
  KE: {
    code: '254',
    name: 'Kenyan',
    length: 9,
    mobile: /^(?:1(?:0[0-8]|[18]\d|2[014]|30|4[0-5])|7\d\d)\d{6}$/,
    national: '0712 123456',
  },
  // Uganda: UCC plan, ITU T02020000F1; 70-79, of 72, 73 and 79 only the blocks in use.
  UG: {
    code: '256',
    name: 'Ugandan',
    length: 9,
    mobile: /^(?:7280\d{5}|7(?:[014-8]\d|2[01467]|3[0167]|9[0-589])\d{6})$/,
    national: '0712 345678',
  },
  // Rwanda: RURA key ICT documents (rura.rw); 72, 73, 78, 79 (75, Rwandatel's, revoked).
  RW: {
    code: '250',
    name: 'Rwandan',
    length: 9,
    mobile: /^7[237-9]\d{7}$/,
    national: '0720 123 456',
  },
  // Bangladesh: BTRC national numbering plan, ITU T0202000012; 011, 013-019 (and the legacy
  // 10-digit 644, 37, 38, 44, 66 blocks libphonenumber still lists as mobile).
  BD: {
    code: '880',
    name: 'Bangladeshi',
    length: 10,
    mobile: /^(?:(?:1[13-9]\d|644)\d{7}|(?:3[78]|44|66)[02-9]\d{7})$/,
    national: '01812-345678',
  },
};

/** A plan's example in international form: `0621 234 567` → `+255 621 234 567`. */
export const international = (plan: Plan): string => `+${plan.code} ${plan.national.slice(1)}`;
