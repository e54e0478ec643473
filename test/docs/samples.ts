// The code the docs show, as samples.test.ts reads it: every ```ts and ```js block of README.md
// and docs/*.md (but for the pages whose blocks are files, run by their own tests), and every
// `@example` of the JSDoc of the package's public entries. Each is a module of its own,
// type-checked in ONE program under `strict`, `exactOptionalPropertyTypes` and
// `noUncheckedIndexedAccess` (the package resolved to its source), beside declarations.ts:
// what a snippet uses without declaring it (`client`, `params`, `req`, …; see context.ts). A block
// that uses none of those, or only ones the test can stand in for, runs (samples.test.ts).
//
// Markers, on the lines right above a block's fence (in a JSDoc comment: between `@example`
// and the fence):
// - `<!-- not run: <why> -->` (or `<!-- types only: <why> -->`): type-checked only;
// - `<!-- sandbox: earlier -->`: it runs against a sandbox of the earlier generation.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import ts from 'typescript';

export const root = fileURLToPath(new URL('../../', import.meta.url));
// This process's own folder: another run of the suite in the same checkout has its own.
const cacheRoot = join(root, '.cache', 'docs-samples');
const cache = join(cacheRoot, `snippets-${process.pid}`);

/** Removes this process's folder, and those of runs that are gone (a crash leaves one). */
export function removeCache(): void {
  rmSync(cache, { recursive: true, force: true });
  if (!existsSync(cacheRoot)) return;
  for (const name of readdirSync(cacheRoot)) {
    const pid = Number(/^snippets-(\d+)$/.exec(name)?.[1]);
    if (!pid) continue;
    try {
      process.kill(pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') rmSync(join(cacheRoot, name), { recursive: true, force: true });
    }
  }
}

/** The package's entries as the samples import them, resolved to the source. */
const ENTRIES: Record<string, string> = {
  'business-payments': 'src/index.ts',
  'business-payments/webhooks': 'src/webhooks.ts',
  'business-payments/testing': 'src/testing.ts',
  'business-payments/doctor': 'src/doctor.ts',
  'business-payments/fulfillment': 'src/fulfillment.ts',
  'business-payments/fulfillment/postgres': 'src/fulfillment-postgres.ts',
  'business-payments/fulfillment/redis': 'src/fulfillment-redis.ts',
  'business-payments/fulfillment/pg-boss': 'src/fulfillment-pg-boss.ts',
  'business-payments/fulfillment/bullmq': 'src/fulfillment-bullmq.ts',
  'business-payments/payouts': 'src/payouts.ts',
  'business-payments/billing': 'src/billing.ts',
};

/** One block of a page, or one `@example`. */
export interface Sample {
  /** The file it is written in, from the repository's root: `README.md`, `src/client.ts`. */
  source: string;
  /** The line, in that file, of its first line of code. */
  line: number;
  /** `source:line`, as a failure names it. */
  at: string;
  lang: 'ts' | 'js';
  code: string;
  /** The reason `<!-- not run: … -->` (or `<!-- types only: … -->`) gives. */
  notRun?: string;
  /** The sandbox it runs against (`<!-- sandbox: earlier -->`). */
  generation: 'current' | 'earlier';
  /** Its module, from the cache's folder: `docs_webhooks.md/L41.ts`. */
  module: string;
}

const TS = new Set(['ts', 'typescript', 'mts', 'cts']);
const JS = new Set(['js', 'javascript', 'mjs', 'cjs']);

/** The markers on the lines above a fence (nearest last), into the sample. */
function markers(above: string[], at: string): Pick<Sample, 'notRun' | 'generation'> {
  const found: Pick<Sample, 'notRun' | 'generation'> = { generation: 'current' };
  for (const line of above) {
    const marker = /^<!-- (not run|types only|sandbox): (.+?) -->$/.exec(line.trim());
    if (!marker) throw new Error(`${at}: not a marker a sample understands: ${line.trim()}`);
    if (marker[1] === 'sandbox') {
      if (marker[2] !== 'earlier' && marker[2] !== 'current') throw new Error(`${at}: <!-- sandbox: current|earlier -->`);
      found.generation = marker[2];
    } else found.notRun = marker[2]!;
  }
  return found;
}

function sample(source: string, line: number, lang: string, lines: string[], above: string[]): Sample {
  const at = `${source}:${line}`;
  const js = JS.has(lang);
  return {
    source,
    line,
    at,
    lang: js ? 'js' : 'ts',
    code: lines.join('\n') + '\n',
    ...markers(above, at),
    module: `${source.replace(/\//g, '_')}/L${line}.${js ? 'js' : 'ts'}`,
  };
}

/** The ```ts and ```js blocks of a markdown page (every other fence skipped whole). */
export function pageSamples(path: string): Sample[] {
  const lines = readFileSync(join(root, path), 'utf8').split('\n');
  const found: Sample[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\w*)/.exec(lines[i]!);
    if (!fence) continue;
    const end = lines.indexOf('```', i + 1);
    if (end < 0) throw new Error(`${path}:${i + 1}: a code block that never ends`);
    const lang = fence[1]!.toLowerCase();
    if (lang === 'tsx' || lang === 'jsx') throw new Error(`${path}:${i + 1}: a ${lang} block, which the samples test cannot check yet`);
    if (TS.has(lang) || JS.has(lang)) {
      // The markers above it (blank lines between allowed).
      const above: string[] = [];
      for (let a = i - 1; a >= 0 && /^(<!-- .* -->)?$/.test(lines[a]!.trim()); a--) if (lines[a]!.trim()) above.unshift(lines[a]!);
      found.push(sample(path, i + 2, lang, lines.slice(i + 1, end), above));
    }
    i = end;
  }
  return found;
}

