import { ConfigurationError } from '../core/base-error.js';
import { credential } from '../internal/credential.js';
import { importHmacKey, loadNodeCrypto, nodeHmacSha256 } from '../internal/hmac.js';
import { refuseReadBody, WebhookVerificationError } from './errors.js';
import type { WebhookEvent, WebhookFormat } from './events.js';
import { readSignedHeaders, type WebhookHeaders } from './headers.js';

/** The raw body exactly as received: never a parsed object. */
export type WebhookPayload = string | Uint8Array | ArrayBuffer;

/** Inputs of {@link verifyWebhook} and {@link verifyWebhookSignature}. */
export interface VerifyWebhookOptions {
  /** The raw request body, byte for byte (string, Uint8Array, ArrayBuffer or Buffer). */
  payload: WebhookPayload;
  /** Request headers: a Fetch `Headers` or a Node headers object (case-insensitive). */
  headers: WebhookHeaders;
  /** The webhook signing secret; an array during rotation (any one may match). Used as given: surrounding whitespace is refused. */
  secret: string | readonly string[];
  /** Allowed distance between the signed timestamp (header, or the earlier form's body) and now, both ways, in seconds: more than 0, at most 3600. Default 300. */
  toleranceSeconds?: number | undefined;
  /**
   * The clock the timestamp's window is measured on, ms since the epoch (as `Date.now()`),
   * read once per delivery (a Request's headers and body are checked at the same time). In
   * tests, a test clock's `now`, the one the sandbox signs its deliveries on. Default `Date.now`.
   */
  now?: (() => number) | undefined;
  /**
   * When set, the delivery's environment must equal it: X-Environment in the current form;
   * in the earlier form the signed body's (`data.environment`, `data.is_sandbox`), refused
   * when the body says neither.
   */
  environment?: 'sandbox' | 'production' | undefined;
  /** Pins the brand of `X-<Brand>-Signature` etc.; found by suffix when omitted. */
  brand?: string | undefined;
  /**
   * The forms accepted (default both): `'current'`, the spec's `X-<Brand>-Signature`
   * delivery; `'legacy'`, the earlier generation's IPN (`X-Signature`, signed with the API
   * secret). A delivery of another form is refused with `missing_header`, whose message names
   * the form and says to add it here. An empty list (or anything but a list) accepts nothing.
   */
  formats?: readonly WebhookFormat[] | undefined;
}

/** `verifyWebhook(request, secret, options)` options (everything but payload, headers, secret), and the body's bound. */
export type VerifyWebhookRequestOptions = Omit<VerifyWebhookOptions, 'payload' | 'headers' | 'secret'> & {
  /**
   * Most bytes of the Request's body read: a whole number more than 0, default 1 MiB (as the
   * fulfillment kit's). A longer body (declared or streamed) is `invalid_payload`, its read
   * cancelled at the bound. It is read only once the headers hold (present, the signature
   * well formed, the timestamp inside the window): an unsigned delivery is refused unread.
   */
  maxBodyBytes?: number | undefined;
};

/**
 * What a successful signature check vouches for. The HMAC covers `<timestamp>.<raw body>`
 * and nothing else, so the result keeps the signed parts (`signed`) apart from the event
 * header, which is not signed (`unsignedEventHeader`). Trust `signed.body`, and the `type`
 * inside it; anyone on the way can change the event header without breaking the signature.
 * In the earlier generation's form (`format: 'legacy'`) the HMAC covers the body alone and
 * the timestamp is inside it: `signed.timestamp` is the body's `timestamp`, and there is no
 * event header (`unsignedEventHeader` is `''`).
 *
 * @example
 * ```ts
 * const { signed } = await verifyWebhookSignature({ payload: rawBody, headers: req.headers, secret });
 * await queue.send(signed.body); // the worker parses it and routes on the event's own `type`
 * ```
 */
