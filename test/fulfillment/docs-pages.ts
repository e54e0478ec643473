// The machinery of docs-sample.test.ts, for any page of docs/ whose ```ts blocks are files,
// each named by its first line (`// lib/fulfillment.ts`; `@/` is the app's root, as in
// Next.js): the page read; its blocks type-checked together under `strict`,
// `exactOptionalPropertyTypes` and `noUncheckedIndexedAccess` (the package resolved to its
// source); written out as modules (`pg`'s Pool standing in as the pool given to standIn) and
// imported one by one, against the local sandbox (createMockService on a real port). A block
// marked `<!-- not run: <why> -->` right above it is type-checked only.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { expect } from 'vitest';
import { createMockService, signWebhook } from '../../src/testing.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** A ```ts block of a page: the file it is (its first line), where it starts, whether it runs. */
interface Block {
  file: string;
  code: string;
  /** The page's line number of the block's first line of code. */
  line: number;
  /** The reason given in `<!-- not run: … -->`, when it is not run. */
  notRun?: string;
}

/** A page of docs/, as the tests read it. */
export interface Page {
  /** From the repository's root: `docs/fulfillment.md`. */
  path: string;
  blocks: Block[];
  /** The blocks by the file each is. */
  files: Map<string, Block>;
  /** Its ```sql blocks, in order. */
  sql: string[];
  /** Where its samples are written: `.cache/docs-samples/<page>/`. */
  dir: string;
}

export function readPage(path: string): Page {
  const lines = readFileSync(join(root, path), 'utf8').split('\n');
  const blocks: Block[] = [];
  const sql: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\w+)\s*$/.exec(lines[i]!);
    if (!fence) continue;
    const end = lines.indexOf('```', i + 1);
    if (end < 0) throw new Error(`${path}:${i + 1}: a code block that never ends`);
    const code = lines.slice(i + 1, end).join('\n') + '\n';
    if (fence[1] === 'sql') sql.push(code);
    if (fence[1] === 'ts') {
      let above = i - 1;
      while (above >= 0 && lines[above]!.trim() === '') above--;
      const notRun = /^<!-- not run: (.+?) -->$/.exec(lines[above] ?? '')?.[1];
      const file = /^\/\/ ([\w@[\]./-]+\.ts)\b/.exec(lines[i + 1]!)?.[1];
      if (!file) throw new Error(`${path}:${i + 2}: a ts block must start with the file it is, e.g. "// lib/fulfillment.ts"`);
      blocks.push({ file, code, line: i + 2, ...(notRun ? { notRun } : {}) });
    }
    i = end;
  }
  const dir = join(root, '.cache', 'docs-samples', basename(path, '.md'));
  return { path, blocks, files: new Map(blocks.map((block) => [block.file, block])), sql, dir };
}

/** The package's entries as the samples import them, resolved to the source. */
const ENTRIES: Record<string, string> = {
  'business-payments': 'src/index.ts',
  'business-payments/fulfillment': 'src/fulfillment.ts',
  'business-payments/fulfillment/postgres': 'src/fulfillment-postgres.ts',
  'business-payments/fulfillment/redis': 'src/fulfillment-redis.ts',
  'business-payments/fulfillment/pg-boss': 'src/fulfillment-pg-boss.ts',
  'business-payments/fulfillment/bullmq': 'src/fulfillment-bullmq.ts',
  'business-payments/webhooks': 'src/webhooks.ts',
  'business-payments/payouts': 'src/payouts.ts',
  'business-payments/billing': 'src/billing.ts',
  'business-payments/testing': 'src/testing.ts',
};

/**
 * The page's blocks type-checked together as the files they are: the diagnostics, each at its
 * line of the page. `extra` (file → code) adds files of the test's own beside them (what the
 * blocks import and this repository does not install); for a block's file, the code is
 * appended to the block (a check of what it declares).
 */
