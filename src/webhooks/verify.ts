import { ConfigurationError } from '../core/error.js';
import { encoder, importHmacKey, loadNodeCrypto } from '../internal/hmac.js';
import { WebhookVerificationError } from './errors.js';
import type { WebhookEvent } from './events.js';
import { readBrandHeaders, type WebhookHeaders } from './headers.js';

/** The raw body exactly as received: never a parsed object. */
export type WebhookPayload = string | Uint8Array | ArrayBuffer;

/** Inputs of {@link verifyWebhook} and {@link verifyWebhookSignature}. */
export interface VerifyWebhookOptions {
  /** The raw request body, byte for byte (string, Uint8Array, ArrayBuffer or Buffer). */
  payload: WebhookPayload;
  /** Request headers: a Fetch `Headers` or a Node headers object (case-insensitive). */
  headers: WebhookHeaders;
  /** The webhook signing secret; an array during rotation (any one may match). */
  secret: string | readonly string[];
  /** Allowed distance between the timestamp header and now, both ways. Default 300. */
  toleranceSeconds?: number;
  /** Current time in ms (as `Date.now()`); inject in tests. */
  now?: () => number;
  /** When set, X-Environment must equal it. */
  environment?: 'sandbox' | 'production';
  /** Pins the brand of `X-<Brand>-Signature` etc.; found by suffix when omitted. */
  brand?: string;
}

/** `verifyWebhook(request, secret, options)` options (everything but payload, headers, secret). */
export type VerifyWebhookRequestOptions = Omit<VerifyWebhookOptions, 'payload' | 'headers' | 'secret'>;

/** What a successful signature check found. */
export interface VerifiedWebhookSignature {
  /** The timestamp header, in unix seconds. */
  timestamp: number;
  /** The event header (X-<Brand>-Event). */
  eventType: string;
}

const DEFAULT_TOLERANCE_S = 300;
const HEX64 = /^[0-9a-f]{64}$/i;
const DIGITS = /^\d{1,15}$/;
const RAW_BODY_HELP =
  'Pass the raw request body exactly as received (a string, Uint8Array, ArrayBuffer or Buffer), ' +
  'not a parsed object: re-serialising JSON changes the bytes and breaks the signature. ' +
  'Express: app.post(path, express.raw({ type: "application/json" }), handler) and use req.body (a Buffer). ' +
  'Next.js App Router: const payload = await request.text().';

/**
 * Checks a webhook delivery's signature and timestamp without parsing the body: for
 * handlers that queue the raw body and answer 2xx at once. Cheap checks run first
 * (headers present, timestamp all digits and inside the window), then the HMAC
 * (`HMAC-SHA256(secret, "<timestamp>.<raw_body>")`, constant-time comparison).
 *
 * @throws {WebhookVerificationError} with `.reason` when the delivery must not be trusted.
 * @throws {ConfigurationError} when the secret itself is unusable (empty, or with surrounding whitespace).
 */
export function verifyWebhookSignature(options: VerifyWebhookOptions): Promise<VerifiedWebhookSignature>;
/** Same checks, on a Fetch `Request` (its body is read as text; the request itself is not consumed). */
export function verifyWebhookSignature(
  request: Request,
  secret: string | readonly string[],
  options?: VerifyWebhookRequestOptions,
): Promise<VerifiedWebhookSignature>;
export async function verifyWebhookSignature(
  input: VerifyWebhookOptions | Request,
  secret?: string | readonly string[],
  options?: VerifyWebhookRequestOptions,
): Promise<VerifiedWebhookSignature> {
  const resolved = isRequest(input) ? await fromRequest(input, secret, options) : input;
  return (await check(resolved)).signature;
}

/**
 * Verifies a webhook delivery and returns its event, typed as a union on `type`.
 * Everything {@link verifyWebhookSignature} checks, then: the body is JSON with `id`,
 * `type`, `api_version`, `created_at` and `data`, and the event header equals `type`.
 *
 * @example
 * ```ts
 * import { verifyWebhook } from 'business-payments/webhooks';
 * const event = await verifyWebhook({ payload: rawBody, headers: req.headers, secret });
 * if (event.type === 'payment.completed') await fulfil(event.data.merchant_ref);
 * ```
 * @throws {WebhookVerificationError} with `.reason` when the delivery must not be trusted.
 */
