import type * as z from 'zod/mini';
import { APIError, fieldList, ResponseValidationError } from '../core/error.js';
import { failureOf } from './envelope.js';

export type ParsedBody = { json: true; value: unknown; text: string } | { json: false; text: string };

/** Parses a body as JSON without ever throwing: HTML pages and truncated bodies come back as text. */
export function parseBody(text: string): ParsedBody {
  // JSON.parse refuses an empty or blank body by itself: no trimmed copy on the hot path.
  try {
    return { json: true, value: JSON.parse(text), text };
  } catch {
    return { json: false, text };
  }
}

const NOUNS: Record<string, string> = { int: 'a whole number', array: 'a list', object: 'an object', undefined: 'absent' };

/**
 * Messages for issues whose schema gave none (zod/mini ships no locale, and setting zod's
 * global one would change the caller's zod too): passed to every parse the SDK makes.
 */
export function issueMessage(issue: z.core.$ZodRawIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined ? 'is required' : `must be ${NOUNS[issue.expected] ?? `a ${issue.expected}`}`;
    case 'invalid_value':
      return `must be ${issue.values.map((v) => JSON.stringify(v)).join(' or ')}`;
    case 'too_small':
      return `must be at least ${issue.minimum}${issue.origin === 'string' ? ' characters' : ''}`;
    case 'too_big':
      return `must be at most ${issue.maximum}${issue.origin === 'string' ? ' characters' : ''}`;
    case 'invalid_format':
      return `must be a valid ${issue.format}`;
    default:
      return 'is not valid';
  }
}

/** Parse options of every SDK parse: its own messages. */
export const PARSE = { error: issueMessage } as const;

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
  const body = context.emptyBodyOk && text.trim() === '' ? ({ json: true, value: {}, text } as const) : parseBody(text);
  const { status, headers } = response;
  const failure = body.json ? failureOf(body.value) : undefined;
  if (failure && body.json) {
    // A 200 that says "failed" is the server's answer, not a shape problem: never a success.
    const message = `${context.operation}: the server answered ${status} but its body says the call failed: ${failure.message}`;
    throw new APIError({ status, body: body.value, headers, message });
  }
  const result = body.json ? schema.safeParse(body.value, PARSE) : undefined;
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
