// diagnose() against sandboxes whose clock is off, and the sources it names (issue 29):
// - a 401 that a clock beyond the service's 300 s window explains is the clock's failure,
//   measured from the Date of the 401 (or of another answer), with the NTP fix; the
//   credentials are not judged, never failed;
// - each value of the configuration is named by where it came from: a code option, an
//   environment variable, or (sources) a CLI flag.
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { diagnose, type DiagnoseOptions, type Diagnosis } from '../../src/doctor.js';
import { createMockService, type MockServer, type MockService } from '../../src/testing.js';

const HOUR = 3_600_000;
type Sandbox = { mock: MockService; server: MockServer };
const sandboxes: Sandbox[] = [];
/** A sandbox whose clock is `offset` ms from this machine's. */
async function sandbox(offset = 0): Promise<Sandbox> {
  const mock = createMockService({ autoRun: false, now: () => Date.now() + offset });
  const box = { mock, server: await mock.listen({ port: 0 }) };
  sandboxes.push(box);
  return box;
}
afterAll(async () => {
  for (const { mock, server } of sandboxes) {
    await server.close();
    await mock.close();
  }
});

const options = ({ mock, server }: Sandbox, environment: 'sandbox' | 'production' = 'sandbox'): DiagnoseOptions => ({
  environment,
  baseUrl: server.url,
  ...mock.credentials[environment],
});
const check = (d: Diagnosis, name: string) => d.checks.find((c) => c.name === name)!;
const failed = (d: Diagnosis) => d.checks.filter((c) => c.status === 'fail').map((c) => c.name);

/** A fetch that drops the Date header of the answers whose path `drop` matches. */
const withoutDate =
  (drop: RegExp): typeof fetch =>
  async (input, init) => {
    const answer = await fetch(input, init);
    const url = input instanceof Request ? input.url : String(input);
    if (!drop.test(new URL(url).pathname)) return answer;
    const headers = new Headers(answer.headers);
    headers.delete('date');
    return new Response(await answer.arrayBuffer(), { status: answer.status, headers });
  };

