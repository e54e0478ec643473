// The earlier generation's request input and validation, as Laravel 11 does them: the body is
// read only when Content-Type contains `/json` (anything it cannot decode reads as no
// fields), strings are trimmed and empty ones become null (TrimStrings,
// ConvertEmptyStringsToNull), and a failure is 422 `{"status":"error","errors":{…}}` with
// Laravel's default English messages, fields in the order the rules list them.
import { json } from './responses.js';
import type { Step } from './router.js';
import { isObject } from './util.js';

/** Reads the body as Laravel would: sets `x.body` (never refuses; validation speaks later). */
export const laravelInput: Step = async (x, next) => {
  const contentType = x.request.headers.get('content-type') ?? '';
  if (x.method === 'POST' && contentType.includes('/json')) x.body = decode(x.rawBody);
  return next();
};

function decode(raw: Uint8Array): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw));
    return isObject(parsed) ? (clean(parsed) as Record<string, unknown>) : {};
  } catch {
    return {}; // json_decode failed: no input
  }
}

// TrimStrings then ConvertEmptyStringsToNull, through nested arrays as Laravel does.
function clean(value: unknown): unknown {
  if (typeof value === 'string') {
    const trimmed = value.trim();
    return trimmed === '' ? null : trimmed;
  }
  if (Array.isArray(value)) return value.map(clean);
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clean(v)]));
  return value;
}

/** Collected messages per field, in the order they are added. */
type Errors = Record<string, string[]>;

const name = (field: string) => field.replace(/_/g, ' ');
const given = (value: unknown) => value !== undefined && value !== null;
const add = (errors: Errors, field: string, message: string) => void (errors[field] ??= []).push(message);

/** PHP's is_numeric: a number, or a numeric string (leading and trailing whitespace allowed). */
function isNumeric(value: unknown): boolean {
  if (typeof value === 'number') return Number.isFinite(value);
  return typeof value === 'string' && /^[ \t\n\r\v\f]*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?[ \t\n\r\v\f]*$/.test(value);
}

// Laravel's `url` rule, simplified: a scheme, `://`, a host, no spaces.
const isUrl = (value: string): boolean => {
  if (!/^[a-z][a-z\d+.-]*:\/\/[^\s/?#]+[^\s]*$/i.test(value)) return false;
  try {
    return new URL(value).hostname !== '';
  } catch {
    return false;
  }
};
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function str(errors: Errors, body: Record<string, unknown>, field: string, required: boolean, max: number): void {
  const value = body[field];
  if (!given(value)) return required ? add(errors, field, `The ${name(field)} field is required.`) : undefined;
  if (typeof value !== 'string') return add(errors, field, `The ${name(field)} field must be a string.`);
  if (value.length > max) add(errors, field, `The ${name(field)} field must not be greater than ${max} characters.`);
}

function url(errors: Errors, body: Record<string, unknown>, field: string): void {
  const value = body[field];
  if (!given(value)) return add(errors, field, `The ${name(field)} field is required.`);
  if (typeof value !== 'string' || !isUrl(value)) add(errors, field, `The ${name(field)} field must be a valid URL.`);
  if (typeof value === 'string' && value.length > 255)
    add(errors, field, `The ${name(field)} field must not be greater than 255 characters.`);
}

function amount(errors: Errors, body: Record<string, unknown>): void {
  const value = body.payment_amount;
  if (!given(value)) return add(errors, 'payment_amount', 'The payment amount field is required.');
  if (!isNumeric(value)) return add(errors, 'payment_amount', 'The payment amount field must be a number.');
  if (Number(value) < 1) add(errors, 'payment_amount', 'The payment amount field must be at least 1.');
}

/** initiate-payment's rules; a 422 with every failing field, or null. */
export function validateInitiate(body: Record<string, unknown>): Response | null {
  const errors: Errors = {};
  str(errors, body, 'ref_trx', true, 60);
  str(errors, body, 'currency_code', true, 255);
  amount(errors, body);
  for (const field of ['ipn_url', 'success_redirect', 'cancel_redirect']) url(errors, body, field);
  str(errors, body, 'description', false, 255);
  str(errors, body, 'customer_name', false, 100);
  str(errors, body, 'customer_email', false, 100);
  const email = body.customer_email;
  if (typeof email === 'string' && !EMAIL.test(email))
    add(errors, 'customer_email', 'The customer email field must be a valid email address.');
  return Object.keys(errors).length === 0 ? null : json(422, { status: 'error', errors });
}
