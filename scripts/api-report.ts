// The API report: the public surface of every entry in package.json "exports", read from the
// built ESM .d.ts (dist/, `npm run build`) with the TypeScript compiler API and written to
// api/<entry>.api.md, one file per entry, committed. A change to the public API is then a
// reviewed diff of those files, never an accident (CONTRIBUTING.md, "Public API changes").
//
// Each report lists the entry's exports sorted by name, each with its declaration as printed
// by the compiler (comments and JSDoc stripped), then the declarations those refer to that the
// entry does not export (a type a signature names but no import can reach), sorted too. tsup's
// hashed chunk files (dist/payments-XXXX.d.ts) and their one-letter aliases are resolved away:
// the report names only the declarations, so it is the same for the same public API.
//
//   node scripts/api-report.ts --check    regenerate into a temp dir, exit 1 on any difference
//   node scripts/api-report.ts --update   rewrite api/*.api.md
// (`npm run api:check` / `npm run api:update` build dist/ first.)
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export interface ReportEntry {
  /** The import specifier, e.g. `business-payments/fulfillment/postgres`. */
  specifier: string;
  /** Absolute path of the entry's .d.ts. */
  file: string;
  /** The path shown in the report's header (relative, no machine-specific part). */
  shownPath: string;
}

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });

/** A top-level declaration: its statement is a direct child of the source file. */
function topLevelStatement(declaration: ts.Declaration): ts.Statement | undefined {
  let node: ts.Node = declaration;
  if (ts.isVariableDeclaration(node)) node = node.parent.parent;
  return node.parent && ts.isSourceFile(node.parent) ? (node as ts.Statement) : undefined;
}

function printDeclaration(declaration: ts.Declaration): string {
  const file = declaration.getSourceFile();
  if (ts.isVariableDeclaration(declaration)) {
    const flags = declaration.parent.flags;
    const keyword = flags & ts.NodeFlags.Const ? 'const' : flags & ts.NodeFlags.Let ? 'let' : 'var';
    return `declare ${keyword} ${printer.printNode(ts.EmitHint.Unspecified, declaration, file)};`;
  }
  return printer.printNode(ts.EmitHint.Unspecified, declaration, file);
}

function resolveAlias(checker: ts.TypeChecker, symbol: ts.Symbol): ts.Symbol {
  return symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
}

/** The local name a symbol is declared with (tsup's chunks export them under one-letter aliases). */
function localName(symbol: ts.Symbol): string {
  const declaration = symbol.declarations?.[0];
  const name = declaration && ts.getNameOfDeclaration(declaration);
  return name && ts.isIdentifier(name) ? name.text : symbol.name;
}

/** The top-level declarations of the built files (not node_modules, not lib) a declaration refers to. */
function referencedSymbols(checker: ts.TypeChecker, declaration: ts.Declaration, isOwn: (file: ts.SourceFile) => boolean) {
  const found = new Set<ts.Symbol>();
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node)) {
      const symbol = checker.getSymbolAtLocation(node);
      if (symbol) {
        const target = resolveAlias(checker, symbol);
        const declarations = target.declarations ?? [];
        if (declarations.length > 0 && declarations.every((d) => isOwn(d.getSourceFile()) && topLevelStatement(d))) found.add(target);
      }
    }
    ts.forEachChild(node, visit);
  };
  ts.forEachChild(declaration, visit);
  return found;
}

function sortedBlocks(blocks: Array<{ name: string; text: string }>): string[] {
  return blocks
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.text < b.text ? -1 : a.text > b.text ? 1 : 0))
    .map((block) => block.text);
}

