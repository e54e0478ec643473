// The delivery step: a webhook delivery answered. Its headers are checked, then at most
// `maxBodyBytes` of its body read (body.ts) and verified (signature, window, environment);
// then its event is recorded in the inbox under its delivery id (a retry of a recorded
// delivery is recorded once) and processed right after, or processed in the request. Last,
// what processing an event is (here, or in the inbox worker): a payment outcome verified and
// settled, any other event to `onEvent` once per event id. Below it the settle step and the
// shared base.
import { PaymentsError } from '../core/base-error.js';
import { checkTimestamp, verifyPayload } from '../webhooks/verify.js';
import { WebhookVerificationError } from '../webhooks/errors.js';
import type { WebhookEvent } from '../webhooks/events.js';
import { readSignedHeaders } from '../webhooks/headers.js';
import { bodyOf } from './body.js';
import { errorClass, named, open, remember, text, trace, type Context, type HandleEvent } from './base.js';
import type { FulfillmentOptions } from './options.js';
import type { Fulfillment, FulfillmentTrace, SettleResult, WebhookAnswer } from './results.js';
import type { Settle } from './settle.js';
import type { FulfillmentStore, InboxStore } from './store.js';
import { recordDelivery } from './trigger.js';

type Delivery = Parameters<typeof bodyOf>[0];

/**
 * `fulfillment.handleWebhook`: each delivery answered, its event recorded in `queue` (then
 * processed by `soon`, right after, or by the worker its trigger wakes) or, without one,
 * processed in the request.
 */
// It takes a Fetch Request, `{ payload, headers }`, or a Node request. A Node request answered
// before its end (401, 413) is marked read (one read() of what it holds): Node then stops reading
// the connection once its buffer is full, keeps it for the answer, and closes it once idle, as
// after a loop over it that stopped early. Left unread, its body would be read and dropped to its
// end after the answer, however long.
export function webhookHandler(
  options: FulfillmentOptions,
  max: number,
  queue: InboxStore | undefined,
  handle: HandleEvent,
  soon: (id: string) => Promise<void>,
): Fulfillment['handleWebhook'] {
  const later = (work: Promise<unknown>) => options.waitUntil?.(work);
  const answer = (delivery: Delivery) =>
    trace('handleWebhook', options.environment, (info) =>
      answerDelivery(delivery, max, options, info, async (event, noted) => {
        if (!queue) return handle(event, info, noted);
        named(event, info);
        const id = deliveryId(event);
        await recordDelivery(queue, options.trigger, id, JSON.stringify(event));
        noted();
        // With a trigger, the engine's worker processes it (nothing here, nor its retry timers).
        if (!options.trigger) later(soon(id));
        return 'queued';
      }),
    );
  return (async (delivery: Request & { readableEnded?: boolean; read?(): unknown }) => {
    const work = answer(delivery);
    // A Node request answered before its end is marked read (see above).
    if (typeof delivery.clone !== 'function') return work.finally(() => delivery.readableEnded || delivery.read?.());
    later(work);
    const { status, body } = await work;
    return new Response(body, { status, headers: { 'content-type': 'application/json' } });
  }) as Fulfillment['handleWebhook'];
}

// An inbox record's id: the event's, or for an IPN (which has none) its payment and outcome;
// an event with neither is its own record.
const deliveryId = (event: WebhookEvent): string => {
  const trxId = (event.data as { trx_id?: unknown } | null)?.trx_id;
  return typeof event.id === 'string' ? event.id : typeof trxId === 'string' ? `ipn:${trxId}:${String(event.type)}` : crypto.randomUUID();
};

