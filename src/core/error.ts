import { ConfigurationError, PaymentsError } from './base-error.js';
import { redactPersonalData } from './personal-data.js';
import { isRecord } from './values.js';

export { ConfigurationError, PaymentsError };

/**
 * Thrown before anything is sent when request params break a rule of the spec.
 * `errors` maps every failing field to its messages.
 *
 * @example
 * ```ts
 * try { await client.payments.create({ payment_amount: 0 } as any); }
 * catch (e) { if (e instanceof InvalidParamsError) console.log(e.errors); }
 * ```
 */
export class InvalidParamsError extends PaymentsError {
  override name = 'InvalidParamsError';
  /** Field path (dot-joined) → messages. */
  declare readonly errors: Record<string, string[]>;

  constructor(operation: string, errors: Record<string, string[]>) {
    super(`Invalid params for ${operation}: ${fieldList(errors)}. Nothing was sent.`);
    this.errors = errors;
  }
}

/**
 * The body's `error` label: the spec's labels, autocompleted, and still any string the server
 * sends (new labels, or ones the spec does not list such as `Not Found`), so branching on a
 * label the spec does not name yet compiles and works.
 */
export type ErrorLabel =
  /** Params rejected (status not stated by the spec; the SDK maps 400/422): `errors` holds the field map. */
  | 'Validation failed'
  /** 422: the currency is not in the merchant's supported list. */
  | 'Currency is not enabled for this merchant'
  /** 422: no active receiver wallet for the currency. */
  | 'Receiver wallet for this currency is not available'
  /** 401: credentials wrong or from the other environment (or a bad/stale signature). */
  | 'Invalid API credentials'
  /** 403: a merchant pending approval used production. */
  | 'Merchant Pending Approval'
  /** 403 (the earlier generation): the merchant is disabled or rejected, in both environments. */
  | 'Merchant Unavailable'
  /** Payout refused (status not stated by the spec): KYB, business approval or settlement number missing. */
  | 'Payout Rejected'
  // `string & {}` keeps the literals above in autocomplete while accepting any other string.
  | (string & {});

/** What an API error carries from the HTTP response. */
export interface APIErrorInit {
  status: number;
  /** Parsed JSON body, or the raw text when the body was not JSON. */
  body: unknown;
  headers: Headers;
  /** Overrides the message built from the body. */
  message?: string;
}

/**
 * The server answered with HTTP status ≥ 400. Subclasses name the common statuses;
 * `label` is the body's stable `error` field (for example `Currency is not enabled for
 * this merchant`), `errors` the validation field map when the server sent one. When it did,
 * the message names the first failing fields instead of the server's generic text:
 * `422 Validation failed: ipn_url: The ipn url field is required.`
 */
export class APIError extends PaymentsError {
  override name = 'APIError';
  /** HTTP status code. */
  declare readonly status: number;
  /** The body's `error` label: the stable, machine-readable key. */
  declare readonly label: ErrorLabel | undefined;
  /** Field → messages, for validation failures. */
  declare readonly errors: Record<string, string[]> | undefined;
  /** Parsed JSON body, or the raw text when the body was not JSON. */
  declare readonly body: unknown;
  /** Response headers. */
  declare readonly headers: Headers;
  /** The service's id for this request (`x-request-id`, `request-id` or `x-correlation-id`), when it sent one: quote it to support. */
  declare readonly requestId: string | undefined;

  constructor(init: APIErrorInit) {
    const { status, body, headers } = init;
    const { label, message, errors } = errorFields(body);
    // Server text may echo a customer's phone number or e-mail: never into the message.
    super(redactPersonalData(init.message ?? describe(status, label, message, errors)) + duplicateHint(body, label, message));
    this.status = status;
    this.label = label;
    this.errors = errors;
    this.body = body;
    this.headers = headers;
    this.requestId = requestIdOf(headers);
  }

  /** Maps an HTTP status (and the body's label) to its error class: the one place that does. */
  static generate(init: APIErrorInit): APIError {
    return errorForStatus(init);
  }
}

