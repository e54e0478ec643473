// The client's polling budget: a sliding 60 s window of every attempt the client
// sends. What the SDK sends on its own (waitForOutcome's polls, the fulfilment kit's verifies)
// first waits for a slot in it; the merchant's own calls are counted and never held (a limit
// raised on the server must not become a queue in the client). Its clock is monotonic: a
// wall clock stepped back (NTP, a VM resumed) would freeze the window and the pause.

/**
 * @internal A client's pacer (see {@link pace}, and `RequestBudget` in src/fulfillment/shared-budget.ts:
 * the one over a shared window).
 */
export interface Pace {
  /** Counts a request the client sends (the merchant's, a retry, or one a slot was given for). */
  sent(): void;
  /** A 429 came: the SDK's own sends pause for its hint (s), else a minute, never longer than `maxMs`. */
  limited(retryAfterSeconds?: number, maxMs?: number): void;
  /** Resolves when the SDK may send one request on its own, and counts it; rejects when `signal` aborts. */
  slot(signal?: AbortSignal): Promise<void>;
}

/**
 * @internal Paces what the SDK sends on its own within `budget` requests a minute (the client
 * option `pollingBudget`). Its clock is `performance.now` and its waits `setTimeout`: tests
 * move both with fake timers (`toFake: ['performance', 'setTimeout', …]`).
 */
export function pace(budget: number): Pace {
  const share = shareOf(budget);
  // The sends of the last 60 s, oldest first. Only whether they reach `share` matters, so at
  // most `share` are kept: a busy client's minute of sends would otherwise fill memory, and
  // every call would pay for a scan of them.
  const sends: number[] = [];
  // Slots given whose send has not come yet, oldest first: each counts until a send takes its
  // place (the next send is that one, or stands for it); one whose call failed before sending
  // counts for 60 s.
  const given: number[] = [];
  // Until when a 429 pauses the SDK's own sends.
  let until = 0;
  const clock = () => performance.now();
  const recent = (times: number[], now: number) => {
    while (times[0]! <= now - 60_000) times.shift();
    return times.length;
  };
  return {
    /** Counts a request the client sends (the merchant's, a retry, or one a slot was given for). */
    sent(): void {
      given.shift();
      if (sends.push(clock()) > share) sends.shift();
    },
    /**
     * A 429 came: the SDK's own sends pause for its hint, else a minute (the spec's window),
     * and never longer than `maxMs` (the client's `maxRetryAfter`: a hint of a year must not
     * stop them for a year).
     */
    limited(retryAfterSeconds = 60, maxMs = Infinity): void {
      until = clock() + Math.min(retryAfterSeconds * 1000, maxMs);
    },
    /**
     * Resolves when the SDK may send one request on its own, and counts it; rejects when
     * `signal` aborts. It waits while paused after a 429, and while the last 60 s hold 9/10 of
     * the budget (looking again each second); the merchant's own calls never wait here.
     */
    async slot(signal?: AbortSignal): Promise<void> {
      for (let now; (now = clock()) < until || recent(sends, now) + recent(given, now) >= share;) await sleep(1_000, signal);
      given.push(clock());
    },
  };
}

/**
 * @internal What the SDK may send on its own: while the last minute holds fewer than 9/10 of the
 * budget (at least one send kept back, and at least one allowed). At two calls an order (a create, one verify) a shop taking 50 orders a minute sends 100
 * of the 120: a 3/4 share (90) would hold its verifies back and fulfilment would fall behind; the
 * last tenth is the merchant's headroom, as their calls are never delayed.
 */
export const shareOf = (budget: number): number => Math.max(1, budget - Math.max(1, Math.floor(budget / 10)));

/** Resolves after `ms`, or rejects when `signal` aborts (and leaves no timer behind). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