/** The `@example` blocks of a source file's JSDoc, each line without its ` * `. */
export function exampleSamples(path: string): Sample[] {
  const lines = readFileSync(join(root, path), 'utf8').split('\n');
  const bare = (line: string) => line.replace(/^\s*\*( |$)/, '');
  const found: Sample[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*\*\s*@example\b/.test(lines[i]!)) continue;
    const above: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^```/.test(bare(lines[j]!)); j++) {
      if (/^\s*\*\/|^\s*\*\s*@\w+/.test(lines[j]!)) throw new Error(`${path}:${i + 1}: an @example without a fenced block`);
      if (bare(lines[j]!).trim()) above.push(bare(lines[j]!));
    }
    const lang = /^```(\w+)\s*$/.exec(bare(lines[j] ?? ''))?.[1];
    if (!lang || !(TS.has(lang) || JS.has(lang))) throw new Error(`${path}:${j + 1}: an @example's block must be \`\`\`ts or \`\`\`js`);
    let end = j + 1;
    while (end < lines.length && bare(lines[end]!).trim() !== '```') end++;
    if (end === lines.length) throw new Error(`${path}:${j + 1}: an @example's block that never ends`);
    found.push(sample(path, j + 2, lang, lines.slice(j + 1, end).map(bare), above));
    i = end;
  }
  return found;
}

/** Every `.md` page the docs are: README.md and docs/*.md. */
export function pages(): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

/** Every `.ts` file under src/ that has an `@example`. */
export function sourcesWithExamples(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(`${dir}/${entry.name}`) : entry.name.endsWith('.ts') ? [`${dir}/${entry.name}`] : [],
    );
  return walk('src')
    .filter((path) => /@example\b/.test(readFileSync(join(root, path), 'utf8')))
    .sort();
}

/** What the one program found. */
export interface Checked {
  /** Each diagnostic, at `source:line` (or in declarations.ts), with the file it is in (`source`). */
  diagnostics: Array<{ source: string; text: string }>;
  /** The names of declarations.ts (values only) each sample uses, by its `at`. */
  uses: Map<string, string[]>;
  /** The source files the public entries reach (an `@example` elsewhere is not public JSDoc). */
  reached: Set<string>;
  /** Where the modules are written to run: the package's names resolved to its source. */
  runDir: string;
}

/**
 * Every sample type-checked in one program, with declarations.ts (`declarations`) beside them, and
 * written out to run. Only the samples' own files are checked (and declarations.ts): the
 * package's source is read for its types, not checked again.
 */
