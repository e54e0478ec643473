// Runs a kit's cases one after the other against a store and tells what each did: passed,
// failed (with the message of what broke), or skipped (with why); or, asked to, throws at the
// first failure.
import { CheckFailed } from './assert.js';
import { StoreCheckError } from './error.js';
import type { StoreKit, StoreReport } from './types.js';

/** One promise of a store interface, checked: `skip` says why it cannot run on this store, if so. */
export interface Case<Context> {
  readonly name: string;
  readonly skip?: (context: Context) => string | undefined;
  readonly run: (context: Context) => Promise<void>;
}

/** Thrown by a case that finds, once running, that it does not apply (a claim without `renew`). */
class NotApplicable extends Error {}

/** Ends the running case as skipped, `reason` saying why. */
export function skip(reason: string): never {
  throw new NotApplicable(reason);
}

/** How a case ended. */
type Ended = { passed: true } | { failed: string; error: unknown } | { skipped: string };

const messageOf = (error: unknown): string =>
  error instanceof CheckFailed
    ? error.message
    : error instanceof Error
      ? `threw ${error.name}: ${error.message}`
      : `threw ${String(error)}`;

/** Runs one case, for at most `ms`: one that hangs fails (its promise is left to settle alone). */
async function runOne<Context>(one: Case<Context>, context: Context, ms: number): Promise<Ended> {
  const reason = one.skip?.(context);
  if (reason !== undefined) return { skipped: reason };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const running = Promise.resolve().then(() => one.run(context));
  // A case given up on may still reject later: that must not be an unhandled rejection.
  running.catch(() => {});
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CheckFailed(`did not finish within ${ms} ms (a store call that never settles?)`)), ms);
  });
  try {
    await Promise.race([running, hung]);
    return { passed: true };
  } catch (error) {
    return error instanceof NotApplicable ? { skipped: error.message } : { failed: messageOf(error), error };
  } finally {
    clearTimeout(timer);
  }
}

/** What runCases takes besides the cases. */
export interface RunOptions {
  throwOnFailure: boolean;
  caseTimeoutMs: number;
}

/** Runs `cases` in order against `context`: the report, or (`throwOnFailure`) a StoreCheckError at the first failure. */
export async function runCases<Context>(
  kit: StoreKit,
  cases: ReadonlyArray<Case<Context>>,
  context: Context,
  options: RunOptions,
): Promise<StoreReport> {
  const started = Date.now();
  const passed: string[] = [];
  const failed: StoreReport['failed'] = [];
  const skipped: StoreReport['skipped'] = [];
  const report = (): StoreReport => ({ kit, ok: failed.length === 0, passed, failed, skipped, ms: Date.now() - started });
  for (const one of cases) {
    const ended = await runOne(one, context, options.caseTimeoutMs);
    if ('passed' in ended) passed.push(one.name);
    else if ('skipped' in ended) skipped.push({ name: one.name, reason: ended.skipped });
    else {
      failed.push({ name: one.name, message: ended.failed });
      if (options.throwOnFailure) throw new StoreCheckError(one.name, ended.failed, report(), ended.error);
    }
  }
  return report();
}
