// Dispatch of `business-payments <command>`: help, unknown commands, exit codes.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { VERSION } from '../../src/version.js';
import { expectUsageError, runCli } from '../support/cli.js';

const commands = ['sandbox', 'sign', 'verify-webhook', 'trigger'];

describe('main', () => {
  test.each([['--help'], ['-h'], ['help']])('%s lists every command on stdout, exit 0', async (flag) => {
    const run = await runCli([flag]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/^Usage: business-payments <command> \[options\]\n/);
    for (const name of commands) expect(run.stdout).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
  });

  test.each(commands)("%s --help and help %s print that command's usage", async (name) => {
    const viaFlag = await runCli([name, '--help']);
    const viaHelp = await runCli(['help', name]);
    expect(viaFlag.code).toBe(0);
    expect(viaFlag.stdout).toMatch(new RegExp(`^Usage: business-payments ${name}`));
    expect(viaFlag.stdout).toMatch(/-h, --help/);
    expect(viaHelp.stdout).toBe(viaFlag.stdout);
  });

  test.each([['--version'], ['-v']])("%s prints the version (package.json's), exit 0", async (flag) => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const run = await runCli([flag]);
    expect(run).toEqual({ code: 0, stdout: `${manifest.version}\n`, stderr: '' });
    expect(VERSION).toBe(manifest.version);
  });

  test('no command: exit 2, reason and usage on stderr', async () => {
    expectUsageError(await runCli([]), /^business-payments: missing command$/);
  });

  test('unknown command or option', async () => {
    expectUsageError(await runCli(['deploy']), /^business-payments: unknown command 'deploy'$/);
    expectUsageError(await runCli(['--verbose']), /^business-payments: unknown option '--verbose'$/);
  });

  test("a command's usage error shows that command's usage", async () => {
    const run = await runCli(['trigger']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^business-payments trigger: missing <event-type>, e\.g\. payment\.completed\n\nUsage: business-payments trigger /,
    );
  });
});
