// The per-merchant-and-IP rate limit of /api/v1 calls: a sliding 60 s window of request times.

const WINDOW_MS = 60_000;
/** Hits between two sweeps of the keys with no request left in the window. */
const SWEEP_EVERY = 1_000;

/** Sliding 60 s window of request times per merchant and client IP. */
// Each key's times are a queue (an array and the index of its oldest live entry): a hit
// costs O(1) on average however high the limit is raised (a load test at 1,000 requests/s
// holds 60,000 times; copying them on every request was 0.5 MB of garbage per request).
export class RateLimiter {
  readonly #windows = new Map<string, { times: number[]; head: number }>();
  #hitsSinceSweep = 0;

  /** Counts one request at `now`; refuses it (counting nothing) when the window is full. */
  hit(key: string, now: number, limit: number): { allowed: true; remaining: number } | { allowed: false; retryAfter: number } {
    const windowStart = now - WINDOW_MS;
    if (++this.#hitsSinceSweep >= SWEEP_EVERY) this.#sweep(windowStart);
    let window = this.#windows.get(key);
    if (!window) this.#windows.set(key, (window = { times: [], head: 0 }));
    const { times } = window;
    while (window.head < times.length && times[window.head]! <= windowStart) window.head++;
    // The expired prefix is dropped once it is most of the array: each time is moved O(1) times.
    if (window.head >= 64 && window.head * 2 >= times.length) {
      times.splice(0, window.head);
      window.head = 0;
    }
    const count = times.length - window.head;
    if (count >= limit) return { allowed: false, retryAfter: Math.max(1, Math.ceil((times[window.head]! + WINDOW_MS - now) / 1000)) };
    times.push(now);
    return { allowed: true, remaining: limit - count - 1 };
  }

  /** Keys with a request in the window (the others are forgotten, so the map stays bounded). */
  get size(): number {
    return this.#windows.size;
  }

  #sweep(windowStart: number): void {
    this.#hitsSinceSweep = 0;
    for (const [key, { times }] of this.#windows) if ((times.at(-1) ?? -Infinity) <= windowStart) this.#windows.delete(key);
  }
}

/**
 * A fixed window per key (Laravel's RateLimiter, as the earlier generation uses it): the
 * first hit opens a window of `windowMs`; up to `limit` hits count in it; the next hit after
 * it ends opens a new one. A refused hit is not counted.
 */
export class FixedWindowLimiter {
  readonly #windows = new Map<string, { start: number; count: number }>();
  #hitsSinceSweep = 0;

  /** Counts one hit at `now`; refused with the whole seconds until the window ends. */
  hit(key: string, now: number, limit: number, windowMs: number): { allowed: true } | { allowed: false; retryAfter: number } {
    if (++this.#hitsSinceSweep >= SWEEP_EVERY) this.#sweep(now, windowMs);
    let window = this.#windows.get(key);
    if (!window || now >= window.start + windowMs) this.#windows.set(key, (window = { start: now, count: 0 }));
    if (window.count >= limit) return { allowed: false, retryAfter: Math.max(1, Math.ceil((window.start + windowMs - now) / 1000)) };
    window.count += 1;
    return { allowed: true };
  }

  /** Keys with an open window (ended ones are swept, so the map stays bounded). */
  get size(): number {
    return this.#windows.size;
  }

  #sweep(now: number, windowMs: number): void {
    this.#hitsSinceSweep = 0;
    for (const [key, { start }] of this.#windows) if (now >= start + windowMs) this.#windows.delete(key);
  }
}