function check(samples: Sample[], declarations: string): Checked {
  const typesDir = join(cache, 'types');
  const runDir = join(cache, 'run');
  removeCache();
  const write = (dir: string, file: string, code: string) => {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), code);
  };
  for (const s of samples) {
    // Each a module of its own (its names its own; top-level await), its lines where they are.
    const code = `${s.code}export {};\n`;
    write(typesDir, s.module, code);
    write(
      runDir,
      s.module,
      code.replace(/(from |import\()'(business-payments(?:\/[\w/]+)?)'/g, (whole, head: string, name: string) =>
        ENTRIES[name] ? `${head}'${join(root, ENTRIES[name])}'` : whole,
      ),
    );
  }
  write(typesDir, 'declarations.ts', declarations);
  const options: ts.CompilerOptions = {
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    noImplicitOverride: true,
    allowJs: true,
    checkJs: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    // Node's globals (fetch, Request, Response), not the DOM's (its `event` global, say).
    lib: ['lib.es2023.d.ts'],
    types: ['node'],
    typeRoots: [join(root, 'node_modules/@types')],
    esModuleInterop: true,
    skipLibCheck: true,
    noEmit: true,
    paths: Object.fromEntries(Object.entries(ENTRIES).map(([name, path]) => [name, [join(root, path)]])),
  };
  const files = samples.map((s) => join(typesDir, s.module));
  const contextFile = join(typesDir, 'declarations.ts');
  const program = ts.createProgram([...files, contextFile, ...Object.values(ENTRIES).map((path) => join(root, path))], options);
  const checker = program.getTypeChecker();
  const bySample = new Map(samples.map((s) => [join(typesDir, s.module), s]));

  const where = (d: ts.Diagnostic) => {
    if (!d.file || d.start === undefined) return { source: 'the program', at: 'the program' };
    const line = d.file.getLineAndCharacterOfPosition(d.start).line;
    const s = bySample.get(d.file.fileName);
    if (!s) return { source: relative(root, d.file.fileName), at: `${relative(root, d.file.fileName)}:${line + 1}` };
    return { source: s.source, at: `${s.source}:${s.line + Math.min(line, s.code.split('\n').length - 2)}` };
  };
  const diagnostics = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...[...files, contextFile].flatMap((file) => {
      const source = program.getSourceFile(file)!;
      return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
    }),
  ].map((d) => {
    const { source, at } = where(d);
    return { source, text: `${at}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}` };
  });

  // The names of declarations.ts each sample uses as values (a type it names needs no stand-in).
  const declared = program.getSourceFile(contextFile)!;
  const uses = new Map<string, string[]>();
  for (const file of files) {
    const names = new Set<string>();
    const visit = (node: ts.Node) => {
      if (ts.isIdentifier(node)) {
        const symbol = ts.isShorthandPropertyAssignment(node.parent)
          ? checker.getShorthandAssignmentValueSymbol(node.parent)
          : checker.getSymbolAtLocation(node);
        if (symbol && symbol.flags & ts.SymbolFlags.Variable && symbol.declarations?.some((d) => d.getSourceFile() === declared))
          names.add(symbol.name);
      }
      ts.forEachChild(node, visit);
    };
    visit(program.getSourceFile(file)!);
    uses.set(bySample.get(file)!.at, [...names].sort());
  }
  const reached = new Set(
    program
      .getSourceFiles()
      .map((source) => relative(root, source.fileName))
      .filter((path) => path.startsWith('src/')),
  );
  return { diagnostics, uses, reached, runDir };
}

/** The short name of a sample's source, for the refs its runs make: `webhooks-L41`. */
export function slug(s: Sample): string {
  const name = basename(s.source).replace(/\.(md|ts)$/, '');
  return `${name.replace(/[^\w-]/g, '-')}-L${s.line}`;
}

/**
 * {@link check} in a worker thread (this file, run by Node with its types stripped): the
 * program, slow and synchronous, is built while this thread goes on (PGlite starting, say).
 * Where the worker cannot run, on this thread.
 */
export function checkInWorker(samples: Sample[], declarations: string): Promise<Checked> {
  return new Promise<Checked>((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: { docsSamples: { samples, declarations } } });
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the type-check worker exited (${code}) without an answer`)));
  }).catch(() => check(samples, declarations));
}

if (!isMainThread && (workerData as { docsSamples?: unknown } | null)?.docsSamples) {
  const { samples, declarations } = (workerData as { docsSamples: { samples: Sample[]; declarations: string } }).docsSamples;
  parentPort!.postMessage(check(samples, declarations));
}
