import type * as z from 'zod';
import { InvalidParamsError } from '../core/error.js';
import type { Environment, RequestOptions } from './options.js';
import { issuesToErrors } from './parse.js';

/** Largest per-attempt timeout a timer can hold (2^31 - 1 ms). */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** Headers the SDK owns: a caller's value would break signing or authentication. */
export const RESERVED_HEADERS = new Set([
  'x-timestamp',
  'x-signature',
  'x-environment',
  'x-merchant-key',
  'x-business-key',
  'x-api-key',
  'content-type',
  'accept',
  'idempotency-key',
]);

/** One value and the schema it must satisfy. */
export type Checked = readonly [schema: z.ZodType, value: unknown];

/**
 * Validates every input of one call together (path params, body or query, the
 * Idempotency-Key), so the InvalidParamsError lists every failing field at once.
 */
export function validateInputs(
  operation: string,
  inputs: { pathParams?: Record<string, Checked>; params?: Checked; httpsInProduction?: readonly string[] },
  environment: Environment,
  options: RequestOptions = {},
): { path: Record<string, string>; params: unknown } {
  const errors: Record<string, string[]> = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);

  const path: Record<string, string> = {};
  for (const [name, [schema, value]] of Object.entries(inputs.pathParams ?? {})) {
    const result = schema.safeParse(value);
    if (result.success) path[name] = String(result.data);
    else for (const issue of result.error.issues) add(name, issue.message);
  }

  let params: unknown;
  if (inputs.params) {
    const [schema, value] = inputs.params;
    const result = schema.safeParse(value);
    if (result.success) {
      params = result.data;
      if (environment === 'production') {
        for (const field of inputs.httpsInProduction ?? []) {
          const url = (params as Record<string, unknown>)[field];
          if (typeof url === 'string' && !/^https:\/\//i.test(url)) {
            add(field, 'must be an https:// URL in production (webhooks carry payment data)');
          }
        }
      }
    } else {
      for (const [field, messages] of Object.entries(issuesToErrors(result.error.issues))) {
        for (const message of messages) add(field, message);
      }
    }
  }

  const { idempotencyKey, timeout, maxRetries, headers } = options;
  if (idempotencyKey !== undefined) {
    if (typeof idempotencyKey !== 'string' || idempotencyKey.length === 0 || idempotencyKey.length > 64) {
      add('idempotencyKey', 'must be 1 to 64 characters');
    } else if (!/^[\x21-\x7e]+$/.test(idempotencyKey)) {
      add('idempotencyKey', 'must be printable ASCII without spaces (it is sent as a header)');
    }
  }

  if (timeout !== undefined && !(Number.isInteger(timeout) && timeout >= 1 && timeout <= MAX_TIMEOUT_MS)) {
    add('timeout', `must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`);
  }
  if (maxRetries !== undefined && !(Number.isInteger(maxRetries) && maxRetries >= 0)) {
    add('maxRetries', 'must be a whole number ≥ 0');
  }
  for (const name of Object.keys(headers ?? {})) {
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      add(`headers.${name}`, name.toLowerCase() === 'idempotency-key'
        ? 'pass it as options.idempotencyKey instead'
        : 'is set by the SDK (auth, signing, content type) and cannot be overridden');
    }
  }

  if (Object.keys(errors).length > 0) throw new InvalidParamsError(operation, errors);
  return { path, params };
}
