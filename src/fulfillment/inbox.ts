// The kit's inbox worker: recorded deliveries processed (verify, handlers) after the answer,
// retried with backoff (in this process while it runs), `dead` after maxAttempts; drain() for
// cron and serverless, work() for a worker: both for what a process that died left pending.
// Each record's event is processed by the delivery step's handler (passed in); below it the
// shared base.
import { ConfigurationError } from '../core/base-error.js';
import type { WebhookEvent } from '../webhooks/events.js';
import { messageOf, pause, trace, type HandleEvent } from './base.js';
import type { FulfillmentOptions } from './options.js';
import type { DrainReport, Fulfillment } from './results.js';
import type { FulfillmentStore, InboxNext, InboxStore } from './store.js';

/** The inbox worker: `soon` (a recorded delivery processed right after its answer) and the inbox methods of the kit. */
// `processOne` processes the due record `id`, else the oldest due one. A record busy elsewhere
// is no failure (its holder renews its claim): it is looked at again a third of a lease on. A
// failure is due again after the backoff, or dead at maxAttempts; one that came of `signal`
// aborting (drain(), work(): a verify waiting for its slot) is no failure, and is due again at
// once. drain() counts each processed record: `done`, `dead`, or `pending` again (retried).
export function inboxWorker(options: FulfillmentOptions, store: FulfillmentStore, lease: number, handle: HandleEvent) {
  const inbox = (): InboxStore => {
    if (!store.inbox) throw new ConfigurationError('fulfillment: this store has no inbox');
    return store.inbox;
  };
  const processOne = async (id?: string, signal?: AbortSignal): Promise<InboxNext | undefined> => {
    const taken = await inbox().take(lease, id);
    if (!taken) return undefined;
    const { attempts } = taken;
    let next: InboxNext;
    try {
      const result = await trace('inbox', options.environment, (info) =>
        handle(JSON.parse(taken.event) as WebhookEvent, info, () => {}, signal),
      );
      if (result === 'pending') throw new Error('the service says neither success nor failed yet');
      next = result === 'busy' ? { state: 'pending', attempts, delayMs: lease / 3 } : { state: 'done', attempts };
    } catch (error) {
      const { maxAttempts = 8, retryDelay = backoff } = options;
      const failures = attempts + 1;
      const message = messageOf(error);
      next = signal?.aborted
        ? { state: 'pending', attempts, error: taken.error }
        : failures < maxAttempts
          ? { state: 'pending', attempts: failures, delayMs: retryDelay(failures), error: message }
          : { state: 'dead', attempts: failures, error: message };
    }
    await inbox().finish(taken, next);
    return next;
  };
  const drain: Fulfillment['drain'] = async ({ signal, limit = 1_000 } = {}) => {
    const report: DrainReport = { processed: 0, done: 0, retried: 0, dead: 0 };
    for (let next; report.processed < limit && !signal?.aborted && (next = await processOne(undefined, signal)); report.processed++) {
      report[next.state === 'pending' ? 'retried' : (next.state as 'done' | 'dead')]++;
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
  return { soon: inProcess(processOne, lease), drain, work, replay, inbox: list, process: processor(processOne, inbox) };
}

// `process(id)`: a job's record processed now, else answered from the store (a redelivered job:
// done). A store without get cannot say: busy, so the engine asks again rather than drop a wake-up.
function processor(processOne: (id: string) => Promise<InboxNext | undefined>, inbox: () => InboxStore): Fulfillment['process'] {
  return async (id) => {
    const next = await processOne(id);
    const get = inbox().get?.bind(inbox());
    const state = next ? next.state : get ? ((await get(id))?.state ?? 'unknown') : 'pending';
    return state === 'pending' ? (next?.error === undefined ? 'busy' : 'retry') : state === 'review' ? 'done' : state;
  };
}

// `soon` processes a record right after the answer, at most 4 at a time in this process (each
// may hold a database connection for its handler's whole run): the answers keep a connection
// free. The rest wait there (at most 1,000; they are recorded, so drain() and work() find them
// anyway). A record it leaves pending is processed here again when due, so a long-running server
// retries its own failures without drain(): after the backoff, a third of a lease when busy, a
// lease when the store was down (a take it did record holds the record that long). The store's
// take stays the authority: a record taken elsewhere, done or dead is not taken again. At most
// 1,000 timers (the rest wait for drain() and work()), each a second late (it may fire a little
// early on the store's clock), and none keeps the process alive.
function inProcess(processOne: (id: string) => Promise<Pick<InboxNext, 'state' | 'delayMs'> | undefined>, lease: number) {
  let running = 0;
  let timers = 0;
  const waiting: string[] = [];
  const soon = async (id: string): Promise<void> => {
    if (running >= 4) return void (waiting.length < 1_000 && waiting.push(id));
    running++;
    const next = await processOne(id).catch(() => ({ state: 'pending', delayMs: lease }) as const);
    running--;
    if (next?.state === 'pending' && timers < 1_000) {
      timers++;
      const timer = setTimeout(() => void (timers--, soon(id)), (next.delayMs ?? 0) + 1_000);
      // Node's and Bun's timers unref() (and return themselves); Deno's is a number for
      // Deno.unrefTimer; elsewhere (workerd, browsers) nothing holds a process open.
      void (
        (timer as { unref?(): unknown }).unref?.() ??
        (globalThis as { Deno?: { unrefTimer?(id: unknown): void } }).Deno?.unrefTimer?.(timer)
      );
    }
    const queued = waiting.shift();
    if (queued !== undefined) await soon(queued);
  };
  return soon;
}

// 10 s, 20 s, 40 s … at most an hour, each ±20 % so that records failed together spread out.
const backoff = (attempts: number) => Math.min(3_600_000, 10_000 * 2 ** (attempts - 1)) * (0.8 + Math.random() * 0.4);
