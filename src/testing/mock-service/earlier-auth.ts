// Authentication of the earlier generation's three routes, in its order: environment (a
// missing X-Environment is production; another value 400), credentials (401), merchant
// disabled or rejected (403 Merchant Unavailable, both environments), pending merchant in
// production (403), rate limit (429, counted before the signature), then the signature.
// X-Business-Key is not read. Every 401 is `{"error":"Unauthorized","message":…}` with one
// of five messages. Written from the facts sheet (spec/deployed-generation.md).
import type { Environment } from './context.js';
import { EARLIER_TIMING } from './defaults.js';
import { hmacHex } from './hmac.js';
import { json } from './responses.js';
import type { Exchange, Step } from './router.js';
import type { MockMerchant } from './types.js';
import { safeEqual } from './util.js';

/** The five messages of the earlier generation's 401. */
const UNAUTHORIZED = {
  credentials: 'Invalid API credentials for the specified environment',
  missing: 'Missing API request signature headers.',
  timestamp: 'API request timestamp is invalid or expired.',
  noSecret: 'API signing secret is not configured for this merchant.',
  signature: 'Invalid API request signature.',
} as const;

const unauthorized = (message: string) => json(401, { error: 'Unauthorized', message });

/** The whole chain; sets `x.caller` and passes on, or answers the first refusal. */
export const earlierAuthenticate: Step = async (x, next) => {
  const environment = environmentOf(x.request.headers);
  if (environment instanceof Response) return environment;
  const merchant = findMerchant(x, environment);
  if (!merchant) return unauthorized(UNAUTHORIZED.credentials);
  const blocked = availability(merchant, environment);
  if (blocked) return blocked;
  const limited = rateLimit(x, merchant);
  if (limited) return limited;
  const bad = await checkSignature(x, merchant.credentials[environment].apiSecret);
  if (bad) return bad;
  x.caller = { merchant, environment, clientIp: x.clientIp, base: x.base };
  return next();
};

function environmentOf(headers: Headers): Environment | Response {
  const value = headers.get('x-environment');
  if (value === null || value === '') return 'production';
  if (value === 'sandbox' || value === 'production') return value;
  return json(400, {
    error: 'Invalid environment',
    message: "The X-Environment header must be either 'sandbox' or 'production'.",
    valid_environments: ['sandbox', 'production'],
  });
}

// X-Merchant-Key and X-API-Key of the selected environment (every merchant is compared).
function findMerchant(x: Exchange, environment: Environment): MockMerchant | undefined {
  const merchantKey = x.request.headers.get('x-merchant-key') ?? '';
  const apiKey = x.request.headers.get('x-api-key') ?? '';
  let found: MockMerchant | undefined;
  for (const candidate of x.service.ctx.state.merchants) {
    const set = candidate.credentials[environment];
    const keys = safeEqual(merchantKey, set.merchantKey) && safeEqual(apiKey, set.apiKey);
    if (keys && merchantKey !== '' && apiKey !== '') found ??= candidate;
  }
  return found;
}

function availability(merchant: MockMerchant, environment: Environment): Response | null {
  if (merchant.status === 'disabled' || merchant.status === 'rejected') {
    return json(403, { error: 'Merchant Unavailable', message: 'This merchant is currently disabled or rejected.' });
  }
  if (environment === 'production' && merchant.status === 'pending') {
    return json(403, {
      error: 'Merchant Pending Approval',
      message: 'Your merchant account is pending approval. Use the sandbox environment until it is approved.',
    });
  }
  return null;
}

// Per merchant (both environments share it) and client IP, a fixed 60 s window.
function rateLimit(x: Exchange, merchant: MockMerchant): Response | null {
  const { ctx, fixedWindow } = x.service;
  const limit = ctx.rateLimitPerMinute;
  const hit = fixedWindow.hit(`${merchant.id}|${x.clientIp}`, ctx.now(), limit, EARLIER_TIMING.rateWindowMs);
  if (hit.allowed) return null;
  const body = { error: 'Too Many Requests', message: 'Too many API requests. Please slow down.', retry_after: hit.retryAfter };
  return json(429, body, { 'Retry-After': String(hit.retryAfter) });
}

// `sha256=` optional, lower-case hex, the timestamp window both ways, the target as sent.
async function checkSignature(x: Exchange, secret: string): Promise<Response | null> {
  const { ctx } = x.service;
  if (!ctx.requireSignatures) return null;
  const timestamp = x.request.headers.get('x-timestamp') ?? '';
  const signature = x.request.headers.get('x-signature') ?? '';
  if (timestamp === '' || signature === '') return unauthorized(UNAUTHORIZED.missing);
  const skew = Math.floor(ctx.now() / 1000) - Number(timestamp);
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(skew) > ctx.toleranceSeconds) return unauthorized(UNAUTHORIZED.timestamp);
  if (!secret) return unauthorized(UNAUTHORIZED.noSecret);
  const body = x.method === 'GET' || x.method === 'HEAD' ? '' : x.rawBody;
  const expected = await hmacHex(secret, `${timestamp}.${x.method}.${x.rawTarget}.`, body);
  const given = signature.startsWith('sha256=') ? signature.slice(7) : signature;
  return safeEqual(given, expected) ? null : unauthorized(UNAUTHORIZED.signature);
}