describe('a clock off by more than 300 s: the 401 is the clock, not the credentials', () => {
  let ahead: Sandbox; // the service an hour ahead: the local clock is an hour behind
  let behind: Sandbox;
  beforeAll(async () => {
    ahead = await sandbox(HOUR);
    behind = await sandbox(-HOUR);
  });

  test('the local clock an hour behind: clock ✗ with the skew and NTP, credentials not judged (–), nothing else failed', async () => {
    const d = await diagnose(options(ahead));
    expect(failed(d)).toEqual(['clock']);
    expect(check(d, 'clock')).toEqual({
      name: 'clock',
      status: 'fail',
      detail: expect.stringMatching(
        /^the local clock is 3(59\d|60\d) s behind the service's \(its Date header\): the service refused the signed request \(401 Invalid API credentials\) for it$/,
      ),
      fix: expect.stringMatching(/^Synchronise this machine's clock with NTP .*refuses one more than 300 s from its own clock\.$/),
    });
    expect(check(d, 'credentials')).toEqual({
      name: 'credentials',
      status: 'skip',
      detail: expect.stringMatching(
        /^not judged: the service answered 401 .*the local clock is 3\d{3} s behind .*whatever the credentials/,
      ),
    });
    expect(check(d, 'wallets')).toMatchObject({ status: 'skip', detail: 'needs a clock the service accepts' });
    expect(check(d, 'contract')).toMatchObject({ status: 'skip', detail: 'needs a clock the service accepts' });
    expect(JSON.stringify(d)).not.toMatch(/Use the merchant key/);
  });

  test('the local clock an hour ahead: the same, "ahead of"', async () => {
    const d = await diagnose(options(behind));
    expect(failed(d)).toEqual(['clock']);
    expect(check(d, 'clock').detail).toMatch(/^the local clock is 3\d{3} s ahead of the service's/);
    expect(check(d, 'credentials').status).toBe('skip');
  });

  test('production: approval is unknown for the clock, not for the credentials', async () => {
    const d = await diagnose(options(ahead, 'production'));
    expect(failed(d)).toEqual(['clock']);
    expect(check(d, 'approval')).toMatchObject({ status: 'skip', detail: 'unknown: the signed request was refused for the clock' });
  });

  test('a 401 without a Date: the Date of another answer (the generation probe) measures the clock', async () => {
    const d = await diagnose({ ...options(ahead), fetch: withoutDate(/site-info/) });
    expect(failed(d)).toEqual(['clock']);
    expect(check(d, 'clock').detail).toMatch(/^the local clock is 3\d{3} s behind/);
    expect(check(d, 'credentials').status).toBe('skip');
  });

  test('no Date anywhere: the clock cannot be measured (–); the credentials ✗, and the fix says to check the clock too', async () => {
    const d = await diagnose({ ...options(ahead), fetch: withoutDate(/./) });
    expect(failed(d)).toEqual(['credentials']);
    expect(check(d, 'clock')).toMatchObject({ status: 'skip', detail: 'the service sent no Date header' });
    expect(check(d, 'credentials').fix).toMatch(/; if they are, check the clock \(NTP\): the service sent no Date to compare with\.$/);
  });

  test('a wrong secret with a right clock: still credentials ✗, clock ✓', async () => {
    const right = await sandbox();
    const d = await diagnose({ ...options(right), apiSecret: 'test_wrong_secret' });
    expect(failed(d)).toEqual(['credentials']);
    expect(check(d, 'clock').status).toBe('pass');
    expect(check(d, 'credentials').fix).toMatch(/\(now merchantKey, apiKey, apiSecret from code options\)\.$/);
  });
});

describe('each value named by where it came from', () => {
  let box: Sandbox;
  beforeAll(async () => {
    box = await sandbox();
  });

  test('code options: named as code options', async () => {
    const d = await diagnose(options(box));
    expect(check(d, 'configuration').detail).toBe(
      `sandbox at ${box.server.url} (environment, baseUrl, merchantKey, apiKey, apiSecret from code options)`,
    );
  });

  test('environment variables: each named by its variable, none called an option', async () => {
    vi.stubEnv('BUSINESS_PAYMENTS_ENVIRONMENT', '');
    vi.stubEnv('BUSINESS_PAYMENTS_BASE_URL', box.server.url);
    vi.stubEnv('BUSINESS_PAYMENTS_MERCHANT_KEY', box.mock.credentials.sandbox.merchantKey);
    vi.stubEnv('BUSINESS_PAYMENTS_API_KEY', box.mock.credentials.sandbox.apiKey);
    vi.stubEnv('BUSINESS_PAYMENTS_API_SECRET', 'test_wrong_secret');
    const d = await diagnose();
    expect(check(d, 'configuration').detail).toBe(
      `sandbox at ${box.server.url} (environment by default; baseUrl from BUSINESS_PAYMENTS_BASE_URL; ` +
        'merchantKey from BUSINESS_PAYMENTS_MERCHANT_KEY; apiKey from BUSINESS_PAYMENTS_API_KEY; apiSecret from BUSINESS_PAYMENTS_API_SECRET)',
    );
    expect(check(d, 'credentials').fix).toContain(
      '(now merchantKey from BUSINESS_PAYMENTS_MERCHANT_KEY; apiKey from BUSINESS_PAYMENTS_API_KEY; apiSecret from BUSINESS_PAYMENTS_API_SECRET)',
    );
    expect(JSON.stringify(d)).not.toMatch(/option/);
  });

  test('a variable at fault: the detail and the fix name it', async () => {
    vi.stubEnv('BUSINESS_PAYMENTS_API_KEY', 'live_key_in_the_sandbox');
    const { apiKey: _, ...rest } = options(box);
    const d = await diagnose(rest);
    expect(check(d, 'configuration')).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/^BUSINESS_PAYMENTS_API_KEY is a live_ \(production\) credential but environment is 'sandbox'/),
      fix: 'Correct BUSINESS_PAYMENTS_API_KEY, where the value named above came from, or the environment (environment from the environment option).',
    });
  });

  test('a code option at fault: named as the option', async () => {
    const d = await diagnose({ ...options(box), baseUrl: 'not a url' });
    expect(check(d, 'configuration')).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/^baseUrl \(from the baseUrl option\) is not an absolute URL/),
      fix: 'Correct the baseUrl option, where the value named above came from.',
    });
  });

  test('sources (what the CLI passes): a flag and a variable, named so', async () => {
    const d = await diagnose({
      ...options(box),
      baseUrl: 'ftp://payments.example.com',
      sources: { baseUrl: '--base-url', apiKey: 'BUSINESS_PAYMENTS_API_KEY', environment: 'default' },
    });
    expect(check(d, 'configuration')).toMatchObject({
      detail: expect.stringMatching(/^baseUrl \(from --base-url\) must use https:/),
      fix: 'Correct --base-url, where the value named above came from.',
    });
    const ok = await diagnose({
      ...options(box),
      sources: { baseUrl: '--base-url', apiKey: 'BUSINESS_PAYMENTS_API_KEY', environment: 'default' },
    });
    expect(check(ok, 'configuration').detail).toBe(
      `sandbox at ${box.server.url} (environment by default; baseUrl from --base-url; merchantKey, apiSecret from code options; ` +
        'apiKey from BUSINESS_PAYMENTS_API_KEY)',
    );
  });

  test('a value not set: the fix says where to set it (option, variable, flag)', async () => {
    vi.stubEnv('BUSINESS_PAYMENTS_MERCHANT_KEY', '');
    const { merchantKey: _, ...rest } = options(box);
    const d = await diagnose(rest);
    expect(check(d, 'configuration')).toMatchObject({
      detail: expect.stringMatching(/^merchantKey is not set/),
      fix: 'Set the value named above: the option or its environment variable (BUSINESS_PAYMENTS_*), or --merchant-key with the CLI.',
    });
  });

  test('the webhook secret: a refused signature names the secret it came from', async () => {
    const d = await diagnose({
      ...options(box),
      webhookUrl: 'http://127.0.0.1:9/hooks',
      webhookSecret: 'whsec_x',
      fetch: async (input, init) =>
        String(input instanceof Request ? input.url : input).endsWith('/hooks')
          ? new Response('bad signature', { status: 401 })
          : fetch(input, init),
      sources: { webhookSecret: 'BUSINESS_PAYMENTS_WEBHOOK_SECRET_SANDBOX' },
    });
    expect(check(d, 'webhook endpoint').fix).toBe(
      'The endpoint refused the signature: check it verifies the raw body with this secret ' +
        '(the sandbox one, webhookSecret from BUSINESS_PAYMENTS_WEBHOOK_SECRET_SANDBOX).',
    );
  });
});