export function verifyWebhook<E extends WebhookEvent = WebhookEvent>(options: VerifyWebhookOptions): Promise<E>;
/** Same, on a Fetch `Request` (Next.js route handlers, edge and serverless functions). */
export function verifyWebhook<E extends WebhookEvent = WebhookEvent>(
  request: Request,
  secret: string | readonly string[],
  options?: VerifyWebhookRequestOptions,
): Promise<E>;
export async function verifyWebhook(
  input: VerifyWebhookOptions | Request,
  secret?: string | readonly string[],
  options?: VerifyWebhookRequestOptions,
): Promise<WebhookEvent> {
  const resolved = isRequest(input) ? await fromRequest(input, secret, options) : input;
  const { signature, text } = await check(resolved);
  let event: unknown;
  try {
    event = JSON.parse(text ?? new TextDecoder().decode(resolved.payload as Uint8Array | ArrayBuffer));
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'The webhook body is not valid JSON (although its signature is valid).');
  }
  const problem = envelopeProblem(event);
  if (problem) throw new WebhookVerificationError('invalid_payload', `The webhook body is not an event: ${problem}.`);
  const type = (event as { type: string }).type;
  if (type !== signature.eventType) {
    throw new WebhookVerificationError(
      'event_mismatch',
      `The event header says ${JSON.stringify(signature.eventType)} but the payload's type is ${JSON.stringify(type)}.`,
    );
  }
  return event as WebhookEvent;
}

async function check(options: VerifyWebhookOptions): Promise<{ signature: VerifiedWebhookSignature; text: string | undefined }> {
  if (typeof options !== 'object' || options === null) {
    throw new WebhookVerificationError('invalid_payload', 'Pass { payload, headers, secret }, or (request, secret).');
  }
  const { payload } = options;
  // Refuse parsed bodies before anything else: it is the most common integration bug.
  const text = typeof payload === 'string' ? payload : undefined;
  if (text === undefined && !(payload instanceof Uint8Array) && !(payload instanceof ArrayBuffer)) {
    throw new WebhookVerificationError(
      'invalid_payload',
      `The webhook payload is ${payload === null ? 'null' : typeof payload === 'object' ? 'a parsed object' : `a ${typeof payload}`}. ${RAW_BODY_HELP}`,
    );
  }
  const secrets = checkSecrets(options.secret);

  const headers = options.headers;
  if (typeof headers !== 'object' || headers === null) {
    throw new WebhookVerificationError('missing_header', 'No headers were given: pass the request headers.');
  }
  const found = readBrandHeaders(headers, options.brand);
  if (found.ambiguous) {
    throw new WebhookVerificationError(
      'missing_header',
      `Several signature headers are present (${found.ambiguous.map((b) => `x-${b}-signature`).join(', ')}): pass brand to choose one.`,
    );
  }
  const signatureHeader = found.signature === undefined || found.signature === null ? undefined : found.signature;
  const timestampHeader = single(found.timestamp);
  const eventHeader = single(found.event);
  if (signatureHeader === undefined || timestampHeader === undefined || eventHeader === undefined) {
    const missing = [
      signatureHeader === undefined && 'X-<Brand>-Signature',
      timestampHeader === undefined && 'X-<Brand>-Timestamp',
      eventHeader === undefined && 'X-<Brand>-Event',
    ].filter(Boolean);
    throw new WebhookVerificationError('missing_header', `Missing webhook header(s): ${missing.join(', ')}.`);
  }

  if (!DIGITS.test(timestampHeader)) {
    throw new WebhookVerificationError('invalid_timestamp', 'The timestamp header must be unix seconds, digits only.');
  }
  const timestamp = Number(timestampHeader);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_S;
  if (typeof tolerance !== 'number' || !(tolerance >= 0)) {
    throw new ConfigurationError('toleranceSeconds must be a number ≥ 0.');
  }
  const now = Math.floor((options.now ? options.now() : Date.now()) / 1000);
  if (now - timestamp > tolerance) {
    throw new WebhookVerificationError('timestamp_too_old', `The delivery is ${now - timestamp} s old (tolerance ${tolerance} s): a replay, or a clock that is off.`);
  }
  if (timestamp - now > tolerance) {
    throw new WebhookVerificationError('timestamp_in_future', `The delivery is stamped ${timestamp - now} s in the future (tolerance ${tolerance} s).`);
  }

  if (options.environment !== undefined) {
    const environment = single(found.environment);
    if (environment !== options.environment) {
      throw new WebhookVerificationError(
        'environment_mismatch',
        `The delivery is for environment ${JSON.stringify(environment ?? null)}, expected ${JSON.stringify(options.environment)}.`,
      );
    }
  }

  const candidates = signatureCandidates(signatureHeader);
  if (candidates.length === 0) {
    throw new WebhookVerificationError('invalid_signature', 'The signature header is not a 64-character hex HMAC-SHA256 digest.');
  }
  if (!(await matches(secrets, timestampHeader, payload, candidates))) {
    throw new WebhookVerificationError('invalid_signature', 'The signature does not match: wrong secret, or the body was changed (use the raw body).');
  }
  return { signature: { timestamp, eventType: eventHeader }, text };
}

