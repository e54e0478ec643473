// One request budget for every process of a merchant: the client option `requestBudget`. The
// store keeps a sliding window of sends per key on its own server's clock (Postgres `now()`,
// Redis `TIME`), so processes on machines whose clocks disagree still share one minute. Here,
// over any such store: the pacer a client uses in place of its own (the client's side is one
// call, `requestBudget.pace(…)`, so this code ships only with the stores and sharedBudget).
// The merchant's sends are recorded and never wait; the SDK's own take a place in the window
// first. A store that fails hands the pacing back to the client's own pacer for a minute, and
// says so once.
import type { Pace } from '../internal/pace.js';
import { shareOf, sleep } from '../internal/pace.js';
import { ConfigurationError } from '../core/base-error.js';

/** The window every client paces in: the service's limit is per minute. */
const WINDOW = 60_000;

/**
 * Where a request budget shared by many processes is kept: a sliding window of sends per key,
 * timed on the store's own clock (a database's or Redis's, never a process's), and a pause per
 * key. Every method is atomic across the processes sharing the store. `store.budget` of
 * `postgresStore` and `redisStore` is one; bring your own through {@link sharedBudget}, and check
 * it with `testStore(store, { kit: 'budget' })` (from `business-payments/testing`).
 *
 * @example
 * ```ts
 * import type { RequestBudgetStore } from 'business-payments';
 *
 * // One process only (a sketch of the contract): a real one is shared, on a server's clock.
 * const sends = new Map<string, number[]>();
 * const paused = new Map<string, number>();
 * const inWindow = (key: string, windowMs: number) => (sends.get(key) ?? []).filter((at) => at > Date.now() - windowMs);
 * const store: RequestBudgetStore = {
 *   count: async (key, windowMs) => inWindow(key, windowMs).length,
 *   async take(key, limit, windowMs) {
 *     const pause = (paused.get(key) ?? 0) - Date.now();
 *     if (pause > 0) return pause;
 *     const window = inWindow(key, windowMs);
 *     if (window.length >= limit) return window[window.length - limit]! + windowMs - Date.now();
 *     sends.set(key, [...window, Date.now()]);
 *     return 0;
 *   },
 *   record: async (key, windowMs) => void sends.set(key, [...inWindow(key, windowMs), Date.now()]),
 *   pause: async (key, ms) => void paused.set(key, Math.max(paused.get(key) ?? 0, Date.now() + ms)),
 * };
 * ```
 */
export interface RequestBudgetStore {
  /** How many sends are recorded for `key` in the last `windowMs` ms. */
  count(key: string, windowMs: number): Promise<number>;
  /**
   * Atomically: when `key` is not paused and its last `windowMs` ms hold fewer than `limit`
   * sends (`limit` ≥ 1), records one and resolves `0`; else records nothing and resolves the
   * ms until room may come (> 0: the pause's end, or when enough sends leave the window).
   */
  take(key: string, limit: number, windowMs: number): Promise<number>;
  /** Records one send for `key` that is never refused (the merchant's own call): it counts for `windowMs` ms. */
  record(key: string, windowMs: number): Promise<void>;
  /** Pauses the takes of `key` for `ms` ms from now (a 429); a longer pause already set is kept. */
  pause(key: string, ms: number): Promise<void>;
}

/**
 * A request budget the client takes as `requestBudget`: `store.budget` of `postgresStore` or
 * `redisStore`, or {@link sharedBudget} over a store of your own. Every client given one keeps
 * its sends in the one window, whichever process it runs in. It is a {@link RequestBudgetStore}
 * itself (its methods are the store's).
 */
export class RequestBudget implements RequestBudgetStore {
  readonly #store: RequestBudgetStore;

  /**
   * A budget over `store` (what {@link sharedBudget} makes).
   *
   * @throws {ConfigurationError} when `store` lacks one of the methods of {@link RequestBudgetStore}.
   */
  constructor(store: RequestBudgetStore) {
    for (const name of ['count', 'take', 'record', 'pause'] as const)
      if (typeof store?.[name] !== 'function')
        throw new ConfigurationError(
          `sharedBudget(store): store must be a RequestBudgetStore (count, take, record, pause); ${name} is missing`,
        );
    this.#store = store;
  }

  /** {@inheritDoc RequestBudgetStore.count} */
  count(key: string, windowMs: number): Promise<number> {
    return this.#store.count(key, windowMs);
  }

  /** {@inheritDoc RequestBudgetStore.take} */
  take(key: string, limit: number, windowMs: number): Promise<number> {
    return this.#store.take(key, limit, windowMs);
  }

  /** {@inheritDoc RequestBudgetStore.record} */
  record(key: string, windowMs: number): Promise<void> {
    return this.#store.record(key, windowMs);
  }

  /** {@inheritDoc RequestBudgetStore.pause} */
  pause(key: string, ms: number): Promise<void> {
    return this.#store.pause(key, ms);
  }

