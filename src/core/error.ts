import { ConfigurationError, PaymentsError } from './base-error.js';

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
  readonly errors: Record<string, string[]>;

  constructor(operation: string, errors: Record<string, string[]>) {
    const list = Object.entries(errors)
      .map(([field, messages]) => `${field}: ${messages.join('; ')}`)
      .join(', ');
    super(`Invalid params for ${operation}: ${list}. Nothing was sent.`);
    this.errors = errors;
  }
}

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
 * this merchant`), `errors` the validation field map when the server sent one.
 */
export class APIError extends PaymentsError {
  override name = 'APIError';
  /** HTTP status code. */
  readonly status: number;
  /** The body's `error` label: the stable, machine-readable key. */
  readonly label: string | undefined;
  /** Field → messages, for validation failures. */
  readonly errors: Record<string, string[]> | undefined;
  /** Parsed JSON body, or the raw text when the body was not JSON. */
  readonly body: unknown;
  /** Response headers. */
  readonly headers: Headers;

  constructor(init: APIErrorInit) {
    const fields = errorFields(init.body);
    super(init.message ?? describe(init.status, fields.label, fields.message));
    this.status = init.status;
    this.label = fields.label;
    this.errors = fields.errors;
    this.body = init.body;
    this.headers = init.headers;
  }

  /** Maps an HTTP status (and the body's label) to its error class: the one place that does. */
  // retryAfter: lets the client measure an HTTP-date Retry-After on its own (injectable) clock.
  static generate(init: APIErrorInit & { retryAfter?: number }): APIError {
    const { status } = init;
    if (status === 401) return new AuthenticationError(init);
    if (status === 403) {
      return errorFields(init.body).label === 'Merchant Pending Approval'
        ? new MerchantPendingApprovalError(init)
        : new PermissionDeniedError(init);
    }
    if (status === 404) return new NotFoundError(init);
    if (status === 400 || status === 422) return new UnprocessableEntityError(init);
    if (status === 429) return new RateLimitError(init);
    if (status >= 500) return new InternalServerError(init);
    return new APIError(init);
  }
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

/** 404: no such transaction, payout or route. */
export class NotFoundError extends APIError {
  override name = 'NotFoundError';
}

/** 400 or 422: the server rejected the params (`errors` holds the field map when sent). */
export class UnprocessableEntityError extends APIError {
  override name = 'UnprocessableEntityError';
}

/** 429: rate limit (120 requests a minute by default). `retryAfter` is in seconds. */
export class RateLimitError extends APIError {
  override name = 'RateLimitError';
  /** Seconds the server asked to wait (`Retry-After`), when it said. */
  readonly retryAfter: number | undefined;

  constructor(init: APIErrorInit & { retryAfter?: number }) {
    super(init);
    this.retryAfter = init.retryAfter ?? retryAfterSeconds(init.headers);
  }
}

/** 5xx: the server failed. Retried automatically for idempotent requests. */
export class InternalServerError extends APIError {
  override name = 'InternalServerError';
}

/** No HTTP response arrived: DNS failure, refused or reset connection, TLS error. */
export class APIConnectionError extends PaymentsError {
  override name = 'APIConnectionError';
}

/** An attempt took longer than `timeout` ms, or `waitForOutcome` reached its deadline. */
export class APITimeoutError extends APIConnectionError {
  override name = 'APITimeoutError';
}

/** The caller's `AbortSignal` aborted the request. */
export class APIUserAbortError extends PaymentsError {
  override name = 'APIUserAbortError';
}

/**
 * A 2xx response did not match the documented shape (missing or mistyped field, or not
 * JSON at all). `body` keeps the raw text so nothing the server said is lost.
 */
export class ResponseValidationError extends PaymentsError {
  override name = 'ResponseValidationError';
  /** The raw response body text. */
  readonly body: string;
  /** HTTP status of the response. */
  readonly status: number;
  /** Field path → messages, when the body was JSON but the wrong shape. */
  readonly errors: Record<string, string[]> | undefined;

  constructor(message: string, init: { body: string; status: number; errors?: Record<string, string[]> }) {
    super(message);
    this.body = init.body;
    this.status = init.status;
    this.errors = init.errors;
  }
}

function errorFields(body: unknown): { label?: string; message?: string; errors?: Record<string, string[]> } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return {};
  const record = body as Record<string, unknown>;
  const out: { label?: string; message?: string; errors?: Record<string, string[]> } = {};
  if (typeof record.error === 'string') out.label = record.error;
  if (typeof record.message === 'string') out.message = record.message;
  if (typeof record.errors === 'object' && record.errors !== null && !Array.isArray(record.errors)) {
    const errors: Record<string, string[]> = {};
    for (const [field, value] of Object.entries(record.errors)) {
      errors[field] = Array.isArray(value) ? value.map(String) : [String(value)];
    }
    out.errors = errors;
  }
  return out;
}

function describe(status: number, label?: string, message?: string): string {
  const head = label ? `${status} ${label}` : `${status} status code`;
  return message && message !== label ? `${head}: ${message}` : head;
}

/** Seconds from a `Retry-After` header (delta-seconds or HTTP-date), if present and sane. */
export function retryAfterSeconds(headers: Headers, now: number = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms.trim())) return Number(ms) / 1000;
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, (date - now) / 1000);
}
