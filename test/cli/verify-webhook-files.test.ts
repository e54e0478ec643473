// `verify-webhook --body/--headers`: the files are read with a bound (1 MiB of body, 64 KiB of
// headers), streamed, so a device that never ends or a huge file is refused after one chunk.
import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { createWriteStream, existsSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { expectUsageError, runCli } from '../support/cli.js';

const secret = 'whsec_test_cli_files';
const now = 1_700_000_000;
const MIB = 1024 * 1024;

let dir: string;
const file = (name: string, content: string | Buffer) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
const headersFor = (body: string | Buffer) =>
  [
    'X-Service-Event: payment.completed',
    `X-Service-Timestamp: ${now}`,
    `X-Service-Signature: ${createHmac('sha256', secret).update(`${now}.`).update(body).digest('hex')}`,
  ].join('\n');

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'bp-cli-files-'));
  file('headers.txt', headersFor('{}'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const verify = (headers: string, body: string) =>
  runCli(['verify-webhook', '--secret', secret, '--headers', headers, '--body', body, '--now', String(now)], { cwd: dir });

describe('verify-webhook: bounded file reads', () => {
  test('--body /dev/zero is refused at 1 MiB, at once (never read to its end)', async () => {
    const started = Date.now();
    const run = await verify('headers.txt', '/dev/zero');
    expectUsageError(run, /: --body file '\/dev\/zero' is over 1 MiB: no webhook delivery is that large/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  test('--headers /dev/zero is refused at 64 KiB', async () => {
    file('small.json', '{}');
    expectUsageError(await verify('/dev/zero', 'small.json'), /--headers file '\/dev\/zero' is over 64 KiB: .*save the headers alone/);
  });

  test('a 1 GiB file (sparse) is refused without being read whole', async () => {
    const path = join(dir, 'huge.bin');
    writeFileSync(path, '');
    truncateSync(path, 1024 * MIB);
    const started = Date.now();
    expectUsageError(await verify('headers.txt', 'huge.bin'), /--body file 'huge\.bin' is over 1 MiB/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  test('a body of exactly 1 MiB is read and verified; one byte more is refused', async () => {
    const body = Buffer.alloc(MIB, 0x20);
    file('mib.json', body);
    file('mib-headers.txt', headersFor(body));
    // Read whole and signed: past the file bound, the verifier says what it is (not an event).
    const read = await verify('mib-headers.txt', 'mib.json');
    expect(read.code).toBe(1);
    expect(read.stderr).toMatch(/^invalid: invalid_payload: /);
    file('mib-plus.json', Buffer.alloc(MIB + 1, 0x20));
    expectUsageError(await verify('mib-headers.txt', 'mib-plus.json'), /--body file 'mib-plus\.json' is over 1 MiB/);
  });

  test('a headers file of 64 KiB is read; one byte more is refused', async () => {
    file('body.json', '{}');
    const padded = `${headersFor('{}')}\nX-Pad: `;
    file('headers-64k.txt', padded.padEnd(64 * 1024, 'x'));
    expect((await verify('headers-64k.txt', 'body.json')).stderr).toMatch(/^invalid: invalid_payload: /);
    file('headers-64k-plus.txt', padded.padEnd(64 * 1024 + 1, 'x'));
    expectUsageError(await verify('headers-64k-plus.txt', 'body.json'), /--headers file 'headers-64k-plus\.txt' is over 64 KiB/);
  });

  test('a missing file or a directory is still "cannot read", with the code', async () => {
    expectUsageError(await verify('headers.txt', 'nope.json'), /cannot read --body file 'nope\.json' \(ENOENT\)/);
    expectUsageError(await verify('headers.txt', '.'), /cannot read --body file '\.' \(EISDIR\)/);
  });

  // mkfifo through the shell (a tool of the machine, not a package).
  const mkfifo = (path: string) => spawnSync('sh', ['-c', 'mkfifo "$1"', 'sh', path]).status === 0;
  test.runIf(process.platform !== 'win32')(
    'a pipe (a FIFO: what --body /dev/stdin or <(…) is) is read too: nothing is read by position',
    async () => {
      const fifo = join(dir, 'body.fifo');
      expect(mkfifo(fifo)).toBe(true);
      expect(existsSync(fifo)).toBe(true);
      createWriteStream(fifo).end('{}');
      const run = await verify('headers.txt', 'body.fifo');
      expect(run.stderr).toMatch(/^invalid: invalid_payload: /); // read and verified: {} is not an event
    },
  );
});
