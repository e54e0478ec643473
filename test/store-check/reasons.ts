// What the SDK's store tests assert of testStore's skips: which option or part each skipped
// case missed, by the word its reason names (so a case that stops running is caught).
import type { StoreReport } from '../../src/testing.js';

const PARTS: Array<[RegExp, string]> = [
  [/^no `another` option/, 'another'],
  [/^no `kill` option/, 'kill'],
  [/^no `transactionalDb` option/, 'transactionalDb'],
  [/^the store has no inbox$/, 'inbox'],
  [/^the store has no attempt$/, 'attempt'],
  [/^the store has no remember\/unsettled$/, 'remember/unsettled'],
  [/^its claims have no renew/, 'renew'],
];

/** Each skipped case's missing option or part, in the order they ran. */
export function skipReasons(report: StoreReport): string[] {
  return report.skipped.map(({ reason }) => PARTS.find(([pattern]) => pattern.test(reason))?.[1] ?? reason);
}