// Outside the class body on purpose: a class that names itself inside its body is emitted
// by bundlers as `var APIError = class _APIError`, and `constructor.name` becomes `_APIError`.
function errorForStatus(init: APIErrorInit): APIError {
  const { status } = init;
  const label = errorFields(init.body).label;
  const ErrorClass =
    status === 403
      ? label === 'Merchant Pending Approval'
        ? MerchantPendingApprovalError
        : label === 'Merchant Unavailable'
          ? MerchantUnavailableError
          : PermissionDeniedError
      : (BY_STATUS[status] ?? (status >= 500 ? InternalServerError : APIError));
  return new ErrorClass(init);
}

/** 401: credentials wrong, from the other environment, or a stale/bad signature. */
export class AuthenticationError extends APIError {
  override name = 'AuthenticationError';
}

/** 403: the credentials may not do this. */
export class PermissionDeniedError extends APIError {
  override name = 'PermissionDeniedError';
}

/** 403 `Merchant Pending Approval`: production use before the business is approved. */
export class MerchantPendingApprovalError extends PermissionDeniedError {
  override name = 'MerchantPendingApprovalError';
}

/** 403 `Merchant Unavailable` (the earlier generation): the merchant is disabled or rejected, in both environments. */
export class MerchantUnavailableError extends PermissionDeniedError {
  override name = 'MerchantUnavailableError';
}

/** 404: no such transaction, payout or route. */
export class NotFoundError extends APIError {
  override name = 'NotFoundError';
}

/**
 * 404 from the server's framework before any authentication: this server has no such route.
 * A server of the service's earlier generation (see docs/generations.md) has three merchant
 * routes only (`payments.initiate`, `payments.verify`, `siteInfo.retrieve`); the message names
 * the route and what works there. Nothing was created or sent on.
 *
 * @example
 * ```ts
 * try { await client.payments.create(params); }
 * catch (e) { if (e instanceof RouteNotSupportedError) await client.payments.initiate(legacyParams); }
 * ```
 */
export class RouteNotSupportedError extends NotFoundError {
  override name = 'RouteNotSupportedError';
  /** The operation whose route the server lacks, e.g. `payments.create`. */
  declare readonly operation: string;
  /** Method and path of that route, e.g. `POST /api/v1/payments`. */
  declare readonly route: string;

  constructor(init: APIErrorInit & { operation: string; route: string }) {
    super(init);
    this.operation = init.operation;
    this.route = init.route;
  }
}

/** 400 or 422: the server rejected the params (`errors` holds the field map when sent). */
export class UnprocessableEntityError extends APIError {
  override name = 'UnprocessableEntityError';
}

/** 429: rate limit (120 requests a minute by default). `retryAfter` is in seconds. */
export class RateLimitError extends APIError {
  override name = 'RateLimitError';
  /** Seconds the server asked to wait (`Retry-After`), when it said. */
  declare readonly retryAfter: number | undefined;

  constructor(init: APIErrorInit) {
    super(init);
    this.retryAfter = retryAfterSeconds(init.headers);
  }
}

/** 5xx: the server failed. Retried automatically for idempotent requests. */
export class InternalServerError extends APIError {
  override name = 'InternalServerError';
}

// The classes of the statuses the spec names (403 depends on the label, 5xx on nothing more).
const BY_STATUS: Record<number, typeof APIError> = {
  400: UnprocessableEntityError,
  401: AuthenticationError,
  404: NotFoundError,
  422: UnprocessableEntityError,
  429: RateLimitError,
};

/** No HTTP response arrived: DNS failure, refused or reset connection, TLS error. */
export class APIConnectionError extends PaymentsError {
  override name = 'APIConnectionError';
}

/** An attempt took longer than `timeout` ms, or `waitForOutcome` reached its deadline. */
export class APITimeoutError extends APIConnectionError {
  override name = 'APITimeoutError';
  /** From `payments.waitForOutcome`: the last status verify returned before the deadline (undefined if none came). */
  declare readonly lastStatus?: string;
}

/** The caller's `AbortSignal` aborted the request. */
export class APIUserAbortError extends PaymentsError {
  override name = 'APIUserAbortError';
}

/**
 * A 2xx response the merchant cannot act on: not JSON, or a field the merchant relies on
 * (`trx_id` of a created payment, an amount) missing or mistyped. Unknown fields and new
 * enum values never cause it. `body` keeps the raw text so nothing the server said is
 * lost; `serverMayHaveActed` says whether the call may already have taken effect (a create
 * or a push): then retry with the same `idempotencyKey`, or look the payment up, before
 * anything else.
 */
