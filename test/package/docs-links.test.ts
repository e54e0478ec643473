// The Markdown the package ships, read where users read it: in node_modules/business-payments
// (no examples/, test/ or docs/images/ there) and on GitHub. The rules are in
// scripts/check-links.ts (and CONTRIBUTING.md); `npm run check:links` applies them to the
// packed tarball, this file to what `npm pack --dry-run` lists in this checkout.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import {
  BLOB,
  RAW,
  REPOSITORY,
  anchorsOf,
  checkLinks,
  directoryTree,
  findLinks,
  formatReport,
  githubSlug,
  headingText,
  packedFiles,
  type Tree,
} from '../../scripts/check-links.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
let shipped: string[] = [];

beforeAll(() => {
  shipped = packedFiles(root);
}, 60_000);

/** A package made of the given files (fixtures), for the checker's own tests. */
function fixture(files: Record<string, string>): Tree {
  return { has: (path) => path in files, read: (path) => files[path] };
}

describe('what the package ships', () => {
  test('every guide in docs/, README.md and CHANGELOG.md; no maintainer page, no image', () => {
    const guides = readdirSync(join(root, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`);
    expect(guides).toContain('docs/going-live.md');
    for (const path of [...guides, 'README.md', 'CHANGELOG.md']) expect(shipped).toContain(path);
    expect(shipped.filter((path) => /^(CONTRIBUTING\.md|docs\/maintainers\/|docs\/images\/)/.test(path))).toEqual([]);
    expect(shipped.filter((path) => /\.(png|jpe?g|gif|svg)$/.test(path))).toEqual([]);
  });
});

describe('links in the shipped Markdown', () => {
  test('every link, image and #anchor resolves in the package or in this repository on GitHub', () => {
    const tree = directoryTree(root, shipped);
    const files = shipped.filter((path) => path.endsWith('.md'));
    const report = checkLinks({ files, tree, repoRoot: root });
    expect(report.problems.map((p) => `${p.file}:${p.line}: ${p.target}: ${p.problem}`)).toEqual([]);
    expect(files.length).toBeGreaterThanOrEqual(14);
    expect(report.links).toBeGreaterThan(60);
    expect(report.images).toBe(6);
    expect(report.anchors).toBeGreaterThan(20);
    expect(formatReport(report, 'the package')).toMatch(/^✓ links: \d+ Markdown files of the package; \d+ links and 6 images/);
  });

  test('CONTRIBUTING.md (on GitHub only) links to files of the repository', () => {
    const repoTree: Tree = {
      has: (path) => existsSync(join(root, path)), // files and folders: GitHub shows both
      read: (path) => (statSync(join(root, path)).isFile() ? readFileSync(join(root, path), 'utf8') : undefined),
    };
    const report = checkLinks({ files: ['CONTRIBUTING.md'], tree: repoTree, repoRoot: root, markdownOnly: false });
    expect(report.problems.map((p) => `${p.file}:${p.line}: ${p.target}: ${p.problem}`)).toEqual([]);
    expect(report.links).toBeGreaterThan(5);
  });
});

describe('the link checker', () => {
  const guide = [
    '# Guide',
    '',
    'See [the demo](../examples/demo/demo.ts) and [the example folder](../examples/nextjs).',
    '![The console](images/console-console.png)',
    `![Gone](${RAW}docs/images/console-gone.png) ![Here](${RAW}docs/images/console-console.png)`,
    'Read [retries](retries.md#no-such-heading), [retries](retries.md#what-is-retried) and [above](#guide).',
    'Also [nowhere](#nowhere), [the built file](../dist/index.js), [a missing guide](missing.md).',
    `In the repository: [a file](${BLOB}docs/testing.md#web-console), [gone](${BLOB}docs/gone.md),`,
    `[a bad anchor](${BLOB}docs/testing.md#Web-Console), [a folder](https://github.com/${REPOSITORY}/tree/main/examples/nextjs),`,
    `[another branch](https://github.com/${REPOSITORY}/blob/develop/README.md), [issues](https://github.com/${REPOSITORY}/issues).`,
    'Elsewhere: [fine](https://example.com/a?b=1#c), [ftp](ftp://example.com/f), [broken](https://), [ref][nope].',
    '',
    '```md',
    '[inside a code block](../nowhere.md)',
    `curl ${RAW}test/fixtures/gone.json   # a URL into the repository, even in code`,
    '# not a heading',
    '```',
    '',
    'And `[in a code span](../nowhere.md)`.',
  ].join('\n');
  const files = {
    'docs/guide.md': guide,
    'docs/retries.md': '# Retries\n\n## What is retried\n',
    'dist/index.js': '',
  };

  test('catches dead relative links, missing images and missing anchors, and passes the rest', () => {
    const report = checkLinks({ files: ['docs/guide.md'], tree: fixture(files), repoRoot: root });
    const found = report.problems.map((p) => `${p.line} ${p.target} → ${p.problem}`);
    expect(found).toEqual([
      `3 ../examples/demo/demo.ts → examples/demo/demo.ts is not shipped in the package; it is in the repository: link ${BLOB}examples/demo/demo.ts`,
      `3 ../examples/nextjs → examples/nextjs is not shipped in the package; it is in the repository: link https://github.com/${REPOSITORY}/tree/main/examples/nextjs`,
      `4 images/console-console.png → docs/images/console-console.png is not shipped in the package; it is in the repository: link ${RAW}docs/images/console-console.png`,
      `5 ${RAW}docs/images/console-gone.png → no file docs/images/console-gone.png in the repository`,
      '6 retries.md#no-such-heading → no heading #no-such-heading in docs/retries.md',
      '7 #nowhere → no heading #nowhere in docs/guide.md',
      '7 ../dist/index.js → relative links name only shipped Markdown files: link dist/index.js with an absolute URL',
      '7 missing.md → docs/missing.md is not shipped in the package',
      `8 ${BLOB}docs/gone.md → no file docs/gone.md in the repository`,
      `9 ${BLOB}docs/testing.md#Web-Console → no heading #Web-Console in docs/testing.md (did you mean #web-console? anchors are lower case)`,
      `10 https://github.com/${REPOSITORY}/blob/develop/README.md → links into the repository point at main (this one: develop)`,
      '11 ftp://example.com/f → unexpected scheme ftp:',
      '11 https:// → not a valid URL',
      '11 [undefined reference: nope] → a reference link whose label has no definition',
      `15 ${RAW}test/fixtures/gone.json → no file test/fixtures/gone.json in the repository`,
    ]);
    expect({ links: report.links, images: report.images, anchors: report.anchors }).toEqual({ links: 19, images: 3, anchors: 6 });
  });

  test('reads inline, reference, HTML and bare links, and nothing inside code', () => {
    const text = [
      '[a](one.md "title") ![b](<two words.png>) [c][d] <https://example.com/x> <img src="three.png">',
      '[d]: four.md',
      'Bare: https://example.com/y. [[nested] text](five.md) [![badge](six.svg)](seven.md)',
      '    ```',
      '    [no](eight.md)',
      '    ```',
    ].join('\n');
    expect(findLinks(text).map((l) => `${l.line}${l.image ? '!' : ''} ${l.target}`)).toEqual([
      '1 one.md',
      '1! two words.png',
      '1 four.md',
      '1 https://example.com/x',
      '1! three.png',
      '2 four.md',
      '3 https://example.com/y',
      '3 five.md',
      '3 seven.md',
      '3! six.svg',
    ]);
  });

  test("anchors follow GitHub's slugs", () => {
    const slug = (heading: string) => githubSlug(headingText(heading));
    expect(slug('Left running: limits, bounded memory, soak')).toBe('left-running-limits-bounded-memory-soak');
    expect(slug('`business-payments doctor`')).toBe('business-payments-doctor');
    expect(slug('What path_with_query is')).toBe('what-path_with_query-is');
    expect(slug('"Exactly once", store by store')).toBe('exactly-once-store-by-store');
    expect(slug('Time: `now`, `timeScale`, `autoRun`, `runDue()`')).toBe('time-now-timescale-autorun-rundue');
    expect(slug('Testing against the sandbox (`business-payments/testing`)')).toBe('testing-against-the-sandbox-business-paymentstesting');
    expect(slug('node:http')).toBe('nodehttp');
    expect(slug('_Emphasis_ and [a link](x.md) → **done**')).toBe('emphasis-and-a-link--done');
    expect([...anchorsOf('# A\n## A\n### A\n```\n# A\n```\nB\n---\n<a id="custom"></a>\n')]).toEqual(['a', 'a-1', 'a-2', 'b', 'custom']);
  });
});
