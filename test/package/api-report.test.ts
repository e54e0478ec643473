// The API report (scripts/api-report.ts, `npm run api:check` in .ci/run): it resolves tsup's
// hashed chunks into one stable listing per entry, a signature change shows in its diff, and
// the committed api/*.api.md match the build of the current source.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, test } from 'vitest';
import { buildApiReports, diffLines, packageReports, reportFileName } from '../../scripts/api-report.js';
import { packageCopyReady } from '../support/cli.js';

const temp = mkdtempSync(join(tmpdir(), 'business-payments-api-test-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** A built entry as tsup lays it out: the entry re-exports a hashed chunk under one-letter aliases. */
function fixture(name: string, hash: string, optionsBody: string): string {
  const dir = join(temp, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, `chunk-${hash}.d.ts`),
    [
      '/** Options. */',
      `interface Options {\n${optionsBody}\n}`,
      'interface Hidden { size: number }',
      '/** Makes a thing. */',
      'declare function make(options?: Options): Hidden;',
      'declare const VERSION = "1";',
      'export { make as m, VERSION as V };',
      'export type { Options as O };',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'index.d.ts'), `export { O as Options, V as VERSION, m as make } from './chunk-${hash}.js';\n`);
  return buildApiReports([{ specifier: 'pkg', file: join(dir, 'index.d.ts'), shownPath: 'dist/index.d.ts' }], dir).get('pkg')!;
}

describe('the report', () => {
  const before = fixture('a', 'DJHI3WVJ', '  retries: number;');

  test('lists the exports sorted, by their declared names, without chunk hashes, aliases or JSDoc', () => {
    expect(before).not.toMatch(/DJHI3WVJ|chunk-|\bas [OVm]\b|\/\*\*/);
    const exportsSection = before.slice(before.indexOf('## Exports'), before.indexOf('## Referenced'));
    expect(exportsSection.indexOf('interface Options')).toBeLessThan(exportsSection.indexOf('declare const VERSION = "1";'));
    expect(exportsSection.indexOf('declare const VERSION')).toBeLessThan(exportsSection.indexOf('declare function make('));
    // A type a signature names but the entry does not export is listed too.
    expect(before.slice(before.indexOf('## Referenced, not exported'))).toContain('interface Hidden {\n    size: number;\n}');
  });

  test('is the same for the same API in another build (other hashes), and shows a changed signature', () => {
    expect(fixture('b', 'Q7XK2P0A', '  retries: number;')).toBe(before);
    const after = fixture('c', 'ZZ11YY22', '  retries: number;\n  timeout?: number;');
    const diff = diffLines(before, after, 'api/index.api.md');
    expect(diff).toContain('--- api/index.api.md (committed)');
    expect(diff).toMatch(/^@@ -\d+,\d+ \+\d+,\d+ @@$/m);
    expect(diff.split('\n').filter((line) => /^[-+] /.test(line))).toEqual(['+    timeout?: number;']);
    expect(diffLines(before, before)).toBe('');
  });

  test('file names per entry', () => {
    expect(reportFileName('business-payments', 'business-payments')).toBe('index.api.md');
    expect(reportFileName('business-payments/fulfillment/postgres', 'business-payments')).toBe('fulfillment-postgres.api.md');
  });
});

test('the committed api/*.api.md match the build of the current source (else: npm run api:update, and review the diff)', async () => {
  const dir = inject('packageCopy');
  await packageCopyReady(dir);
  const reports = packageReports(dir);
  const apiDir = new URL('../../api/', import.meta.url);
  const committed = readdirSync(apiDir).filter((name) => name.endsWith('.api.md'));
  expect(committed.sort()).toEqual([...reports.keys()].sort());
  const diffs = [...reports].map(([name, text]) => diffLines(readFileSync(new URL(name, apiDir), 'utf8'), text, `api/${name}`));
  expect(diffs.filter(Boolean).join('\n\n')).toBe('');
}, 200_000);
