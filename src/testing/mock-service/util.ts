// Small helpers of the simulated service: constant-time compare, path decoding, money and
// time formats, canonical JSON, HTML escaping, and bounded lists. JSON and error responses are
// in responses.ts, request validation in validation.ts, random ids in ids.ts, HMAC in hmac.ts.

/** Compares two strings in time that depends only on their lengths, not their contents. */
export function safeEqual(received: string, expected: string): boolean {
  const length = Math.max(received.length, expected.length);
  let diff = received.length ^ expected.length;
  // charCodeAt past the end is NaN, and NaN | 0 is 0.
  for (let i = 0; i < length; i++) diff |= (received.charCodeAt(i) | 0) ^ (expected.charCodeAt(i) | 0);
  return diff === 0;
}

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

/** A stored row as the API shows it: without the `merchant_id` the store keys it by. */
export function withoutMerchant<T extends { merchant_id: number }>(row: T): Omit<T, 'merchant_id'> {
  const { merchant_id: _merchant, ...view } = row;
  return view;
}

/** Whether a stored row belongs to the caller: the same merchant and environment. */
export function isOwn(
  caller: { merchant: { id: number }; environment: string },
  row: { merchant_id: number; environment: string },
): boolean {
  return row.merchant_id === caller.merchant.id && row.environment === caller.environment;
}

/** Plain object check. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A %-encoded path segment decoded, or null when it is not valid %-encoding (a bad escape, a lone surrogate). */
export function safeDecode(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
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
