import type * as z from 'zod/mini';
import { InvalidParamsError } from '../core/error.js';
import { isCount } from '../core/values.js';
import { MAX_TIMEOUT_MS, RESERVED_HEADERS, SDK_HEADER, type Environment, type RequestOptions } from './options.js';
import type { PhoneCountry } from '../core/phone.js';
import { inPhoneCountry } from './fields.js';
import { issuesToErrors, PARSE_OPTIONS } from './parse.js';

/** One value and the schema it must satisfy. */
export type ParamToCheck = readonly [schema: z.ZodMiniType, value: unknown];

type AddError = (field: string, message: string) => void;

/**
 * Validates every input of one call together (path params, body or query, the
 * Idempotency-Key), so the InvalidParamsError lists every failing field at once.
 */
export function validateInputs(
  operation: string,
  inputs: {
    pathParams?: Record<string, ParamToCheck> | undefined;
    /** Schema of the body or query params, and the caller's `value` of them. */
    params?: z.ZodMiniType | undefined;
    value?: unknown;
    httpsInProduction?: readonly string[] | undefined;
  },
  environment: Environment,
  options: RequestOptions = {},
  phoneCountry: PhoneCountry = 'TZ',
): { path: Record<string, string>; params: unknown } {
  const errors: Record<string, string[]> = {};
  const add: AddError = (field, message) => (errors[field] ??= []).push(message);
  const path = checkPathParams(inputs.pathParams, add);
  // Phone numbers in local form are read in the client's country (`0712…` → `255712…`).
  const params = inputs.params && inPhoneCountry(phoneCountry, () => checkParams(inputs.params!, inputs.value, add));
  if (environment === 'production' && params) checkHttps(params as Record<string, unknown>, inputs.httpsInProduction, add);
  checkRequestOptions(options, add);
  if (Object.keys(errors).length > 0) throw new InvalidParamsError(operation, errors);
  return { path, params };
}

function checkPathParams(pathParams: Record<string, ParamToCheck> | undefined, add: AddError): Record<string, string> {
  const path: Record<string, string> = {};
  for (const [name, [schema, value]] of Object.entries(pathParams ?? {})) {
    const data = checkParams(schema, value, add, name);
    // A path param's schema yields a string.
    if (data !== undefined) path[name] = data as string;
  }
  return path;
}

// The parsed value, or undefined with every issue added (under `field` when given: a path param).
function checkParams(schema: z.ZodMiniType, value: unknown, add: AddError, field?: string): unknown {
  const result = schema.safeParse(value, PARSE_OPTIONS);
  if (result.success) return result.data;
  for (const [key, messages] of Object.entries(issuesToErrors(result.error.issues))) {
    for (const message of messages) add(field ?? key, message);
  }
  return undefined;
}

function checkHttps(params: Record<string, unknown>, fields: readonly string[] = [], add: AddError): void {
  for (const field of fields) {
    const url = params[field];
    if (typeof url === 'string' && !/^https:\/\//i.test(url)) {
      add(field, 'must be an https:// URL in production (webhooks carry payment data)');
    }
  }
}

function checkRequestOptions({ idempotencyKey, timeout, maxRetries, headers, maxResponseBytes }: RequestOptions, add: AddError): void {
  const key: unknown = idempotencyKey;
  if (key !== undefined && !isIdempotencyKey(key)) {
    add(
      'idempotencyKey',
      typeof key === 'string' && key.length > 0 && key.length <= 64
        ? 'must be printable ASCII without spaces (it is sent as a header)'
        : 'must be 1 to 64 characters',
    );
  }
  if (timeout !== undefined && !isCount(timeout, 1, MAX_TIMEOUT_MS)) {
    add('timeout', `must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`);
  }
  if (maxRetries !== undefined && !isCount(maxRetries, 0, Infinity)) add('maxRetries', 'must be a whole number ≥ 0');
  if (maxResponseBytes !== undefined && !isCount(maxResponseBytes, 1)) add('maxResponseBytes', 'must be a whole number of bytes ≥ 1');
  for (const name of Object.keys(headers ?? {})) {
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      add(`headers.${name}`, name.toLowerCase() === 'idempotency-key' ? 'pass it as options.idempotencyKey instead' : SDK_HEADER);
    }
  }
}

/** 1–64 printable ASCII characters: what the Idempotency-Key header may carry. */
function isIdempotencyKey(key: unknown): key is string {
  return typeof key === 'string' && key.length >= 1 && key.length <= 64 && /^[\x21-\x7e]+$/.test(key);
}
