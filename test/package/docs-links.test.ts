// The Markdown the package ships, read where users read it: in node_modules/business-payments
// (the guides, the README, the changelog and the runnable examples; no test/, src/ or
// docs/images/ there). The repository is not published on GitHub, so no link may go there. The rules are in scripts/check-links.ts (and CONTRIBUTING.md);
// `npm run check:links` applies them to the packed tarball, this file to what
// `npm pack --dry-run` lists in this checkout.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import {
  OWNER,
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
/** The repository's old address on GitHub, and its raw files: nothing is published there. */
const GH = `https://github.com/${REPOSITORY}`;
const RAW = `https://raw.githubusercontent.com/${REPOSITORY}/main/`;
const UNPUBLISHED =
  `a URL into the repository on GitHub, which is not published (nothing exists under github.com/${OWNER}/): ` +
  'link a shipped file (a guide, an example) relatively, or name a file of the repository as text';
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

  test('the runnable examples: examples/README.md, every example source, the Next.js app; no build output, no test', () => {
    const examples = readdirSync(join(root, 'examples'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .flatMap((dir) =>
        readdirSync(join(root, 'examples', dir.name))
          .filter((name) => name.endsWith('.ts'))
          .map((name) => `examples/${dir.name}/${name}`),
      );
    expect(examples).toContain('examples/fastify/server.ts');
    expect(examples).toContain('examples/hono/app.ts');
    const nextjs = [
      'examples/nextjs/README.md',
      'examples/nextjs/package.json',
      'examples/nextjs/tsconfig.json',
      'examples/nextjs/next.config.mjs',
      'examples/nextjs/app/page.tsx',
      'examples/nextjs/app/api/webhooks/payments/route.ts',
      'examples/nextjs/lib/fulfillment.ts',
    ];
    for (const path of ['examples/README.md', ...examples, ...nextjs]) expect(shipped).toContain(path);
    expect(shipped.filter((path) => /(^|\/)(node_modules|\.next)\/|next-env\.d\.ts$|\.test\.ts$/.test(path))).toEqual([]);
  });
});

describe('links in the shipped Markdown', () => {
  test('every link and #anchor resolves in the package; none goes to the unpublished repository', () => {
    const tree = directoryTree(root, shipped);
    const files = shipped.filter((path) => path.endsWith('.md'));
    const report = checkLinks({ files, tree, repoRoot: root });
    expect(report.problems.map((p) => `${p.file}:${p.line}: ${p.target}: ${p.problem}`)).toEqual([]);
    expect(files.length).toBeGreaterThanOrEqual(14);
    expect(report.links).toBeGreaterThan(60);
    expect(report.relative).toBeGreaterThan(60);
    expect(report.images).toBe(0); // the screenshots are not shipped
    expect(report.repository).toBe(0);
    expect(report.anchors).toBeGreaterThan(20);
    // Other hosts are checked for syntax only: a new one is a change to look at here.
    expect(report.hosts).toEqual({ 'keepachangelog.com': 1, 'semver.org': 1, 'pay.example.com': 2 });
    expect(formatReport(report, 'the package')).toMatch(
      /^✓ links: \d+ Markdown files of the package; \d+ links and 0 images \(.*0 into the unpublished repository, 4 elsewhere, syntax only: keepachangelog\.com, pay\.example\.com ×2, semver\.org\)/,
    );
  });

  test('every example the guides and the README link to is in the package, and they link the framework ones', () => {
    const toExamples = shipped
      .filter((path) => /^(docs\/[^/]+|README)\.md$/.test(path))
      .flatMap((file) =>
        findLinks(readFileSync(join(root, file), 'utf8'))
          .map((link) => posix.normalize(posix.join(posix.dirname(file), decodeURIComponent(link.target.split('#')[0]!))))
          .filter((path) => path.startsWith('examples/')),
      );
    for (const path of ['examples/fastify/server.ts', 'examples/hono/app.ts', 'examples/hono/server.ts', 'examples/README.md'])
      expect(toExamples).toContain(path);
    expect(toExamples.filter((path) => !shipped.includes(path))).toEqual([]);
  });

  test('a link to an example the package leaves out is a problem; the same link to a shipped one is not', () => {
    const left = 'examples/fastify/server.ts';
    // The package as if package.json "files" left that example out.
    const withoutIt = directoryTree(
      root,
      shipped.filter((path) => path !== left),
    );
    const report = checkLinks({ files: ['docs/webhooks.md'], tree: withoutIt, repoRoot: root });
    const problems = report.problems.map((p) => `${p.target} → ${p.problem}`);
    expect(problems.length).toBeGreaterThanOrEqual(2); // the framework table and the Fastify section
    expect(new Set(problems)).toEqual(
      new Set([
        `../${left} → ${left} is not shipped in the package: it is an example of the repository that package.json "files" ` +
          'leaves out (the repository is not published); ship it there, or name it as text, not as a link',
      ]),
    );
    const shippedReport = checkLinks({ files: ['docs/webhooks.md'], tree: directoryTree(root, shipped), repoRoot: root });
    expect(shippedReport.problems).toEqual([]);
  });

  test('CONTRIBUTING.md (in a clone only) links to files of the repository, never to GitHub', () => {
    const repoTree: Tree = {
      has: (path) => existsSync(join(root, path)), // files and folders: GitHub shows both
      read: (path) => (statSync(join(root, path)).isFile() ? readFileSync(join(root, path), 'utf8') : undefined),
    };
    const report = checkLinks({ files: ['CONTRIBUTING.md'], tree: repoTree, repoRoot: root });
    expect(report.problems.map((p) => `${p.file}:${p.line}: ${p.target}: ${p.problem}`)).toEqual([]);
    expect(report.links).toBeGreaterThan(5);
  });
});

