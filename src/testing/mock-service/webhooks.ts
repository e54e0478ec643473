// Signed webhook delivery with the spec's retry schedule: an attempt at once, then 3, 6, 12
// and 24 minutes after each failure (× timeScale), at most 5 attempts, then abandoned. A 2xx
// answer is a delivery. Every attempt carries the same event id and body, signed afresh:
// X-<Brand>-Signature = hex(HMAC-SHA256(webhook secret, "<timestamp>.<body>")).
import type { Ctx, EmitInput } from './context.js';
import { TIMING, WEBHOOK_API_VERSION } from './defaults.js';
import type { MockWebhookEvent } from './types.js';
import { hmacHex, isoOffset, prefixedId } from './util.js';

/** Attempts before an event is abandoned. */
export const MAX_ATTEMPTS = 5;
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
    body: JSON.stringify(payload),
    status: input.url ? 'pending' : 'no_endpoint',
    attempts: 0,
  };
  ctx.state.events.push(event);
  if (input.url) ctx.scheduler.at(ctx.now(), `webhook ${id} attempt 1`, () => attempt(ctx, event, 1, input.merchant.webhookSecret));
  return event;
}

async function attempt(ctx: Ctx, event: MockWebhookEvent, n: number, fallbackSecret: string): Promise<void> {
  const url = event.url!;
  // The merchant's current secret (tests may rotate it in state between attempts).
  const secret = ctx.state.merchants.find((m) => m.id === event.merchantId)?.webhookSecret ?? fallbackSecret;
  const timestamp = String(Math.floor(ctx.now() / 1000));
  const signature = await hmacHex(secret, `${timestamp}.${event.body}`);
  const at = ctx.now();
  let status: number | null = null;
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
  } catch {
    status = null; // network error or timeout
  }
  ctx.state.deliveries.push({ eventId: event.id, type: event.type, url, attempt: n, at, status });
  event.attempts = n;
  if (status !== null && status >= 200 && status < 300) {
    event.status = 'delivered';
    return;
  }
  if (n >= MAX_ATTEMPTS) {
    event.status = 'abandoned';
    return;
  }
  const delay = ctx.scaled(TIMING.webhookRetryMs[n - 1]!);
  ctx.scheduler.after(delay, `webhook ${event.id} attempt ${n + 1}`, () => attempt(ctx, event, n + 1, fallbackSecret));
}
