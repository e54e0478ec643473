// Request validation of the simulated service: per-field messages as Laravel words them,
// URLs, phone numbers, list paging and the amount bound.

/** Collects validation messages per field. */
export class FieldErrors {
  readonly map: Record<string, string[]> = {};

  add(field: string, message: string): void {
    (this.map[field] ??= []).push(message);
  }

  has(field?: string): boolean {
    return field === undefined ? Object.keys(this.map).length > 0 : field in this.map;
  }
}

/** `payment_amount` → `payment amount`, as Laravel names attributes in messages. */
function attr(field: string): string {
  return field.replace(/_/g, ' ');
}

/** A field counts as given unless it is missing, null or empty. */
export const present = (value: unknown): boolean => value !== undefined && value !== null && value !== '';

/** A required string field of at most `max` characters, or null (its error in `errors`). */
export function requiredString(body: Record<string, unknown>, field: string, errors: FieldErrors, max?: number): string | null {
  if (!present(body[field])) {
    errors.add(field, `The ${attr(field)} field is required.`);
    return null;
  }
  return optionalString(body, field, errors, max);
}

/** An optional string field of at most `max` characters: the string, or null when absent or wrong. */
export function optionalString(body: Record<string, unknown>, field: string, errors: FieldErrors, max?: number): string | null {
  const value = body[field];
  if (!present(value)) return null;
  if (typeof value !== 'string') {
    errors.add(field, `The ${attr(field)} must be a string.`);
    return null;
  }
  if (max !== undefined && value.length > max) {
    errors.add(field, `The ${attr(field)} may not be greater than ${max} characters.`);
    return null;
  }
  return value;
}

/**
 * A required amount up to MAX_AMOUNT: at least 1 (`one`, payments and plans) or above 0
 * (`positive`, payouts). The number, or null (its error in `errors`).
 */
export function readAmount(
  body: Record<string, unknown>,
  field: string,
  errors: FieldErrors,
  least: 'one' | 'positive' = 'one',
): number | null {
  const value = body[field];
  const name = attr(field);
  if (!present(value)) errors.add(field, `The ${name} field is required.`);
  else if (typeof value !== 'number' || !Number.isFinite(value)) errors.add(field, `The ${name} must be a number.`);
  else if (least === 'one' && value < 1) errors.add(field, `The ${name} must be at least 1.00.`);
  else if (least === 'positive' && value <= 0) errors.add(field, `The ${name} must be greater than 0.`);
  else if (value > MAX_AMOUNT) errors.add(field, `The ${name} ${TOO_LARGE}`);
  else return value;
  return null;
}

/** An http(s) URL field (https only in production when `https`), or null (absent or wrong). */
export function readUrl(
  body: Record<string, unknown>,
  field: string,
  errors: FieldErrors,
  opts: { required: boolean; https: boolean },
): string | null {
  const value = body[field];
  if (!present(value)) {
    if (opts.required) errors.add(field, `The ${attr(field)} field is required.`);
    return null;
  }
  if (!isHttpUrl(value)) {
    errors.add(field, `The ${attr(field)} must be a valid URL.`);
    return null;
  }
  if (opts.https && !value.toLowerCase().startsWith('https://')) {
    errors.add(field, `The ${attr(field)} must use https in production.`);
    return null;
  }
  return value;
}

/**
 * True for an absolute http:// or https:// URL with a host, at most 2,048 characters: the
 * spec's URL fields (`webhook_url`, `ipn_url`, the redirects) and the console's test-event URL.
 */
export function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > 2048) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
  } catch {
    return false;
  }
}

/** Mobile number in international digits form (a leading + tolerated). */
export const MOBILE = /^\+?[1-9]\d{7,14}$/;
/** Tanzanian mobile number: 255 then 6 or 7 then 8 digits. */
export const TZ_MOBILE = /^\+?255[67]\d{8}$/;
/** Strips a leading +. */
export const digits = (phone: string): string => phone.replace(/^\+/, '');

/** Reads `limit`/`offset` of a list route: defaults 20 and 0, limit at most 100. */
export function pageParams(query: URLSearchParams, errors: FieldErrors): { limit: number; offset: number } {
  const read = (name: string, fallback: number, min: number, max: number): number => {
    const raw = query.get(name);
    if (raw === null || raw === '') return fallback;
    if (!/^\d+$/.test(raw)) {
      errors.add(name, `The ${name} must be an integer.`);
      return fallback;
    }
    const value = Number(raw);
    if (value < min) errors.add(name, `The ${name} must be at least ${min}.`);
    else if (value > max) errors.add(name, `The ${name} may not be greater than ${max}.`);
    return value;
  };
  return { limit: read('limit', 20, 1, 100), offset: read('offset', 0, 0, Number.MAX_SAFE_INTEGER) };
}

/**
 * Largest amount the service takes (10^12 currency units): beyond it fees and balances in
 * cents are no longer exact doubles, so an absurd amount is a 422, never a null or a rounding.
 */
const MAX_AMOUNT = 1_000_000_000_000;
const TOO_LARGE = `may not be greater than ${MAX_AMOUNT}.`;
