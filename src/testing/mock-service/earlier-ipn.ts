// The earlier generation's IPN: sent once when a payment completes or fails, to its ipn_url.
// POST with X-Signature = lower-case hex HMAC-SHA256 of the exact body keyed with the API
// secret of the payment's environment (no prefix, no timestamp in the signed string),
// X-Environment, Content-Type: application/json, User-Agent: GuzzleHttp/7; no timestamp,
// event or brand header. Body: {"data":{…info without merchant_id…,"trx_id"},"message",
// "status","timestamp"}, compact, slashes and Unicode not escaped (PHP's json_encode with
// JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE, which still writes U+2028/U+2029 as
// `\u2028`/`\u2029`). Retried only when an attempt times out (30 s, 3 tries 1 s apart, ×
// timeScale); a refused connection or any non-2xx ends it, and nothing re-sends it later.
//
// Why a re-serialised body (JSON.stringify(JSON.parse(body))) may not verify: JS writes
// U+2028/U+2029 raw; JS puts integer-like keys first (PHP keeps insertion order); JS writes
// floats at or above 1e17 and below 1e-4 otherwise (`1e+25` for PHP's `1.0e+25`), and
// -0 as `0`. A body with none of these (the usual one: ASCII or plain Unicode text,
// URLs, ordinary amounts) re-serialises to the same bytes: this generation's signature
// then still verifies, which is why its bodies are not a reliable test of raw-body handling.
import type { Ctx } from './context.js';
import { EARLIER_TIMING } from './defaults.js';
import type { EarlierPaymentRow } from './earlier-row.js';
import { hmacHex } from './hmac.js';
import { prefixedId } from './ids.js';
import { phpJson } from './php-json.js';
import { innermostCause } from './webhooks.js';
import type { MockDeliveryAttempt, MockMerchant, MockWebhookEvent } from './types.js';

/** json_encode's flags for the IPN body. */
const IPN_FLAGS = { unescapedSlashes: true, unescapedUnicode: true } as const;

/** The IPN body of a settled payment, as the server encodes it. */
function ipnBody(data: Record<string, unknown>, result: 'success' | 'failed', unixSeconds: number): string {
  const message = result === 'success' ? 'Payment Completed' : 'Payment Failed';
  return phpJson({ data, message, status: result === 'success' ? 'completed' : 'failed', timestamp: unixSeconds }, IPN_FLAGS);
}

/** Records the IPN of a payment that just settled and queues its first attempt (due now). */
export function emitIpn(ctx: Ctx, row: EarlierPaymentRow): MockWebhookEvent {
  const result = row.status === 'success' ? 'success' : 'failed';
  const data = { ...row.echo, trx_id: row.trx_id };
  return queueIpn(ctx, { merchantId: row.merchant_id, environment: row.environment, url: row.ipn_url, data, result });
}

/** An IPN to queue: whose, where, its data and outcome. */
export interface IpnInput {
  merchantId: number;
  environment: 'sandbox' | 'production';
  url: string | null;
  data: Record<string, unknown>;
  result: 'success' | 'failed';
}

/** Records an IPN in `state.events` and queues its first attempt (also the console's test IPN). */
export function queueIpn(ctx: Ctx, input: IpnInput): MockWebhookEvent {
  const body = ipnBody(input.data, input.result, Math.floor(ctx.now() / 1000));
  const event: MockWebhookEvent = {
    id: prefixedId('ipn'),
    type: input.result === 'success' ? 'payment.completed' : 'payment.failed',
    generation: 'earlier',
    merchantId: input.merchantId,
    environment: input.environment,
    url: input.url,
    payload: JSON.parse(body) as Record<string, unknown>,
    body,
    status: input.url ? 'pending' : 'no_endpoint',
    attempts: 0,
    nextAttemptAt: input.url ? ctx.now() : null,
  };
  ctx.state.events.push(event);
  if (input.url) ctx.scheduler.at(ctx.now(), `ipn ${event.id} attempt 1`, () => attempt(ctx, event, 1));
  return event;
}

async function attempt(ctx: Ctx, event: MockWebhookEvent, n: number): Promise<void> {
  if (event.status !== 'pending') return; // a console resend may have delivered it
  const delivery = await sendIpn(ctx, event, n, false);
  if (delivery.status !== null && delivery.status >= 200 && delivery.status < 300) return;
  if (delivery.error === TIMED_OUT && n < EARLIER_TIMING.ipnTries) {
    const delay = ctx.scaled(EARLIER_TIMING.ipnRetryMs);
    event.nextAttemptAt = ctx.now() + delay;
    ctx.scheduler.after(delay, `ipn ${event.id} attempt ${n + 1}`, () => attempt(ctx, event, n + 1));
    return;
  }
  event.status = 'abandoned';
  event.nextAttemptAt = null;
}

/** Sends the IPN once more now (the console's Resend): the same bytes and signature. */
export function resendIpn(ctx: Ctx, event: MockWebhookEvent): Promise<MockDeliveryAttempt> {
  return sendIpn(ctx, event, event.attempts + 1, true);
}

const TIMED_OUT = 'timeout';

// 30 s × timeScale, but never under 1 s: a scaled-down sandbox must not call a slow local handler's answer a timeout.
const timeoutOf = (ctx: Ctx): number => Math.max(1_000, ctx.scaled(EARLIER_TIMING.ipnTimeoutMs));

/** One POST of the IPN, signed with the API secret of its environment read now; recorded. */
async function sendIpn(ctx: Ctx, event: MockWebhookEvent, n: number, manual: boolean): Promise<MockDeliveryAttempt> {
  const url = event.url!;
  const merchant: MockMerchant | undefined = ctx.state.merchants.find((m) => m.id === event.merchantId);
  const signature = await hmacHex(merchant?.credentials[event.environment].apiSecret ?? '', '', event.body);
  const at = ctx.now();
  const delivery: MockDeliveryAttempt = { eventId: event.id, type: event.type, url, attempt: n, at, status: null };
  try {
    const response = await ctx.fetch(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': 'GuzzleHttp/7',
        'X-Signature': signature,
        'X-Environment': event.environment,
      },
      body: event.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutOf(ctx)),
    });
    delivery.status = response.status;
    await response.body?.cancel().catch(() => undefined); // the answer's body is ignored
  } catch (cause) {
    delivery.error = isTimeout(cause) ? TIMED_OUT : innermostCause(cause);
  }
  if (manual) delivery.manual = true;
  ctx.state.deliveries.push(delivery);
  event.attempts = Math.max(event.attempts, n);
  if (delivery.status !== null && delivery.status >= 200 && delivery.status < 300) {
    event.status = 'delivered';
    event.nextAttemptAt = null;
  }
  return delivery;
}

const isTimeout = (cause: unknown): boolean => cause instanceof Error && (cause.name === 'TimeoutError' || cause.name === 'AbortError');