async function matches(secrets: readonly string[], timestamp: string, payload: WebhookPayload, candidates: string[]): Promise<boolean> {
  const node = loadNodeCrypto();
  if (node) {
    // Same shape as the bare node:crypto floor: one update for a string body.
    for (const secret of secrets) {
      const hmac = node.createHmac('sha256', secret);
      const digest =
        typeof payload === 'string'
          ? hmac.update(`${timestamp}.${payload}`).digest()
          : hmac.update(`${timestamp}.`).update(payload instanceof ArrayBuffer ? new Uint8Array(payload) : payload).digest();
      for (const candidate of candidates) {
        if (node.timingSafeEqual(digest, nodeHex(candidate))) return true;
      }
    }
    return false;
  }
  const bytes = signedBytes(timestamp, payload);
  for (const secret of secrets) {
    const digest = new Uint8Array(await crypto.subtle.sign('HMAC', await importHmacKey(secret), bytes));
    for (const candidate of candidates) {
      if (constantTimeEqual(digest, hexToBytes(candidate))) return true;
    }
  }
  return false;
}

function signedBytes(timestamp: string, payload: WebhookPayload): Uint8Array<ArrayBuffer> {
  if (typeof payload === 'string') return encoder.encode(`${timestamp}.${payload}`);
  const body = payload instanceof ArrayBuffer ? new Uint8Array(payload) : payload;
  const prefix = encoder.encode(`${timestamp}.`);
  const out = new Uint8Array(prefix.length + body.length);
  out.set(prefix);
  out.set(body, prefix.length);
  return out;
}

function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

// On Node, Buffer's native hex decoder is the fastest; the input is already checked as 64 hex chars.
function nodeHex(hex: string): Uint8Array {
  return (globalThis as unknown as { Buffer: { from(s: string, e: 'hex'): Uint8Array } }).Buffer.from(hex, 'hex');
}

function hexToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

function signatureCandidates(header: unknown): string[] {
  const values: unknown[] = Array.isArray(header) ? header : [header];
  const out: string[] = [];
  for (const value of values) {
    if (typeof value !== 'string') continue;
    // Plain hex per the spec; a `sha256=` prefix (as on API requests) is tolerated.
    const hex = value.startsWith('sha256=') ? value.slice(7) : value;
    if (HEX64.test(hex)) out.push(hex);
  }
  return out;
}

function checkSecrets(secret: string | readonly string[]): readonly string[] {
  const secrets = typeof secret === 'string' ? [secret] : secret;
  if (!Array.isArray(secrets) || secrets.length === 0) {
    throw new ConfigurationError('Webhook secret missing: pass secret (a string, or an array during rotation).');
  }
  for (const value of secrets) {
    if (typeof value !== 'string' || value === '') {
      throw new ConfigurationError('Webhook secret must be a non-empty string.');
    }
    if (value !== value.trim()) {
      throw new ConfigurationError('Webhook secret has leading or trailing whitespace (a copy-paste slip?): trim it.');
    }
  }
  return secrets;
}

function single(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  // A repeated header is only usable when every copy agrees.
  if (Array.isArray(value) && value.length > 0 && value.every((v) => v === value[0]) && typeof value[0] === 'string') {
    return value[0];
  }
  return undefined;
}

function envelopeProblem(event: unknown): string | undefined {
  if (typeof event !== 'object' || event === null || Array.isArray(event)) return 'not a JSON object';
  const e = event as Record<string, unknown>;
  if (typeof e.id !== 'string') return 'id must be a string';
  if (typeof e.type !== 'string') return 'type must be a string';
  if (typeof e.api_version !== 'string') return 'api_version must be a string';
  if (typeof e.created_at !== 'string') return 'created_at must be a string';
  if (typeof e.data !== 'object' || e.data === null || Array.isArray(e.data)) return 'data must be an object';
  return undefined;
}

function isRequest(input: unknown): input is Request {
  return typeof Request !== 'undefined' && input instanceof Request;
}

async function fromRequest(
  request: Request,
  secret: string | readonly string[] | undefined,
  options: VerifyWebhookRequestOptions | undefined,
): Promise<VerifyWebhookOptions> {
  let payload: string;
  try {
    // Clone so the caller can still read the body after verification.
    payload = await request.clone().text();
  } catch (cause) {
    throw new WebhookVerificationError('invalid_payload', `The request body could not be read (${String(cause)}); was it already consumed?`);
  }
  return { ...options, payload, headers: request.headers, secret: secret as string | readonly string[] };
}