export interface VerifiedWebhookSignature {
  /** The delivery's form: `'current'` (the spec's) or `'legacy'` (the earlier generation's IPN). */
  format: WebhookFormat;
  /** `signed.timestamp` as unix seconds: signed, and within `toleranceSeconds` of now. */
  timestamp: number;
  /** Exactly what the HMAC covered: the message was `${signed.timestamp}.${signed.body}` (legacy: `signed.body` alone). */
  signed: {
    /** The X-<Brand>-Timestamp header's digits, as signed (legacy: the body's `timestamp`, signed inside the body). */
    timestamp: string;
    /** The raw body as signed: the `payload` given (an ArrayBuffer as a Uint8Array over it), or a Request's body bytes. */
    body: string | Uint8Array;
  };
  /**
   * The X-<Brand>-Event header as received. Not signed: a routing hint at most, never a
   * reason to trust anything. `verifyWebhook` checks it against the signed body's `type`.
   * `''` in the earlier form, which has no event header.
   */
  unsignedEventHeader: string;
}

/**
 * Checks a webhook delivery's signature and timestamp without parsing the body (but for
 * the earlier form, see below): for handlers that queue the raw body and answer 2xx at
 * once. Cheap checks run first (headers present, timestamp all digits and inside the
 * window), then the HMAC
 * (`HMAC-SHA256(secret, "<timestamp>.<raw_body>")`, constant-time comparison).
 * Resolves to the signed parts, and the unsigned event header named as such. A delivery of
 * the earlier generation's form (`X-Signature`, no brand headers) is checked by its own
 * rules: the HMAC of the raw body alone, the freshness of the body's signed `timestamp`, and
 * the body's environment (which the unsigned X-Environment must agree with).
 *
 * @throws {WebhookVerificationError} with `.reason` when the delivery must not be trusted.
 * @throws {ConfigurationError} when the configuration is unusable: a secret that is not set or has leading
 * or trailing whitespace (refused, never trimmed), a `toleranceSeconds` that is not a number more than 0 and
 * at most 3600, a `now` that does not return a finite number, an `environment` other than sandbox/production,
 * or a `brand` that is not a header-name part. Checked before anything else, whatever the delivery.
 */
export function verifyWebhookSignature(options: VerifyWebhookOptions): Promise<VerifiedWebhookSignature>;
/**
 * Same checks, on a Fetch `Request`: its headers first (an unsigned or stale delivery is
 * refused before a byte of the body is read), then at most `maxBodyBytes` (default 1 MiB) of
 * its body, from a clone: the request itself is not consumed.
 */
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
  return verifyThen(input, secret, options, (verified) => verified);
}

/**
 * Verifies a webhook delivery and returns its event, typed as a union on `type`.
 * Everything {@link verifyWebhookSignature} checks, then: the body is JSON with `id`,
 * `type`, `api_version`, `created_at` and `data`, and the event header equals `type`.
 * A delivery of the earlier generation's form becomes the same `payment.completed` /
 * `payment.failed` event with `format: 'legacy'` and no `id` (see `LegacyPaymentEvent`);
 * every other event has `format: 'current'`.
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
/**
 * Same, on a Fetch `Request` (Next.js route handlers, edge and serverless functions): the
 * headers are checked before the body is read, and at most `maxBodyBytes` (default 1 MiB) of it.
 */
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
  return verifyThen(input, secret, options, toEvent);
}

/**
 * @internal `verifyWebhook` on the `{ payload, headers, secret }` the fulfillment kit builds
 * (never a Request: the kit reads a delivery's body itself), without the Request path.
 */
export const verifyPayload = async (options: VerifyWebhookOptions): Promise<WebhookEvent> => toEvent(await check(options));

type Verified = VerifiedWebhookSignature;
/** An amount as a body holds it: the callers cast what they pass, and readAmount checks it. */
type Money = { value?: unknown } | null | undefined;

