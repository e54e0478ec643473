// What the npm page and an install see of package.json and README.md: where the project
// lives, README links that work outside a clone, the Node range stated as engines says it,
// and no dependency whose own engines refuse a Node that ours admits.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { parseRange, satisfies } from '../../scripts/engines-range.js';

const REPO = 'https://github.com/business-payments/business-payments-node';
const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const manifest = JSON.parse(read('package.json')) as {
  repository: { type: string; url: string };
  homepage: string;
  bugs: { url: string };
  engines: { node: string };
  files: string[];
  dependencies: Record<string, string>;
};
const readme = read('README.md');
// Inline links and images: [text](target) and ![alt](target).
const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);

describe('package.json', () => {
  test('repository, homepage and bugs point at the project on GitHub', () => {
    expect(manifest.repository).toEqual({ type: 'git', url: `git+${REPO}.git` });
    expect(manifest.homepage).toBe(`${REPO}#readme`);
    expect(manifest.bugs).toEqual({ url: `${REPO}/issues` });
  });

  test('every dependency admits the lowest Node of each range in our engines (no EBADENGINE on install)', () => {
    const floors = parseRange(manifest.engines.node).map((set) => set.find((c) => c.op === '>=')!.version.join('.'));
    expect(floors.length).toBeGreaterThan(0);
    for (const name of Object.keys(manifest.dependencies)) {
      const range = (JSON.parse(read(`node_modules/${name}/package.json`)) as { engines?: { node?: string } }).engines?.node;
      for (const floor of floors)
        expect({ name, range, floor, admits: range === undefined || satisfies(floor, range) }).toMatchObject({ admits: true });
    }
  });
});

describe('README.md (also the npm page, where a relative link has no file to reach)', () => {
  test('every link is absolute (https) or an anchor on the page', () => {
    expect(links.length).toBeGreaterThan(10);
    expect(links.filter((link) => !link.startsWith('https://') && !link.startsWith('#'))).toEqual([]);
  });

  test('links into the repository name files that exist on this branch, and docs/ guides that ship', () => {
    const own = links.filter((link) => link.startsWith(`${REPO}/`));
    expect(own.length).toBeGreaterThan(5);
    for (const link of own) {
      const match = new RegExp(`^${REPO}/blob/main/([^#]+)(#.*)?$`).exec(link);
      expect(match, `${link} should be ${REPO}/blob/main/<path>`).not.toBeNull();
      const path = match![1]!;
      expect(existsSync(new URL(`../../${path}`, import.meta.url)), `${path} (linked from the README) is missing`).toBe(true);
      if (path.startsWith('docs/')) expect(manifest.files).toContain('docs/*.md');
    }
  });

  test('states the Node range exactly as engines.node says it', () => {
    expect(readme).toContain(`\`${manifest.engines.node}\``);
  });
});
