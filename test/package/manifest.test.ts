// What the npm page and an install see of package.json and README.md: no address that leads
// nowhere, README links that work in the installed package, the Node range stated as engines
// says it, and no dependency whose own engines refuse a Node that ours admits.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import { OWNER, findLinks, packedFiles } from '../../scripts/check-links.js';
import { parseRange, satisfies } from '../../scripts/engines-range.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const manifest = JSON.parse(read('package.json')) as {
  repository?: unknown;
  homepage?: unknown;
  bugs?: unknown;
  engines: { node: string };
  dependencies: Record<string, string>;
};
const readme = read('README.md');
const links = findLinks(readme).map((link) => link.target);
/** The repository's old GitHub address: nothing is published under it. */
const UNPUBLISHED = new RegExp(`(github\\.com|githubusercontent\\.com)[/:]${OWNER}(?![\\w.-])`, 'i');
/** Hosts the README may link to (each one checked by hand to exist); none is needed today. */
const README_HOSTS: string[] = [];

/** What the package ships, as `npm pack --dry-run` lists it (package.json "files" applied by npm itself). */
let shipped = new Set<string>();
beforeAll(() => {
  shipped = new Set(packedFiles(fileURLToPath(new URL('../../', import.meta.url))));
}, 60_000);
const ships = (path: string) => shipped.has(path);

describe('package.json', () => {
  test('carries no repository, homepage or bugs address that leads nowhere', () => {
    // The repository is not published: npm would show these as links to a 404.
    for (const field of ['repository', 'homepage', 'bugs'] as const)
      expect({ field, value: manifest[field] }).toEqual({ field, value: undefined });
    expect(read('package.json')).not.toMatch(UNPUBLISHED);
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

describe('README.md (read in node_modules/business-payments/ and in a clone)', () => {
  test('every link is relative to a file the package ships, an anchor on the page, or to a known host', () => {
    expect(links.length).toBeGreaterThan(10);
    const relative = links.filter((link) => !/^[a-z][a-z0-9+.-]*:/i.test(link) && !link.startsWith('#'));
    expect(relative.length).toBeGreaterThan(10);
    for (const link of relative) {
      const path = decodeURIComponent(link.split('#')[0]!);
      expect({ link, shipped: ships(path) }).toEqual({ link, shipped: true });
      expect(existsSync(new URL(`../../${path}`, import.meta.url)), `${path} (linked from the README) is missing`).toBe(true);
    }
    const absolute = links.filter((link) => /^[a-z][a-z0-9+.-]*:/i.test(link));
    expect(absolute.filter((link) => UNPUBLISHED.test(link))).toEqual([]);
    expect(absolute.filter((link) => !README_HOSTS.includes(new URL(link).hostname))).toEqual([]);
  });

  test('states the Node range exactly as engines.node says it', () => {
    expect(readme).toContain(`\`${manifest.engines.node}\``);
  });
});
