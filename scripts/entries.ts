// `npm run entries`: entries.json (the package's entry points, the one list) written into the
// JSON files that cannot read it: package.json (exports, main, module, types, typesVersions,
// bin), tsconfig.json (compilerOptions.paths) and typedoc.json (entryPoints). Nothing else in
// them is touched; each is written as Prettier formats it. test/package/entries.test.ts fails
// when one of them differs from what this writes. Adding an entry: one line in entries.json,
// then `npm run entries`.
//
//   node scripts/entries.ts           rewrite the files that differ
//   node scripts/entries.ts --check   exit 1, naming each file that differs
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import list from '../entries.json' with { type: 'json' };

/** One entry point of the package, as entries.json lists it. */
export interface Entry {
  /** The import specifier: `business-payments/fulfillment/postgres`. */
  specifier: string;
  /** The source file: `src/fulfillment-postgres.ts`. */
  source: string;
  /** The name in dist/: `fulfillment/postgres` (dist/fulfillment/postgres.js, .cjs, .d.ts, .d.cts). */
  dist: string;
  /** `apart`: built on its own, with the package external (tsup.config.ts). */
  build?: string;
}

/** The package's entries, in the order package.json "exports" lists them. */
export const ENTRIES: readonly Entry[] = list.entries;
/** The bin: its command, source file and name in dist/ (ESM only). */
export const BIN = list.bin;

/** The files this writes, relative to the root. */
export const WRITTEN = ['package.json', 'tsconfig.json', 'typedoc.json'] as const;

const built = (dist: string, extension: '.js' | '.cjs' | '.d.ts' | '.d.cts') => `./dist/${dist}${extension}`;

/** The "exports" key of an entry of package `name`: `.`, `./webhooks`. */
function subpath(entry: Entry, name: string): string {
  return entry.specifier === name ? '.' : `./${entry.specifier.slice(name.length + 1)}`;
}

/** What is wrong with the list itself (empty when nothing): checked before anything is written. */
export function listProblems(root: string, name: string): string[] {
  const problems: string[] = [];
  const once = (what: keyof Entry) => {
    const seen = ENTRIES.map((entry) => entry[what]);
    for (const value of new Set(seen)) if (seen.indexOf(value) !== seen.lastIndexOf(value)) problems.push(`${what} ${value}: listed twice`);
  };
  (['specifier', 'source', 'dist'] as const).forEach(once);
  if (!ENTRIES.some((entry) => entry.specifier === name)) problems.push(`no entry for the package itself (${name})`);
  for (const entry of ENTRIES) {
    // Letters, digits and `-` between the slashes: the specifier is also a RegExp (vitest.config.ts).
    if (!new RegExp(`^${name}(/[a-z0-9-]+)*$`).test(entry.specifier)) problems.push(`${entry.specifier}: not ${name}[/<a-z0-9->]…`);
    if (!/^[a-z0-9-]+(\/[a-z0-9-]+)*$/.test(entry.dist)) problems.push(`${entry.specifier}: dist ${entry.dist} is not <a-z0-9->[/…]`);
    if (!existsSync(join(root, entry.source))) problems.push(`${entry.specifier}: ${entry.source} does not exist`);
    if (entry.build !== undefined && entry.build !== 'apart') problems.push(`${entry.specifier}: build is "apart" or absent`);
  }
  return problems;
}

/** package.json's fields that name the entries, for package `name`. */
export function manifestFields(name: string) {
  const main = ENTRIES.find((entry) => entry.specifier === name)!;
  const conditions = (dist: string) => ({
    import: { types: built(dist, '.d.ts'), default: built(dist, '.js') },
    require: { types: built(dist, '.d.cts'), default: built(dist, '.cjs') },
  });
  return {
    main: built(main.dist, '.cjs'),
    module: built(main.dist, '.js'),
    types: built(main.dist, '.d.cts'),
    bin: { [BIN.name]: built(BIN.dist, '.js') },
    exports: {
      ...Object.fromEntries(ENTRIES.map((entry) => [subpath(entry, name), conditions(entry.dist)])),
      './package.json': './package.json',
    },
    // TypeScript's node10 resolution (no "exports"): each subpath to its CommonJS types.
    typesVersions: {
      '*': Object.fromEntries(
        ENTRIES.filter((entry) => entry !== main).map((entry) => [subpath(entry, name).slice(2), [built(entry.dist, '.d.cts')]]),
      ),
    },
  };
}

/** Each file of WRITTEN as this script writes it (path relative to `root` → its text). Reads only. */
export async function writtenFiles(root: string): Promise<Map<string, string>> {
  const read = (path: string) => JSON.parse(readFileSync(join(root, path), 'utf8')) as Record<string, unknown>;
  const manifest = read('package.json');
  Object.assign(manifest, manifestFields(manifest.name as string));
  const tsconfig = read('tsconfig.json') as { compilerOptions: Record<string, unknown> };
  tsconfig.compilerOptions.paths = Object.fromEntries(ENTRIES.map((entry) => [entry.specifier, [`./${entry.source}`]]));
  const typedoc = read('typedoc.json');
  typedoc.entryPoints = ENTRIES.map((entry) => entry.source);
  const values: Record<(typeof WRITTEN)[number], unknown> = {
    'package.json': manifest,
    'tsconfig.json': tsconfig,
    'typedoc.json': typedoc,
  };
  const texts = WRITTEN.map(async (path) => {
    const filepath = join(root, path);
    const options = await prettier.resolveConfig(filepath);
    return [path, await prettier.format(JSON.stringify(values[path], null, 2), { ...options, filepath })] as const;
  });
  return new Map(await Promise.all(texts));
}

async function main(args: string[]): Promise<number> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const { name } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string };
  const problems = listProblems(root, name);
  if (problems.length > 0) {
    console.error(`entries.json:\n  ${problems.join('\n  ')}`);
    return 1;
  }
  const stale = [...(await writtenFiles(root))].filter(([path, text]) => readFileSync(join(root, path), 'utf8') !== text);
  if (args[0] === '--check') {
    for (const [path] of stale) console.error(`${path}: differs from entries.json: run \`npm run entries\``);
    return stale.length > 0 ? 1 : 0;
  }
  for (const [path, text] of stale) writeFileSync(join(root, path), text);
  console.log(
    stale.length > 0 ? `entries: wrote ${stale.map(([path]) => path).join(', ')}` : `entries: ${WRITTEN.join(', ')} match entries.json`,
  );
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = await main(process.argv.slice(2));
