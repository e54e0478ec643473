// `business-payments sign`: the printed signature must equal an HMAC computed by the real
// openssl binary over "<T>.<M>.<P>.<B>", never by the SDK's own signer.
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { createMockService } from '../../src/testing.js';
import { expectUsageError, runCli } from '../support/cli.js';

function openssl(secret: string, payload: string): string {
  const result = spawnSync('openssl', ['dgst', '-sha256', '-hmac', secret], { input: payload, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`openssl failed: ${result.stderr}`);
  return result.stdout.trim().split(/\s+/).pop()!; // "SHA2-256(stdin)= <hex>"
}

function headerLines(stdout: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of stdout.trimEnd().split('\n')) {
    const match = /^([A-Za-z-]+): (.*)$/.exec(line);
    if (!match) throw new Error(`not a "Name: value" line: ${line}`);
    headers[match[1]!] = match[2]!;
  }
  return headers;
}

describe('sign', () => {
  const cases = [
    {
      name: 'GET with a query (payload ends with a dot)',
      method: 'GET',
      path: '/api/v1/payments?limit=10&status=success',
      body: undefined,
    },
    {
      name: 'POST JSON',
      method: 'POST',
      path: '/api/v1/payments',
      body: '{"payment_amount":25,"currency_code":"USD","ref_trx":"order-1"}',
    },
    { name: 'lower-case method, unicode body', method: 'post', path: '/api/v1/payouts', body: '{"note":"Malipo ☕ café"}' },
    { name: 'body with dots, spaces and newlines', method: 'PUT', path: '/x.y', body: 'a.b c\n{"d": 1}\n' },
  ];

  test.each(cases)('matches openssl: $name', async ({ method, path, body }) => {
    const secret = 'test_secret_Ab9.+/=';
    const timestamp = '1700000000';
    const args = ['sign', '--method', method, '--path', path, '--secret', secret, '--timestamp', timestamp];
    if (body !== undefined) args.push('--body', body);
    const run = await runCli(args);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const headers = headerLines(run.stdout);
    const expected = openssl(secret, `${timestamp}.${method.toUpperCase()}.${path}.${body ?? ''}`);
    expect(headers['X-Signature']).toBe(`sha256=${expected}`);
    expect(headers['X-Timestamp']).toBe(timestamp);
    expect(headers['Accept']).toBe('application/json');
    expect(headers['Content-Type']).toBe(body === undefined ? undefined : 'application/json');
  });

  test('timestamp defaults to now', async () => {
    const before = Math.floor(Date.now() / 1000);
    const run = await runCli(['sign', '--method', 'GET', '--path', '/api/v1/balance', '--secret', 's']);
    const headers = headerLines(run.stdout);
    const timestamp = Number(headers['X-Timestamp']);
    expect(timestamp).toBeGreaterThanOrEqual(before);
    expect(timestamp).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(headers['X-Signature']).toBe(`sha256=${openssl('s', `${timestamp}.GET./api/v1/balance.`)}`);
  });

  test('prints the credential headers only when given, in curl -H @file form', async () => {
    const base = ['sign', '--method', 'GET', '--path', '/api/v1/balance', '--secret', 's', '--timestamp', '1'];
    const plain = await runCli(base);
    expect(Object.keys(headerLines(plain.stdout))).toEqual(['X-Timestamp', 'X-Signature', 'Accept']);
    const full = await runCli([...base, '--merchant-key', 'test_mk_1', '--api-key', 'test_ak_1', '--environment', 'sandbox']);
    expect(full.stdout).toBe(
      [
        'X-Timestamp: 1',
        `X-Signature: sha256=${openssl('s', '1.GET./api/v1/balance.')}`,
        'X-Environment: sandbox',
        'X-Merchant-Key: test_mk_1',
        'X-API-Key: test_ak_1',
        'Accept: application/json',
        '',
      ].join('\n'),
    );
  });

  test('--secret falls back to BUSINESS_PAYMENTS_API_SECRET', async () => {
    const run = await runCli(['sign', '--method', 'GET', '--path', '/p', '--timestamp', '5'], {
      env: { BUSINESS_PAYMENTS_API_SECRET: 'from_env' },
    });
    expect(run.code).toBe(0);
    expect(headerLines(run.stdout)['X-Signature']).toBe(`sha256=${openssl('from_env', '5.GET./p.')}`);
  });

  // The keys once did not come from the environment, so the printed curl failed with
  // "Missing merchant key"; and any word passed as a method.
  test('the keys and the environment fall back to BUSINESS_PAYMENTS_* as the secret does', async () => {
    const run = await runCli(['sign', '--method', 'GET', '--path', '/p', '--timestamp', '5'], {
      env: {
        BUSINESS_PAYMENTS_API_SECRET: 'from_env',
        BUSINESS_PAYMENTS_MERCHANT_KEY: 'test_mk_env',
        BUSINESS_PAYMENTS_API_KEY: 'test_ak_env',
        BUSINESS_PAYMENTS_ENVIRONMENT: 'sandbox',
      },
    });
    expect(run.code).toBe(0);
    expect(headerLines(run.stdout)).toMatchObject({
      'X-Merchant-Key': 'test_mk_env',
      'X-API-Key': 'test_ak_env',
      'X-Environment': 'sandbox',
    });
    const given = await runCli(['sign', '--method', 'GET', '--path', '/p', '--secret', 's', '--merchant-key', 'test_mk_flag'], {
      env: { BUSINESS_PAYMENTS_MERCHANT_KEY: 'test_mk_env' },
    });
    expect(headerLines(given.stdout)['X-Merchant-Key']).toBe('test_mk_flag');
  });

  test('--method FOO is refused (exit 2), naming the methods it takes', async () => {
    const run = await runCli(['sign', '--method', 'FOO', '--path', '/p', '--secret', 's']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--method must be an HTTP method \(GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS\), got 'FOO'/);
  });

  test('--help prints the usage on stdout', async () => {
    const run = await runCli(['sign', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: business-payments sign --method M --path P/);
    expect(run.stdout).toContain('curl -H @headers.txt');
    expect(run.stderr).toBe('');
  });

  test.each([
    [['--path', '/p', '--secret', 's'], /^business-payments sign: missing --method$/],
    [['--method', 'GET', '--secret', 's'], /missing --path$/],
    [['--method', 'GET', '--path', '/p'], /--secret is not set: pass it or set BUSINESS_PAYMENTS_API_SECRET$/],
    [['--method', 'GET', '--path', 'api/v1/balance', '--secret', 's'], /--path must start with \//],
    [['--method', 'GE T', '--path', '/p', '--secret', 's'], /--method must be an HTTP method/],
    [['--method', 'GET', '--path', '/p', '--secret', 's', '--timestamp', '2024-01-01'], /--timestamp must be unix seconds/],
    [['--method', 'GET', '--path', '/p', '--secret', 's', '--environment', 'live'], /--environment must be sandbox or production/],
    [['--method', 'GET', '--path', '/p', '--secret', 's', '--bogus'], /Unknown option '--bogus'$/],
    [['--method'], /argument missing/],
    [['--method', 'GET', '--path', '/p', '--secret', 's', 'extra'], /Unexpected argument 'extra'$/],
  ])('bad arguments %j: one-line reason, usage, exit 2', async (args, reason) => {
    expectUsageError(await runCli(['sign', ...args], { env: {} }), reason);
  });
});

describe('sign, then curl -H @file against the sandbox', () => {
  test.skipIf(spawnSync('curl', ['--version']).status !== 0)('the sandbox accepts the printed headers', async () => {
    const mock = createMockService();
    const server = await mock.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { merchantKey, apiKey, apiSecret } = mock.credentials.sandbox;
      const body = JSON.stringify({
        payment_amount: 12.5,
        currency_code: 'USD',
        ref_trx: 'curl-1',
        ipn_url: 'https://shop.example.com/hooks',
      });
      const signed = await runCli([
        'sign',
        '--method',
        'POST',
        '--path',
        '/api/v1/payments',
        '--body',
        body,
        '--secret',
        apiSecret,
        '--merchant-key',
        merchantKey,
        '--api-key',
        apiKey,
        '--environment',
        'sandbox',
      ]);
      const headersFile = join(mkdtempSync(join(tmpdir(), 'bp-curl-')), 'headers.txt');
      writeFileSync(headersFile, signed.stdout);
      const curl = (args: string[]) =>
        new Promise<string>((resolve, reject) =>
          execFile('curl', ['-s', '-w', '\n%{http_code}', ...args], (error, stdout) => (error ? reject(error) : resolve(stdout))),
        );
      const created = (await curl(['-H', `@${headersFile}`, '--data-binary', body, `${server.url}/api/v1/payments`])).split('\n');
      expect(created.pop()).toBe('200');
      expect(JSON.parse(created.join('\n'))).toMatchObject({
        status: 'success',
        data: { amount: 12.5, currency: 'USD', status: 'pending' },
      });

      const tampered = (
        await curl(['-H', `@${headersFile}`, '--data-binary', body.replace('12.5', '1250'), `${server.url}/api/v1/payments`])
      ).split('\n');
      expect(tampered.pop()).toBe('401');
    } finally {
      await server.close();
      await mock.close();
    }
  });
});
