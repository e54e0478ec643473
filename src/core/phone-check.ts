// The phone rules the kits share with the client: a number as a customer types it checked as a
// mobile number of one country (checkPhone), a country checked (phoneCountryError). Pure and
// dependency-free: it returns messages and throws nothing, so the payout and billing kits load
// it without the client's error classes (core/phone.ts, normalizePhone, throws those).
import { international, PLANS, type Plan, type PhoneCountry } from './phone-plans.js';

/** @internal Every {@link PhoneCountry}, in the order messages list them. */
export const PHONE_COUNTRIES: readonly PhoneCountry[] = Object.keys(PLANS) as PhoneCountry[];

const PLAN_LIST = Object.values(PLANS);
// What a typed number may hold besides digits: one leading +, blanks, - . ( ).
const ALLOWED = /^\+?[\d\s().-]*$/;

/**
 * @internal `input` as the international digits without `+` of a mobile number of `country`
 * (`{ phone: '255712345678' }`), or why not (`{ message }`, for an `InvalidParamsError`).
 * Never throws. The message shows the expected form with a made-up example and the input's
 * last three digits only, never the number.
 */
export function checkPhone(input: unknown, country: PhoneCountry = 'TZ'): { phone: string } | { message: string } {
  // Looked up as an own key: a JS caller may pass anything ('toString' included). The callers
  // check the country first and say what is wrong with it (phoneCountryError).
  const plan = Object.hasOwn(PLANS, country) ? PLANS[country] : undefined;
  if (!plan) return { message: 'must be a mobile number of a known phone country' };
  if (typeof input !== 'string') return { message: `must be a string holding ${expected(plan)} (got ${typeName(input)})` };
  const text = input.trim();
  if (text === '') return { message: `must be ${expected(plan)} (got an empty string)` };
  const digits = text.replace(/\D/g, '');
  const refuse = (why: string) => ({ message: `must be ${expected(plan)} (${got(digits)}${why})` });
  if (!ALLOWED.test(text)) return refuse('; use only digits, spaces, dashes, dots, parentheses and a leading +');
  if (digits === '') return refuse('');
  const nsn = significantNumber(plan, text, digits);
  if (typeof nsn !== 'string') return refuse(nsn.why);
  if (nsn.length !== plan.length) {
    return refuse(`; too ${nsn.length < plan.length ? 'short' : 'long'}: ${plan.length} digits belong after the 0 or +${plan.code}`);
  }
  if (!plan.mobile.test(nsn)) return refuse('; that is not a mobile number');
  return { phone: plan.code + nsn };
}

// The national significant number `text` (already checked: digits and separators) holds, or why
// it holds none. Lengths and ranges are checked by the caller.
function significantNumber(plan: Plan, text: string, digits: string): string | { why: string } {
  if (text.startsWith('+')) return afterCode(plan, digits);
  // 00 is the international prefix: no mobile number of these countries starts with 0.
  if (digits.startsWith('00')) return afterCode(plan, digits.slice(2));
  if (digits.startsWith('0')) return digits.slice(1);
  // Bare digits: longer than a national number, they carry a country code.
  if (digits.length <= plan.length) return digits;
  if (digits.startsWith(plan.code)) return afterCode(plan, digits);
  const other = PLAN_LIST.find((p) => digits.startsWith(p.code) && digits.length === p.code.length + p.length);
  return other ? { why: otherCountry(other) } : digits;
}

// The national significant number after the country code at the start of `digits`.
function afterCode(plan: Plan, digits: string): string | { why: string } {
  if (!digits.startsWith(plan.code)) {
    const other = PLAN_LIST.find((p) => digits.startsWith(p.code));
    return { why: other ? otherCountry(other) : `; that is not a +${plan.code} number` };
  }
  const rest = digits.slice(plan.code.length);
  // `+255 (0)712 345 678`: the trunk 0 written after the code, as some print it.
  return rest.startsWith('0') && rest.length === plan.length + 1 ? rest.slice(1) : rest;
}

const expected = (plan: Plan) => `a ${plan.name} mobile number such as ${plan.national} or ${international(plan)}`;

// The input's last three digits only: enough to tell which number, never the number.
function got(digits: string): string {
  if (digits.length > 3) return `got one ending in …${digits.slice(-3)}`;
  return digits.length === 0 ? 'got no digits' : `got only ${digits.length} digit${digits.length === 1 ? '' : 's'}`;
}

function otherCountry(other: Plan): string {
  const id = PHONE_COUNTRIES.find((key) => PLANS[key] === other);
  return `; this looks like a ${other.name} number (+${other.code}): pass { country: '${id}' } or the client's phoneCountry option`;
}

/** @internal Why `country` is no {@link PhoneCountry} (`unknown phone country 'US': use one of …`), else `undefined`. */
export function phoneCountryError(country: unknown): string | undefined {
  if (Object.hasOwn(PLANS, country as PropertyKey)) return undefined;
  const shown = typeof country === 'string' ? `'${country.slice(0, 12)}'` : typeName(country);
  const known = PHONE_COUNTRIES.map((key) => `'${key}'`).join(', ');
  return `unknown phone country ${shown}: use one of ${known}`;
}

function typeName(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