  /**
   * @internal The client's hook: the pacer of `client`, whose polling budget is `pollingBudget`,
   * over this budget's window for its environment and `merchantKey` (the service limits per
   * merchant), and `own` (its own pacer) while the store fails, which `client` says at warn.
   */
  pace(own: Pace, pollingBudget: number, merchantKey: string, client: { environment: string; warn(line: string): void }): Pace {
    const key = `${client.environment}:${merchantKey}`;
    return sharedPace(this.#store, own, shareOf(pollingBudget), key, (line) => client.warn(line));
  }
}

/**
 * A request budget over `store`, for the client option `requestBudget`: every process whose
 * client is given one over the same data keeps the merchant's calls and the SDK's own
 * together under `pollingBudget` a minute. The merchant's calls are recorded and never
 * delayed; the SDK's own (waitForOutcome, the kits' verifies, reconcile, resolve) wait for
 * room within 9/10 of it, and after a 429 (from any process) for its pause. While the store
 * fails (rejects), each client paces its own sends alone, and says so once at warn.
 * `store.budget` of `postgresStore` and `redisStore` is one already.
 *
 * @throws {ConfigurationError} when `store` lacks one of the methods of {@link RequestBudgetStore}.
 * @example
 * <!-- not run: it needs a budget store of your own; type-checked only -->
 * ```ts
 * import { PaymentsClient, sharedBudget, type RequestBudgetStore } from 'business-payments';
 *
 * declare const myStore: RequestBudgetStore; // e.g. on DynamoDB, with conditional writes
 * const client = new PaymentsClient({ requestBudget: sharedBudget(myStore) });
 * ```
 */
export function sharedBudget(store: RequestBudgetStore): RequestBudget {
  for (const name of ['count', 'take', 'record', 'pause'] as const)
    if (typeof store?.[name] !== 'function')
      throw new ConfigurationError(
        `sharedBudget(store): store must be a RequestBudgetStore (count, take, record, pause); ${name} is missing`,
      );
  return new RequestBudget(store);
}

// The pacer over the store: the client's transport calls sent() for every attempt, limited() on
// a 429 and slot() before what the SDK sends on its own. `own` (the client's own pacer) counts
// every send too, so it holds this process's recent sends when it has to stand in.
function sharedPace(store: RequestBudgetStore, own: Pace, share: number, key: string, warn: (line: string) => void): Pace {
  // Slots taken in the store whose send has not come yet (when, on the monotonic clock): their
  // send is recorded already. One whose call failed before sending counts for a window.
  const owed: number[] = [];
  // Until when the store is not asked (it failed): the client's own pacer stands in.
  let down = 0;
  let warned = false;
  const clock = () => performance.now();
  const fail = (error: unknown) => {
    down = clock() + WINDOW;
    if (warned) return;
    warned = true;
    // The error's name and code only: a driver's message may carry a connection's details.
    const { name, code } = (error ?? {}) as { name?: unknown; code?: unknown };
    warn(
      `requestBudget: the budget store failed (${String(code ?? name ?? error)}): this client paces its own sends alone (pollingBudget) until it answers again`,
    );
  };
  // A write the merchant's call never waits for; a failure only hands the pacing back.
  const write = (step: () => Promise<unknown>) => {
    if (clock() >= down) step().catch(fail);
  };
  return {
    sent() {
      own.sent();
      while (owed.length && owed[0]! <= clock() - WINDOW) owed.shift();
      if (owed.length) owed.shift();
      else write(() => store.record(key, WINDOW));
    },
    limited(retryAfterSeconds = 60, maxMs = Infinity) {
      own.limited(retryAfterSeconds, maxMs);
      write(() => store.pause(key, Math.min(retryAfterSeconds * 1000, maxMs)));
    },
    async slot(signal) {
      for (;;) {
        if (clock() < down) return own.slot(signal);
        signal?.throwIfAborted();
        const wait = await answered(store.take(key, share, WINDOW)).catch(fail);
        if (wait === 0) return void owed.push(clock());
        // Looking again at least each second: another process's takes may fill the room first.
        if (wait !== undefined) await sleep(Math.min(Math.max(Number(wait) || 1, 1), 1_000), signal);
      }
    },
  };
}

// A take not answered in 2 s is a store that failed: the client's own pacer stands in. A hung
// server, or a single connection the caller's own claim holds while it verifies (postgresStore
// over one Client: the take would wait for the claim, which waits for the take).
function answered<T>(step: Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(Object.assign(new Error('the budget store did not answer in 2 s'), { code: 'ETIMEDOUT' })),
      2_000,
    );
    // Node's and Bun's timers unref(); elsewhere nothing holds a process open.
    (timer as { unref?(): unknown }).unref?.();
    step.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error: unknown) => (clearTimeout(timer), reject(error as Error)),
    );
  });
}
