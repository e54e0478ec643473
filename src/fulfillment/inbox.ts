// The kit's inbox worker: recorded deliveries processed (verify, handlers) after the answer,
// retried with backoff, `dead` after maxAttempts; drain() for cron, work() for a worker.
import { ConfigurationError } from '../core/base-error.js';
import type { WebhookEvent } from '../webhooks/events.js';
import type { DrainReport, Fulfillment, FulfillmentTrace, SettleResult } from './create.js';
import { trace, type Kit } from './settle.js';
import type { InboxLease, InboxNext, InboxState, InboxStore } from './store.js';

type FromEvent = (event: WebhookEvent, info: FulfillmentTrace, recorded: () => void) => Promise<SettleResult>;

/** `processOne` (the due record `id`, else the oldest due one) and the inbox methods of the kit. */
export function inboxWorker({ options, store, lease }: Kit, fromEvent: FromEvent) {
  const inbox = (): InboxStore => {
    if (!store.inbox) throw new ConfigurationError('fulfillment: this store has no inbox');
    return store.inbox;
  };
  const processOne = async (id?: string): Promise<InboxState | undefined> => {
    const taken = await inbox().take(lease, id);
    if (!taken) return undefined;
    const info: FulfillmentTrace = { operation: 'inbox', environment: options.environment };
    let next: InboxNext;
    try {
      const result = await trace(info, () => fromEvent(JSON.parse(taken.event) as WebhookEvent, info, () => {}));
      // Busy elsewhere is no failure: its holder renews its claim; looked at again a third of a lease on.
      next =
        result === 'busy'
          ? { state: 'pending', attempts: taken.attempts, delayMs: lease / 3 }
          : result === 'pending'
            ? failed(taken, 'the service says neither success nor failed yet', options)
            : { state: 'done', attempts: taken.attempts };
    } catch (error) {
      next = failed(taken, error, options);
    }
    await inbox().finish(taken, next);
    return next.state;
  };
  const drain: Fulfillment['drain'] = async ({ signal, limit = 1_000 } = {}) => {
    const report: DrainReport = { processed: 0, done: 0, retried: 0, dead: 0 };
    for (let state; report.processed < limit && !signal?.aborted && (state = await processOne()); report.processed++) {
      report[state === 'pending' ? 'retried' : state === 'dead' ? 'dead' : 'done']++;
    }
    return report;
  };
  const work: Fulfillment['work'] = async ({ signal, idleMs = 1_000 }) => {
    while (!signal.aborted) {
      // A store that is down is tried again after the pause, for as long as the worker runs.
      const { processed } = await drain({ signal }).catch(() => ({ processed: 0 }));
      if (!processed) await pause(idleMs, signal);
    }
  };
  const replay: Fulfillment['replay'] = async (id) => {
    if (!(await inbox().replay(id))) return false;
    await processOne(id);
    return true;
  };
  const list: Fulfillment['inbox'] = ({ state, limit = 100 }) => inbox().list(state, limit);
  return { processOne, drain, work, replay, inbox: list };
}

// A failed processing: due again after the backoff, or dead at maxAttempts.
function failed(taken: InboxLease, error: unknown, { maxAttempts = 8, retryDelay = backoff }: Kit['options']): InboxNext {
  const attempts = taken.attempts + 1;
  const message = error instanceof Error ? error.message : String(error);
  return attempts < maxAttempts
    ? { state: 'pending', attempts, delayMs: retryDelay(attempts), error: message }
    : { state: 'dead', attempts, error: message };
}

// 10 s, 20 s, 40 s … at most an hour, each ±20 % so that records failed together spread out.
const backoff = (attempts: number) => Math.min(3_600_000, 10_000 * 2 ** (attempts - 1)) * (0.8 + Math.random() * 0.4);

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
