// Signed webhook delivery with the spec's retry schedule: an attempt at once, then 3, 6, 12
// and 24 minutes after each failure (× timeScale), at most 5 attempts, then abandoned. A 2xx
// answer is a delivery. Every attempt carries the same event id and body, signed afresh:
// X-<Brand>-Signature = hex(HMAC-SHA256(webhook secret, "<timestamp>.<body>")), with the
// secret of the event's environment (sandbox and production each have their own). The body
// is PHP's default json_encode (php-json.ts): `/` as `\/`, non-ASCII as `\uXXXX`, so it is
// not what JSON.stringify(JSON.parse(body)) gives whenever a value carries either.
import type { Ctx, EmitInput, Environment } from './context.js';
import { TIMING, WEBHOOK_API_VERSION } from './defaults.js';
import type { MockDeliveryAttempt, MockMerchant, MockWebhookEvent } from './types.js';
import { hmacHex } from './hmac.js';
import { prefixedId } from './ids.js';
import { phpJson } from './php-json.js';
import { isoOffset } from './util.js';

/**
 * The spec's event types, listed here from the spec (not taken from the client's list: a
 * test holds the two lists to each other instead).
 */
export const EVENT_TYPES = [
  'payment.completed',
  'payment.failed',
  'subscription.created',
  'subscription.cancelled',
  'subscription.suspended',
  'invoice.created',
  'invoice.paid',
  'invoice.payment_failed',
] as const;

/**
 * The secret that signs `environment`'s deliveries for `merchant`, read live (tests rotate
 * it in `mock.state`). Production never falls back to the sandbox secret: without its own
 * it is the sandbox one with `_live` appended.
 */
export function webhookSecretOf(merchant: MockMerchant, environment: Environment): string {
  const sandbox = merchant.credentials.sandbox.webhookSecret ?? merchant.webhookSecret ?? '';
  if (environment === 'sandbox') return sandbox;
  return merchant.credentials.production.webhookSecret ?? `${sandbox}_live`;
}

/**
 * Gives each merchant record both environments' webhook secrets, and makes its
 * `webhookSecret` (the older, single-secret field) an alias of the sandbox one, so setting
 * either rotates the same secret. Throws when a merchant has no sandbox secret at all.
 */
export function linkWebhookSecrets(merchant: MockMerchant): void {
  const { sandbox, production } = merchant.credentials;
  sandbox.webhookSecret ??= merchant.webhookSecret;
  if (typeof sandbox.webhookSecret !== 'string' || sandbox.webhookSecret === '') {
    throw new RangeError(`createMockService: merchant ${merchant.id} has no webhook secret: set credentials.sandbox.webhookSecret.`);
  }
  production.webhookSecret ??= webhookSecretOf(merchant, 'production');
  Object.defineProperty(merchant, 'webhookSecret', {
    get: () => sandbox.webhookSecret,
    set: (value: string) => void (sandbox.webhookSecret = value),
    enumerable: true,
    configurable: true,
  });
}

/** Attempts before an event is abandoned. */
const MAX_ATTEMPTS = 5;
/** How long one attempt may take before it counts as a failure. */
const ATTEMPT_TIMEOUT_MS = 10_000;

/** Builds the event, records it in `state.events` and queues its first attempt (due now). */
export function emitEvent(ctx: Ctx, input: EmitInput): MockWebhookEvent {
  const id = prefixedId('evt');
  const payload = {
    id,
    type: input.type,
    api_version: WEBHOOK_API_VERSION,
    created_at: isoOffset(ctx.now()),
    data: input.data,
  };
  const event: MockWebhookEvent = {
    id,
    type: input.type,
    merchantId: input.merchant.id,
    environment: input.environment,
    url: input.url,
    payload,
    body: phpJson(payload),
    status: input.url ? 'pending' : 'no_endpoint',
    attempts: 0,
    nextAttemptAt: input.url ? ctx.now() : null,
  };
  ctx.state.events.push(event);
  const secret = webhookSecretOf(input.merchant, input.environment);
  if (input.url) ctx.scheduler.at(ctx.now(), `webhook ${id} attempt 1`, () => attempt(ctx, event, 1, secret));
  return event;
}