// A delivery, verified (signature, window, environment) before anything else, then processed
// (recorded, or its event handled). Its headers are checked before its body is read, and at most
// `max` bytes of that.
async function answerDelivery(
  delivery: Delivery,
  max: number,
  { secret, environment, client, now }: FulfillmentOptions,
  info: FulfillmentTrace,
  processEvent: (event: WebhookEvent, recorded: () => void) => Promise<SettleResult | 'queued'>,
): Promise<WebhookAnswer> {
  const answer = (status: number, body: unknown): WebhookAnswer => ((info.status = status), { status, body: JSON.stringify(body) });
  let event: WebhookEvent;
  try {
    // verifyWebhook's own cheap checks (its default window), before a byte of the body: an
    // unsigned or stale delivery costs nothing to refuse. (The earlier form's timestamp is in its body.)
    // Both on the kit's clock.
    const { headers } = delivery;
    const { timestamp } = readSignedHeaders(headers, undefined);
    if (timestamp !== undefined) checkTimestamp(timestamp, now ? now() : Date.now(), 300);
    const payload = await bodyOf(delivery, max);
    if (payload === undefined) return answer(413, { error: 'payload_too_large', message: 'Body over maxBodyBytes: not read.' });
    event = await verifyPayload({ secret, environment, payload, headers, now });
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    // The spec: a bad signature (or timestamp) gets 401, and so does an unsigned delivery
    // (no signature header); a body that is not an event 400.
    // Why, in the client's log at warn (a clock that is off refuses them all): the reason and the
    // verifier's words (for a timestamp, its seconds), never a secret, a signature or the body.
    client.warn?.(`webhook refused, ${error.reason}: ${error.message}`);
    return answer(/signature|timestamp|header/.test(error.reason) ? 401 : 400, { error: error.reason, message: error.message });
  }
  // Set once an earlier-generation delivery's trx_id is in the store: from then on `reconcile`
  // settles it, so it is acknowledged whatever happens (that generation never re-sends).
  let recorded = false;
  try {
    const result = await processEvent(event, () => (recorded = true));
    return answer(open(result) ? (recorded ? 202 : 409) : 200, { received: true, result });
  } catch (error) {
    info.errorClass = errorClass(error);
    if (recorded) return answer(202, { received: true, result: 'recorded' });
    // A 5xx makes the service deliver again, after the claim was released. A handler's words (a
    // database error, an order's details) go to your log, never to whoever sent the delivery;
    // the SDK's own (a verify that failed, already redacted) are said (doctor reads them).
    if (error instanceof PaymentsError) return answer(500, { error: 'handler_failed', message: error.message });
    console.error('[business-payments] fulfillment: a handler failed; answered 500, so the delivery comes again:', error);
    return answer(500, { error: 'handler_failed', message: 'A handler failed; deliver again later.' });
  }
}

/** What a verified event does: the handler the kit's deliveries and its inbox worker run. */
// Only the two payment outcomes are verified and settled; any other type (a `payment.*` this
// SDK does not know yet included) goes to onEvent, never to onPaid or onFailed.
export function eventHandler(options: FulfillmentOptions, store: FulfillmentStore, lease: number, settle: Settle): HandleEvent {
  const { onEvent } = options;
  return async (event, info, recorded, signal) => {
    const data = event.data as { trx_id?: unknown; merchant_ref?: unknown } | null | undefined;
    const trxId = data?.trx_id;
    const context: Context = { source: 'webhook', event };
    named(event, info);
    if ((event.type === 'payment.completed' || event.type === 'payment.failed') && typeof trxId === 'string') {
      info.trxId = trxId;
      // The earlier generation sends its IPN once, never again: its trx_id is recorded first, so
      // that whatever happens next, `reconcile` finds it (that generation has no payment list).
      if (event.format === 'legacy' && (await remember(store, trxId, text(data!.merchant_ref), lease))) recorded();
      // Verified before any handler, inside the payment's claim: the event says what happened,
      // the service confirms it, and a payment already settled costs no verify.
      return settle.payment(trxId, text(data!.merchant_ref), context, info, signal);
    }
    if (!onEvent) return 'ran';
    // An event without an id cannot be de-duplicated: it runs each time it comes.
    if (typeof event.id !== 'string') return (await onEvent(event, unclaimed(context)), 'ran');
    return settle.once(`event:${event.id}`, 'handled', onEvent, event, context);
  };
}

// The context of a handler run without a claim (an event without an id): an effectKey of its own
// (it runs each time it comes), a signal that never aborts.
const unclaimed = (context: Context) => ({
  ...context,
  db: undefined,
  effectKey: `event:${crypto.randomUUID()}`,
  signal: new AbortController().signal,
});
