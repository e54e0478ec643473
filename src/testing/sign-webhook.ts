// Part of the testing kit: it signs with the simulated service's own HMAC, never the
// client's, so a test that signs here and verifies with the SDK checks two implementations.
import { hmacHex } from './mock-service/hmac.js';

/** Inputs of {@link signWebhook}. */
export interface SignWebhookOptions {
  /**
   * The event: an object (serialised with JSON.stringify) or the exact body string. With
   * `format: 'legacy'`, the IPN body `{ data, message, status, timestamp }` (an object is
   * serialised as PHP does; see `format`).
   */
  payload: string | Record<string, unknown>;
  /** The webhook signing secret; with `format: 'legacy'`, the API secret (the earlier generation signs IPNs with it). */
  secret: string;
  /** Unix seconds. Default: now (`now()`). With `format: 'legacy'`, the body's `timestamp` (an object payload's own is kept when this is not given). */
  timestamp?: number;
  /** The clock the default `timestamp` is read from, ms since the epoch: a test clock's `now`. Default `Date.now`. */
  now?: () => number;
  /** Event header value. Default: the payload's `type`. (Not used by `format: 'legacy'`, which has no event header.) */
  type?: string;
  /** Brand in the header names (`X-<Brand>-Signature`). Default `Service`. (Not used by `format: 'legacy'`.) */
  brand?: string;
  /** X-Environment. Default `sandbox`; with `format: 'legacy'`, the payload's `data.environment` when it has one. */
  environment?: 'sandbox' | 'production';
  /**
   * `'current'` (default): the spec's delivery, `X-<Brand>-Signature` over
   * `<timestamp>.<body>`. `'legacy'`: the earlier generation's IPN, as it sends it:
   * `X-Signature` = hex HMAC-SHA256 of the body alone, `X-Environment`, `Content-Type` and
   * `User-Agent: GuzzleHttp/7`, no timestamp or event header. An object payload is
   * serialised compactly with slashes and Unicode unescaped, except U+2028 and U+2029,
   * which PHP escapes; a `timestamp` is added when it has none.
   */
  format?: 'current' | 'legacy';
}

/** A signed delivery: send `body` with `headers`. */
export interface SignedWebhook {
  body: string;
  headers: Record<string, string>;
}

/**
 * Signs a webhook delivery exactly as the service does, for merchants' own tests of
 * their webhook handlers.
 *
 * @example
 * ```ts
 * import { signWebhook } from 'business-payments/testing';
 * const { body, headers } = await signWebhook({ payload: event, secret: 'whsec_test' });
 * const res = await fetch('http://localhost:3000/webhooks', { method: 'POST', body, headers });
 * ```
 * @example
 * ```ts
 * // Signed on a test clock, a day ahead of the real time: verify on the same clock.
 * import { createTestClock, signWebhook } from 'business-payments/testing';
 * const clock = createTestClock();
 * await clock.advance(86_400_000);
 * const delivery = await signWebhook({ payload: event, secret: 'whsec_test', now: clock.now });
 * ```
 * @example
 * ```ts
 * // The earlier generation's IPN, signed with the API secret.
 * const ipn = await signWebhook({
 *   format: 'legacy',
 *   secret: apiSecret,
 *   payload: { data: { ref_trx: 'order-1', amount: 100, currency_code: 'USD', environment: 'sandbox', trx_id: 'TRX1' },
 *              message: 'Payment Completed', status: 'completed' },
 * });
 * ```
 */
export async function signWebhook(options: SignWebhookOptions): Promise<SignedWebhook> {
  if (options.format === 'legacy') return signLegacy(options);
  const body = typeof options.payload === 'string' ? options.payload : JSON.stringify(options.payload);
  const timestamp = String(options.timestamp ?? nowSeconds(options));
  const type = options.type ?? (typeof options.payload === 'object' ? options.payload.type : undefined) ?? parsed(body)?.type;
  const brand = options.brand ?? 'Service';
  const signature = await hmacHex(options.secret, `${timestamp}.`, body);
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    [`X-${brand}-Signature`]: signature,
    [`X-${brand}-Timestamp`]: timestamp,
    'X-Environment': options.environment ?? 'sandbox',
  };
  if (typeof type === 'string') headers[`X-${brand}-Event`] = type;
  return { body, headers };
}

// The earlier generation's IPN: PHP's json_encode(JSON_UNESCAPED_SLASHES |
// JSON_UNESCAPED_UNICODE), which still escapes the line and paragraph separators.
async function signLegacy(options: SignWebhookOptions): Promise<SignedWebhook> {
  const { payload } = options;
  const body =
    typeof payload === 'string'
      ? payload
      : JSON.stringify({ ...payload, timestamp: options.timestamp ?? payload.timestamp ?? nowSeconds(options) }).replace(
          /[\u2028\u2029]/g,
          (c) => `\\u${c.charCodeAt(0).toString(16)}`,
        );
  const stated = (parsed(body)?.data as { environment?: unknown } | undefined)?.environment;
  return {
    body,
    headers: {
      'Content-Type': 'application/json',
      'User-Agent': 'GuzzleHttp/7',
      'X-Signature': await hmacHex(options.secret, '', body),
      'X-Environment': options.environment ?? (stated === 'production' ? 'production' : 'sandbox'),
    },
  };
}

// The signing time in unix seconds, on the caller's clock when given one.
function nowSeconds({ now }: SignWebhookOptions): number {
  const ms = now === undefined ? Date.now() : now();
  if (!Number.isFinite(ms)) throw new RangeError('signWebhook: now() must return ms since the epoch.');
  return Math.floor(ms / 1000);
}

function parsed(body: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(body) as Record<string, unknown> | undefined;
  } catch {
    return undefined;
  }
}