// On node:crypto everything is synchronous, so the common case resolves without extra
// promise hops: only a Request body or the WebCrypto fallback is awaited.
function verifyThen<T>(
  input: VerifyWebhookOptions | Request,
  secret: string | readonly string[] | undefined,
  options: VerifyWebhookRequestOptions | undefined,
  map: (verified: Verified) => T,
): Promise<T> {
  try {
    // A body read before (a framework's parser; a Request's bodyUsed): said so, not a bad signature.
    refuseReadBody(input);
    // Duck-typed: a Request from another realm or fetch implementation is not an instanceof
    // this runtime's Request. (Something else with a clone() fails to give a body: invalid_payload.)
    const verified =
      typeof (input as Request | null)?.clone === 'function'
        ? fromRequest(input as Request, secret, options).then(check)
        : check(input as VerifyWebhookOptions);
    return verified instanceof Promise ? verified.then(map) : Promise.resolve(map(verified));
  } catch (error) {
    return Promise.reject(error);
  }
}

// Exact where the spec speaks, tolerant where it is silent: any signed JSON object is an
// event; only the payment events' shown payload is checked, and only in what a merchant
// acts on (`id`, `type`, `data.trx_id`). Nothing is dropped; the only changes are `format`,
// `type` filled in from the event header when the payload has none, and amounts sent as
// decimal strings read as their numbers. The earlier form (checked before its HMAC) is
// normalised to a payment event, its body kept whole as `legacy`.
function toEvent({ format, timestamp, signed, unsignedEventHeader: header }: Verified): WebhookEvent {
  const event = parse(signed.body);
  if (!event) throw new WebhookVerificationError('invalid_payload', 'Body is not a JSON object.');
  if (format == 'legacy') {
    const data = event.data as Record<string, unknown>;
    const amount = { value: data.amount, currency: data.currency_code };
    readAmount(amount);
    return {
      type: `payment.${event.status as string}`,
      format,
      created_at: new Date(timestamp * 1000).toISOString(),
      data: { ...data, merchant_ref: data.ref_trx, amount, status: event.status, environment: bodyEnvironment(data) },
      legacy: event,
    } as WebhookEvent;
  }
  event.format = format;
  const sent = event.type;
  if ((event.type ??= header) !== header) {
    throw new WebhookVerificationError(
      'event_mismatch',
      `Event header ${JSON.stringify(header)} but payload type ${JSON.stringify(sent)}.`,
    );
  }
  if (header === 'payment.completed' || header === 'payment.failed') {
    const data = event.data as Record<string, unknown> | null | undefined;
    // A payment's type must be signed (the event header is not), and its id and trx_id usable.
    const problem = sent == null ? 'type' : typeof event.id !== 'string' ? 'id' : typeof data?.trx_id !== 'string' ? 'data.trx_id' : '';
    if (problem) throw new WebhookVerificationError('invalid_payload', `Body is not a ${header} event: ${problem} must be a string.`);
    // The amount, and the settlement's gross, fees and net (whatever else it holds too).
    readAmount(data!.amount as Money);
    const settlement = data!.settlement as Record<string, unknown> | null | undefined;
    for (const key in settlement) readAmount(settlement[key] as Money);
  }
  return event as WebhookEvent;
}

// Bodies are parsed in one place: the JSON object, or undefined for anything else (not
// JSON at all included: no SyntaxError escapes); the callers refuse it as invalid_payload.
function parse(body: string | Uint8Array): Record<string, unknown> | undefined {
  try {
    const event = JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body)) as unknown;
    if (typeof event === 'object' && event && !Array.isArray(event)) return event as Record<string, unknown>;
  } catch {
    // Not JSON: undefined, as for any other value that is not an object.
  }
}

// The earlier form's X-Environment is not signed: its environment is the signed body's
// (`data.environment`, else `data.is_sandbox`; null when it says neither), and the header,
// when there is one, must agree with it.
function bodyEnvironment({ environment: e, is_sandbox: f }: Record<string, unknown>, header?: string): string | null {
  const said = e === 'sandbox' || e === 'production' ? e : f === true || f === 1 ? 'sandbox' : f === false || f === 0 ? 'production' : null;
  if (said && header !== undefined && header !== said)
    throw new WebhookVerificationError('environment_mismatch', `The body says "${said}", X-Environment "${header}".`);
  return said;
}

// Where the spec says number, a server may send the decimal string of one ("25.00").
const readAmount = (amount: Money) => {
  if (typeof amount?.value === 'string' && /^-?\d+(\.\d+)?$/.test(amount.value)) amount.value = +amount.value;
};

