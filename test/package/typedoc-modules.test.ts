// The API reference names each module by the path users import it from, one module per entry
// of package.json "exports": `business-payments`, `business-payments/webhooks`, … (not the
// file names, such as `index`). Each entry file's top doc comment carries the name
// in a `@module` tag; typedoc.json lists the entry files. Runs typedoc (about 5 s).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

test('typedoc names one module per import path of the package', () => {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; exports: Record<string, unknown> };
  const importPaths = Object.keys(manifest.exports)
    .filter((subpath) => subpath !== './package.json')
    .map((subpath) => (subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`))
    .sort();
  expect(importPaths).toContain('business-payments/doctor');

  const out = mkdtempSync(join(tmpdir(), 'bp-typedoc-'));
  try {
    const json = join(out, 'api.json');
    const run = spawnSync(process.execPath, [join(root, 'node_modules/typedoc/bin/typedoc'), '--json', json, '--out', join(out, 'html')], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    const project = JSON.parse(readFileSync(json, 'utf8')) as { children: { name: string; comment?: unknown }[] };
    expect(project.children.map((module) => module.name).sort()).toEqual(importPaths);
    // Each module has its own summary, from that doc comment.
    for (const module of project.children) expect(module.comment, module.name).toBeDefined();
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}, 120_000);
