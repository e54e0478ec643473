// Whether a promise has settled once the microtasks now queued (and the fake timers due at
// once) ran: for tests on fake timers that ask "does this wait, or is it given now?".
import { vi } from 'vitest';

/** Whether `promise` has settled after the microtasks now queued ran (fake timers). */
export async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await vi.advanceTimersByTimeAsync(0);
  return done;
}
