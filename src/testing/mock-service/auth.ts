// Authentication of /api/v1 calls as the spec describes it: X-Environment picks the
// credential set; merchant key, API key, timestamp window and the request signature
// `sha256=hex(HMAC-SHA256(apiSecret, "<ts>.<METHOD>.<path_with_query>.<raw_body>"))` must
// all hold. Then merchant availability and the per-merchant-and-IP rate limit.
import type { Ctx, Environment } from './context.js';
import type { MockMerchant } from './types.js';
import { hmacHex } from './hmac.js';
import { errorResponse, safeEqual } from './util.js';

export interface AuthInput {
  headers: Headers;
  method: string;
  /** Raw request target: pathname and query as received. */
  rawTarget: string;
  rawBody: Uint8Array;
}

const ENVIRONMENTS: readonly Environment[] = ['sandbox', 'production'];

const unauthorized = (message: string): Response => errorResponse(401, 'Invalid API credentials', message);

/**
 * Checks the credentials and the signature. Resolves to the merchant and environment, or
 * to a 401 response whose message names the failed check (never a secret).
 */
export async function authenticate(ctx: Ctx, input: AuthInput): Promise<{ merchant: MockMerchant; environment: Environment } | Response> {
  const { headers } = input;

  // Sandbox is the default mode when no X-Environment is sent.
  const envHeader = headers.get('x-environment');
  const environment = (envHeader === null || envHeader === '' ? 'sandbox' : envHeader) as Environment;
  if (!ENVIRONMENTS.includes(environment)) {
    return unauthorized('Unknown environment: X-Environment must be sandbox or production.');
  }

  const merchantHeader = headers.get('x-merchant-key');
  const businessHeader = headers.get('x-business-key');
  if (merchantHeader !== null && businessHeader !== null && merchantHeader !== businessHeader) {
    return unauthorized('X-Merchant-Key and its alias X-Business-Key carry different values: send one of them.');
  }
  const merchantKey = merchantHeader ?? businessHeader;
  if (!merchantKey) return unauthorized('Missing merchant key: send X-Merchant-Key (or its alias X-Business-Key).');

  // Look at every merchant (no early exit) so the time taken says nothing about the keys.
  let merchant: MockMerchant | undefined;
  let otherEnvironment = false;
  for (const candidate of ctx.state.merchants) {
    if (safeEqual(merchantKey, candidate.credentials[environment].merchantKey)) merchant ??= candidate;
    const other = environment === 'sandbox' ? 'production' : 'sandbox';
    if (safeEqual(merchantKey, candidate.credentials[other].merchantKey)) otherEnvironment = true;
  }
  if (!merchant) {
    return unauthorized(
      otherEnvironment
        ? `Unknown merchant key for the ${environment} environment: it belongs to the other environment's credential set; switch X-Environment and all three credentials together.`
        : `Unknown merchant key for the ${environment} environment.`,
    );
  }
  const credentials = merchant.credentials[environment];

  const apiKey = headers.get('x-api-key');
  if (!apiKey) return unauthorized('Missing X-API-Key header.');
  if (!safeEqual(apiKey, credentials.apiKey)) {
    return unauthorized(`Unknown API key: X-API-Key does not match the merchant key for the ${environment} environment.`);
  }

  if (ctx.requireSignatures) {
    const timestamp = headers.get('x-timestamp');
    if (!timestamp) return unauthorized('Missing X-Timestamp header (unix time in seconds).');
    if (!/^\d{1,12}$/.test(timestamp)) return unauthorized('Invalid timestamp: X-Timestamp must be unix time in whole seconds.');
    const skew = Math.floor(ctx.now() / 1000) - Number(timestamp);
    if (Math.abs(skew) > ctx.toleranceSeconds) {
      return unauthorized(
        `Stale timestamp: X-Timestamp is ${Math.abs(skew)} s ${skew > 0 ? 'behind' : 'ahead of'} the server clock (tolerance ${ctx.toleranceSeconds} s); sign each request with the current time.`,
      );
    }

    const signature = headers.get('x-signature');
    if (!signature) return unauthorized('Missing X-Signature header.');
    const match = /^sha256=([0-9a-fA-F]+)$/.exec(signature);
    if (!match) return unauthorized('Bad signature: X-Signature must have the form sha256=<hex HMAC-SHA256>.');
    const expected = await hmacHex(credentials.apiSecret, `${timestamp}.${input.method}.${input.rawTarget}.`, input.rawBody);
    if (!safeEqual(match[1]!.toLowerCase(), expected)) {
      return unauthorized(
        'Bad signature: X-Signature does not match HMAC-SHA256(API secret of the selected environment, "<timestamp>.<METHOD>.<path_with_query>.<raw_body>").',
      );
    }
  }

  return { merchant, environment };
}

/** Merchant availability: rejected/disabled merchants are blocked; production needs approval. */
export function availability(merchant: MockMerchant, environment: Environment): Response | null {
  if (merchant.status === 'disabled') {
    return errorResponse(403, 'Merchant Suspended', 'This business account is disabled; API access is blocked.');
  }
  if (merchant.status === 'rejected') {
    return errorResponse(403, 'Merchant Rejected', 'This business was rejected; API access is blocked.');
  }
  if (environment === 'production' && merchant.status !== 'approved') {
    return errorResponse(
      403,
      'Merchant Pending Approval',
      'Production API use needs an approved business; use the sandbox environment until an administrator approves it.',
    );
  }
  return null;
}

/** Sliding 60 s window of request times per merchant and client IP. */
// Each key's times are a queue (an array and the index of its oldest live entry): a hit
// costs O(1) on average however high the limit is raised (a load test at 1,000 requests/s
// holds 60,000 times; copying them on every request was 0.5 MB of garbage per request).
export class RateLimiter {
  readonly #windows = new Map<string, { times: number[]; head: number }>();
  #hitsSinceSweep = 0;

  /** Counts one request at `now`; refuses it (counting nothing) when the window is full. */
  hit(key: string, now: number, limit: number): { allowed: true; remaining: number } | { allowed: false; retryAfter: number } {
    const windowStart = now - WINDOW_MS;
    if (++this.#hitsSinceSweep >= SWEEP_EVERY) this.#sweep(windowStart);
    let window = this.#windows.get(key);
    if (!window) this.#windows.set(key, (window = { times: [], head: 0 }));
    const { times } = window;
    while (window.head < times.length && times[window.head]! <= windowStart) window.head++;
    // The expired prefix is dropped once it is most of the array: each time is moved O(1) times.
    if (window.head >= 64 && window.head * 2 >= times.length) {
      times.splice(0, window.head);
      window.head = 0;
    }
    const count = times.length - window.head;
    if (count >= limit) return { allowed: false, retryAfter: Math.max(1, Math.ceil((times[window.head]! + WINDOW_MS - now) / 1000)) };
    times.push(now);
    return { allowed: true, remaining: limit - count - 1 };
  }

  /** Keys with a request in the window (the others are forgotten, so the map stays bounded). */
  get size(): number {
    return this.#windows.size;
  }

  #sweep(windowStart: number): void {
    this.#hitsSinceSweep = 0;
    for (const [key, { times }] of this.#windows) if ((times.at(-1) ?? -Infinity) <= windowStart) this.#windows.delete(key);
  }
}

const WINDOW_MS = 60_000;
const SWEEP_EVERY = 1_000;