export function typecheck(page: Page, extra: Record<string, string> = {}): string[] {
  const project = join(page.dir, 'types');
  rmSync(project, { recursive: true, force: true });
  const files = { ...extra, ...Object.fromEntries(page.blocks.map((block) => [block.file, block.code + (extra[block.file] ?? '')])) };
  for (const [file, code] of Object.entries(files)) {
    mkdirSync(dirname(join(project, file)), { recursive: true });
    writeFileSync(join(project, file), code);
  }
  const options: ts.CompilerOptions = {
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    noImplicitOverride: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    types: ['node'],
    typeRoots: [join(root, 'node_modules/@types')],
    esModuleInterop: true,
    skipLibCheck: true,
    noEmit: true,
    paths: {
      '@/*': [`${project}/*`],
      ...Object.fromEntries(Object.entries(ENTRIES).map(([name, path]) => [name, [join(root, path)]])),
    },
  };
  const program = ts.createProgram(
    Object.keys(files).map((file) => join(project, file)),
    options,
  );
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => !d.file || d.file.fileName.startsWith(project))
    .map((d) => {
      const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line : undefined;
      const block = d.file && page.blocks.find((b) => join(project, b.file) === d.file!.fileName);
      let at = d.file?.fileName ?? '';
      if (block && where !== undefined) {
        at = `${page.path}:${block.line + where} (${block.file})`;
        // Past the block's lines: the test's check appended to it, the line it failed on.
        if (where >= block.code.split('\n').length - 1)
          at = `the test's check of ${block.file} (${d.file!.text.split('\n')[where]!.trim()})`;
      }
      return `${at}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
    });
}

/**
 * The page's blocks written out as modules in `run` (`@/`, `pg` and the package resolved
 * here), to import one by one: `load` imports the block that is `file` (refusing one the page
 * marks not run), `unrun` lists the blocks that should have run and did not.
 */
export function samples(page: Page, run: string) {
  rmSync(run, { recursive: true, force: true });
  for (const block of page.blocks) {
    const file = join(run, block.file);
    mkdirSync(dirname(file), { recursive: true });
    const code = block.code
      .replace(/from '@\/([\w./[\]-]+)'/g, (_, path: string) => `from '${join(run, path)}.ts'`)
      .replace(/from 'pg'/g, `from '${join(run, 'pg-stand-in.ts')}'`)
      .replace(/from '(business-payments[\w/-]*)'/g, (_, name: string) => `from '${join(root, ENTRIES[name]!)}'`);
    writeFileSync(file, code);
  }
  // pg's Pool, as `new pg.Pool(…)` makes it: the pool given to standIn.
  writeFileSync(
    join(run, 'pg-stand-in.ts'),
    'export default { Pool: class { constructor() { return (globalThis as unknown as { __docsPool: object }).__docsPool; } } };\n',
  );
  const ran = new Set<string>();
  return {
    /** Imports a block: the module the page's file is. */
    async load<T>(file: string): Promise<T> {
      const block = page.files.get(file);
      if (!block) throw new Error(`${page.path} has no block "// ${file}"`);
      if (block.notRun) throw new Error(`${page.path}: "// ${file}" is marked not run, but the test runs it`);
      ran.add(file);
      return (await import(join(run, file))) as T;
    },
    /** The page's blocks that did not run, but for those it says why. */
    unrun: () => page.blocks.filter((block) => !block.notRun && !ran.has(block.file)).map((block) => block.file),
  };
}

/** What `new pg.Pool(…)` gives the samples, from now on (a pool over PGlite). */
export function standIn(pool: object): void {
  (globalThis as unknown as { __docsPool: object }).__docsPool = pool;
}

export async function until(what: string, predicate: () => Promise<boolean> | boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Where the samples' payments send their webhooks (the sandbox delivers them to `deliver`). */
export const WEBHOOK_URL = 'https://shop.example.com/api/webhooks/payments';

/**
 * The local sandbox of one generation on a real port, its webhooks handed to `deliver`, and
 * its production credentials in the BUSINESS_PAYMENTS_* variables the samples read (over
 * loopback http) until `close`.
 */
export async function openSandbox(generation: 'current' | 'earlier', deliver: (request: Request) => Promise<Response>) {
  const earlier = generation === 'earlier';
  const env = { ...process.env };
  const clock = { offset: 0 }; // the sandbox's clock against ours: payments made "20 minutes ago"
  const mock = createMockService({
    generation,
    now: () => Date.now() + clock.offset,
    toleranceSeconds: 3_600,
    fetch: (input, init) => deliver(new Request(input, init)),
  });
  const server = await mock.listen({ port: 0 });
  const { production } = mock.credentials;
  Object.assign(process.env, {
    BUSINESS_PAYMENTS_ENVIRONMENT: 'production',
    BUSINESS_PAYMENTS_BASE_URL: server.url,
    BUSINESS_PAYMENTS_MERCHANT_KEY: production.merchantKey,
    BUSINESS_PAYMENTS_API_KEY: production.apiKey,
    BUSINESS_PAYMENTS_API_SECRET: production.apiSecret,
    // The earlier generation has no webhook secret: the pages say to pass the API secret (the sandbox's webhookSecret there).
    BUSINESS_PAYMENTS_WEBHOOK_SECRET: production.webhookSecret,
  });
  if (earlier) expect(production.webhookSecret).toBe(production.apiSecret);
  return {
    earlier,
    mock,
    production,
    clock,
    /** The sandbox's delivery of the payment, signed afresh as the service signs it (or with another secret). */
    delivery(trxId: string, other?: string) {
      const event = mock.state.events.find((e) => (e.payload.data as { trx_id?: string } | undefined)?.trx_id === trxId)!;
      return earlier
        ? signWebhook({ format: 'legacy', payload: event.body, secret: other ?? production.apiSecret })
        : signWebhook({ payload: event.body, secret: other ?? production.webhookSecret, environment: 'production' });
    },
    async close() {
      await mock.close();
      process.env = env;
    },
  };
}

/** What a page's run works on: its app, which closes, and knows which blocks it ran. */
export interface App {
  /** The page's blocks that did not run, but for those it says why. */
  unrun(): string[];
  close(): Promise<void>;
}

/**
 * Opens the app, takes it through the steps in order (each on the app as the steps before left
 * it), checks that every block the page does not mark "not run" ran, and closes it. A run that
 * hangs (a claim that never comes back, say) says where.
 */
export async function runSteps<T extends App>(open: () => Promise<T>, steps: Array<[string, (app: T) => Promise<void>]>, ms: number) {
  let at = 'opening the app';
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the run hung at: ${at}`)), ms);
  });
  let app: T | undefined;
  try {
    await Promise.race([
      (async () => {
        app = await open();
        for (const [name, step] of steps) {
          at = name;
          await step(app);
        }
      })(),
      hung,
    ]);
    expect(app!.unrun()).toEqual([]);
  } finally {
    clearTimeout(timer);
    await app?.close();
  }
}
