// One build of the package for the whole run (the CLI bin, demo and read-body tests run what a
// user runs): a private copy (a temp folder with package.json, dist/ and a node_modules link),
// so no other build of ./dist can pull it from under the tests; inside it, `business-payments`
// resolves to its dist/ by self-reference, as in an installed package. It is started here and
// not awaited: the tests that need it wait for it (packageCopyReady, test/support/cli.ts), the
// others run meanwhile.
//
// Only what the run needs, and never a build of other sources:
// - A run none of whose test files reads `inject('packageCopy')` (`npm test -- test/webhooks`,
//   say) builds nothing: the copy holds a failed build result that says why, should a test
//   wait for it after all.
// - The .d.ts files (tsup's slow half, a full TypeScript pass) are built only when a file that
//   waits for the copy names a .d.ts file (api-report.test.ts, in `npm run test:tooling`).
// - A build is kept in node_modules/.cache/business-payments-test-build/, under a hash of
//   everything tsup reads (src/, tsup.config.ts, tsconfig.json, package.json, the installed
//   packages' lockfile). A later run with the same hash copies it instead of building; any
//   change to those files is another hash, hence a fresh build. A build is kept only when the
//   hash is the same after it as before it (no file changed meanwhile).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { TestProject } from 'vitest/node';
import { BUILD_RESULT, root } from './support/cli.js';

/** Where builds are kept, by the hash of their inputs and whether they have types (the newest few). */
const CACHE = join(root, 'node_modules', '.cache', 'business-payments-test-build');
const KEEP = 4;
/** Bump to drop every kept build (a change to how builds are made that the hash does not see). */
const CACHE_VERSION = '1';

type Need = 'none' | 'js' | 'types';
interface Copy {
  dir: string;
  stop(): Promise<void>;
}

let copy: Copy | undefined;
let keepBuild: (() => void) | undefined;

export function setup(project: TestProject): void {
  const need = needOf(project);
  if (need === 'none') {
    copy = newCopy();
    result(
      copy.dir,
      1,
      'not built: no test file of this run reads inject("packageCopy") (test/global-setup.ts decides from the files the run was given)',
    );
  } else {
    const key = buildKey();
    const kept = (need === 'js' ? [`${key}-js`, `${key}-types`] : [`${key}-types`]).find((name) => existsSync(join(CACHE, name)));
    copy = (kept && fromCache(kept)) || build(need === 'types');
    const dir = copy.dir;
    keepBuild = () => keep(`${key}-${need}`, key, dir);
  }
  project.provide('packageCopy', copy.dir);
}

export async function teardown(): Promise<void> {
  try {
    keepBuild?.();
  } catch {
    // A build not kept is only a build to make again next time.
  }
  await copy?.stop();
}

/**
 * What the run needs, from the files vitest collected for it (known before global setup); when
 * they are not known (watch mode runs other files later, or vitest changed), everything.
 */
function needOf(project: TestProject): Need {
  if (project.vitest.config.watch) return 'types';
  let texts: string[];
  try {
    const paths = project.vitest.state.getPaths();
    if (paths.length === 0) return 'types';
    texts = paths.map((path) => readFileSync(path, 'utf8'));
  } catch {
    return 'types';
  }
  const waiting = texts.filter((text) => text.includes('packageCopy'));
  return waiting.length === 0 ? 'none' : waiting.some((text) => /\.d\.c?ts\b/.test(text)) ? 'types' : 'js';
}

/** The hash of what the build reads. */
function buildKey(): string {
  const hash = createHash('sha256').update(`v${CACHE_VERSION}\0`);
  const add = (file: string) =>
    hash
      .update(`${relative(root, file)}\0`)
      .update(readFileSync(file))
      .update('\0');
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else add(path);
    }
  };
  walk(join(root, 'src'));
  for (const file of ['tsup.config.ts', 'tsconfig.json', 'package.json', 'entries.json']) add(join(root, file));
  // npm's record of what is installed (tsup, esbuild, typescript, and ky and zod, which are bundled).
  const installed = join(root, 'node_modules', '.package-lock.json');
  add(existsSync(installed) ? installed : join(root, 'package-lock.json'));
  return hash.digest('hex').slice(0, 32);
}

