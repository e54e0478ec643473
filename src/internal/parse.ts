import type * as z from 'zod/mini';
import { APIError, fieldList, ResponseValidationError } from '../core/error.js';
import { failureOf } from './envelope.js';

const NOUNS: Record<string, string> = { int: 'a whole number', array: 'a list', object: 'an object', undefined: 'absent' };

/**
 * Parse options of every SDK parse: messages for issues whose schema gave none (zod/mini
 * ships no locale, and setting zod's global one would change the caller's zod too). Every
 * check of the SDK's schemas (lengths, bounds, formats, values) names its own rule, so what
 * is left here is a type: a field missing, or of another type.
 */
export const PARSE_OPTIONS = {
  error: (issue: z.core.$ZodRawIssue): string =>
    issue.code !== 'invalid_type'
      ? 'is not valid'
      : issue.input === undefined
        ? 'is required'
        : `must be ${NOUNS[issue.expected] ?? `a ${issue.expected}`}`,
} as const;

/** zod issues → `{ "field.path": [messages] }`, the same shape as the server's `errors`. */
export function issuesToErrors(issues: readonly z.core.$ZodIssue[]): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const issue of issues) {
    const prefix = issue.path.map(String);
    if (issue.code === 'unrecognized_keys') {
      // Name each unknown field itself, so `errors.amout` points at the typo.
      for (const key of issue.keys) {
        (errors[[...prefix, key].join('.')] ??= []).push('is not a known field (check the spelling)');
      }
      continue;
    }
    const key = prefix.length ? prefix.join('.') : '(root)';
    (errors[key] ??= []).push(issue.message);
  }
  return errors;
}

/** How to read one 2xx body. */
export interface DecodeContext {
  operation: string;
  /** The call may have changed state on the server (a create, a push). */
  serverMayHaveActed: boolean;
  /** The spec shows no body for this route: an empty 2xx is a success. */
  emptyBodyOk?: boolean | undefined;
}

/**
 * Validates a 2xx body against its schema, or throws ResponseValidationError with the raw
 * text. Schemas keep unknown fields and enum values, so only an answer the merchant
 * cannot act on fails here.
 */
export function decodeResponse<S extends z.ZodMiniType>(schema: S, text: string, response: Response, context: DecodeContext): z.output<S> {
  const { status, headers } = response;
  let json = true;
  let value: unknown;
  try {
    // JSON.parse refuses an empty or blank body by itself: no trimmed copy on the hot path.
    value = context.emptyBodyOk && text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    // HTML pages and truncated bodies: not JSON.
    json = false;
  }
  const failure = failureOf(value);
  if (failure) {
    // A 200 that says "failed" is the server's answer, not a shape problem: never a success.
    const message = `${context.operation}: the server answered ${status} but its body says the call failed: ${failure.message}`;
    throw new APIError({ status, body: value, headers, message });
  }
  const result = json ? schema.safeParse(value, PARSE_OPTIONS) : undefined;
  if (result?.success) return result.data;
  const errors = result ? issuesToErrors(result.error.issues) : undefined;
  const what = errors
    ? `a body that did not match the documented shape (${fieldList(errors)})`
    : text.trim() === ''
      ? 'an empty body'
      : `a body that is not JSON (content-type ${headers.get('content-type') ?? 'none'})`;
  throw bodyError(response, context, what, text, errors);
}

/** The ResponseValidationError for a 2xx body the call cannot use: `what` it was, and whether the server may have acted. */
export function bodyError(
  { status, headers }: Response,
  context: DecodeContext,
  what: string,
  body: string,
  errors?: Record<string, string[]>,
): ResponseValidationError {
  // What the server may have done, and what to do, is added where the call's route is known (callError).
  return new ResponseValidationError(`${context.operation}: the server answered ${status} with ${what}.`, {
    body,
    status,
    headers,
    errors,
    serverMayHaveActed: context.serverMayHaveActed,
  });
}
