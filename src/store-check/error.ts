import { PaymentsError } from '../core/base-error.js';
import type { StoreReport } from './types.js';

/**
 * Thrown by `testStore(store, { throwOnFailure: true })` at the first case that fails: `caseName`
 * names it, the message says what broke, `report` holds the cases run until then.
 *
 * @example
 * ```ts
 * import { memoryStore } from 'business-payments/payouts';
 * import { StoreCheckError, testStore } from 'business-payments/testing';
 *
 * try {
 *   await testStore(memoryStore().payouts, { kit: 'payouts', throwOnFailure: true });
 * } catch (error) {
 *   if (error instanceof StoreCheckError) console.error(error.caseName, error.message);
 *   throw error;
 * }
 * ```
 */
export class StoreCheckError extends PaymentsError {
  override name = 'StoreCheckError';
  /** The case that failed. */
  readonly caseName: string;
  /** The report of the cases run until it (the failed one last). */
  readonly report: StoreReport;

  constructor(caseName: string, message: string, report: StoreReport, cause: unknown) {
    super(`testStore (${report.kit}): "${caseName}" failed: ${message}`, { cause });
    this.caseName = caseName;
    this.report = report;
  }
}
