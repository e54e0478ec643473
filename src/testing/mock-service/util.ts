// Small helpers of the simulated service: JSON and error responses, ids, time formats.
// Web-standard APIs only (Response, crypto.getRandomValues); its HMAC is in hmac.ts.

/** A JSON response. */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  const text = JSON.stringify(body);
  const response = new Response(text, {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });
  RAW_TEXT.set(response, text);
  return response;
}

/** The body text of responses made by `json()`: the HTTP adapter writes it without reading the stream. */
export const RAW_TEXT = new WeakMap<Response, string>();

/** An error response `{ error, message }` (plus `errors` for validation failures). */
export function errorResponse(
  status: number,
  error: string,
  message: string,
  extra: { errors?: Record<string, string[]>; headers?: Record<string, string> } = {},
): Response {
  const body: Record<string, unknown> = { error, message };
  if (extra.errors) body.errors = extra.errors;
  return json(status, body, extra.headers);
}

/** 422 Validation failed with every failing field. */
export function validationFailed(errors: Record<string, string[]>): Response {
  return errorResponse(422, 'Validation failed', 'The given data was invalid.', { errors });
}

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
export function attr(field: string): string {
  return field.replace(/_/g, ' ');
}

/** Compares two strings in time that depends only on their lengths, not their contents. */
export function safeEqual(received: string, expected: string): boolean {
  const length = Math.max(received.length, expected.length);
  let diff = received.length ^ expected.length;
  // charCodeAt past the end is NaN, and NaN | 0 is 0.
  for (let i = 0; i < length; i++) diff |= (received.charCodeAt(i) | 0) ^ (expected.charCodeAt(i) | 0);
  return diff === 0;
}

const ALNUM = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const LOWER = 'abcdefghijklmnopqrstuvwxyz0123456789';

function randomString(alphabet: string, length: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  return Array.from(bytes, (b) => alphabet[b % alphabet.length]).join('');
}

/** Service transaction id, e.g. `TRX7KQ2M9XW4HPA`. */
export const trxId = (): string => `TRX${randomString(ALNUM, 12)}`;
/** Prefixed random id, e.g. `evt_…`, `sub_…`, `inv_…`. */
export const prefixedId = (prefix: string, length = 24): string => `${prefix}_${randomString(LOWER, length)}`;
/** Random hex string of `bytes` bytes. */
export const randomHex = (bytes: number): string =>
  Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('');

/** Rounds to 2 decimals (money). */
export const round2 = (value: number): number => Math.round((value + Number.EPSILON) * 100) / 100;

/** ISO 8601 in UTC with `Z`, e.g. `2025-01-01T12:00:00.000Z`. */
export const isoUtc = (ms: number): string => new Date(ms).toISOString();

/** ISO 8601 with a numeric offset, e.g. `2025-01-01T12:00:00+00:00` (webhook created_at). */
export const isoOffset = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, '+00:00');

/** JSON with object keys sorted: two bodies with the same meaning give the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value as Record<string, unknown>)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Escapes text for HTML. */
export function html(text: unknown): string {
  return `${(text ?? '') as string | number}`.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Plain object check. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for an absolute http:// or https:// URL with a host. */
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
 * One page of `rows` (oldest first, as a store iterates) newest first, in the list shape
 * `{ data, total, limit, offset, has_more }`, with only the page's
 * rows passed through `view`: a list call then builds `limit` views, not one per record.
 */
export function newestPage<T, U>(rows: Iterable<T>, keep: (row: T) => boolean, view: (row: T) => U, limit: number, offset: number) {
  const matches: T[] = [];
  for (const row of rows) if (keep(row)) matches.push(row);
  const data: U[] = [];
  for (let i = matches.length - 1 - offset; i >= 0 && data.length < limit; i--) data.push(view(matches[i]!));
  return { data, total: matches.length, limit, offset, has_more: offset + data.length < matches.length };
}

const SHARED_LISTS = new Map<string, readonly unknown[]>();

/**
 * One frozen array per distinct short list (a merchant's gateway ids and codes are the same
 * on most of the thousands of stored payments): each row points at it instead of a copy.
 * Bounded: past 256 distinct lists (they can come from requests) a copy is kept instead.
 */
export function sharedList<T extends string | number>(list: T[]): T[] {
  const key = JSON.stringify(list);
  const found = SHARED_LISTS.get(key);
  if (found) return found as T[];
  if (SHARED_LISTS.size >= 256) return list;
  const frozen = Object.freeze(list);
  SHARED_LISTS.set(key, frozen);
  return frozen as T[];
}

/** Keeps the newest `max` items of a list (trimmed in batches, so a push stays O(1) on average). */
export function capList<T>(list: T[], max: number): void {
  if (list.length > max + Math.max(16, max >> 3)) list.splice(0, list.length - max);
}

/** Keeps the newest `max` entries of a Map (insertion order: the first are the oldest). */
export function capMap<K, V>(map: Map<K, V>, max: number): void {
  for (const key of map.keys()) {
    if (map.size <= max) return;
    map.delete(key);
  }
}

/**
 * Largest amount the service takes (10^12 currency units): beyond it fees and balances in
 * cents are no longer exact doubles, so an absurd amount is a 422, never a null or a rounding.
 */
export const MAX_AMOUNT = 1_000_000_000_000;
export const TOO_LARGE = `may not be greater than ${MAX_AMOUNT}.`;