/**
 * Sends the event once more now (the console's Resend), outside the retry schedule: a 2xx
 * marks it delivered (later scheduled attempts are then skipped); a failure changes nothing
 * in the schedule.
 */
export async function resendEvent(ctx: Ctx, event: MockWebhookEvent): Promise<MockDeliveryAttempt | undefined> {
  if (!event.url) return undefined;
  return send(ctx, event, event.attempts + 1, '', true);
}

async function attempt(ctx: Ctx, event: MockWebhookEvent, n: number, fallbackSecret: string): Promise<void> {
  // A manual resend may have delivered it, or pushed the count on, since this was scheduled.
  if (event.status !== 'pending') return;
  const delivery = await send(ctx, event, Math.max(n, event.attempts + 1), fallbackSecret, false);
  if (delivery.status !== null && delivery.status >= 200 && delivery.status < 300) return;
  if (delivery.attempt >= MAX_ATTEMPTS) {
    event.status = 'abandoned';
    event.nextAttemptAt = null;
    return;
  }
  const delay = ctx.scaled(TIMING.webhookRetryMs[delivery.attempt - 1]!);
  event.nextAttemptAt = ctx.now() + delay;
  ctx.scheduler.after(delay, `webhook ${event.id} attempt ${delivery.attempt + 1}`, () =>
    attempt(ctx, event, delivery.attempt + 1, fallbackSecret),
  );
}

/** One signed POST of the event; records the attempt, and a 2xx as delivered. */
async function send(ctx: Ctx, event: MockWebhookEvent, n: number, fallbackSecret: string, manual: boolean): Promise<MockDeliveryAttempt> {
  const url = event.url!;
  // The merchant's current secret of the event's environment (tests may rotate it in state
  // between attempts); the one at emission if the merchant record is gone.
  const merchant = ctx.state.merchants.find((m) => m.id === event.merchantId);
  const secret = merchant ? webhookSecretOf(merchant, event.environment) : fallbackSecret;
  const timestamp = String(Math.floor(ctx.now() / 1000));
  const signature = await hmacHex(secret, `${timestamp}.${event.body}`);
  const at = ctx.now();
  let status: number | null;
  let error: string | undefined;
  try {
    const response = await ctx.fetch(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': 'business-payments-mock-service',
        [`X-${ctx.brand}-Event`]: event.type,
        [`X-${ctx.brand}-Timestamp`]: timestamp,
        [`X-${ctx.brand}-Signature`]: signature,
        'X-Environment': event.environment,
      },
      body: event.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
    });
    status = response.status;
    await response.body?.cancel().catch(() => undefined);
  } catch (cause) {
    status = null; // network error or timeout
    error = connectionError(cause);
  }
  const delivery: MockDeliveryAttempt = { eventId: event.id, type: event.type, url, attempt: n, at, status };
  if (error !== undefined) delivery.error = error;
  if (manual) delivery.manual = true;
  ctx.state.deliveries.push(delivery);
  event.attempts = Math.max(event.attempts, n);
  if (status !== null && status >= 200 && status < 300) {
    event.status = 'delivered';
    event.nextAttemptAt = null;
  }
  return delivery;
}

// The innermost reason a fetch failed: ECONNREFUSED, a timeout, a bad URL.
function connectionError(cause: unknown): string {
  if (cause instanceof Error && (cause.name === 'TimeoutError' || cause.name === 'AbortError'))
    return `no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s`;
  return innermostCause(cause);
}

/** The innermost code of a failed connection (ECONNREFUSED…), else its deepest message. */
export function innermostCause(cause: unknown): string {
  let at: unknown = cause;
  let text = 'connection failed';
  for (let depth = 0; at && depth < 4; depth++, at = (at as { cause?: unknown }).cause) {
    const { code, message } = at as { code?: unknown; message?: unknown };
    if (typeof code === 'string') return code;
    if (typeof message === 'string' && message) text = message;
  }
  return text;
}
