// Helpers of the CLI and demo tests: run `main` in-process with captured output, and wait
// for the package copy that test/global-setup.ts builds.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { main, type CliIo } from '../../src/cli/main.js';

export const root = resolve(import.meta.dirname, '../..');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in-process; `io` overrides (signal, env, cwd) are passed through. */
export async function runCli(argv: string[], io: Partial<CliIo> = {}): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    ...io,
  });
  return { code, stdout, stderr };
}

/** Usage errors: exit 2, a first line with the reason, then the usage. */
export function expectUsageError(run: CliRun, reason: RegExp): void {
  if (run.code !== 2) throw new Error(`expected exit 2, got ${run.code}: ${run.stderr}`);
  const [first, blank, usage] = run.stderr.split('\n');
  if (!reason.test(first ?? '')) throw new Error(`first stderr line ${JSON.stringify(first)} does not match ${reason}`);
  if (blank !== '' || !usage?.startsWith('Usage: business-payments')) throw new Error(`no usage after the reason:\n${run.stderr}`);
  if (run.stdout !== '') throw new Error(`stdout should be empty, got ${JSON.stringify(run.stdout)}`);
}

/** Where test/global-setup.ts writes the build's result in the copy, whole: `{ code, output }`. */
export const BUILD_RESULT = '.build-result.json';

/** Waits until the copy in `dir` (from test/global-setup.ts) is built; throws with tsup's output if the build failed. */
export async function packageCopyReady(dir: string, timeoutMs = 180_000): Promise<void> {
  const file = join(dir, BUILD_RESULT);
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`the package build in ${dir} did not finish within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const { code, output } = JSON.parse(readFileSync(file, 'utf8')) as { code: number | null; output: string };
  if (code !== 0) throw new Error(`npm run build failed (exit ${code}):\n${output}`);
}
