// entries.json is the one list of the package's entry points (scripts/entries.ts). What reads it
// (tsup, vitest, ESLint, the size and consumer checks) follows it by itself; the JSON files that
// cannot read it (package.json, tsconfig.json, typedoc.json) are written from it by
// `npm run entries`, and fail here when they drift from it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { BIN, ENTRIES, WRITTEN, listProblems, writtenFiles } from '../../scripts/entries.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const manifest = JSON.parse(read('package.json')) as { name: string; exports: Record<string, unknown>; bin: Record<string, string> };

describe('entries.json', () => {
  test('lists each entry once, the package itself among them, each with its source file', () => {
    expect(listProblems(root, manifest.name)).toEqual([]);
    expect(ENTRIES.map((entry) => entry.specifier)).toContain(manifest.name);
    expect(ENTRIES.length).toBeGreaterThanOrEqual(8);
  });

  test('each entry file names its module by the entry’s import path (`@module`, what typedoc shows)', () => {
    for (const entry of ENTRIES)
      expect({ entry: entry.source, tagged: read(entry.source).includes(`@module ${entry.specifier}\n`) }).toEqual({
        entry: entry.source,
        tagged: true,
      });
  });

  test.each(WRITTEN)('%s is as `npm run entries` writes it from entries.json', async (path) => {
    const expected = (await writtenFiles(root)).get(path)!;
    expect(read(path), `${path} differs from entries.json: run \`npm run entries\``).toBe(expected);
  });

  test('package.json: one "exports" subpath per entry (and ./package.json), the bin from the list', () => {
    const subpaths = ENTRIES.map((entry) =>
      entry.specifier === manifest.name ? '.' : `./${entry.specifier.slice(manifest.name.length + 1)}`,
    );
    expect(Object.keys(manifest.exports)).toEqual([...subpaths, './package.json']);
    expect(manifest.bin).toEqual({ [BIN.name]: `./dist/${BIN.dist}.js` });
  });
});
