// Field rules shared by several routes, each written once from the spec's tables.
import * as z from 'zod';

/** An absolute http(s) URL (webhook targets, redirects). */
export const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an absolute http:// or https:// URL' });

/** 3-letter upper-case ISO 4217 code. */
export const currencyCode = z.string().regex(/^[A-Z]{3}$/, 'must be a 3-letter upper-case currency code such as USD');

/** A mobile number in international digits form, e.g. 255712345678 (a leading + is tolerated). */
export const mobileNumber = z.string().regex(/^\+?[1-9]\d{7,14}$/, 'must be a mobile number in international digits form, e.g. 255712345678');

/** A Tanzanian mobile number (recurring billing's USSD push), e.g. 255712345678. */
export const tanzanianMobileNumber = z
  .string()
  .regex(/^\+?255[67]\d{8}$/, 'must be a Tanzanian mobile number in international form, e.g. 255712345678');

/** A non-empty identifier used in a path. */
export const pathId = z
  .string()
  .trim()
  .min(1, 'must be a non-empty string')
  .max(200, 'must be at most 200 characters')
  // The URL parser resolves `.`/`..` segments away (even as %2e), sending the call to another
  // route; a lone surrogate makes encodeURIComponent throw a bare URIError.
  .refine((id) => id !== '.' && id !== '..', 'must not be "." or ".."')
  .refine((id) => !/\p{Cs}/u.test(id), 'must be well-formed Unicode (it has a lone surrogate)');

/**
 * An enum closed for the compiler and open at run time: a value newer than this SDK (a new
 * status) passes through as it came instead of failing the call.
 */
export function openEnum<const T extends readonly string[]>(_values: T): z.ZodType<T[number]> {
  return z.string() as unknown as z.ZodType<T[number]>;
}

/** A positive, finite amount in currency units. */
export const positiveAmount = z.number().finite().positive('must be greater than 0');

/** Page size and offset of list routes. */
export const pageParams = {
  limit: z.int().min(1, 'must be at least 1').optional(),
  offset: z.int().min(0, 'must be 0 or more').optional(),
};

/**
 * Bodies the spec does not show may come bare or in a `{ status, data }` success
 * envelope: unwrap the envelope so callers get the resource either way.
 */
export function unwrapEnvelope(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const record = body as Record<string, unknown>;
  const data = record.data;
  const hasOwnId = 'id' in record || 'trx_id' in record;
  if (!hasOwnId && typeof data === 'object' && data !== null) return data;
  return body;
}

/** A lenient object schema for a body the spec does not show: known fields typed when present, the rest kept. */
export function lenientRecord<T extends z.core.$ZodShape>(shape: T) {
  return z.preprocess(unwrapEnvelope, z.looseObject(shape));
}
