// The guides the package ships are for the people who use it. How the repository tests
// itself (soak runs, V8 flags, CI scripts, internal source paths, maintainers' design notes)
// belongs in CONTRIBUTING.md, which is not shipped. An example named by its path
// (`examples/…`, shipped in the package) is fine; a source, test or script path is not (the
// link checker refuses links into the repository, which is not published). And the
// going-live page lists every check doctor runs.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { diagnose } from '../../src/doctor/diagnose.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const guides = readdirSync(join(root, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`);

/** The text a reader sees, without link targets and URLs (scripts/check-links.ts judges those). */
const prose = (markdown: string) => markdown.replace(/\]\([^)\s]*\)/g, ']()').replace(/https?:\/\/[^\s)>\]`'"]+/g, '<url>');

const INTERNALS: [RegExp, string][] = [
  [/(?<![\w./@-])(src|test|scripts|\.ci|\.cache)\/[\w.-]/, 'a path inside the repository'],
  [/\bDESIGN\.md\b|\bSTYLE\.md\b/, 'the maintainers’ design files'],
  [/--max-semi-space-size|--max-old-space-size|semi-space|\bheap limits?\b/, 'V8 heap tuning'],
  [/npm run soak|\bSOAK_[A-Z]/, 'the soak test'],
  [/\bmain\(argv/, 'the CLI’s internal entry function'],
  [/eslint\.config|independence\.test/, 'the repository’s lint set-up'],
];

describe('the shipped docs hold no maintainer material', () => {
  test.each([...guides, 'README.md'])('%s', (path) => {
    const lines = prose(read(path)).split('\n');
    const found: string[] = [];
    lines.forEach((line, i) => {
      for (const [pattern, what] of INTERNALS) if (pattern.test(line)) found.push(`${path}:${i + 1}: ${what}: ${line.trim()}`);
      // The repository's test and CI scripts are for maintainers (the README's set-up section is for a clone).
      if (path !== 'README.md' && /npm run (screenshots|typecheck|format|lint|test:|check:)/.test(line))
        found.push(`${path}:${i + 1}: a test or CI script of the repository: ${line.trim()}`);
    });
    expect(found).toEqual([]);
  });

  test('the check catches what it is for', () => {
    const sample = [
      '`main(argv, io)` in `src/cli/main.ts`',
      "an addition to DESIGN.md's list",
      'SOAK_TARGET=listen SOAK_CHILD_FLAGS=--max-semi-space-size=4 npm run soak',
      'see test/contract/schema-drift.test.ts',
    ];
    for (const line of sample)
      expect(
        INTERNALS.some(([pattern]) => pattern.test(prose(line))),
        line,
      ).toBe(true);
    const allowed = [
      '[conformance.ts](https://github.com/o/r/blob/main/test/fulfillment/conformance.ts)',
      'node_modules/business-payments/docs/',
    ];
    for (const line of allowed)
      expect(
        INTERNALS.some(([pattern]) => pattern.test(prose(line))),
        line,
      ).toBe(false);
  });
});

describe('docs/going-live.md', () => {
  const page = () => read('docs/going-live.md');

  test('is linked from the README and from the doctor section of docs/cli.md', () => {
    expect(read('README.md')).toContain('(docs/going-live.md)');
    const cli = read('docs/cli.md');
    const doctor = cli.slice(cli.indexOf('## `business-payments doctor`'), cli.indexOf('## `reconcile`'));
    expect(doctor).toMatch(/\]\(going-live\.md(#[\w-]+)?\)/);
  });

  test('lists every check doctor runs, in its order, with what a failure means', async () => {
    // A configuration that fails at once: every other check is then reported as skipped, by name.
    const { checks } = await diagnose({ baseUrl: 'not a url', merchantKey: 'm', apiKey: 'k', apiSecret: 's' });
    const names = checks.map((c) => c.name);
    expect(names).toEqual([
      'configuration',
      'service reachable',
      'generation',
      'credentials',
      'clock',
      'approval',
      'wallets',
      'webhook endpoint',
      'contract',
    ]);
    const text = page();
    const section = text.slice(text.indexOf('## What doctor checks'), text.indexOf('## Before the first live payment'));
    const rows = [...section.matchAll(/^\| ([a-z ]+) \| .+ \| .+ \|$/gm)].map((m) => m[1]).slice(1); // after the header row
    expect(rows).toEqual(names);
  });

  test('says where production credentials and the base URL come from, and which secret signs webhooks', () => {
    for (const heading of ['## Credentials', '## The base URL', '## Which secret signs production webhooks', '## What doctor checks'])
      expect(page()).toContain(heading);
    for (const item of [
      'Environment',
      'Base URL',
      'Webhook endpoint verified',
      'Idempotency keys on creates',
      'Reconcile',
      'Logging level',
    ])
      expect(page()).toContain(`- [ ] **${item}**`);
  });
});
