// The client's route table (src/resources/routes.ts) is the one list of what the SDK calls:
// the README's method table, the resource methods and doctor's contract check are held to
// it here; test/testing/routes.test.ts holds it to the sandbox's own table.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { CONTRACT_ROUTES } from '../../src/doctor/contract.js';
import { CLIENT_ROUTES } from '../../src/resources/routes.js';

const ROOT = join(import.meta.dirname, '../..');
const table = Object.entries(CLIENT_ROUTES).map(([name, route]) => ({ name, route: `${route.method} ${route.path}` }));

/** The README's `## Methods` table: each row's method cell (backticks kept) and route cell. */
function readmeRows(): Array<{ method: string; route: string }> {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Methods'), readme.indexOf('\n## ', readme.indexOf('## Methods') + 1));
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => line.split(' | '))
    .map(([method, route]) => ({ method: method!.slice(2), route: route!.replace(/ \|$/, '') }));
}

describe('the client route table', () => {
  test('the README lists every route of the table, one row each, and no route the table lacks', () => {
    const rows = readmeRows();
    const routeRows = rows.filter((row) => /^(GET|POST) \//.test(row.route));
    const listed = routeRows.map((row) => ({ name: /^`([\w.]+)\(/.exec(row.method)?.[1], route: row.route }));
    expect(listed.sort((a, b) => a.route.localeCompare(b.route))).toEqual(
      [...table].sort((a, b) => a.route.localeCompare(b.route)).map(({ name, route }) => ({ name, route })),
    );
    // The other rows describe helpers that call routes (waitForOutcome), not routes.
    expect(rows.filter((row) => !routeRows.includes(row)).map((row) => row.method)).toEqual([
      '`payments.waitForOutcome(trxId, { timeout?, interval?, signal? })`',
    ]);
  });

  test('each route is called by exactly one resource method, by its name', () => {
    const dir = join(ROOT, 'src');
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter(
      (file) => file.endsWith('.ts') && !file.endsWith('routes.ts'),
    );
    const calls = files.flatMap((file) =>
      [...readFileSync(join(dir, file), 'utf8').matchAll(/(?:\b_client|\bthis|#routes)\.(get|post|getPage)\('([\w.]+)'/g)].map(
        ([, helper, name]) => ({ helper, name }),
      ),
    );
    expect(calls.map((call) => call.name).sort()).toEqual(Object.keys(CLIENT_ROUTES).sort());
    for (const { helper, name } of calls) {
      const route: { method: string; list?: unknown } = CLIENT_ROUTES[name as keyof typeof CLIENT_ROUTES];
      expect(`${helper} ${name}`).toBe(`${route.list ? 'getPage' : route.method.toLowerCase()} ${name}`);
    }
  });

  test("doctor's contract check covers exactly the table's routes", () => {
    expect(CONTRACT_ROUTES.map((route) => `${route.method.toUpperCase()} ${route.path}`).sort()).toEqual(
      table.map((row) => row.route).sort(),
    );
  });

  test('a path has at most one placeholder, and a route with one takes an id schema', () => {
    for (const [name, route] of Object.entries(CLIENT_ROUTES)) {
      const placeholders = route.path.match(/\{\w+\}/g) ?? [];
      expect(placeholders.length, name).toBeLessThanOrEqual(1);
      expect('id' in route, name).toBe(placeholders.length === 1);
    }
  });
});
