// The service's JSON and error responses (the spec's `{ error, message, errors? }` shape).
// Bodies are encoded as PHP's json_encode writes them (php-json.ts): `\/`, `\uXXXX`, compact.
import { phpJson, type PhpJsonFlags } from './php-json.js';

/** A JSON response, encoded as PHP does by default (or with `flags`). */
export function json(status: number, body: unknown, headers: Record<string, string> = {}, flags?: PhpJsonFlags): Response {
  const text = phpJson(body, flags);
  const response = new Response(text, {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });
  RAW_TEXT.set(response, text);
  return response;
}

/** The body text of responses made by `json()`: the HTTP adapter writes it without reading the stream. */
export const RAW_TEXT = new WeakMap<Response, string>();

/**
 * Answers to lose on purpose (payout behaviour `loseAnswer`): made and kept by the
 * idempotency step like any 2xx, then withheld by the front door (a replay is a new
 * Response, so never lost again).
 */
export const LOST = new WeakSet<Response>();

/** Reason logged for a lost answer (state.requests, status 0). */
export const LOST_REASON = 'answer lost (payout behaviour)';

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