function reportOne(program: ts.Program, entry: ReportEntry, isOwn: (file: ts.SourceFile) => boolean): string {
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry.file);
  const moduleSymbol = source && checker.getSymbolAtLocation(source);
  if (!moduleSymbol) throw new Error(`${entry.shownPath}: not found, or not a module (run \`npm run build\`)`);

  const exported = new Set<ts.Symbol>();
  const exportBlocks: Array<{ name: string; text: string }> = [];
  const queue: ts.Symbol[] = [];
  for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
    const target = resolveAlias(checker, symbol);
    exported.add(target);
    const declarations = target.declarations ?? [];
    const parts = declarations.map(printDeclaration);
    const local = localName(target);
    if (local !== symbol.name) parts.push(`export { ${local} as ${symbol.name} };`);
    if (declarations.length === 0) parts.push(`export { ${symbol.name} }; // no declaration found`);
    exportBlocks.push({ name: symbol.name, text: parts.join('\n') });
    for (const declaration of declarations) queue.push(...referencedSymbols(checker, declaration, isOwn));
  }

  const seen = new Set<ts.Symbol>();
  const referencedBlocks: Array<{ name: string; text: string }> = [];
  while (queue.length > 0) {
    const symbol = queue.shift()!;
    if (exported.has(symbol) || seen.has(symbol)) continue;
    seen.add(symbol);
    const declarations = symbol.declarations ?? [];
    referencedBlocks.push({ name: localName(symbol), text: declarations.map(printDeclaration).join('\n') });
    for (const declaration of declarations) queue.push(...referencedSymbols(checker, declaration, isOwn));
  }

  const lines = [
    `# API report: \`${entry.specifier}\``,
    '',
    `<!-- Generated from ${entry.shownPath} by \`npm run api:update\`; \`npm run api:check\` (in .ci/run) fails when it differs. Do not edit. -->`,
    '',
    '## Exports',
    '',
    '```ts',
    sortedBlocks(exportBlocks).join('\n\n'),
    '```',
  ];
  if (referencedBlocks.length > 0)
    lines.push('', '## Referenced, not exported', '', '```ts', sortedBlocks(referencedBlocks).join('\n\n'), '```');
  // The printer indents with four spaces; trailing spaces never carry meaning.
  return `${lines.join('\n').replace(/[ \t]+$/gm, '')}\n`;
}

/** The reports of the given entries, from one program over their .d.ts files. Pure: reads only. */
export function buildApiReports(entries: ReportEntry[], ownDir: string): Map<string, string> {
  const program = ts.createProgram(
    entries.map((entry) => entry.file),
    {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: [],
    },
  );
  const own = resolve(ownDir) + sep;
  const isOwn = (file: ts.SourceFile) => resolve(file.fileName).startsWith(own) && !file.fileName.includes('/node_modules/');
  return new Map(entries.map((entry) => [entry.specifier, reportOne(program, entry, isOwn)]));
}

/** The report file's name for an import specifier: `business-payments/fulfillment/postgres` → `fulfillment-postgres.api.md`. */
export function reportFileName(specifier: string, packageName: string): string {
  const subpath = specifier === packageName ? 'index' : specifier.slice(packageName.length + 1);
  return `${subpath.replaceAll('/', '-')}.api.md`;
}

