// A RequestBudgetStore in this process, on Date.now (fake timers move it): what the pacer tests
// share between clients standing for processes. Every call is counted in `calls`, and `down`
// makes every call reject (a store that cannot be reached).
import type { RequestBudgetStore } from '../../src/index.js';

export function memoryBudget() {
  const sends = new Map<string, number[]>();
  const paused = new Map<string, number>();
  const calls: string[] = [];
  let down: Error | undefined;
  const inWindow = (key: string, windowMs: number) => {
    const kept = (sends.get(key) ?? []).filter((at) => at > Date.now() - windowMs);
    sends.set(key, kept);
    return kept;
  };
  const step = (name: string) => {
    calls.push(name);
    if (down) throw down;
  };
  const store: RequestBudgetStore = {
    async count(key, windowMs) {
      step('count');
      return inWindow(key, windowMs).length;
    },
    async take(key, limit, windowMs) {
      step('take');
      const pause = (paused.get(key) ?? 0) - Date.now();
      if (pause > 0) return pause;
      const window = inWindow(key, windowMs);
      if (window.length >= limit) return window[window.length - limit]! + windowMs - Date.now();
      window.push(Date.now());
      return 0;
    },
    async record(key, windowMs) {
      step('record');
      inWindow(key, windowMs).push(Date.now());
    },
    async pause(key, ms) {
      step('pause');
      paused.set(key, Math.max(paused.get(key) ?? 0, Date.now() + ms));
    },
  };
  return {
    store,
    calls,
    /** Every send recorded for `key` (none dropped). */
    keys: () => [...sends.keys()],
    fail: (error: Error | undefined) => void (down = error),
  };
}