/** A copy without dist/ yet: package.json and a node_modules link. */
function newCopy(): Copy & { stopped: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'business-payments-build-'));
  copyFileSync(join(root, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const stopped = () => {
    unlinkSync(join(dir, 'node_modules')); // the link only, never what it points at
    rmSync(dir, { recursive: true, force: true });
  };
  return { dir, stopped, stop: () => Promise.resolve(stopped()) };
}

/** The build's result, written whole then renamed: a reader never sees half of it. */
function result(dir: string, code: number | null, output: string): void {
  writeFileSync(join(dir, `${BUILD_RESULT}.tmp`), JSON.stringify({ code, output }));
  renameSync(join(dir, `${BUILD_RESULT}.tmp`), join(dir, BUILD_RESULT));
}

/**
 * tsup into the copy's dist/ (tsup itself: `npm run build` first empties ./dist), without the
 * .d.ts files unless `types`. In a process group of its own, so that stop() ends npm, tsup
 * and esbuild together.
 */
function build(types: boolean): Copy {
  const made = newCopy();
  const args = ['exec', '--', 'tsup', '--silent', ...(types ? [] : ['--no-dts']), '--out-dir', join(made.dir, 'dist')];
  const child = spawn('npm', args, { cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const finished = new Promise<void>((resolve) => {
    child.on('error', (error) => (result(made.dir, -1, String(error)), resolve()));
    child.on('close', (code) => (result(made.dir, code, output), resolve()));
  });
  return {
    dir: made.dir,
    async stop() {
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGTERM');
        } catch {
          // Already gone.
        }
      }
      await finished;
      made.stopped();
    },
  };
}

/** The kept build `name` in a copy of its own; undefined when it cannot be read (then it is built). */
function fromCache(name: string): Copy | undefined {
  const made = newCopy();
  try {
    cpSync(join(CACHE, name, 'dist'), join(made.dir, 'dist'), { recursive: true });
    const now = new Date();
    utimesSync(join(CACHE, name), now, now); // used: kept over older ones
    result(made.dir, 0, `copied from ${relative(root, join(CACHE, name))}`);
    return made;
  } catch {
    made.stopped();
    return undefined;
  }
}

/** Keeps the copy's build as `name`, if it succeeded and the sources are still those of `key`. */
function keep(name: string, key: string, dir: string): void {
  const target = join(CACHE, name);
  if (existsSync(target) || !existsSync(join(dir, BUILD_RESULT))) return;
  const { code, output } = JSON.parse(readFileSync(join(dir, BUILD_RESULT), 'utf8')) as { code: unknown; output: string };
  if (code !== 0 || output.startsWith('copied from') || buildKey() !== key) return;
  mkdirSync(CACHE, { recursive: true });
  // Whole or not at all: copied under a name of its own, then renamed into place.
  const partial = mkdtempSync(join(CACHE, `.${name}-`));
  try {
    cpSync(join(dir, 'dist'), join(partial, 'dist'), { recursive: true });
    renameSync(partial, target);
  } catch {
    rmSync(partial, { recursive: true, force: true });
    return;
  }
  const entries = readdirSync(CACHE).map((entry) => ({ name: entry, at: statSync(join(CACHE, entry)).mtimeMs }));
  const kept = entries.filter((entry) => !entry.name.startsWith('.')).sort((a, b) => b.at - a.at);
  // The oldest kept builds, and copies a run stopped half-way (an hour old: no run still writes them).
  const stale = [...kept.slice(KEEP), ...entries.filter((entry) => entry.name.startsWith('.') && entry.at < Date.now() - 3_600_000)];
  for (const old of stale) rmSync(join(CACHE, old.name), { recursive: true, force: true });
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** Folder of the package copy being built: package.json, dist/ (once packageCopyReady resolves), a node_modules link. */
    packageCopy: string;
  }
}
