// Helpers of the CLI and demo tests: run `main` in-process with captured output, and
// build the package where no other build can interfere.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

const BUILD_RESULT = '.build-result.json';

/**
 * Starts `npm run build` (tsup) into a private copy of the package (a temp folder with
 * package.json, dist/ and a node_modules link), so that a test run never races with another
 * build of ./dist (a second test run, a manual build). Inside the copy, `business-payments`
 * resolves to its dist/ by self-reference, as in an installed package. Returns at once, so
 * the build overlaps the tests that do not need it; {@link packageCopyReady} waits for it.
 * `stop()` ends a build still running and removes the folder.
 */
export function startPackageCopy(): { dir: string; stop(): Promise<void> } {
  const dir = mkdtempSync(join(tmpdir(), 'business-payments-build-'));
  copyFileSync(join(root, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  // tsup itself (not `npm run build`, which first empties ./dist): the copy's dist/ is new.
  // Its own process group, so that stop() ends npm, tsup and esbuild together.
  const child = spawn('npm', ['exec', '--', 'tsup', '--silent', '--out-dir', join(dir, 'dist')], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const finished = new Promise<void>((resolve) => {
    const record = (code: number | null, error?: Error) => {
      // Written whole, then renamed: a reader never sees half a result.
      writeFileSync(join(dir, `${BUILD_RESULT}.tmp`), JSON.stringify({ code, output: error ? String(error) : output }));
      renameSync(join(dir, `${BUILD_RESULT}.tmp`), join(dir, BUILD_RESULT));
      resolve();
    };
    child.on('error', (error) => record(-1, error));
    child.on('close', (code) => record(code));
  });
  return {
    dir,
    async stop() {
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGTERM');
        } catch {
          // Already gone.
        }
      }
      await finished;
      unlinkSync(join(dir, 'node_modules')); // the link only, never what it points at
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Waits until the copy in `dir` (from {@link startPackageCopy}) is built; throws with tsup's output if the build failed. */
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
