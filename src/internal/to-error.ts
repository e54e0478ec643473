// The one place where whatever a call ran into (ky's errors, a fetch rejection, an HTTP
// status) becomes an SDK error, stamped with what reconciliation needs.
import { isHTTPError, isKyError } from './ky.js';
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  PaymentsError,
  ResponseValidationError,
  RouteNotSupportedError,
} from '../core/error.js';
import { redactPersonalData } from '../core/personal-data.js';
import { isRecord } from './envelope.js';
import { parseErrorJson } from './read-body.js';
import type { FetchOptions } from './options.js';
import { neverReachedServer, type RetryMode } from './retry.js';
import type { RequestTrace } from './trace.js';

/** What the error mapping needs to know of one call. */
export interface CallInfo {
  /** `resource.method`, for messages. */
  operation: string;
  /** The call's retry mode: whether it changes state, and whether it was sent again. */
  mode?: RetryMode | undefined;
  /** What the server may have done when the call fails without a clear answer (the route's words). */
  acted?: string | undefined;
  /** Method and route template, e.g. `POST /api/v1/payments` (named when the server lacks it). */
  route: string;
  /** Origin of `baseUrl`, the only one a request may reach (named in errors). */
  origin: string;
  /** Path and query of the request, as sent and signed. */
  pathWithQuery: string;
  /** Per-attempt timeout, ms. */
  timeout: number;
  /** The caller's signal: an abort is the caller's doing, not a network failure. */
  signal: AbortSignal | undefined;
  /** The Idempotency-Key sent on every attempt (create calls). */
  idempotencyKey: string | undefined;
  /** HTTP attempts made so far. */
  attempts: number;
  /** Words the route adds to its errors' messages (how to look a payout up). */
  hint?: ((error: PaymentsError) => string | undefined) | undefined;
  /** When the call began (Date.now()), for the time a timeout took in all. */
  started: number;
  /** This call's own fetchOptions (merged over the client's). */
  fetchOptions?: FetchOptions | undefined;
  /** The trace context, when someone listens on the request channel. */
  trace?: RequestTrace | undefined;
}

const CLOCK_SKEW_LIMIT_S = 300;

/**
 * Maps anything a call threw to an SDK error and stamps it with the call's
 * `idempotencyKey` and `attempts`. `reading`: the failure came while reading a 2xx body.
 */
export function callError(cause: unknown, call: CallInfo, reading = false): PaymentsError {
  const error = cause instanceof PaymentsError ? cause : toPaymentsError(cause, call, reading);
  const info: { attempts: number; idempotencyKey?: string } = { attempts: call.attempts };
  if (call.idempotencyKey !== undefined) info.idempotencyKey = call.idempotencyKey;
  Object.assign(error, info);
  // Server text (a message, a content type, a Location) may echo customer data.
  error.message = redactPersonalData(error.message);
  const hint = call.hint?.(error) ?? actedNote(error, call);
  if (hint && !error.message.endsWith(hint)) error.message += ` ${hint}`;
  return error;
}

/**
 * What a failed call that changes something says about the server's side: when the failure
 * leaves it open (no answer, a broken or unreadable one, a 5xx, a redirect), what may have
 * happened, how to look it up, and whether retrying with the key is safe.
 */
function actedNote(error: PaymentsError, call: CallInfo): string | undefined {
  const { mode, acted } = call;
  if (acted === undefined || !mayHaveActed(error, call)) return undefined;
  const again =
    mode === 'create'
      ? `Retry with the same idempotencyKey (${call.idempotencyKey}): the service replays the first result.`
      : `The SDK did not send it again${call.idempotencyKey ? `; to retry, pass the same idempotencyKey (${call.idempotencyKey})` : ''}.`;
  return `The server may have acted on it: ${acted}. ${again}`;
}

function mayHaveActed(error: PaymentsError, call: CallInfo): boolean {
  if (call.attempts === 0) return false;
  // A redirect, 408 or 5xx leaves it open; a 4xx, or a 200 that says it failed, is a refusal.
  if (error instanceof APIError) return (error.status >= 300 && error.status < 400) || error.status === 408 || error.status >= 500;
  // A connection that failed after the request left (reset, timeout), not one never made.
  if (error instanceof APIConnectionError) return !neverReachedServer(error.cause);
  return error instanceof ResponseValidationError || error instanceof APIUserAbortError;
}

