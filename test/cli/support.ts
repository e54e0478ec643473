// Helpers of the CLI and demo tests: run `main` in-process with captured output, and
// build the package where no other build can interfere.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { main, type CliIo } from '../../src/cli/index.js';

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

/**
 * `npm run build` into a private copy of the package (a temp folder with package.json,
 * dist/ and a node_modules link), so that a test run never races with another build of
 * ./dist (a second test run, a manual build). Inside the copy, `business-payments`
 * resolves to its dist/ by self-reference, as in an installed package. Returns the folder
 * and its removal.
 */
export function buildPackageCopy(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'business-payments-build-'));
  copyFileSync(join(root, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const remove = () => {
    unlinkSync(join(dir, 'node_modules')); // the link only, never what it points at
    rmSync(dir, { recursive: true, force: true });
  };
  // tsup itself (not `npm run build`, which first empties ./dist): the copy's dist/ is new.
  const result = spawnSync('npm', ['exec', '--', 'tsup', '--silent', '--out-dir', join(dir, 'dist')], { cwd: root, encoding: 'utf8' });
  if (result.status !== 0) {
    remove();
    throw new Error(`npm run build failed:\n${result.stdout}\n${result.stderr}`);
  }
  return { dir, remove };
}
