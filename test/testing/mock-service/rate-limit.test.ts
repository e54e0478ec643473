// The sandbox's sliding-window rate limiter: exact window edges, O(1) hits at a raised limit
// (a load test keeps 60,000 times in the window), and idle keys forgotten.
import { describe, expect, test } from 'vitest';
import { RateLimiter } from '../../../src/testing/mock-service/rate-limit.js';

describe('RateLimiter', () => {
  test('counts a 60 s window: refused with Retry-After until the oldest request leaves it', () => {
    const limiter = new RateLimiter();
    expect(limiter.hit('m|ip', 0, 3)).toEqual({ allowed: true, remaining: 2 });
    expect(limiter.hit('m|ip', 1_000, 3)).toEqual({ allowed: true, remaining: 1 });
    expect(limiter.hit('m|ip', 2_000, 3)).toEqual({ allowed: true, remaining: 0 });
    expect(limiter.hit('m|ip', 2_500, 3)).toEqual({ allowed: false, retryAfter: 58 });
    // A refused request is not counted: the window still holds 0, 1000 and 2000.
    expect(limiter.hit('m|ip', 59_999, 3)).toEqual({ allowed: false, retryAfter: 1 });
    expect(limiter.hit('m|ip', 60_000, 3)).toEqual({ allowed: true, remaining: 0 });
    // Another key has its own window.
    expect(limiter.hit('m|other', 60_000, 3)).toEqual({ allowed: true, remaining: 2 });
  });

  test('a raised limit at 1,000 requests/s: the count follows the window over 200,000 requests', () => {
    const limiter = new RateLimiter();
    for (let i = 0; i < 200_000; i++) {
      const result = limiter.hit('load', i, 1_000_000_000);
      // One request per ms: the window (now - 60 s, now] holds min(i, 59,999) earlier ones.
      const expected = 1_000_000_000 - Math.min(i, 59_999) - 1;
      if (!result.allowed || result.remaining !== expected)
        throw new Error(`request ${i}: ${JSON.stringify(result)}, expected ${expected}`);
    }
  });

  test('refused requests leave no trace; the oldest live one sets Retry-After', () => {
    const limiter = new RateLimiter();
    const allowed = Array.from({ length: 10 }, (_, i) => limiter.hit('k', i * 10_000, 5).allowed);
    // 0–40 s fill the window; 50 s is refused; from 60 s one leaves per 10 s and one comes in.
    expect(allowed).toEqual([true, true, true, true, true, false, true, true, true, true]);
    // Live now: 40, 60, 70, 80 and 90 s; 40 s leaves the window at 100 s.
    expect(limiter.hit('k', 90_000, 5)).toEqual({ allowed: false, retryAfter: 10 });
  });

  test('keys with nothing left in the window are forgotten', () => {
    const limiter = new RateLimiter();
    for (let ip = 0; ip < 500; ip++) limiter.hit(`m|10.0.${ip >> 8}.${ip & 255}`, 0, 120);
    expect(limiter.size).toBe(500);
    // A minute later, one busy client: the sweep (every 1,000 hits) drops the 500 idle keys.
    for (let i = 0; i < 1_000; i++) limiter.hit('m|busy', 60_000 + i, 1_000_000);
    expect(limiter.size).toBe(1);
  });
});
