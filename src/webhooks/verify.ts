import { ConfigurationError } from '../core/base-error.js';
import { encoder, importHmacKey, loadNodeCrypto, nodeHmacSha256, type NodeCrypto } from '../internal/hmac.js';
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
const HEX64 = /^[0-9a-fA-F]{64}$/;
const RAW_BODY_HELP =
  'Pass the raw body (a string or bytes), not parsed JSON: re-serialising changes the bytes. ' +
  'Express: express.raw({ type: "application/json" }); Next.js: await request.text().';

/**
 * Checks a webhook delivery's signature and timestamp without parsing the body: for
 * handlers that queue the raw body and answer 2xx at once. Cheap checks run first
 * (headers present, timestamp all digits and inside the window), then the HMAC
 * (`HMAC-SHA256(secret, "<timestamp>.<raw_body>")`, constant-time comparison).
 *
 * @throws {WebhookVerificationError} with `.reason` when the delivery must not be trusted.
 * @throws {ConfigurationError} when the configuration is unusable: a secret that is empty or has surrounding
 * whitespace, a negative `toleranceSeconds`, a `now` that does not return a finite number, an
 * `environment` other than sandbox/production, or a `brand` that is not a header-name part.
 * Checked before anything else, whatever the delivery.
 */
export function verifyWebhookSignature(options: VerifyWebhookOptions): Promise<VerifiedWebhookSignature>;
/** Same checks, on a Fetch `Request` (its body bytes are read from a clone: the request itself is not consumed). */
export function verifyWebhookSignature(
  request: Request,
  secret: string | readonly string[],
  options?: VerifyWebhookRequestOptions,
): Promise<VerifiedWebhookSignature>;
export function verifyWebhookSignature(
  input: VerifyWebhookOptions | Request,
  secret?: string | readonly string[],
  options?: VerifyWebhookRequestOptions,
): Promise<VerifiedWebhookSignature> {
  return settle(input, secret, options, (c) => c.signature);
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
 * @throws {ConfigurationError} when the configuration is unusable (see {@link verifyWebhookSignature}).
 */
export function verifyWebhook<E extends WebhookEvent = WebhookEvent>(options: VerifyWebhookOptions): Promise<E>;
/** Same, on a Fetch `Request` (Next.js route handlers, edge and serverless functions). */
export function verifyWebhook<E extends WebhookEvent = WebhookEvent>(
  request: Request,
  secret: string | readonly string[],
  options?: VerifyWebhookRequestOptions,
): Promise<E>;
export function verifyWebhook(
  input: VerifyWebhookOptions | Request,
  secret?: string | readonly string[],
  options?: VerifyWebhookRequestOptions,
): Promise<WebhookEvent> {
  return settle(input, secret, options, toEvent);
}

type Checked = { signature: VerifiedWebhookSignature; body: string | Uint8Array };

// On node:crypto everything is synchronous, so the common case settles without extra
// promise hops: only a Request body or the WebCrypto fallback is awaited.
function settle<T>(
  input: VerifyWebhookOptions | Request,
  secret: string | readonly string[] | undefined,
  options: VerifyWebhookRequestOptions | undefined,
  map: (checked: Checked) => T,
): Promise<T> {
  try {
    const checked = isRequest(input) ? fromRequest(input, secret, options).then(check) : check(input);
    return checked instanceof Promise ? checked.then(map) : Promise.resolve(map(checked));
  } catch (error) {
    return Promise.reject(error);
  }
}

function toEvent({ signature, body }: Checked): WebhookEvent {
  let event: unknown;
  try {
    event = JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body));
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'Body is not valid JSON.');
  }
  const problem = envelopeProblem(event);
  if (problem) throw new WebhookVerificationError('invalid_payload', `Body is not an event: ${problem}.`);
  const type = (event as { type: string }).type;
  if (type !== signature.eventType) {
    throw new WebhookVerificationError(
      'event_mismatch',
      `Event header ${JSON.stringify(signature.eventType)} but payload type ${JSON.stringify(type)}.`,
    );
  }
  return event as WebhookEvent;
}

