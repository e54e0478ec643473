import type * as z from 'zod';
import { ResponseValidationError } from '../core/error.js';

export type ParsedBody = { json: true; value: unknown; text: string } | { json: false; text: string };

/** Parses a body as JSON without ever throwing: HTML pages and truncated bodies come back as text. */
export function parseBody(text: string): ParsedBody {
  if (text.trim() === '') return { json: false, text };
  try {
    return { json: true, value: JSON.parse(text), text };
  } catch {
    return { json: false, text };
  }
}

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

/** Validates a 2xx body against its schema, or throws ResponseValidationError with the raw text. */
export function validateResponse<S extends z.ZodType>(
  operation: string,
  schema: S,
  body: ParsedBody,
  status: number,
  contentType: string | null,
): z.output<S> {
  if (!body.json) {
    const what = body.text.trim() === '' ? 'an empty body' : `a body that is not JSON (content-type ${contentType ?? 'none'})`;
    throw new ResponseValidationError(`${operation}: the server answered ${status} with ${what}.`, {
      body: body.text,
      status,
    });
  }
  const result = schema.safeParse(body.value);
  if (!result.success) {
    const errors = issuesToErrors(result.error.issues);
    const list = Object.entries(errors)
      .map(([field, messages]) => `${field}: ${messages.join('; ')}`)
      .join(', ');
    throw new ResponseValidationError(`${operation}: the response did not match the documented shape (${list}).`, {
      body: body.text,
      status,
      errors,
    });
  }
  return result.data;
}
