// The fulfillment kit's shared base, below its steps (delivery, settle, reconcile, inbox,
// attempts): the trace around each entry point, the reading of what was thrown and what a
// payload holds, the verify every outcome goes through, the record of a payment reported and
// not settled yet, and the pause of the inbox worker and of the waits. It imports no step.
import { PaymentsError } from '../core/base-error.js';
import type { VerifiedTransaction } from '../schemas/payments.js';
import type { WebhookEvent } from '../webhooks/events.js';
import { listened, traced, tracingChannel } from '../internal/trace.js';
import type { FulfillmentClient, FulfillmentContext } from './options.js';
import type { FulfillmentTrace, SettleResult } from './results.js';
import type { FulfillmentStore } from './store.js';

/** What a handler gets beside its value, but what its claim gives (`db`, `effectKey`, `signal`). */
export type Context = Omit<FulfillmentContext, 'db' | 'effectKey' | 'signal'>;

/**
 * A verified event processed (the delivery step's handler, which the inbox worker runs too):
 * `recorded` is called once its trx_id is in the store; `signal` ends a wait for a verify's slot.
 */
export type HandleEvent = (
  event: WebhookEvent,
  info: FulfillmentTrace,
  recorded: () => void,
  signal?: AbortSignal,
) => Promise<SettleResult>;

/** `<order>~a<n>`: what newAttempt makes, and how a payment finds its order again. */
export const ATTEMPT = /^(.+)~a(\d+)$/;

/** Not settled: busy elsewhere, or pending at the service (the service delivers again). */
export const open = (result: SettleResult | 'queued') => result === 'busy' || result === 'pending';

/** One trace around `work` when someone listens; the trace's `info` is filled in as the work goes. */
export function trace<T>(
  operation: FulfillmentTrace['operation'],
  environment: FulfillmentTrace['environment'],
  work: (info: FulfillmentTrace) => Promise<T>,
): Promise<T> {
  const info: FulfillmentTrace = { operation, environment };
  const tracing = tracingChannel('business-payments:fulfillment');
  return listened(tracing)
    ? traced(
        tracing,
        info,
        () => work(info),
        (context, error) => (context.errorClass = errorClass(error)),
      )
    : work(info);
}

/** The class name of what was thrown, for traces. */
export const errorClass = (error: unknown): string => (error as Error | undefined)?.name ?? 'Error';

/** What was thrown, as a message. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** `value` when it is a string. */
export const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The trace's event type and id. */
export const named = (event: WebhookEvent, info: FulfillmentTrace) => {
  info.eventType = String(event.type);
  if (typeof event.id === 'string') info.eventId = event.id;
};

/** Whether two ids are the same, compared as the earlier generation matches them: case-insensitively. */
export const same = (a: unknown, b: unknown) => String(a).toUpperCase() === String(b).toUpperCase();

/**
 * The service's answer for `trxId`, refused when it is about another payment (a proxy's
 * cache, a hostile server): acting on it would settle one order with another's payment.
 */
// It waits for a slot in the client's polling budget (`pollSlot`; a test's fake client may have
// none), until `signal` aborts.
export async function verified(client: FulfillmentClient, trxId: string, signal?: AbortSignal): Promise<VerifiedTransaction> {
  await client.pollSlot?.(signal);
  const tx = await client.payments.verify(trxId);
  if (!same(tx?.trx_id, trxId)) throw new PaymentsError(`fulfillment: verify(${trxId}) answered for ${String(tx?.trx_id)}`);
  return tx;
}

/**
 * Records a payment reported and not settled yet (`false` where the store cannot): its trx_id
 * for `reconcile`, and its reference (`ref:<trx_id>`), which the earlier generation's verify
 * does not carry, so that the payment still finds its order there.
 */
export async function remember(store: FulfillmentStore, trxId: string, ref: string | undefined, lease: number): Promise<boolean> {
  if (!store.remember) return false;
  // The reference first: a reconcile that finds the trx_id finds its reference with it (another
  // report writing it right now is waited for, up to 2 s).
  let found = ref ? await store.claim(`ref:${trxId}`, lease) : undefined;
  for (let i = 0; found && 'busy' in found && i < 100; i++) {
    await pause(20);
    found = await store.claim(`ref:${trxId}`, lease);
  }
  if (found && 'claimed' in found) await found.claimed.complete(ref!);
  await store.remember(`payment:${trxId}`);
  return true;
}

/**
 * A pause of `ms`, or until `signal` (when given) aborts (it resolves either way: look at the
 * signal); its listener goes with it either way (one left per pause would be 86,400 a day on a
 * worker's signal).
 */
export const pause = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => (clearTimeout(timer), signal?.removeEventListener('abort', done), resolve());
    const timer = setTimeout(done, signal?.aborted ? 0 : ms);
    signal?.addEventListener('abort', done);
  });
