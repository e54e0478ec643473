// `reconcile`'s `since`, read once; where its walk stops is core/stop-before.ts (shared with
// the CLI's dry run through the public entry, so both stop alike).
import { ConfigurationError } from '../core/base-error.js';

/**
 * `reconcile`'s `since` as ms since the epoch: a Date or a finite number of ms. Anything else (none,
 * a string, an invalid Date) would walk the whole history: a ConfigurationError, before any call.
 */
export function sinceMs(since: unknown): number {
  const ms = since instanceof Date || typeof since === 'number' ? +since : NaN;
  if (!Number.isFinite(ms)) {
    const got = since instanceof Date ? 'an invalid Date' : typeof since === 'number' ? since : typeof since;
    throw new ConfigurationError(
      `fulfillment.reconcile({ since }): pass a Date or ms since the epoch (e.g. Date.now() - 86_400_000), not ${got}`,
    );
  }
  return ms;
}