export class ResponseValidationError extends PaymentsError {
  override name = 'ResponseValidationError';
  /** The raw response body text. */
  declare readonly body: string;
  /** HTTP status of the response. */
  declare readonly status: number;
  /** Response headers. */
  declare readonly headers: Headers;
  /** Field path → messages, when the body was JSON but the wrong shape. */
  declare readonly errors: Record<string, string[]> | undefined;
  /** True for calls that change state (creates, push): the server may have acted on this one. */
  declare readonly serverMayHaveActed: boolean;
  /** The service's id for this request, when it sent one. */
  declare readonly requestId: string | undefined;

  constructor(
    message: string,
    init: { body: string; status: number; headers: Headers; serverMayHaveActed: boolean; errors?: Record<string, string[]> | undefined },
  ) {
    super(message);
    this.body = init.body;
    this.status = init.status;
    this.headers = init.headers;
    this.errors = init.errors;
    this.serverMayHaveActed = init.serverMayHaveActed;
    this.requestId = requestIdOf(init.headers);
  }
}

/**
 * A list walk (`for await`, `iterPages`, `toArray`) that the server's pages would never let
 * end: pages that bring nothing new (a server that ignores `offset`), or pages without end
 * (10,000 of them). The pages read so far were yielded; `offset` is where the walk stopped.
 */
export class PaginationError extends PaymentsError {
  override name = 'PaginationError';
  /** `not_advancing`: 10 pages in a row brought nothing new; `never_ends`: 10,000 pages and still more. */
  declare readonly reason: 'not_advancing' | 'never_ends';
  /** The offset after the last page read. */
  declare readonly offset: number;

  constructor(reason: 'not_advancing' | 'never_ends', offset: number, message: string) {
    super(message);
    this.reason = reason;
    this.offset = offset;
  }
}

/** @internal A field map on one line: `field: message; message, other: message`. */
export const fieldList = (errors: Record<string, string[]>): string =>
  Object.entries(errors)
    .map(([field, messages]) => `${field}: ${messages.join('; ')}`)
    .join(', ');

// The spec names no request id header: these are the names services commonly use, read in
// this order (openai-node reads x-request-id, stripe-node request-id).
const REQUEST_ID_HEADERS = ['x-request-id', 'request-id', 'x-correlation-id'];

/**
 * @internal The request id a response carries: the first of `x-request-id`, `request-id` and
 * `x-correlation-id` that is present and not blank; `undefined` when none is.
 */
export function requestIdOf(headers: Headers): string | undefined {
  return REQUEST_ID_HEADERS.map((name) => headers.get(name)?.trim()).find((value) => value);
}

function errorFields(body: unknown): { label?: string; message?: string; errors?: Record<string, string[]> } {
  if (!isRecord(body)) return {};
  const out: { label?: string; message?: string; errors?: Record<string, string[]> } = {};
  if (typeof body.error === 'string') out.label = body.error;
  if (typeof body.message === 'string') out.message = body.message;
  if (isRecord(body.errors)) {
    const errors: Record<string, string[]> = {};
    for (const [field, value] of Object.entries(body.errors)) {
      errors[field] = (Array.isArray(value) ? value : [value]).map((item) => messageText(item, 0));
    }
    out.errors = errors;
  }
  return out;
}

// Nested lists in a message are flattened as String() would, this many levels deep at most.
const MESSAGE_DEPTH = 4;

/**
 * A server's field message as text. Not String(): on an array it recurses through every
 * level (a body nested thousands deep throws RangeError), and on an object whose
 * `toString` is not a function (`{"toString": 1}`) it throws TypeError.
 */
function messageText(value: unknown, depth: number): string {
  if (typeof value === 'string') return value;
  if (typeof value !== 'object' || value === null) return String(value);
  if (!Array.isArray(value)) return '[object Object]';
  if (depth >= MESSAGE_DEPTH) return '…';
  return value.map((item) => (item === null || item === undefined ? '' : messageText(item, depth + 1))).join(',');
}