function toPaymentsError(cause: unknown, call: CallInfo, reading: boolean): PaymentsError {
  const { operation, signal, attempts } = call;
  const took = `${attempts} attempt${attempts === 1 ? '' : 's'}, ${((Date.now() - call.started) / 1000).toFixed(1)} s in all`;
  // AbortSignal.timeout(ms) is the caller's overall budget: a timeout, and said to be that one.
  if (signal?.aborted && (signal.reason as Error | undefined)?.name === 'TimeoutError') {
    return new APITimeoutError(`${operation} ran out of the overall time budget of its signal (${took}).`, { cause: signal.reason });
  }
  if (signal?.aborted) return new APIUserAbortError(`${operation} was aborted.`, { cause: signal.reason });
  if (isHTTPError(cause)) return httpError(cause.response, cause.data, call);
  // ky's errors hold the Request, whose headers carry X-API-Key and X-Signature: error
  // trackers print causes, so keep only the underlying failure.
  const reason: unknown = isKyError(cause) ? cause.cause : cause;
  const where = reading ? ' while reading the response body' : '';
  // ky's timeout of an attempt, or the SDK's own of the body read that followed it (both are
  // named TimeoutError; the caller's AbortSignal.timeout was told apart above).
  if ((cause as Error | undefined)?.name === 'TimeoutError') {
    // `timeout` is per attempt: say so, with the attempts and the time they took together.
    return new APITimeoutError(
      `${operation} timed out${where}: an attempt ran past the per-attempt timeout of ${call.timeout} ms (${took}). ` +
        'For an overall limit, pass signal: AbortSignal.timeout(ms).',
      { cause: reason },
    );
  }
  // "Could not reach" only when no byte left: a reset after sending is not that.
  const what = reading
    ? 'the connection broke while reading the response body'
    : neverReachedServer(reason)
      ? `could not reach ${call.origin}`
      : `the connection to ${call.origin} failed before an answer came`;
  return new APIConnectionError(`${operation}: ${what} (${describeCause(reason)}).`, { cause: reason });
}

/** An HTTP status the call cannot use: a refused redirect, or an API error (≥ 400). */
function httpError(response: Response, data: unknown, call: CallInfo): APIError {
  const { status, headers } = response;
  const body = typeof data === 'string' ? bodyValue(data) : (data ?? '');
  if (status < 400) return new APIError({ status, body, headers, message: redirectMessage(response, call) });
  if (isMissingRoute(status, body)) return missingRoute({ status, body, headers }, call);
  const error = APIError.generate({ status, body, headers });
  const skew = status === 401 ? clockSkewSeconds(headers) : 0;
  if (Math.abs(skew) <= CLOCK_SKEW_LIMIT_S) return error;
  // A 401 from a clock that is off looks like bad credentials: say which it is.
  const message =
    `${error.message}. Your clock is ${Math.abs(skew)} s ${skew > 0 ? 'ahead of' : 'behind'} the server's; ` +
    `signed requests are refused outside ${CLOCK_SKEW_LIMIT_S} s. Synchronise the system clock (NTP).`;
  return APIError.generate({ status, body, headers, message });
}

// Laravel's answer for a path it has no route for (NotFoundHttpException), given before any
// authentication: `{"message": "The route api/v1/payments could not be found."}`, with
// `exception`, `file`, `line` and `trace` in debug mode, or an HTML page with the same words.
const ROUTE_NOT_FOUND = /The route \S* could not be found|NotFoundHttpException/;

/** The framework's route-not-found 404, not an API's own 404 (those carry an `error` label). */
function isMissingRoute(status: number, body: unknown): boolean {
  if (status !== 404) return false;
  if (typeof body === 'string') return ROUTE_NOT_FOUND.test(body);
  if (!isRecord(body) || typeof body.error === 'string') return false;
  return [body.message, body.exception].some((text) => typeof text === 'string' && ROUTE_NOT_FOUND.test(text));
}

/** The three routes every generation of the service has (the earlier one has only these). */
export const EARLIER_GENERATION_OPERATIONS: readonly string[] = ['payments.initiate', 'payments.verify', 'siteInfo.retrieve'];

function missingRoute(init: { status: number; body: unknown; headers: Headers }, call: CallInfo): RouteNotSupportedError {
  const { operation, route } = call;
  const everywhere = EARLIER_GENERATION_OPERATIONS.includes(operation);
  const message = everywhere
    ? `${operation}: the server has no route ${route}, which every generation of the service has: baseUrl is probably wrong ` +
      `(routes /api/v1/… are appended to it: give the service's root, e.g. https://pay.example.com). Nothing was sent on.`
    : `${operation}: this server has no route ${route}: it is of the service's earlier generation, which offers ` +
      `${EARLIER_GENERATION_OPERATIONS.join(', ')} only${operation === 'payments.create' ? ' (create the payment with payments.initiate)' : ''}. ` +
      'Nothing was created. See docs/generations.md.';
  return new RouteNotSupportedError({ ...init, message, operation, route });
}

function redirectMessage(response: Response, call: CallInfo): string {
  const location = response.headers.get('location');
  let target = 'a location the browser hides';
  if (location !== null) {
    try {
      target = new URL(location, call.origin + call.pathWithQuery).origin;
    } catch {
      target = 'an unparseable Location';
    }
  }
  const status = response.status || 'a';
  return (
    `${call.operation}: the server answered ${status} redirect to ${target}, not followed (credentials stay with ` +
    `${call.origin}): check baseUrl.`
  );
}

// A body ky kept as text (not a JSON content type) is parsed as its JSON would have been.
function bodyValue(text: string): unknown {
  try {
    return parseErrorJson(text);
  } catch {
    return text;
  }
}

function clockSkewSeconds(headers: Headers): number {
  const serverDate = Date.parse(headers.get('date') ?? '');
  return Number.isNaN(serverDate) ? 0 : Math.round((Date.now() - serverDate) / 1000);
}

function describeCause(cause: unknown): string {
  const parts: string[] = [];
  let current: unknown = cause;
  for (let depth = 0; depth < 4 && current; depth++) {
    const { message, code } = current as { message?: unknown; code?: unknown };
    if (typeof code === 'string') parts.push(code);
    else if (typeof message === 'string' && message) parts.push(message);
    current = (current as { cause?: unknown }).cause;
  }
  return parts.join(': ') || 'network error';
}