// The documented order: configuration, payload, headers, timestamp, environment (all
// cheap, so junk costs no HMAC), then the HMAC. The earlier form keeps its timestamp and
// environment in the body: a well-formed signature first, then a bounded parse whose values
// can only refuse; the event is built from the body once the HMAC holds.
function check(options: VerifyWebhookOptions): Verified | Promise<Verified> {
  if (typeof options !== 'object' || options === null) {
    throw new WebhookVerificationError('invalid_payload', 'Pass { payload, headers, secret }.');
  }
  // Configuration first: a bad secret or option fails every call alike, whatever arrives.
  const secrets = checkSecrets(options.secret);
  const { toleranceSeconds: tolerance = 300, environment, brand, formats } = options;
  const nowMs = checkOptions(tolerance, options.now, environment, brand);
  const body = rawBody(options.payload);
  const found = readSignedHeaders(options.headers, brand);
  // The signature's well-formed (64 hex) values, decoded once for both forms; none is refused
  // before any HMAC work.
  const candidates = signatureCandidates(found.signature);
  let { timestamp: stamp, environment: env }: { timestamp?: string | undefined; environment?: string | null | undefined } = found;
  const format = stamp === undefined ? 'legacy' : 'current';
  // A formats without includes() (not a list) accepts nothing, as an empty one does.
  if (formats && !formats.includes?.(format))
    throw new WebhookVerificationError('missing_header', `Form '${format}' refused: add it to formats.`);
  let sent: Record<string, unknown> | undefined;
  if (stamp === undefined) {
    if (!candidates.length) throw mismatch();
    // Parsed before the HMAC for its timestamp and environment, so bounded: an IPN is about
    // 1 KB, and a body over 1 MiB is refused unparsed.
    const data = (sent = body.length < 1 << 20 ? parse(body) : undefined)?.data as Record<string, unknown> | null | undefined;
    if ((sent?.status !== 'completed' && sent?.status !== 'failed') || typeof data?.trx_id !== 'string')
      throw new WebhookVerificationError('invalid_payload', 'Body is not an IPN (status, data.trx_id).');
    // A number in JSON, digits only (checkTimestamp refuses anything else).
    stamp = typeof sent.timestamp == 'number' ? String(sent.timestamp) : '';
    env = bodyEnvironment(data, env);
  }
  const timestamp = checkTimestamp(stamp, nowMs, tolerance);
  if (environment !== undefined && env !== environment) {
    throw new WebhookVerificationError(
      'environment_mismatch',
      `${sent ? 'The body says' : 'X-Environment is'} ${sent && !env ? 'no environment' : JSON.stringify(env ?? null)}, expected "${environment}".`,
    );
  }
  if (!candidates.length) throw mismatch();
  const verified: Verified = { format, timestamp, signed: { timestamp: stamp, body }, unsignedEventHeader: found.event };
  // The earlier form signs the body alone.
  const prefix = sent ? '' : `${stamp}.`;
  const node = loadNodeCrypto();
  if (!node) {
    return webMatches(secrets, prefix, body, candidates).then((ok) => {
      if (!ok) throw mismatch(body, sent);
      return verified;
    });
  }
  for (const secret of secrets) {
    const digest = nodeHmacSha256(node, secret, prefix, body);
    for (const candidate of candidates) if (node.timingSafeEqual(digest, candidate)) return verified;
  }
  throw mismatch(body, sent);
}

// Returns the current time in ms once every option but the secret is usable.
function checkOptions(tolerance: unknown, clock: unknown, environment: unknown, brand: unknown): number {
  const nowMs: unknown = typeof clock === 'function' ? (clock as () => unknown)() : clock === undefined ? Date.now() : NaN;
  // typeof first: a string like '300' passes the comparisons; NaN fails them all.
  // An hour is twelve times the spec's window already. Wider (Infinity above all) turns the
  // replay check off, and a clock that far off needs fixing, not tolerating.
  const fault = !(typeof tolerance === 'number' && tolerance > 0 && tolerance <= 3600)
    ? 'toleranceSeconds must be > 0 and <= 3600'
    : !Number.isFinite(nowMs)
      ? 'now() must return ms'
      : environment !== undefined && environment !== 'sandbox' && environment !== 'production'
        ? 'environment must be sandbox or production'
        : brand !== undefined && !(typeof brand === 'string' && /^[\w-]+$/.test(brand))
          ? 'brand must be letters, digits, _ or -'
          : undefined;
  if (fault) throw new ConfigurationError(`Webhook option ${fault}.`);
  return nowMs as number;
}