function check(options: VerifyWebhookOptions): Checked | Promise<Checked> {
  if (typeof options !== 'object' || options === null) {
    throw new WebhookVerificationError('invalid_payload', 'Pass { payload, headers, secret }.');
  }
  // Configuration first: a bad secret or option fails every call alike, whatever arrives.
  const secrets = checkSecrets(options.secret);
  const { payload, headers, toleranceSeconds: tolerance = DEFAULT_TOLERANCE_S, now: clock, environment: expected, brand } = options;
  const nowMs: unknown = typeof clock === 'function' ? clock() : clock === undefined ? Date.now() : NaN;
  const fault =
    typeof tolerance !== 'number' || !(tolerance >= 0)
      ? 'toleranceSeconds must be ≥ 0'
      : !Number.isFinite(nowMs)
        ? 'now() must return ms'
        : expected !== undefined && expected !== 'sandbox' && expected !== 'production'
          ? 'environment must be sandbox or production'
          : brand !== undefined && !(typeof brand === 'string' && /^[\w-]+$/.test(brand))
            ? 'brand must be letters, digits, _ or -'
            : undefined;
  if (fault) throw new ConfigurationError(`Webhook option ${fault}.`);

  // Raw bytes from any realm (a Buffer, another window's or VM's Uint8Array), or a string.
  // Parsed bodies are the most common integration bug: refuse them before anything else.
  // (The tag works across realms, where instanceof does not.)
  const tag = typeof payload === 'string' ? '' : Object.prototype.toString.call(payload);
  const body =
    typeof payload === 'string'
      ? payload
      : tag === '[object Uint8Array]'
        ? (payload as Uint8Array)
        : tag === '[object ArrayBuffer]'
          ? new Uint8Array(payload as ArrayBuffer)
          : undefined;
  if (body === undefined) {
    throw new WebhookVerificationError(
      'invalid_payload',
      `Payload is ${payload && typeof payload === 'object' ? 'a parsed object' : String(payload)}. ${RAW_BODY_HELP}`,
    );
  }

  if (typeof headers !== 'object' || headers === null) {
    throw new WebhookVerificationError('missing_header', 'Pass the request headers.');
  }
  const found = readBrandHeaders(headers, brand);
  if (found.ambiguous) {
    throw new WebhookVerificationError(
      'missing_header',
      `Signatures of several brands (x-${found.ambiguous.join('-signature, x-')}-signature): pass brand.`,
    );
  }
  const signatureHeader = found.signature ?? undefined;
  const timestampHeader = single(found.timestamp);
  const eventHeader = single(found.event);
  if (signatureHeader === undefined || timestampHeader === undefined || eventHeader === undefined) {
    const missing = signatureHeader === undefined ? 'Signature' : timestampHeader === undefined ? 'Timestamp' : 'Event';
    throw new WebhookVerificationError('missing_header', `Missing the X-<Brand>-${missing} header.`);
  }

  if (!/^\d{1,15}$/.test(timestampHeader)) {
    throw new WebhookVerificationError('invalid_timestamp', 'Timestamp must be unix seconds, digits only.');
  }
  const timestamp = Number(timestampHeader);
  const now = Math.floor((nowMs as number) / 1000);
  if (now - timestamp > tolerance) {
    throw new WebhookVerificationError('timestamp_too_old', `Timestamp ${now - timestamp} s old (tolerance ${tolerance} s): a replay?`);
  }
  if (timestamp - now > tolerance) {
    throw new WebhookVerificationError('timestamp_in_future', `Timestamp ${timestamp - now} s ahead (tolerance ${tolerance} s).`);
  }

  if (expected !== undefined) {
    const environment = single(found.environment);
    if (environment !== expected) {
      throw new WebhookVerificationError(
        'environment_mismatch',
        `X-Environment is ${JSON.stringify(environment ?? null)}, expected ${JSON.stringify(expected)}.`,
      );
    }
  }

  // No well-formed (64 hex) signature: refused before any HMAC work.
  const candidates = signatureCandidates(signatureHeader);
  if (candidates.length === 0) throw mismatch();
  const checked: Checked = { signature: { timestamp, eventType: eventHeader }, body };
  const node = loadNodeCrypto();
  if (node) {
    if (!nodeMatches(node, secrets, timestampHeader, body, candidates)) throw mismatch();
    return checked;
  }
  return webMatches(secrets, timestampHeader, body, candidates).then((ok) => {
    if (!ok) throw mismatch();
    return checked;
  });
}

const mismatch = () =>
  new WebhookVerificationError('invalid_signature', 'Signature does not match: wrong secret, or a changed body.');

