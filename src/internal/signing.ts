import { InvalidParamsError } from '../core/error.js';
import { hmacSha256Hex, hmacSha256HexSync } from './hmac.js';

/** Inputs of {@link signRequest}: exactly what goes on the wire. */
export interface SignRequestInput {
  /** The API secret of the selected environment. Never sent. */
  secret: string;
  /** Unix time in seconds (the `X-Timestamp` header). */
  timestamp: number | string;
  /** HTTP method, e.g. `GET` or `POST` (upper-cased for you). */
  method: string;
  /** Path and query string byte for byte as sent, e.g. `/api/v1/payments?limit=10`. */
  pathWithQuery: string;
  /** The raw request body as sent; empty string (or omitted) for GET. */
  body?: string | undefined;
}

/**
 * Signs one request as the Business Payments API expects:
 * `sha256=` + hex HMAC-SHA256(secret, `<timestamp>.<METHOD>.<path_with_query>.<raw_body>`).
 * A GET has an empty body, so its payload ends with a dot. Resolves to the value of
 * the `X-Signature` header.
 *
 * The client calls this afresh for every attempt; it is exported for curl users, proxies
 * and tests. Test vectors are in `docs/signing.md`.
 *
 * @example
 * ```ts
 * const signature = await signRequest({
 *   secret: 'test_secret', timestamp: 1700000000,
 *   method: 'GET', pathWithQuery: '/api/v1/balance',
 * });
 * // 'sha256=…'
 * ```
 */
export async function signRequest(input: SignRequestInput): Promise<string> {
  const errors: Record<string, string[]> = {};
  if (typeof input !== 'object' || input === null) throw new InvalidParamsError('signRequest', { input: ['must be an object'] });
  if (typeof input.secret !== 'string' || input.secret === '') errors.secret = ['must be a non-empty string'];
  if (!/^\d+$/.test(String(input.timestamp))) errors.timestamp = ['must be unix seconds (digits only)'];
  if (typeof input.method !== 'string' || !/^[A-Za-z]+$/.test(input.method)) errors.method = ['must be an HTTP method such as GET'];
  if (typeof input.pathWithQuery !== 'string' || !input.pathWithQuery.startsWith('/')) {
    errors.pathWithQuery = ['must be the path as sent, starting with /'];
  }
  if (input.body !== undefined && typeof input.body !== 'string') errors.body = ['must be the raw body string'];
  if (Object.keys(errors).length > 0) throw new InvalidParamsError('signRequest', errors);
  return signatureHeader(input.secret, input);
}

/**
 * The `X-Signature` value for checked inputs: at once where node:crypto is, a Promise only
 * on the WebCrypto path. The client signs every attempt through this.
 */
export function signatureHeader(secret: string, input: Omit<SignRequestInput, 'secret'>): string | Promise<string> {
  const payload = signingPayload(input);
  const hex = hmacSha256HexSync(secret, payload);
  return hex === undefined ? hmacSha256Hex(secret, payload).then((h) => `sha256=${h}`) : `sha256=${hex}`;
}

/** The exact string that is signed: `<timestamp>.<METHOD>.<path_with_query>.<raw_body>`. */
export function signingPayload(input: Omit<SignRequestInput, 'secret'>): string {
  return `${input.timestamp}.${input.method.toUpperCase()}.${input.pathWithQuery}.${input.body ?? ''}`;
}
