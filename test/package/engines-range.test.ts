// scripts/engines-range.ts: how scripts/engines-check.mjs reads `engines.node` (ours and
// every installed package's) and picks the Node releases it runs.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { parseRange, planVersions, satisfies } from '../../scripts/engines-range.js';

// A slice of the `node` package's versions, as `npm view node versions` lists them.
const PUBLISHED = [
  '18.20.8',
  '20.0.0',
  '20.15.1',
  '20.16.0',
  '20.19.0',
  '20.20.2',
  '21.0.0',
  '21.7.3',
  '22.0.0',
  '22.2.0',
  '22.3.0',
  '22.12.0',
  '23.0.0-rc.1',
  '23.0.0',
  '24.0.0',
  '24.21.0',
];

describe('satisfies', () => {
  test.each([
    ['^20.16.0 || >=22.3.0', ['20.16.0', '20.20.2', '22.3.0', '24.21.0', '30.0.0'], ['20.15.1', '21.0.0', '21.7.3', '22.2.0', '18.20.8']],
    ['>=20.19.0', ['20.19.0', '21.0.0', '22.0.0'], ['20.18.9', '18.0.0']],
    ['>=22', ['22.0.0', '26.1.0'], ['21.7.3', '20.20.2']],
    ['>= 18', ['18.0.0'], ['17.9.1']],
    ['^20.19 || >=22.12', ['20.19.0', '20.99.0', '22.12.0'], ['20.18.0', '21.0.0', '22.11.9']],
    ['20.x || 22', ['20.0.0', '20.20.2', '22.5.1'], ['21.0.0', '23.0.0']],
    ['~22.3.1', ['22.3.1', '22.3.9'], ['22.3.0', '22.4.0']],
    ['>18.1 <=22.3', ['18.2.0', '22.3.9'], ['18.1.9', '22.4.0']],
    ['>=20.0.0 <22.0.0', ['20.0.0', '21.7.3'], ['22.0.0', '19.9.9']],
    ['22.12.0', ['22.12.0'], ['22.12.1', '22.11.0']],
    ['*', ['0.0.1', '26.0.0'], []],
  ])('%s', (range, inside, outside) => {
    for (const version of inside) expect([version, satisfies(version, range)]).toEqual([version, true]);
    for (const version of outside) expect([version, satisfies(version, range)]).toEqual([version, false]);
  });

  test.each([['1.2.3 - 2.3.4'], ['>=22.0.0-rc.1'], ['latest'], [''], ['^20 || '], ['1.2.3.4']])(
    '%j throws instead of guessing',
    (range) => {
      expect(() => parseRange(range)).toThrow(Error);
    },
  );
});

describe('planVersions', () => {
  test("our range: each major's lowest admitted release, and the release just below each floor", () => {
    expect(planVersions('^20.16.0 || >=22.3.0', PUBLISHED)).toEqual({
      lowest: [
        { version: '20.16.0', why: 'lowest 20.x admitted' },
        { version: '22.3.0', why: 'lowest 22.x admitted' },
        { version: '23.0.0', why: 'lowest 23.x admitted' },
        { version: '24.0.0', why: 'lowest 24.x admitted' },
      ],
      below: [
        { version: '20.15.1', why: 'just below 20.16.0' },
        { version: '22.2.0', why: 'just below 22.3.0' },
      ],
    });
  });

  test('a plain floor admits the odd line after it (>=20.19.0 runs 21.0.0 and 22.0.0 too)', () => {
    const plan = planVersions('>=20.19.0', PUBLISHED);
    expect(plan.lowest.map((v) => v.version)).toEqual(['20.19.0', '21.0.0', '22.0.0', '23.0.0', '24.0.0']);
    expect(plan.below).toEqual([{ version: '20.16.0', why: 'just below 20.19.0' }]);
  });

  test('a floor at the first release of a line is probed with the last release of the line before', () => {
    expect(planVersions('>=22.0.0', PUBLISHED).below).toEqual([{ version: '21.7.3', why: 'just below 22.0.0' }]);
  });

  test('nothing published in the range is an error, not an empty (passing) plan', () => {
    expect(() => planVersions('>=99', PUBLISHED)).toThrow(/no published Node release satisfies/);
  });

  test("package.json's engines.node parses, and its floors are each a published release", () => {
    const range = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { engines: { node: string } })
      .engines.node;
    const plan = planVersions(range, PUBLISHED);
    expect(plan.lowest.length).toBeGreaterThan(0);
    expect(plan.below.length).toBe(parseRange(range).length);
  });
});
