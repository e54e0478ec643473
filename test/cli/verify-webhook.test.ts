// `business-payments verify-webhook`: a saved delivery (headers file + raw body file),
// signed here with node:crypto rather than the SDK's signWebhook.
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseHeadersFile } from '../../src/cli/verify-webhook.js';
import { paymentEvent } from '../support/events.js';
import { expectUsageError, runCli } from '../support/cli.js';

const secret = 'whsec_test_cli';
const now = 1_700_000_000;
const base = paymentEvent();
// Non-ASCII in the body on purpose: the bytes, not the characters, are signed.
const event = paymentEvent({
  data: {
    ...(base.data as Record<string, unknown>),
    customer: { name: 'Asha Mwinyi — ☕', email: 'asha@example.com', phone: '255700000001' },
  },
});
// Pretty-printed with a trailing newline: the bytes, not the JSON, are what is signed.
const body = `${JSON.stringify(event, null, 2)}\n`;
const signature = createHmac('sha256', secret).update(`${now}.${body}`).digest('hex');

let dir: string;
const file = (name: string, content: string | Buffer) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
const headerText = (overrides: Record<string, string> = {}) =>
  Object.entries({
    'Content-Type': 'application/json',
    'X-Service-Event': 'payment.completed',
    'X-Service-Timestamp': String(now),
    'X-Service-Signature': signature,
    'X-Environment': 'sandbox',
    ...overrides,
  })
    .map(([name, value]) => `${name}: ${value}`)
    .join('\r\n');

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'bp-cli-verify-'));
  file('body.json', body);
  file('headers.txt', `POST /webhooks HTTP/1.1\r\nHost: localhost:3000\r\n${headerText()}\r\n\r\n`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const verify = (...extra: string[]) =>
  runCli(['verify-webhook', '--secret', secret, '--headers', 'headers.txt', '--body', 'body.json', '--now', String(now), ...extra], {
    cwd: dir,
  });

describe('verify-webhook', () => {
  test('a valid delivery prints the event as pretty JSON and exits 0', async () => {
    const run = await verify();
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(run.stdout)).toEqual({ ...event, format: 'current' });
    expect(run.stdout).toBe(`${JSON.stringify({ ...event, format: 'current' }, null, 2)}\n`);
  });

  test('headers as a JSON object, absolute paths, a rotated secret list', async () => {
    const headers = file(
      'headers.json',
      JSON.stringify({ 'x-service-signature': signature, 'x-service-timestamp': now, 'x-service-event': 'payment.completed' }),
    );
    const run = await runCli([
      'verify-webhook',
      '--secret',
      'whsec_old',
      '--secret',
      secret,
      '--headers',
      headers,
      '--body',
      join(dir, 'body.json'),
      '--now',
      String(now),
    ]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).id).toBe('evt_01HV8Q2ZK3');
  });

  test('the body is read as raw bytes (a changed byte fails)', async () => {
    file('body-crlf.json', body.replaceAll('\n', '\r\n'));
    const run = await verify('--body', 'body-crlf.json');
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^invalid: invalid_signature: .+\n$/);
  });

  test.each([
    ['wrong secret', ['--secret', 'whsec_other'], 'invalid_signature'],
    ['too old for the window', ['--now', String(now + 301)], 'timestamp_too_old'],
    ['in the future', ['--now', String(now - 301)], 'timestamp_in_future'],
    ['environment pinned to production', ['--environment', 'production'], 'environment_mismatch'],
  ])('%s: "invalid: <reason>: <message>", exit 1', async (_name, extra, reason) => {
    const args = ['verify-webhook', '--secret', secret, '--headers', 'headers.txt', '--body', 'body.json', '--now', String(now)];
    for (let i = 0; i < extra.length; i += 2) {
      const at = args.indexOf(extra[i]!);
      if (at >= 0) args[at + 1] = extra[i + 1]!;
      else args.push(extra[i]!, extra[i + 1]!);
    }
    const run = await runCli(args, { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr.split('\n')).toHaveLength(2);
    expect(run.stderr).toMatch(new RegExp(`^invalid: ${reason}: \\S.*\\n$`));
  });

  test('--secret falls back to BUSINESS_PAYMENTS_WEBHOOK_SECRET', async () => {
    const run = await runCli(['verify-webhook', '--headers', 'headers.txt', '--body', 'body.json', '--now', String(now)], {
      cwd: dir,
      env: { BUSINESS_PAYMENTS_WEBHOOK_SECRET: secret },
    });
    expect(run.code).toBe(0);
  });

  test("--environment takes that environment's secret: env BUSINESS_PAYMENTS_WEBHOOK_SECRET_<ENVIRONMENT> first", async () => {
    const args = ['verify-webhook', '--headers', 'headers.txt', '--body', 'body.json', '--now', String(now)];
    const env = { BUSINESS_PAYMENTS_WEBHOOK_SECRET: 'whsec_shared', BUSINESS_PAYMENTS_WEBHOOK_SECRET_SANDBOX: secret };
    // The delivery is a sandbox one, signed with `secret`.
    expect((await runCli([...args, '--environment', 'sandbox'], { cwd: dir, env })).code).toBe(0);
    // Without --environment the shared variable is used: the wrong secret here.
    expect((await runCli(args, { cwd: dir, env })).stderr).toMatch(/^invalid: invalid_signature: /);
    // A production check takes the production secret, and refuses a sandbox delivery anyway.
    const production = { ...env, BUSINESS_PAYMENTS_WEBHOOK_SECRET_PRODUCTION: secret };
    expect((await runCli([...args, '--environment', 'production'], { cwd: dir, env: production })).stderr).toMatch(
      /^invalid: environment_mismatch: /,
    );
  });

  test('--tolerance widens the window', async () => {
    expect((await verify('--now', String(now + 600))).code).toBe(1);
    expect((await verify('--now', String(now + 600), '--tolerance', '900')).code).toBe(0);
  });

  test('missing signature header and event mismatch', async () => {
    file(
      'no-sig.txt',
      headerText()
        .split('\r\n')
        .filter((l) => !l.startsWith('X-Service-Signature'))
        .join('\n'),
    );
    expect((await verify('--headers', 'no-sig.txt')).stderr).toMatch(/^invalid: missing_header: /);
    file('other-event.txt', headerText({ 'X-Service-Event': 'payment.failed' }));
    expect((await verify('--headers', 'other-event.txt')).stderr).toMatch(/^invalid: event_mismatch: /);
  });

  test('a secret with surrounding whitespace is a usage error, not an invalid delivery', async () => {
    const run = await runCli(['verify-webhook', '--secret', ` ${secret}`, '--headers', 'headers.txt', '--body', 'body.json'], { cwd: dir });
    expectUsageError(run, /^business-payments verify-webhook: .*whitespace/i);
  });

  test.each([
    [[], /--secret is not set: pass it or set BUSINESS_PAYMENTS_WEBHOOK_SECRET$/],
    [['--secret', 's', '--body', 'body.json'], /missing --headers$/],
    [['--secret', 's', '--headers', 'headers.txt'], /missing --body$/],
    [['--secret', 's', '--headers', 'nope.txt', '--body', 'body.json'], /cannot read --headers file 'nope.txt' \(ENOENT\)$/],
    [['--secret', 's', '--headers', 'headers.txt', '--body', 'nope.json'], /cannot read --body file 'nope.json' \(ENOENT\)$/],
    [['--secret', 's', '--headers', 'headers.txt', '--body', 'body.json', '--tolerance=-5'], /--tolerance must be a whole number/],
    // The verifier accepts 1 to 3600 s: the CLI says so itself instead of failing later.
    [
      ['--secret', 's', '--headers', 'headers.txt', '--body', 'body.json', '--tolerance', '0'],
      /--tolerance must be a whole number from 1 to 3600/,
    ],
    [
      ['--secret', 's', '--headers', 'headers.txt', '--body', 'body.json', '--tolerance', '3601'],
      /--tolerance must be a whole number from 1 to 3600/,
    ],
    [['--secret', 's', '--headers', 'headers.txt', '--body', 'body.json', '--now', 'yesterday'], /--now must be a whole number/],
  ])('bad arguments %j: exit 2 with usage', async (args, reason) => {
    expectUsageError(await runCli(['verify-webhook', ...args], { cwd: dir, env: {} }), reason);
  });

  test('a malformed headers file is a usage error naming the line', async () => {
    file('bad-headers.txt', 'X-Service-Timestamp: 1\nthis is not a header\n');
    const run = await verify('--headers', 'bad-headers.txt');
    expectUsageError(run, /--headers line 2 is not "Name: value"/);
  });

  test('--help', async () => {
    const run = await runCli(['verify-webhook', '-h']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: business-payments verify-webhook --secret S --headers FILE --body FILE/);
  });
});

