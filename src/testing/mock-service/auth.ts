// Authentication of /api/v1 calls as the spec describes it: X-Environment picks the
// credential set; merchant key, API key, timestamp window and the request signature
// `sha256=hex(HMAC-SHA256(apiSecret, "<ts>.<METHOD>.<path_with_query>.<raw_body>"))` must
// all hold. Then merchant availability; the per-merchant-and-IP rate limit is in rate-limit.ts.
import type { Ctx, Environment } from './context.js';
import type { MockMerchant } from './types.js';
import { hmacHex } from './hmac.js';
import { errorResponse } from './responses.js';
import { safeEqual } from './util.js';

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
    const refused = await checkSignature(ctx, input, credentials.apiSecret);
    if (refused) return refused;
  }

  return { merchant, environment };
}

/**
 * The timestamp window and the request signature. Resolves to a 401 response naming the
 * failed check, or to undefined when both hold.
 */
async function checkSignature(ctx: Ctx, input: AuthInput, apiSecret: string): Promise<Response | undefined> {
  const { headers } = input;
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
  const expected = await hmacHex(apiSecret, `${timestamp}.${input.method}.${input.rawTarget}.`, input.rawBody);
  if (!safeEqual(match[1]!.toLowerCase(), expected)) {
    return unauthorized(
      'Bad signature: X-Signature does not match HMAC-SHA256(API secret of the selected environment, "<timestamp>.<METHOD>.<path_with_query>.<raw_body>").',
    );
  }
  return undefined;
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