function nodeMatches(node: NodeCrypto, secrets: readonly string[], timestamp: string, body: string | Uint8Array, candidates: Uint8Array[]): boolean {
  for (const secret of secrets) {
    const digest = nodeHmacSha256(node, secret, `${timestamp}.`, body);
    for (const candidate of candidates) {
      if (node.timingSafeEqual(digest, candidate)) return true;
    }
  }
  return false;
}

async function webMatches(secrets: readonly string[], timestamp: string, body: string | Uint8Array, candidates: Uint8Array[]): Promise<boolean> {
  const bytes = signedBytes(timestamp, body);
  for (const secret of secrets) {
    const key = await importHmacKey(secret);
    // subtle.verify compares in constant time itself.
    for (const candidate of candidates) if (await crypto.subtle.verify('HMAC', key, candidate as Uint8Array<ArrayBuffer>, bytes)) return true;
  }
  return false;
}

function signedBytes(timestamp: string, body: string | Uint8Array): Uint8Array<ArrayBuffer> {
  const prefix = encoder.encode(`${timestamp}.`);
  const rest = typeof body === 'string' ? encoder.encode(body) : body;
  const out = new Uint8Array(prefix.length + rest.length);
  out.set(prefix);
  out.set(rest, prefix.length);
  return out;
}


// The signature header's 32 bytes, decoded before any HMAC work. Plain hex per the spec;
// a `sha256=` prefix (as on API requests) is tolerated; repeated headers are candidates.
function signatureCandidates(header: unknown): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const value of Array.isArray(header) ? header : [header]) {
    if (typeof value !== 'string') continue;
    const hex = value.startsWith('sha256=') ? value.slice(7) : value;
    if (hex.length !== 64) continue;
    // Buffer's native decoder stops at the first non-hex pair, so 32 bytes means valid hex.
    const B = (globalThis as { Buffer?: { from(s: string, e: 'hex'): Uint8Array } }).Buffer;
    const bytes = B ? B.from(hex, 'hex') : HEX64.test(hex) ? hexToBytes(hex) : undefined;
    if (bytes?.length === 32) out.push(bytes);
  }
  return out;
}

function hexToBytes(hex: string): Uint8Array {
  return Uint8Array.from(hex.match(/../g)!, (pair) => parseInt(pair, 16));
}

function checkSecrets(secret: string | readonly string[]): readonly string[] {
  const secrets = typeof secret === 'string' ? [secret] : secret;
  if (!Array.isArray(secrets) || !secrets.length || secrets.some((s) => typeof s !== 'string' || !s || s !== s.trim())) {
    throw new ConfigurationError(
      'Webhook secret must be a non-empty string (or array, to rotate) without surrounding whitespace (copy-paste slip?).',
    );
  }
  return secrets;
}

function single(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  // A repeated header: equal copies are one value; differing copies read as Fetch's
  // Headers.get() gives them ("a, b"), which no check accepts.
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string')) {
    return value.every((v) => v === value[0]) ? value[0] : value.join(', ');
  }
  return undefined;
}

const ENVELOPE_STRINGS = ['id', 'type', 'api_version', 'created_at'];

function envelopeProblem(event: unknown): string | undefined {
  const e = (isPlainObject(event) ? event : {}) as Record<string, unknown>;
  for (const key of ENVELOPE_STRINGS) if (typeof e[key] !== 'string') return `${key} must be a string`;
  return isPlainObject(e.data) ? undefined : 'data must be an object';
}

function isPlainObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// Duck-typed: a Request from another realm or fetch implementation is not an instanceof
// this runtime's Request.
function isRequest(input: unknown): input is Request {
  return typeof (input as Request | null)?.arrayBuffer === 'function' && typeof (input as Request).clone === 'function';
}

async function fromRequest(
  request: Request,
  secret: string | readonly string[] | undefined,
  options: VerifyWebhookRequestOptions | undefined,
): Promise<VerifyWebhookOptions> {
  let payload: ArrayBuffer;
  try {
    // The exact bytes (text() would drop a BOM and replace invalid UTF-8); cloned so the
    // caller can still read the body after verification.
    payload = await request.clone().arrayBuffer();
  } catch (cause) {
    throw new WebhookVerificationError('invalid_payload', `Body unreadable (${cause}): already consumed?`);
  }
  return { ...options, payload, headers: request.headers, secret: secret as string | readonly string[] };
}
