// Assertion helpers shared by the test files.
import { expect, vi } from 'vitest';
import { InvalidParamsError } from '../../src/index.js';
import type { SeenRequest } from './fake-api.js';

/** A UUID (v4 or otherwise), as generated for Idempotency-Key. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Awaits `promise` while running the fake timers (when they are on), so backoff waits and
 * timeouts pass in virtual time. Before each jump to the next timer it yields to the real
 * event loop a few times, so in-process I/O (msw reading a body) finishes first and a
 * timeout only fires when nothing else could answer. Real timers: just awaits.
 */
export async function settle<T>(promise: PromiseLike<T>): Promise<T> {
  if (vi.isFakeTimers()) {
    let done = false;
    Promise.resolve(promise).then(
      () => (done = true),
      () => (done = true),
    );
    while (!done) {
      for (let i = 0; i < 20 && !done; i++) await new Promise((resolve) => setImmediate(resolve));
      if (!done) await vi.advanceTimersToNextTimerAsync();
    }
  }
  return await promise;
}

/** Milliseconds between the requests the fake API saw (virtual time). */
export function gaps(seen: readonly { at: number }[]): number[] {
  return seen.slice(1).map((req, i) => req.at - seen[i]!.at);
}

/** The rejection of `promise` (fails the test when it resolves); runs fake timers meanwhile. */
export async function rejection(promise: PromiseLike<unknown>): Promise<any> {
  try {
    await settle(promise);
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to reject, but it resolved');
}

/** The InvalidParamsError `promise` must reject with. */
export async function invalidParams(promise: PromiseLike<unknown>): Promise<InvalidParamsError> {
  const error = await rejection(promise);
  expect(error).toBeInstanceOf(InvalidParamsError);
  return error as InvalidParamsError;
}

/** Plain JSON all the way down: no class instances, no Date, clonable and serialisable. */
export function expectPlainJson(value: unknown): void {
  const walk = (v: unknown, path: string): void => {
    if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return;
    if (Array.isArray(v)) {
      expect(Object.getPrototypeOf(v), path).toBe(Array.prototype);
      v.forEach((item, i) => walk(item, `${path}[${i}]`));
      return;
    }
    expect(typeof v, path).toBe('object');
    expect(Object.getPrototypeOf(v), path).toBe(Object.prototype);
    for (const [key, item] of Object.entries(v as object)) {
      if (item !== undefined) walk(item, `${path}.${key}`);
    }
  };
  walk(value, '$');
  expect(structuredClone(value)).toStrictEqual(value);
  expect(JSON.parse(JSON.stringify(value))).toEqual(value);
}

/** Exactly one request reached the fake API: a signed sandbox GET of `path` with no body and no Idempotency-Key. */
export function expectSignedGet(seen: SeenRequest[], path: string): void {
  expect(seen).toHaveLength(1);
  const req = seen[0]!;
  expect(req.method).toBe('GET');
  expect(req.pathWithQuery).toBe(path);
  expect(req.rawBody).toBe('');
  expect(req.signatureValid).toBe(true);
  expect(req.headers['accept']).toBe('application/json');
  expect(req.headers['x-environment']).toBe('sandbox');
  expect(req.headers['idempotency-key']).toBeUndefined();
}
