// Runs before each test file (vitest.config.ts, setupFiles). With `isolate: false` a worker
// runs file after file in one process, so what a file changed of the process and did not put
// back would reach the next file. This puts back what the process had before the worker's
// first file: process.env (the object and its values: some tests assign it, or set variables
// by hand), the working directory, and real timers. vi.stubEnv and vi.stubGlobal need none of
// it (unstubEnvs and unstubGlobals undo them after each test).
//
// And the modules: each file imports the sources afresh (vi.resetModules(), as isolation
// did), so no module state (a cached node:crypto, a pacer, a warned-once flag) carries over.
// What stays loaded is what Node itself imported: the dependencies in node_modules (zod, msw,
// PGlite, TypeScript…), which is most of what a file used to spend importing.
import { vi } from 'vitest';

interface Pristine {
  env: NodeJS.ProcessEnv;
  values: Record<string, string | undefined>;
  cwd: string;
}

const KEY = Symbol.for('business-payments.test.pristine-process');
const store = globalThis as { [KEY]?: Pristine };
const pristine = (store[KEY] ??= { env: process.env, values: { ...process.env }, cwd: process.cwd() });

if (process.env !== pristine.env) process.env = pristine.env;
for (const name of Object.keys(process.env)) if (!(name in pristine.values)) delete process.env[name];
for (const [name, value] of Object.entries(pristine.values)) if (process.env[name] !== value) process.env[name] = value;
if (process.cwd() !== pristine.cwd) process.chdir(pristine.cwd);
vi.useRealTimers();
vi.resetModules();
