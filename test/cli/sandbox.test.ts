// `business-payments sandbox` in-process: banner, JSON first line, request and webhook
// log, clean stop on the abort signal, port in use.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, test } from 'vitest';
import { PaymentsClient } from '../../src/index.js';
import { DEFAULT_CREDENTIALS, TEST_PHONE_NUMBERS } from '../../src/testing.js';
import { main } from '../../src/cli/main.js';
import { expectUsageError, runCli } from '../support/cli.js';

/** Starts `sandbox` with a live view of its output; `stop()` aborts it and resolves to the exit code. */
function startSandbox(args: string[]) {
  const controller = new AbortController();
  const out = { stdout: '', stderr: '' };
  const done = main(['sandbox', ...args], {
    stdout: { write: (text: string) => (out.stdout += text) },
    stderr: { write: (text: string) => (out.stderr += text) },
    signal: controller.signal,
  });
  const until = async (predicate: () => boolean, what: string) => {
    for (let i = 0; i < 100 && !predicate(); i++) await sleep(50);
    if (!predicate()) throw new Error(`timed out waiting for ${what}; stdout:\n${out.stdout}\nstderr:\n${out.stderr}`);
  };
  return {
    out,
    until,
    stop: async () => {
      controller.abort();
      return done;
    },
  };
}

function clientFor(baseUrl: string, credentials: { merchantKey: string; apiKey: string; apiSecret: string }) {
  return new PaymentsClient({ environment: 'sandbox', ...credentials, baseUrl, maxRetries: 0 });
}

