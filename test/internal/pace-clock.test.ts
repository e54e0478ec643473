// The pacer's clock and its pause after a 429 (issue "Hardening", faults 1 and 2): the window
// and the pause run on the monotonic clock (performance.now), so a wall clock stepped back or
// forward changes nothing; a pause is never longer than the cap it is given (the client's
// maxRetryAfter). Fake timers move performance.now, Date and setTimeout together;
// vi.setSystemTime moves Date alone, as an NTP step or a resumed VM does.
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { pace, type Pace } from '../../src/internal/pace.js';
import { START } from '../support/fake-api.js';

beforeEach(() => {
  vi.useFakeTimers({ now: START, toFake: ['Date', 'performance', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
});
afterEach(() => vi.useRealTimers());

/** Whether `promise` has settled after the microtasks now queued ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await vi.advanceTimersByTimeAsync(0);
  return done;
}

/** `count` sends of the merchant's own, now. */
const send = (p: Pace, count: number) => Array.from({ length: count }, () => p.sent());
const DAY = 86_400_000;

describe('the pause after a 429 is capped', () => {
  test('Retry-After: 31536000 (a year) with a cap of 60 s: the SDK sends again after 60 s', async () => {
    const p = pace(120);
    p.limited(31_536_000, 60_000);
    const waiting = p.slot();
    await vi.advanceTimersByTimeAsync(59_999);
    expect(await settled(waiting)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(waiting)).toBe(true);
  });

  test('a pause without a hint is capped too (a minute, or less when the cap is less)', async () => {
    const p = pace(120);
    p.limited(undefined, 5_000);
    const waiting = p.slot();
    await vi.advanceTimersByTimeAsync(4_999);
    expect(await settled(waiting)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(waiting)).toBe(true);
  });

  test('a slot held by a pause rejects when its signal aborts, and leaves no timer', async () => {
    const p = pace(120);
    p.limited(30, 60_000);
    const controller = new AbortController();
    const waiting = p.slot(controller.signal);
    waiting.catch(() => {});
    await vi.advanceTimersByTimeAsync(10_000);
    controller.abort(new Error('customer left'));
    await expect(waiting).rejects.toThrow('customer left');
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('the window and the pause run on the monotonic clock', () => {
  test('the wall clock stepped back 25 h: a send still leaves the window 60 s after it was made', async () => {
    const p = pace(4); // 3 of 4 for the SDK's own sends
    send(p, 3);
    const waiting = p.slot();
    vi.setSystemTime(Date.now() - 25 * 3_600_000);
    await vi.advanceTimersByTimeAsync(59_999);
    expect(await settled(waiting)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(waiting)).toBe(true);
  });

  test('the wall clock stepped back 25 h: a 429 pause of 5 s ends after 5 s', async () => {
    const p = pace(120);
    p.limited(5, 60_000);
    vi.setSystemTime(Date.now() - 25 * 3_600_000);
    const waiting = p.slot();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(await settled(waiting)).toBe(true);
  });

  test('the wall clock stepped forward 25 h: the window and the pause hold as long as before', async () => {
    const p = pace(4);
    send(p, 3);
    const full = p.slot();
    vi.setSystemTime(Date.now() + 25 * 3_600_000);
    // The pacer looks again a second later: still full.
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await settled(full)).toBe(false);
    await vi.advanceTimersByTimeAsync(58_999);
    expect(await settled(full)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(full)).toBe(true);

    const q = pace(120);
    q.limited(30, 60_000);
    const paused = q.slot();
    vi.setSystemTime(Date.now() + DAY);
    await vi.advanceTimersByTimeAsync(29_999);
    expect(await settled(paused)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(paused)).toBe(true);
  });
});