// Raw bytes from any realm (a Buffer, another window's or VM's Uint8Array), or a string.
// Parsed bodies are the most common integration bug: refuse them before anything else.
// (The tag works across realms, where instanceof does not.)
function rawBody(payload: unknown): string | Uint8Array {
  if (typeof payload === 'string') return payload;
  const tag = {}.toString.call(payload);
  if (tag === '[object Uint8Array]') return payload as Uint8Array;
  if (tag === '[object ArrayBuffer]') return new Uint8Array(payload as ArrayBuffer);
  throw new WebhookVerificationError(
    'invalid_payload',
    `Payload is ${payload && typeof payload === 'object' ? 'a parsed object' : String(payload)}. Pass the raw body, not parsed JSON: express.raw({ type: "application/json" }), await request.text().`,
  );
}

/** The timestamp in unix seconds, once it is digits only and inside the window (the fulfillment kit checks it before reading a body too). */
export function checkTimestamp(header: string, nowMs: number, tolerance: number): number {
  if (!/^\d{1,15}$/.test(header)) {
    throw new WebhookVerificationError('invalid_timestamp', 'Timestamp must be unix seconds, digits only.');
  }
  const timestamp = +header;
  // Seconds old: negative when ahead (-age is then exact: subtraction rounds symmetrically).
  const age = Math.floor(nowMs / 1000) - timestamp;
  if (age > tolerance) {
    throw new WebhookVerificationError('timestamp_too_old', `Timestamp ${age} s old (tolerance ${tolerance} s): a replay?`);
  }
  if (-age > tolerance) {
    // 12 digits and more: milliseconds since 1973 (as seconds, thousands of years away).
    throw new WebhookVerificationError(
      'timestamp_in_future',
      `Timestamp ${-age} s ahead (tolerance ${tolerance} s).${timestamp >= 1e11 ? ' Looks like milliseconds: the header must be unix seconds.' : ''}`,
    );
  }
  return timestamp;
}

// Platforms that hand the body base64-encoded (AWS Lambda's isBase64Encoded) fail here: say
// so. The earlier form is keyed with the API secret, not a webhook secret: say that too.
const mismatch = (body?: string | Uint8Array, legacy?: unknown) =>
  new WebhookVerificationError(
    'invalid_signature',
    `Signature does not match: wrong secret, or a changed body.${
      typeof body == 'string' && /^[\w+/]{16,}={0,2}$/.test(body) ? ' The body looks base64-encoded: decode it first.' : ''
    }${legacy ? ' Legacy form: pass the API secret.' : ''}`,
  );

async function webMatches(
  secrets: readonly string[],
  prefix: string,
  body: string | Uint8Array,
  candidates: Uint8Array[],
): Promise<boolean> {
  // A Blob joins the prefix and the body (a string is UTF-8 encoded, a view read in place).
  // The casts are for consumers' DOM lib, where BufferSource excludes shared buffers.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
  const bytes = await new Blob([prefix, body as Uint8Array<ArrayBuffer>]).arrayBuffer();
  for (const secret of secrets) {
    const key = await importHmacKey(secret);
    // subtle.verify compares in constant time itself.
    for (const candidate of candidates)
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
      if (await crypto.subtle.verify('HMAC', key, candidate as Uint8Array<ArrayBuffer>, bytes)) return true;
  }
  return false;
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
    const bytes = B
      ? B.from(hex, 'hex')
      : /^[\da-f]{64}$/i.test(hex)
        ? Uint8Array.from(hex.match(/../g)!, (pair) => parseInt(pair, 16))
        : undefined;
    if (bytes?.length === 32) out.push(bytes);
  }
  return out;
}