describe('the link checker', () => {
  const guide = [
    '# Guide',
    '',
    'See [the demo](../examples/demo/demo.ts), [the example folder](../examples/nextjs), [its README](../examples/nextjs/README.md) and [hono](../examples/hono).',
    '![The console](images/console-console.png)',
    `![Gone](${RAW}docs/images/console-gone.png) ![Here](${RAW}docs/images/console-console.png)`,
    'Read [retries](retries.md#no-such-heading), [retries](retries.md#what-is-retried) and [above](#guide).',
    'Also [nowhere](#nowhere), [the built file](../dist/index.js), [a missing guide](missing.md).',
    `On GitHub: [a file that is here](${GH}/blob/main/docs/testing.md#web-console), [the owner](https://github.com/${OWNER}),`,
    `[a folder](${GH}/tree/main/examples/nextjs), [issues](${GH}/issues), [another of its repositories](https://www.github.com/${OWNER}/other).`,
    'Elsewhere: [fine](https://example.com/a?b=1#c), [ftp](ftp://example.com/f), [broken](https://), [ref][nope],',
    '[another owner](https://github.com/business-payments-labs/r).',
    '',
    '```sh',
    '[inside a code block](../nowhere.md)',
    `curl ${RAW}test/fixtures/signing-vectors.json   # a URL into the repository, even in code`,
    '# not a heading',
    '```',
    '',
    `And \`[in a code span](../nowhere.md)\` and \`git clone ${GH}.git\`.`,
  ].join('\n');
  const files = {
    'docs/guide.md': guide,
    'docs/retries.md': '# Retries\n\n## What is retried\n',
    'dist/index.js': '',
    'examples/nextjs/README.md': '# Next.js example\n',
  };
  const notShipped = (path: string) =>
    `${path} is not shipped in the package; it is in the repository, which is not published: name it as text (\`${path}\` in the repository), not as a link`;

  test('catches dead relative links (an example not shipped, a folder), links into the unpublished repository and missing anchors, and passes the rest (any shipped file)', () => {
    const report = checkLinks({ files: ['docs/guide.md'], tree: fixture(files), repoRoot: root });
    const found = report.problems.map((p) => `${p.line} ${p.target} → ${p.problem}`);
    expect(found).toEqual([
      `3 ../examples/demo/demo.ts → examples/demo/demo.ts is not shipped in the package: it is an example of the repository that package.json "files" leaves out (the repository is not published); ship it there, or name it as text, not as a link`,
      '3 ../examples/nextjs → examples/nextjs is a folder, not a file: link a file in it (examples/nextjs/README.md)',
      `3 ../examples/hono → ${notShipped('examples/hono')}`,
      `4 images/console-console.png → ${notShipped('docs/images/console-console.png')}`,
      `5 ${RAW}docs/images/console-gone.png → ${UNPUBLISHED}`,
      `5 ${RAW}docs/images/console-console.png → ${UNPUBLISHED}`,
      '6 retries.md#no-such-heading → no heading #no-such-heading in docs/retries.md',
      '7 #nowhere → no heading #nowhere in docs/guide.md',
      '7 missing.md → docs/missing.md is not shipped in the package',
      `8 ${GH}/blob/main/docs/testing.md#web-console → ${UNPUBLISHED}`,
      `8 https://github.com/${OWNER} → ${UNPUBLISHED}`,
      `9 ${GH}/tree/main/examples/nextjs → ${UNPUBLISHED}`,
      `9 ${GH}/issues → ${UNPUBLISHED}`,
      `9 https://www.github.com/${OWNER}/other → ${UNPUBLISHED}`,
      '10 ftp://example.com/f → unexpected scheme ftp:',
      '10 https:// → not a valid URL',
      '10 [undefined reference: nope] → a reference link whose label has no definition',
      `15 ${RAW}test/fixtures/signing-vectors.json → ${UNPUBLISHED}`,
      `19 ${GH}.git → ${UNPUBLISHED}`,
    ]);
    expect(report).toMatchObject({ links: 22, images: 3, relative: 9, samePage: 2, repository: 9, external: 2, anchors: 4 });
    expect(report.hosts).toEqual({ 'example.com': 1, 'github.com': 1 });
    expect(formatReport(report, 'a fixture')).toMatch(
      /9 into the unpublished repository, 2 elsewhere, syntax only: example\.com, github\.com\).*19 problem\(s\)$/,
    );
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