function describe(status: number, label?: string, message?: string, errors?: Record<string, string[]>): string {
  const head = label ? `${status} ${label}` : `${status} status code`;
  // The field map says more than the generic `The given data was invalid.`, and logs often
  // keep only the message; the server's text stays in `body.message`.
  const fields = errors ? describeFields(errors) : '';
  if (fields) return `${head}: ${fields}`;
  return message && message !== label ? `${head}: ${message}` : head;
}

// The spec's DUPLICATE_REFERENCE (its status and field not shown): in the label, a `code`,
// or the message "Transaction reference already exists".
const DUPLICATE = /DUPLICATE_REFERENCE|reference already exists/i;

function duplicateHint(body: unknown, ...said: (string | undefined)[]): string {
  const code = (body as { code?: unknown } | null | undefined)?.code;
  if (!said.concat(typeof code === 'string' ? code : undefined).some((text) => text !== undefined && DUPLICATE.test(text))) return '';
  return (
    '. A payment with this ref_trx exists: find it with client.payments.list({ merchant_ref }), ' +
    "retry with the first call's idempotencyKey, or use a new ref_trx for a new payment"
  );
}

// Enough to act on from a log line; all of them are in `.errors`.
const MAX_FIELDS_NAMED = 3;
const MAX_FIELD_MESSAGE_CHARS = 200;
/** `a: first message; b: first message; and 2 more`, on one line; '' for an empty map. */
function describeFields(errors: Record<string, string[]>): string {
  const entries = Object.entries(errors);
  if (entries.length === 0) return '';
  // Never `and 1 more`: naming the third field takes no more room.
  const named = entries.length <= MAX_FIELDS_NAMED ? entries : entries.slice(0, MAX_FIELDS_NAMED - 1);
  const parts = named.map(([field, messages]) => {
    const name = oneLine(field, MAX_FIELD_MESSAGE_CHARS);
    const first = messages[0] ?? '';
    // Redacted before it is shortened, so a cut never leaves part of a number behind.
    const text = oneLine(redactPersonalData(first), MAX_FIELD_MESSAGE_CHARS);
    return text ? `${name}: ${text}` : name;
  });
  const rest = entries.length - named.length;
  if (rest > 0) parts.push(`and ${rest} more`);
  return parts.join('; ');
}

// Server text may hold newlines or be long; a log line should stay one line.
function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

// RFC 9110's three HTTP-date forms (IMF-fixdate, RFC 850, asctime); anything else (negative,
// a list, garbage) is no hint.
const HTTP_DATE =
  /^[A-Z][a-z]{2,8}, \d\d[ -][A-Z][a-z]{2}[ -]\d{2,4} \d\d:\d\d:\d\d GMT$|^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}$/;
// Rate-limit reset headers may carry an epoch time instead of seconds to wait (as ky reads them).
const EPOCH_THRESHOLD_S = Date.UTC(2024, 0, 1) / 1000;

/**
 * Seconds the server asked to wait: the SDK's one reading of the hint, which its retry waits
 * and `RateLimitError.retryAfter` reports (ky's own is off). `Retry-After`
 * as delta-seconds or an HTTP-date; without it, the `RateLimit-Reset`, `X-RateLimit-Reset`,
 * `X-Rate-Limit-Reset` and `X-RateLimit-Retry-After` headers. `undefined`: no usable hint.
 */
export function retryAfterSeconds(headers: Headers, now: number = Date.now()): number | undefined {
  let value = headers.get('retry-after');
  let epochAllowed = false;
  if (value === null) {
    value = headers.get('ratelimit-reset') ?? headers.get('x-ratelimit-reset') ?? headers.get('x-rate-limit-reset');
    epochAllowed = value !== null;
    value ??= headers.get('x-ratelimit-retry-after');
  }
  return value === null ? undefined : delaySeconds(value.trim(), now, epochAllowed);
}

function delaySeconds(value: string, now: number, epochAllowed: boolean): number | undefined {
  if (/^\d+$/.test(value)) {
    const seconds = Number(value);
    return epochAllowed && seconds >= EPOCH_THRESHOLD_S ? Math.max(0, Math.ceil(seconds - now / 1000)) : seconds;
  }
  if (!HTTP_DATE.test(value)) return undefined;
  // asctime has no zone: it is GMT.
  const date = Date.parse(value.endsWith('GMT') ? value : `${value} GMT`);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}
