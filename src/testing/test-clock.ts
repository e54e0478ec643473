// The test clock: one `now` for the sandbox, the client's signatures, the webhook verifier and
// the kits, moved by hand. The work that joined it (a sandbox created with `{ clock }`) runs as
// the clock passes each due time, earliest first, so a follow-up scheduled by a task (the next
// renewal, a webhook retry) counts from when that task ran, as on a real server.

/**
 * Timed work that a {@link TestClock} drives: what `createMockService({ clock })` hands the
 * clock (its scheduler). A simulation of your own can join the same way.
 */
export interface TestClockWork {
  /** The earliest clock time (ms) anything waits for, `undefined` when nothing waits. */
  nextDueAt(): number | undefined;
  /** Runs everything due at the clock's `now()`, and what that makes due too. */
  runDue(): Promise<void>;
}

/**
 * A clock moved by hand (see {@link createTestClock}). `now` is a plain function, safe to pass
 * on unbound (`now: clock.now`).
 */
export interface TestClock {
  /** The clock's time, ms since the epoch (a plain function: pass it on as it is). */
  readonly now: () => number;
  /**
   * Moves the clock `ms` (finite, ≥ 0) forward, stopping at each due time of the work that
   * joined it to run what is due then: a month of renewals, dunning retries and webhook
   * deliveries in one call, each at its own time. It resolves once all of it ran (a webhook
   * attempt resolves when the receiver has answered). Rejects with a RangeError for a bad `ms`,
   * and with an Error when called while the clock is already moving (an advance not awaited,
   * or one from inside the work it runs).
   */
  advance(ms: number): Promise<void>;
  /**
   * Puts the clock at `time`, forward or back, in one jump (a clock corrected by NTP, a laptop
   * woken from sleep), then runs what is due at `time`, all at that instant rather than
   * stepped through. Rejects as `advance` does.
   */
  set(time: number | Date): Promise<void>;
  /**
   * Ties `work` to the clock: `advance` and `set` run it from now on. Returns the function that
   * unties it (`mock.close()` calls it for a sandbox).
   */
  join(work: TestClockWork): () => void;
}

// A step that makes no progress this many times in a row is work that does not run what it says is due.
const MAX_STILL_STEPS = 10_000;

/**
 * A clock for tests, starting at `start` (default: the real time now) and moving only when
 * told. Give the same clock to everything on both sides, `createMockService({ clock })` and
 * `now: clock.now` to the client, `verifyWebhook`, `signWebhook` and the kits, and each
 * signature and freshness window is checked on the same time however far the clock moves.
 *
 * @example
 * ```ts
 * import { PaymentsClient } from 'business-payments';
 * import { createMockService, createTestClock, TEST_PHONE_NUMBERS } from 'business-payments/testing';
 *
 * const clock = createTestClock();
 * const mock = createMockService({ clock }); // its scheduled work runs as the clock passes it
 * const server = await mock.listen({ port: 0 });
 * const client = new PaymentsClient({ environment: 'sandbox', ...mock.credentials.sandbox, baseUrl: server.url, now: clock.now });
 * const plan = await client.billing.plans.create({ name: 'Monthly', amount: 10_000, currency: 'TZS', interval: 'month' });
 * await client.billing.subscriptions.create({
 *   plan_code: plan.plan_code, customer_phone: TEST_PHONE_NUMBERS.success, terms_shown: 'TZS 10,000 a month until you cancel.',
 * });
 * await clock.advance(90 * 86_400_000); // three monthly charges, in milliseconds of real time
 * await mock.close();
 * ```
 */
export function createTestClock(start: number | Date = Date.now()): TestClock {
  let current = timeOf(start, 'createTestClock: start');
  let moving = false;
  const joined = new Set<TestClockWork>();
  const runAll = async () => {
    for (const work of [...joined]) await work.runDue();
  };
  // One move at a time: a second one would run the same work at two times at once.
  const move = async (to: () => Promise<void>) => {
    if (moving) throw new Error('TestClock: the clock is already moving: await each advance() or set() before the next.');
    moving = true;
    try {
      await to();
    } finally {
      moving = false;
    }
  };
  // Each due time in turn, not straight to the target: what a task schedules (the next renewal,
  // a webhook retry) counts from when it ran, so it must run at its own time.
  const stepTo = async (target: number) => {
    for (let still = 0; ;) {
      await runAll();
      const next = earliest(joined);
      if (next === undefined || next > target) break;
      still = next > current ? 0 : still + 1;
      if (still > MAX_STILL_STEPS) throw new Error(`TestClock: work due at ${new Date(next).toISOString()} does not run.`);
      current = Math.max(current, next);
    }
    current = target;
  };
  return {
    now: () => current,
    advance: (ms) =>
      move(() => {
        if (!(typeof ms === 'number' && Number.isFinite(ms) && ms >= 0))
          throw new RangeError('TestClock.advance: ms must be a finite number ≥ 0.');
        return stepTo(current + ms);
      }),
    set: (time) =>
      move(() => {
        current = timeOf(time, 'TestClock.set: time');
        return stepTo(current);
      }),
    join(work) {
      joined.add(work);
      return () => void joined.delete(work);
    },
  };
}

/** The earliest due time of what joined, `undefined` when nothing waits. */
function earliest(joined: Set<TestClockWork>): number | undefined {
  let next: number | undefined;
  for (const work of joined) {
    const due = work.nextDueAt();
    if (due !== undefined && (next === undefined || due < next)) next = due;
  }
  return next;
}

function timeOf(time: number | Date, what: string): number {
  const ms = time instanceof Date ? time.getTime() : time;
  if (typeof ms !== 'number' || !Number.isFinite(ms)) throw new RangeError(`${what} must be a Date or ms since the epoch.`);
  return ms;
}
