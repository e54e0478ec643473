// Where a reconcile walk (the kit's, and the CLI's dry run) stands against `since`, shared so
// both stop alike. The service's payment list is newest first (the sandbox's is): once a
// page's worth of payments in a row were created before `since`, each older than one already
// seen, nothing newer can follow. On a list in another order nothing stops the walk early.
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

/** `past(created)` for each payment in list order: `true` once the walk may stop. */
export function sinceWindow(from: number): (created: number) => boolean {
  let newest = -Infinity;
  let before = 0;
  return (created) => {
    before = created < from ? (created < newest ? before + 1 : before) : 0;
    if (created > newest) newest = created;
    return before >= 100;
  };
}