/** A line diff in unified style (3 lines of context), or '' when the texts are equal. */
export function diffLines(expected: string, actual: string, label = 'report'): string {
  if (expected === actual) return '';
  const a = expected.split('\n');
  const b = actual.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  // Longest common subsequence over the differing middle only.
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const lcs = Array.from({ length: midA.length + 1 }, () => new Uint32Array(midB.length + 1));
  for (let i = midA.length - 1; i >= 0; i--)
    for (let j = midB.length - 1; j >= 0; j--)
      lcs[i]![j] = midA[i] === midB[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const ops: Array<{ op: ' ' | '-' | '+'; line: string; ia: number; ib: number }> = [];
  for (let k = 0; k < start; k++) ops.push({ op: ' ', line: a[k]!, ia: k, ib: k });
  let i = 0;
  let j = 0;
  while (i < midA.length || j < midB.length) {
    if (i < midA.length && j < midB.length && midA[i] === midB[j]) {
      ops.push({ op: ' ', line: midA[i]!, ia: start + i, ib: start + j });
      i++;
      j++;
    } else if (i < midA.length && (j === midB.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      ops.push({ op: '-', line: midA[i]!, ia: start + i, ib: start + j });
      i++;
    } else {
      ops.push({ op: '+', line: midB[j]!, ia: start + i, ib: start + j });
      j++;
    }
  }
  for (let k = 0; k < a.length - endA; k++) ops.push({ op: ' ', line: a[endA + k]!, ia: endA + k, ib: endB + k });

  const out = [`--- ${label} (committed)`, `+++ ${label} (current build)`];
  const changed = ops.map((o, index) => (o.op === ' ' ? -1 : index)).filter((index) => index >= 0);
  let k = 0;
  while (k < changed.length) {
    let last = k;
    while (last + 1 < changed.length && changed[last + 1]! - changed[last]! <= 7) last++;
    const from = Math.max(0, changed[k]! - 3);
    const to = Math.min(ops.length, changed[last]! + 4);
    const hunk = ops.slice(from, to);
    const lenA = hunk.filter((o) => o.op !== '+').length;
    const lenB = hunk.filter((o) => o.op !== '-').length;
    out.push(`@@ -${hunk[0]!.ia + 1},${lenA} +${hunk[0]!.ib + 1},${lenB} @@`);
    for (const o of hunk) out.push(`${o.op}${o.line}`);
    k = last + 1;
  }
  return out.join('\n');
}

/** Every entry of package.json "exports" with ESM types, as a ReportEntry. */
export function packageEntries(root: string): ReportEntry[] {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, string | { import?: { types?: string } }>;
  };
  return Object.entries(manifest.exports).flatMap(([subpath, target]) => {
    const types = typeof target === 'object' ? target.import?.types : undefined;
    if (!types) return []; // ./package.json
    const specifier = subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`;
    return [{ specifier, file: resolve(root, types), shownPath: types.replace(/^\.\//, '') }];
  });
}

/** The reports of this package's entries, keyed by file name (`index.api.md`…). */
export function packageReports(root: string): Map<string, string> {
  const { name } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string };
  const reports = buildApiReports(packageEntries(root), join(root, 'dist'));
  return new Map([...reports].map(([specifier, text]) => [reportFileName(specifier, name), text]));
}

function main(args: string[]): number {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const apiDir = join(root, 'api');
  const mode = args[0];
  if (mode !== '--check' && mode !== '--update') {
    console.error('usage: node scripts/api-report.ts --check | --update');
    return 2;
  }
  const started = performance.now();
  const reports = packageReports(root);
  if (mode === '--update') {
    mkdirSync(apiDir, { recursive: true });
    for (const name of readdirSync(apiDir)) if (name.endsWith('.api.md') && !reports.has(name)) rmSync(join(apiDir, name));
    for (const [name, text] of reports) writeFileSync(join(apiDir, name), text);
    console.log(`api: wrote ${reports.size} reports to ${relative(root, apiDir)}/`);
    return 0;
  }
  // --check: the current reports into a temp dir (to look at), compared with the committed ones.
  const temp = mkdtempSync(join(tmpdir(), 'business-payments-api-'));
  let committedNames: string[] = [];
  try {
    committedNames = readdirSync(apiDir).filter((name) => name.endsWith('.api.md'));
  } catch {
    // no api/ yet: every report is new
  }
  const problems: string[] = [];
  for (const [name, text] of reports) {
    mkdirSync(dirname(join(temp, name)), { recursive: true });
    writeFileSync(join(temp, name), text);
    const committed = committedNames.includes(name) ? readFileSync(join(apiDir, name), 'utf8') : undefined;
    if (committed === undefined) problems.push(`api/${name}: missing (a new entry?)`);
    else if (committed !== text) problems.push(diffLines(committed, text, `api/${name}`));
  }
  for (const name of committedNames)
    if (!reports.has(name)) problems.push(`api/${name}: committed, but no entry of package.json "exports" produces it`);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (problems.length === 0) {
    rmSync(temp, { recursive: true, force: true });
    console.log(`api: ${reports.size} reports match the build (${seconds} s)`);
    return 0;
  }
  console.error(problems.join('\n\n'));
  console.error(
    `\napi: the public API differs from the committed report (current reports in ${temp}).\n` +
      'If the change is intended, run `npm run api:update` and commit api/ with it, so the change is reviewed.',
  );
  return 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2));