describe('verify-webhook: a delivery of the earlier generation (X-Signature over the body, the API secret)', () => {
  const apiSecret = 'test_secret_cli_legacy';
  const ipn =
    '{"data":{"ref_trx":"order-9","amount":"250.00","currency_code":"KES","customer_name":"Juma","environment":"production",' +
    `"is_sandbox":false,"trx_id":"TRXLEGACY9"},"message":"Payment Completed","status":"completed","timestamp":${now}}`;
  const legacyHeaders = (overrides: Record<string, string> = {}) =>
    Object.entries({
      'Content-Type': 'application/json',
      'User-Agent': 'GuzzleHttp/7',
      'X-Signature': createHmac('sha256', apiSecret).update(ipn).digest('hex'),
      'X-Environment': 'production',
      ...overrides,
    })
      .map(([name, value]) => `${name}: ${value}`)
      .join('\n');
  const run = (...extra: string[]) =>
    runCli(['verify-webhook', '--headers', 'ipn-headers.txt', '--body', 'ipn.json', '--now', String(now), ...extra], { cwd: dir, env: {} });

  beforeAll(() => {
    file('ipn.json', ipn);
    file('ipn-headers.txt', legacyHeaders());
  });

  test('verified with the API secret: the payment event, format legacy, printed as JSON', async () => {
    const result = await run('--secret', apiSecret, '--environment', 'production');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const event = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(event).toMatchObject({
      type: 'payment.completed',
      format: 'legacy',
      created_at: new Date(now * 1000).toISOString(),
      data: {
        trx_id: 'TRXLEGACY9',
        merchant_ref: 'order-9',
        amount: { value: 250, currency: 'KES' },
        status: 'completed',
        environment: 'production',
      },
      legacy: { message: 'Payment Completed', timestamp: now },
    });
    expect(event).not.toHaveProperty('id');
  });

  test('a rotation list [webhook secret, API secret] verifies both forms', async () => {
    expect((await run('--secret', secret, '--secret', apiSecret)).code).toBe(0);
    const current = await runCli(
      [
        'verify-webhook',
        '--secret',
        secret,
        '--secret',
        apiSecret,
        '--headers',
        'headers.txt',
        '--body',
        'body.json',
        '--now',
        String(now),
      ],
      { cwd: dir },
    );
    expect(current.code).toBe(0);
    expect(JSON.parse(current.stdout)).toMatchObject({ format: 'current' });
  });

  test('--format legacy takes the API secret from BUSINESS_PAYMENTS_API_SECRET', async () => {
    const result = await runCli(
      ['verify-webhook', '--headers', 'ipn-headers.txt', '--body', 'ipn.json', '--now', String(now), '--format', 'legacy'],
      {
        cwd: dir,
        env: { BUSINESS_PAYMENTS_API_SECRET: apiSecret, BUSINESS_PAYMENTS_WEBHOOK_SECRET: 'whsec_not_this_one' },
      },
    );
    expect(result.code).toBe(0);
    expectUsageError(
      await runCli(['verify-webhook', '--headers', 'ipn-headers.txt', '--body', 'ipn.json', '--format', 'legacy'], { cwd: dir, env: {} }),
      /--secret is not set: pass it or set BUSINESS_PAYMENTS_API_SECRET$/,
    );
  });

  test.each([
    ['the webhook secret', ['--secret', secret], 'invalid_signature', /API secret/],
    ['too old', ['--secret', apiSecret, '--now', String(now + 301)], 'timestamp_too_old', /s old/],
    ['in the future', ['--secret', apiSecret, '--now', String(now - 301)], 'timestamp_in_future', /ahead/],
    [
      'the other environment',
      ['--secret', apiSecret, '--environment', 'sandbox'],
      'environment_mismatch',
      /"production", expected "sandbox"/,
    ],
    ['--format current only', ['--secret', apiSecret, '--format', 'current'], 'missing_header', /Form 'legacy' refused/],
  ])('%s: "invalid: <reason>: <message>", exit 1', async (_name, extra, reason, message) => {
    const args = ['verify-webhook', '--headers', 'ipn-headers.txt', '--body', 'ipn.json', '--now', String(now)];
    for (let i = 0; i < extra.length; i += 2) {
      const at = args.indexOf(extra[i]!);
      if (at >= 0) args[at + 1] = extra[i + 1]!;
      else args.push(extra[i]!, extra[i + 1]!);
    }
    const result = await runCli(args, { cwd: dir, env: {} });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(new RegExp(`^invalid: ${reason}: \\S.*\\n$`));
    expect(result.stderr).toMatch(message);
  });

  test('X-Environment disagreeing with the signed body, and a changed byte', async () => {
    file('ipn-headers-sandbox.txt', legacyHeaders({ 'X-Environment': 'sandbox' }));
    expect((await run('--secret', apiSecret, '--headers', 'ipn-headers-sandbox.txt')).stderr).toMatch(/^invalid: environment_mismatch: /);
    file('ipn-changed.json', ipn.replace('Juma', 'Jumb'));
    expect((await run('--secret', apiSecret, '--body', 'ipn-changed.json')).stderr).toMatch(/^invalid: invalid_signature: /);
  });

  test('--format must be current or legacy; --help names it', async () => {
    expectUsageError(await run('--secret', apiSecret, '--format', 'spec'), /--format must be current or legacy, got 'spec'$/);
    const help = await runCli(['verify-webhook', '--help']);
    expect(help.stdout).toMatch(/--format F/);
    expect(help.stdout).toMatch(/earlier\s+generation/);
  });
});

describe('parseHeadersFile', () => {
  test('lines: request line skipped, names lower-cased, values trimmed, colons in values kept, repeats joined', () => {
    expect(parseHeadersFile('POST /hook HTTP/1.1\nHost: a:3000\n X-A :  1 \nx-a: 2\n\n')).toEqual({ host: 'a:3000', 'x-a': '1, 2' });
  });
  test('JSON object: numbers and arrays accepted, other values refused', () => {
    expect(parseHeadersFile('{"X-T": 5, "X-L": ["a", "b"]}')).toEqual({ 'x-t': '5', 'x-l': 'a, b' });
    expect(() => parseHeadersFile('{"X-T": {}}')).toThrow(/must be a string/);
    expect(() => parseHeadersFile('{nope')).toThrow(/not valid JSON/);
    expect(() => parseHeadersFile('[1]')).toThrow();
  });
});
