// The sandbox's openapi.json passes `redocly lint` with its recommended rules: 0 errors and
// 0 warnings (the CLI itself, on the document the service serves).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, test } from 'vitest';
import { openApiDocument } from '../../../src/testing/mock-service/openapi.js';

const run = promisify(execFile);
const cli = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');

test('redocly lint (recommended rules): no errors, no warnings', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bp-openapi-'));
  try {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(openApiDocument('https://sandbox.business-payments.test'), null, 2));
    // --extends recommended: the ruleset is named, not left to the CLI's default.
    const { stdout } = await run(process.execPath, [cli, 'lint', file, '--extends', 'recommended', '--format', 'json'], {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? '', stderr: error.stderr }));
    const report = JSON.parse(stdout) as {
      totals: { errors: number; warnings: number };
      problems: Array<{ ruleId: string; message: string }>;
    };
    expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
