// The polling budget's pacer (src/internal/pace.ts): a sliding 60 s window of every
// send, the 9/10 share of what the SDK sends on its own, the pause after a 429, and a property
// test over random sends, polls, 429s and time steps; its clock is monotonic (a wall clock
// stepped back or forward changes nothing: vi.setSystemTime moves Date alone, as an NTP step or
// a resumed VM does) and a pause is never longer than its cap (maxRetryAfter). Time is virtual (fake timers move
// performance.now, the pacer's clock, Date.now and setTimeout together).
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { ConfigurationError, PaymentsClient } from '../../src/index.js';
import { pace, shareOf, type Pace } from '../../src/internal/pace.js';
import { START } from '../support/fake-api.js';
import { settled } from '../support/settled.js';

beforeEach(() => {
  vi.useFakeTimers({ now: START, toFake: ['Date', 'performance', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
});
afterEach(() => vi.useRealTimers());

/** `count` sends of the merchant's own, now. */
const send = (p: Pace, count: number) => Array.from({ length: count }, () => p.sent());

describe('the window and the 9/10 rule', () => {
  test('budget 120: the SDK may send on its own while the last minute holds fewer than 108 sends', async () => {
    const p = pace(120);
    send(p, 107);
    await p.slot(); // the 108th send of the minute
    p.sent(); // …whose own send is not counted twice
    const waiting = p.slot();
    expect(await settled(waiting)).toBe(false);
    // The oldest send leaves the window exactly 60 s after it was made.
    await vi.advanceTimersByTimeAsync(59_999);
    expect(await settled(waiting)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(waiting)).toBe(true);
  });

  test("a poll's own send is counted once: its slot stands for it", async () => {
    const p = pace(4); // 3 of 4 for the SDK's own sends
    await p.slot();
    p.sent();
    await p.slot();
    p.sent();
    expect(await settled(p.slot())).toBe(true);
    expect(await settled(p.slot())).toBe(false);
  });

  test('sends leave the window one by one: a slot frees up as each one turns 60 s old', async () => {
    const p = pace(4); // 3 of 4 for the SDK's own sends
    p.sent();
    await vi.advanceTimersByTimeAsync(10_000);
    p.sent();
    await vi.advanceTimersByTimeAsync(10_000);
    p.sent();
    const first = p.slot();
    const second = p.slot();
    await vi.advanceTimersByTimeAsync(40_000); // t = 60 s: the first send leaves
    expect([await settled(first), await settled(second)]).toEqual([true, false]);
    await vi.advanceTimersByTimeAsync(10_000); // t = 70 s: the second one leaves
    expect(await settled(second)).toBe(true);
  });

  test.each([
    [1, 1],
    [2, 1],
    [4, 3],
    [10, 9],
    [120, 108],
    [1_000, 900],
  ])('budget %i: %i sends a minute for the SDK on its own', async (budget, share) => {
    const p = pace(budget);
    for (let i = 0; i < share; i++) expect(await settled(p.slot())).toBe(true);
    expect(await settled(p.slot())).toBe(false);
  });

  test("the merchant's own sends count in the window: they leave the SDK less (never the other way round)", async () => {
    const p = pace(120);
    send(p, 110); // the merchant's own burst: more than the SDK's share, and never held
    expect(await settled(p.slot())).toBe(false);
  });

  test('slots given and never sent (their call failed first) count until they are 60 s old, and hide no later send', async () => {
    const p = pace(4);
    await p.slot();
    await p.slot();
    await p.slot();
    const fourth = p.slot();
    expect(await settled(fourth)).toBe(false);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(await settled(fourth)).toBe(true);
    p.sent(); // the fourth poll's own send, counted once
    p.sent(); // the merchant's: counted, though three slots were never sent
    p.sent();
    expect(await settled(p.slot())).toBe(false);
  });

  test('slot(signal) rejects with the reason when the signal aborts, and leaves no timer', async () => {
    const p = pace(4);
    send(p, 3);
    const controller = new AbortController();
    const waiting = p.slot(controller.signal);
    waiting.catch(() => {});
    controller.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    expect(vi.getTimerCount()).toBe(0);
    await expect(p.slot(AbortSignal.abort(new Error('already')))).rejects.toThrow('already');
  });
});

describe('a 429 pauses the SDK on its own (it looks again each second)', () => {
  test('until its hint passes', async () => {
    const p = pace(120);
    p.limited(5);
    const waiting = p.slot();
    await vi.advanceTimersByTimeAsync(4_999);
    expect(await settled(waiting)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(waiting)).toBe(true);
  });

  test('a minute without a hint', async () => {
    const p = pace(120);
    p.limited(undefined);
    const waiting = p.slot();
    await vi.advanceTimersByTimeAsync(59_999);
    expect(await settled(waiting)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(waiting)).toBe(true);
  });

  test('a hint of days is honoured, one short timer at a time (a timer cannot hold it), not in a busy loop', async () => {
    const p = pace(120);
    p.limited(30 * 86_400);
    const controller = new AbortController();
    const waiting = p.slot(controller.signal);
    waiting.catch(() => {});
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(await settled(waiting)).toBe(false);
    expect(vi.getTimerCount()).toBe(1);
    controller.abort();
    expect(await settled(waiting)).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('the client', () => {
  const options = {
    environment: 'sandbox',
    merchantKey: 'm',
    apiKey: 'k',
    apiSecret: 's',
    baseUrl: 'https://payments.example.test',
  } as const;
  // The client's slots are its pacer's (the kits' seam, pollSlot): fill one and see who waits.
  const fill = async (client: PaymentsClient, count: number) => {
    for (let i = 0; i < count; i++) await client.pollSlot();
  };

  test('keeps its pacer out of sight: no symbol, nothing in JSON', () => {
    const client = new PaymentsClient(options);
    expect(Object.getOwnPropertySymbols(client)).toEqual([]);
    expect(JSON.stringify(client)).not.toContain('pace');
  });

  test('withOptions() shares it (one count of what is sent); a pollingBudget of its own gets its own', async () => {
    const client = new PaymentsClient(options);
    await fill(client, 108);
    expect(await settled(client.withOptions({ timeout: 5_000 }).pollSlot())).toBe(false);
    expect(await settled(client.withOptions({ timeout: 5_000 }).withOptions({ maxRetries: 0 }).pollSlot())).toBe(false);
    expect(await settled(client.withOptions({ pollingBudget: 60 }).pollSlot())).toBe(true);
    expect(await settled(new PaymentsClient(options).pollSlot())).toBe(true);
  });

  test('pollingBudget defaults to 120: 108 sends of its own a minute', async () => {
    const client = new PaymentsClient(options);
    await fill(client, 108);
    expect(await settled(client.pollSlot())).toBe(false);
  });

  test.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '120'])('pollingBudget %j → ConfigurationError', (pollingBudget) => {
    expect(() => new PaymentsClient({ ...options, pollingBudget: pollingBudget as number })).toThrow(ConfigurationError);
    expect(() => new PaymentsClient({ ...options, pollingBudget: pollingBudget as number })).toThrow(
      /pollingBudget must be a whole number/,
    );
  });
});

// For random sequences of the merchant's sends, the SDK's polls (sent at once, sent a timer
// later as a WebCrypto signature is, sent after a send of the merchant's, or never sent: their
// call failed first), 429s and time steps, checked
// against what was really sent:
// - in any 60 s, the SDK's own sends never exceed 9/10 of the budget;
// - none goes out while the last 429's pause runs;
// - one sent at once went out while the minute before it held fewer
//   than 9/10 of the budget, the merchant's sends included.
describe('property', () => {
  type Op =
    | { kind: 'merchant'; count: number }
    | { kind: 'poll'; then: 'send' | 'later' | 'merchant-first' | 'abandon' }
    | { kind: 'limited'; seconds: number | undefined }
    | { kind: 'step'; ms: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('merchant' as const), count: fc.integer({ min: 1, max: 8 }) }) },
    {
      weight: 6,
      arbitrary: fc.record({ kind: fc.constant('poll' as const), then: fc.constantFrom('send', 'later', 'merchant-first', 'abandon') }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('limited' as const),
        seconds: fc.option(fc.integer({ min: 0, max: 90 }), { nil: undefined }),
      }),
    },
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('step' as const), ms: fc.integer({ min: 0, max: 20_000 }) }) },
  );
  const inMinuteBefore = (times: number[], at: number) => times.filter((t) => t > at - 60_000 && t <= at).length;

  test('the SDK on its own never sends past 9/10 of the budget in any minute, nor during a 429 pause', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 40 }), fc.array(op, { maxLength: 120 }), async (budget, ops) => {
        vi.setSystemTime(START);
        const p = pace(budget);
        const share = shareOf(budget);
        let seq = 0; // the order of events, finer than the clock
        const all: number[] = []; // every send, the merchant's and the SDK's
        const own: { at: number; seq: number; before: number; clean: boolean }[] = [];
        const pauses: { seq: number; until: number }[] = [];
        const merchant = () => {
          all.push(Date.now());
          p.sent();
        };
        const polls: Promise<void>[] = [];
        for (const step of ops) {
          if (step.kind === 'merchant') for (let i = 0; i < step.count; i++) merchant();
          else if (step.kind === 'limited') {
            p.limited(step.seconds);
            pauses.push({ seq: seq++, until: Date.now() + (step.seconds ?? 60) * 1000 });
          } else if (step.kind === 'step') await vi.advanceTimersByTimeAsync(step.ms);
          else {
            const polled = p.slot().then(async () => {
              if (step.then === 'abandon') return;
              // After the timers already due now (other polls woken at the same moment).
              if (step.then === 'later') await new Promise((resolve) => setTimeout(resolve, 0));
              if (step.then === 'merchant-first') merchant();
              const at = Date.now();
              own.push({ at, seq: seq++, before: inMinuteBefore(all, at), clean: step.then === 'send' });
              all.push(at);
              p.sent();
            });
            polls.push(polled);
            await vi.advanceTimersByTimeAsync(0);
          }
        }
        // Every poll gets its turn in the end.
        while ((await Promise.all(polls.map(settled))).includes(false)) await vi.advanceTimersByTimeAsync(60_000);
        const ownTimes = own.map((o) => o.at);
        for (const send of own) {
          expect(inMinuteBefore(ownTimes, send.at)).toBeLessThanOrEqual(share);
          const pause = pauses.filter((q) => q.seq < send.seq).at(-1);
          if (pause) expect(send.at).toBeGreaterThanOrEqual(pause.until);
          if (send.clean) expect(send.before).toBeLessThan(share);
        }
      }),
      { numRuns: 200, seed: Number(process.env.FC_SEED ?? 20261127) },
    );
  });
});

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