describe('sandbox', () => {
  test('prints the URL, the credentials and export lines, then one line per request and webhook; stops on abort', async () => {
    // A merchant endpoint for the push payment's webhook.
    const hooks: string[] = [];
    const endpoint = createServer((req, res) => {
      hooks.push(req.url!);
      res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    const hookUrl = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/hooks`;

    const sandbox = startSandbox(['--port', '0', '--time-scale', '0.001']);
    try {
      await sandbox.until(() => sandbox.out.stdout.includes('Press Ctrl+C'), 'the banner');
      const { stdout } = sandbox.out;
      const baseUrl = /running at (http:\/\/127\.0\.0\.1:\d+)\n/.exec(stdout)![1]!;
      const field = (label: string) => new RegExp(`^  ${label} +(\\S+)$`, 'm').exec(stdout)?.[1];
      const credentials = { merchantKey: field('merchant key')!, apiKey: field('API key')!, apiSecret: field('API secret')! };
      expect(field('environment')).toBe('sandbox');
      expect(field('web console')).toBe(`${baseUrl}/`);
      expect(field('webhook secret')).toMatch(/\S/);
      expect(stdout).toContain(`export BUSINESS_PAYMENTS_BASE_URL=${baseUrl}\n`);
      expect(stdout).toContain(`export BUSINESS_PAYMENTS_API_SECRET=${credentials.apiSecret}\n`);
      expect(stdout).toContain(`export BUSINESS_PAYMENTS_ENVIRONMENT=sandbox\n`);
      expect(stdout).toContain(`export BUSINESS_PAYMENTS_WEBHOOK_SECRET=${field('webhook secret')} `);
      // The sandbox set, said to be so; the production webhook secret is never printed.
      expect(field('webhook secret')).toBe(DEFAULT_CREDENTIALS.sandbox.webhookSecret);
      expect(stdout).toContain('The webhook secret above signs sandbox deliveries only.');
      expect(stdout).not.toContain(DEFAULT_CREDENTIALS.production.webhookSecret);

      const client = clientFor(baseUrl, credentials);
      const payment = await client.payments.create({
        payment_amount: 5000,
        currency_code: 'TZS',
        ref_trx: 'cli-sandbox-1',
        payment_mode: 'push',
        customer_phone: TEST_PHONE_NUMBERS.success,
        ipn_url: hookUrl,
      });
      const outcome = await client.payments.waitForOutcome(payment.trx_id, { timeout: 5_000, interval: 20 });
      expect(outcome.status).toBe('success');
      expect((await fetch(`${baseUrl}/api/v1/balance`)).status).toBe(401); // unsigned

      await sandbox.until(
        () => /webhook payment\.completed/.test(sandbox.out.stdout) && /GET \/api\/v1\/balance 401/.test(sandbox.out.stdout),
        'the log',
      );
      const log = sandbox.out.stdout.slice(sandbox.out.stdout.indexOf('Press Ctrl+C')).split('\n').slice(1).filter(Boolean);
      expect(log[0]).toMatch(/^\d{2}:\d{2}:\d{2} {2}POST \/api\/v1\/payments 200$/);
      expect(log).toContainEqual(
        expect.stringMatching(new RegExp(`^\\d{2}:\\d{2}:\\d{2}  GET /api/v1/verify-payment/${payment.trx_id} 200$`)),
      );
      // A refusal says why.
      expect(log).toContainEqual(
        expect.stringMatching(
          / {2}GET \/api\/v1\/balance 401 {2}Missing merchant key: send X-Merchant-Key \(or its alias X-Business-Key\)\.$/,
        ),
      );
      expect(log).toContainEqual(
        expect.stringMatching(new RegExp(`  webhook payment\\.completed evt_\\S+ -> ${hookUrl} 204 \\(attempt 1\\)$`)),
      );
      expect(hooks).toEqual(['/hooks']);
      // The web console shows the payment.
      const consolePage = await fetch(`${baseUrl}/`, { headers: { Accept: 'text/html' } });
      expect(await consolePage.text()).toContain(payment.trx_id);
    } finally {
      expect(await sandbox.stop()).toBe(0);
      await new Promise((resolve) => endpoint.close(resolve));
    }
    expect(sandbox.out.stderr).toBe('sandbox stopped\n');
    // Closed: nothing answers any more.
    const port = /running at http:\/\/127\.0\.0\.1:(\d+)/.exec(sandbox.out.stdout)![1];
    await expect(fetch(`http://127.0.0.1:${port}/api/v1/site-info`)).rejects.toThrow();
  });

  test('--rate-limit N: the Nth signed request in a minute is the last one answered; then 429', async () => {
    const sandbox = startSandbox(['--json', '--port', '0', '--rate-limit', '3']);
    try {
      await sandbox.until(() => sandbox.out.stdout.includes('\n'), 'the first line');
      const config = JSON.parse(sandbox.out.stdout.split('\n')[0]!) as Record<string, string>;
      const client = clientFor(config.baseUrl!, config as never);
      for (let i = 0; i < 3; i++) await client.balance.retrieve();
      await expect(client.balance.retrieve()).rejects.toMatchObject({ name: 'RateLimitError', status: 429 });
    } finally {
      expect(await sandbox.stop()).toBe(0);
    }
  });

  test('--idempotency-keys N: N keys are kept; a new one past them is refused with 503 while kept ones replay', async () => {
    const sandbox = startSandbox(['--json', '--port', '0', '--idempotency-keys', '1']);
    try {
      await sandbox.until(() => sandbox.out.stdout.includes('\n'), 'the first line');
      const config = JSON.parse(sandbox.out.stdout.split('\n')[0]!) as Record<string, string>;
      const client = clientFor(config.baseUrl!, config as never);
      const params = { payment_amount: 25, currency_code: 'USD', ref_trx: 'cli-keys-1', ipn_url: 'http://127.0.0.1:9/hooks' };
      const first = await client.payments.create(params, { idempotencyKey: 'key-1' });
      expect((await client.payments.create(params, { idempotencyKey: 'key-1' })).trx_id).toBe(first.trx_id);
      await expect(client.payments.create({ ...params, ref_trx: 'cli-keys-2' }, { idempotencyKey: 'key-2' })).rejects.toMatchObject({
        status: 503,
        message: expect.stringContaining('Idempotency key store full'),
      });
    } finally {
      expect(await sandbox.stop()).toBe(0);
    }
  });

  test('--json: the first line is exactly the config object; log lines are JSON too', async () => {
    const sandbox = startSandbox(['--json', '--port', '0']);
    try {
      await sandbox.until(() => sandbox.out.stdout.includes('\n'), 'the first line');
      const config = JSON.parse(sandbox.out.stdout.split('\n')[0]!) as Record<string, string>;
      expect(Object.keys(config)).toEqual(['merchantKey', 'apiKey', 'apiSecret', 'webhookSecret', 'baseUrl', 'consoleUrl', 'environment']);
      expect(config).toMatchObject({ environment: 'sandbox', baseUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
      expect(config.webhookSecret).toBe(DEFAULT_CREDENTIALS.sandbox.webhookSecret);
      const info = await clientFor(config.baseUrl!, config as never).siteInfo.retrieve();
      expect(info.site_name).toEqual(expect.any(String));
      await sandbox.until(() => sandbox.out.stdout.split('\n').length > 2, 'a log line');
      expect(JSON.parse(sandbox.out.stdout.split('\n')[1]!)).toEqual({
        kind: 'request',
        method: 'GET',
        path: '/api/v1/site-info',
        status: 200,
        at: expect.any(Number),
      });
    } finally {
      expect(await sandbox.stop()).toBe(0);
    }
  });

  test('--generation earlier: the earlier server, its API secret printed as the webhook secret', async () => {
    const sandbox = startSandbox(['--json', '--port', '0', '--generation', 'earlier']);
    try {
      await sandbox.until(() => sandbox.out.stdout.includes('\n'), 'the first line');
      const config = JSON.parse(sandbox.out.stdout.split('\n')[0]!) as Record<string, string>;
      expect(config).toMatchObject({
        environment: 'sandbox',
        generation: 'earlier',
        merchantKey: expect.stringMatching(/^test_merchant_/),
      });
      expect(config.webhookSecret).toBe(config.apiSecret);
      const missing = await fetch(`${config.baseUrl}/api/v1/payments`, { headers: { Accept: 'application/json' } });
      expect(missing.status).toBe(404);
      expect(((await missing.json()) as { message: string }).message).toBe('The route api/v1/payments could not be found.');
      const info = await clientFor(config.baseUrl!, config as never).siteInfo.retrieve();
      expect(info.api_version).toBe('1.0');
    } finally {
      expect(await sandbox.stop()).toBe(0);
    }
  });

  test('--generation earlier: the banner says which server it plays', async () => {
    const sandbox = startSandbox(['--port', '0', '--generation', 'earlier']);
    try {
      await sandbox.until(() => sandbox.out.stdout.includes('Press Ctrl+C'), 'the banner');
      expect(sandbox.out.stdout).toMatch(/^Business Payments sandbox \(earlier generation\) running at http:\/\/127\.0\.0\.1:\d+\n/);
      expect(sandbox.out.stdout).toContain('POST /api/v1/initiate-payment');
      expect(sandbox.out.stdout).toMatch(/webhook secret +test_secret_1001 +\(the API secret/);
    } finally {
      expect(await sandbox.stop()).toBe(0);
    }
  });

  test('a port in use: one line, exit 1', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const run = await runCli(['sandbox', '--port', String(port)]);
      expect(run).toEqual({
        code: 1,
        stdout: '',
        stderr: `sandbox: port ${port} is in use; pass --port 0 for any free port, or another port\n`,
      });
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  test.each([
    [['--port', '70000'], /--port must be a whole number from 0 to 65535, got '70000'$/],
    [['--port', 'http'], /--port must be a whole number/],
    [['--time-scale', '0'], /--time-scale must be a number above 0/],
    [['--time-scale', 'fast'], /--time-scale must be a number above 0/],
    [['--time-scale', '-1'], /--time-scale must be a number above 0/],
    [['--rate-limit', '0'], /--rate-limit must be a whole number from 1 to 1000000000, got '0'/],
    [['--rate-limit', '-5'], /--rate-limit must be a whole number/],
    [['--rate-limit', 'lots'], /--rate-limit must be a whole number/],
    [['--idempotency-keys', '0'], /--idempotency-keys must be a whole number from 1 to 10000000, got '0'/],
    [['--generation', 'legacy'], /--generation must be current or earlier, got 'legacy'/],
    [['now'], /Unexpected argument 'now'$/],
    [['--host', '0.0.0.0'], /Unknown option '--host'$/],
  ])('bad arguments %j: exit 2 with usage', async (args, reason) => {
    expectUsageError(await runCli(['sandbox', ...args]), reason);
  });
});
