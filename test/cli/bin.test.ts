// The built executable (dist/cli.js, package.json "bin"): shebang, exec bit, and the
// sandbox as a separate process driven by the SDK over a real socket.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isBuiltin } from 'node:module';
import { delimiter, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { beforeAll, describe, expect, inject, onTestFinished, test } from 'vitest';
import { PaymentsClient } from '../../src/index.js';
import { createMockService } from '../../src/testing.js';
import { packageCopyReady, runCli } from '../support/cli.js';

const pkg = { dir: inject('packageCopy') };
const cli = join(pkg.dir, 'dist', 'cli.js');
// Built once for the suite by test/global-setup.ts, alongside the other tests.
beforeAll(() => packageCopyReady(pkg.dir), 180_000);
// The shebang finds `node` on PATH: put the Node running these tests first.
const env = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` };

describe('the built bin', () => {
  test('package.json bin points at dist/cli.js, which alone has the shebang and the exec bit', () => {
    const manifest = JSON.parse(readFileSync(join(pkg.dir, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    expect(manifest.bin).toEqual({ 'business-payments': './dist/cli.js' });
    expect(join(pkg.dir, manifest.bin['business-payments']!)).toBe(cli);
    expect(readFileSync(cli, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(statSync(cli).mode & 0o111).not.toBe(0);
    for (const entry of ['index.js', 'index.cjs', 'webhooks.js', 'webhooks.cjs', 'testing.js', 'testing.cjs']) {
      expect(readFileSync(join(pkg.dir, 'dist', entry), 'utf8').startsWith('#!')).toBe(false);
    }
  });

  test('it uses the package only through its public entries', () => {
    const source = readFileSync(cli, 'utf8');
    const imports = [...source.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]!);
    const own = imports.filter((name) => !isBuiltin(name));
    expect(new Set(own)).toEqual(
      new Set(['business-payments', 'business-payments/doctor', 'business-payments/testing', 'business-payments/webhooks']),
    );
    // One dynamic import: the merchant's own module (`reconcile --fulfillment`), never a file of this package.
    const dynamic = [...source.matchAll(/\bimport\(\s*(?:\/\*[^*]*\*\/\s*)?([^)]*\))/g)].map((m) => m[1]);
    expect(dynamic).toEqual(['pathToFileURL(path)']);
  });

  test("reconcile --fulfillment loads the merchant's module, which imports the installed package's entries", async () => {
    const mock = createMockService({ autoRun: false });
    const sandbox = await mock.listen({ port: 0 });
    const dir = mkdtempSync(join(pkg.dir, 'reconcile-'));
    onTestFinished(async () => {
      rmSync(dir, { recursive: true, force: true });
      await sandbox.close();
      await mock.close();
    });
    const config = { environment: 'sandbox' as const, baseUrl: sandbox.url, ...mock.credentials.sandbox };
    const client = new PaymentsClient(config);
    const { trx_id } = await client.payments.create({
      payment_amount: 25,
      currency_code: 'USD',
      ref_trx: 'bin-1',
      ipn_url: 'http://127.0.0.1:9/',
    });
    await mock.completeCheckout(trx_id, 'success');
    writeFileSync(
      join(dir, 'fulfillment.mjs'),
      `import { createFulfillment, memoryStore } from 'business-payments/fulfillment';
import { PaymentsClient } from 'business-payments';
// A store that outlives the process stands in here (a plain memoryStore() is refused).
export const fulfillment = createFulfillment({
  environment: 'sandbox', secret: 'unused', client: new PaymentsClient(${JSON.stringify(config)}),
  store: { ...memoryStore(), durable: true },
  onPaid: (tx) => console.error('onPaid', tx.trx_id),
});
`,
    );
    const child = spawn(
      process.execPath,
      [cli, 'reconcile', '--since', '1h', '--older-than', '0', '--fulfillment', 'fulfillment.mjs', '--json'],
      { cwd: dir },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(stderr).toBe(`onPaid ${trx_id}\n`);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ mode: 'fulfillment', seen: 1, checked: 1, paid: 1, errors: [] });
  });

  test('./dist/cli.js --help runs through the shebang', () => {
    const result = spawnSync(cli, ['--help'], { env, encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^Usage: business-payments <command>/);
  });

  test('same output as in-process; bad arguments exit 2', async () => {
    const args = [
      'sign',
      '--method',
      'POST',
      '--path',
      '/api/v1/payments',
      '--body',
      '{"a":1}',
      '--secret',
      's',
      '--timestamp',
      '1700000000',
    ];
    const result = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
    expect(result.status).toBe(0);
    expect(result.stdout).toBe((await runCli(args)).stdout);
    const bad = spawnSync(process.execPath, [cli, 'sign', '--nope'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^business-payments sign: Unknown option '--nope'\n\nUsage:/);
  });

  test('verify-webhook keeps WebhookVerificationError and ConfigurationError apart across entries', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bp-bin-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'headers.txt'), 'X-Service-Timestamp: 1\nX-Service-Signature: 00\nX-Service-Event: payment.completed\n');
    writeFileSync(join(dir, 'body.json'), '{}');
    const run = (secret: string) =>
      spawnSync(process.execPath, [cli, 'verify-webhook', '--secret', secret, '--headers', 'headers.txt', '--body', 'body.json'], {
        cwd: dir,
        encoding: 'utf8',
      });
    const invalid = run('s');
    expect(invalid.status).toBe(1);
    expect(invalid.stderr).toMatch(/^invalid: timestamp_too_old: /);
    const result = run(' s');
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^business-payments verify-webhook: .*whitespace/i);
  });

  test('sandbox --json --port 0: first line is the credentials; the SDK creates and verifies a payment; SIGINT stops it', async () => {
    const child = spawn(process.execPath, [cli, 'sandbox', '--json', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      const first = await lines.next();
      const config = JSON.parse(first.value as string) as Record<string, string>;
      expect(Object.keys(config).sort()).toEqual([
        'apiKey',
        'apiSecret',
        'baseUrl',
        'consoleUrl',
        'environment',
        'merchantKey',
        'webhookSecret',
      ]);
      expect(config.environment).toBe('sandbox');
      expect(config.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

      const client = new PaymentsClient({
        environment: 'sandbox',
        merchantKey: config.merchantKey,
        apiKey: config.apiKey,
        apiSecret: config.apiSecret,
        baseUrl: config.baseUrl,
        maxRetries: 0,
      });
      const payment = await client.payments.create({
        payment_amount: 25,
        currency_code: 'USD',
        ref_trx: 'bin-test-1',
        ipn_url: 'https://shop.example.com/webhooks',
      });
      const verified = await client.payments.verify(payment.trx_id);
      expect(verified).toMatchObject({ trx_id: payment.trx_id, status: 'pending', amount: 25, currency: 'USD' });

      const logged: Array<Record<string, unknown>> = [];
      while (logged.length < 2) logged.push(JSON.parse((await lines.next()).value as string));
      expect(logged).toEqual([
        expect.objectContaining({ kind: 'request', method: 'POST', path: '/api/v1/payments', status: 200 }),
        expect.objectContaining({ kind: 'request', method: 'GET', path: `/api/v1/verify-payment/${payment.trx_id}`, status: 200 }),
      ]);
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(stderr).toBe('sandbox stopped\n');
    } finally {
      child.kill('SIGKILL');
    }
  }, 20_000);
});