/**
 * The webhook secret(s), each by the rule of every credential (see `credential()`): not
 * set, or leading or trailing whitespace (never trimmed), is a `ConfigurationError`. Every
 * verify call runs it first, and `createFulfillment` at construction. (No advice on where
 * to set it: its callers know where they took it from.)
 */
export function checkSecrets(secret: unknown): readonly string[] {
  const list = Array.isArray(secret) ? (secret as unknown[]) : [secret];
  for (const one of list.length ? list : [undefined]) credential(one, 'webhook secret', 'webhook secret is not set');
  return list as string[];
}

// The headers first, as check() takes them (the secret and options, the headers, the
// signature well formed, the current form's timestamp inside the window): an unsigned or stale
// delivery is refused before a byte of its body is read. Then at most `max` bytes of a clone
// (the caller can still read the request), the read cancelled past them.
async function fromRequest(
  request: Request,
  secret: string | readonly string[] | undefined,
  options: VerifyWebhookRequestOptions | undefined,
): Promise<VerifyWebhookOptions> {
  const input = { ...options, headers: request.headers, secret } as VerifyWebhookOptions & VerifyWebhookRequestOptions;
  const { toleranceSeconds: tolerance = 300, maxBodyBytes: max = 1 << 20 } = input;
  checkSecrets(secret);
  const nowMs = checkOptions(tolerance, input.now, input.environment, input.brand);
  // The body's bound is a Request's option alone: checked after the others, as before.
  if (!(Number.isInteger(max) && max > 0)) throw new ConfigurationError('Webhook option maxBodyBytes must be a whole number > 0.');
  const found = readSignedHeaders(input.headers, input.brand);
  if (found.timestamp !== undefined) checkTimestamp(found.timestamp, nowMs, tolerance);
  if (!signatureCandidates(found.signature).length) throw mismatch();
  let body: Uint8Array | undefined;
  try {
    // A declared length over the bound is refused before a byte is read. The exact bytes
    // (text() would drop a BOM and replace invalid UTF-8), checked at the time the headers were.
    if (!(+request.headers.get('content-length')! > max)) body = await readBounded(chunksOf(request.clone().body), max);
  } catch (cause) {
    throw new WebhookVerificationError('invalid_payload', `Body unreadable (${String(cause)}): already consumed?`);
  }
  if (!body) throw new WebhookVerificationError('invalid_payload', `Body too large: over maxBodyBytes (${max} bytes).`);
  input.payload = body;
  input.now = () => nowMs;
  return input;
}

// A body read with a bound, for a Fetch `Request` here and the fulfilment kit's deliveries
// alike: at most `max` bytes are held, and past them the source is let go (a Fetch body
// cancelled, a Node request's iteration ended), so a flood costs one chunk, not the body.

/** @internal The bytes of `chunks` joined, or `undefined` as soon as they pass `max`. */
export async function readBounded(chunks: AsyncIterable<Uint8Array>, max: number): Promise<Uint8Array | undefined> {
  const held: Uint8Array[] = [];
  let size = 0;
  // Stopping early ends the iteration: a Fetch body is cancelled; a Node request is destroyed
  // (Node keeps its socket for the answer, and stops reading the connection).
  for await (const chunk of chunks) {
    if ((size += chunk.byteLength) > max) return undefined;
    held.push(chunk);
  }
  // One buffer of the chunks (not a Blob: its typing differs between the DOM and Node libs).
  const body = new Uint8Array(size);
  size = 0;
  for (const chunk of held) body.set(chunk, (size += chunk.byteLength) - chunk.byteLength);
  return body;
}

/**
 * @internal A Fetch body through its reader (async iteration of a ReadableStream is not
 * everywhere), cancelled when the caller stops early.
 */
export async function* chunksOf(body: ReadableStream<Uint8Array> | null | undefined): AsyncGenerator<Uint8Array> {
  const reader = body?.getReader();
  try {
    for (let next; reader && !(next = await reader.read()).done;) yield next.value;
  } finally {
    reader?.cancel().catch(() => {});
  }
}
