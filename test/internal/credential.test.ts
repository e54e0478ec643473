// One rule for every secret and key: API and webhook, option,
// environment variable, CLI flag. Leading or trailing whitespace is refused when the thing
// is built (never trimmed, never at the first call or delivery), with a message that names
// where the value came from; a missing one "is not set". No message carries the value.
import { beforeEach, describe, expect, test, vi } from 'vitest';
import { diagnose } from '../../src/doctor.js';
import { createFulfillment, type FulfillmentClient } from '../../src/fulfillment.js';
import { ConfigurationError, PaymentsClient, type ClientOptions } from '../../src/index.js';
import { signWebhook } from '../../src/testing.js';
import { verifyWebhook, verifyWebhookSignature, WebhookVerificationError } from '../../src/webhooks.js';
import { expectUsageError, runCli } from '../support/cli.js';
import { BASE_URL, CREDENTIALS } from '../support/fake-api.js';

const ENV_NAMES = [
  'BUSINESS_PAYMENTS_ENVIRONMENT',
  'BUSINESS_PAYMENTS_MERCHANT_KEY',
  'BUSINESS_PAYMENTS_API_KEY',
  'BUSINESS_PAYMENTS_API_SECRET',
  'BUSINESS_PAYMENTS_BASE_URL',
  'BUSINESS_PAYMENTS_LOG',
];

beforeEach(() => {
  // Whatever the machine running the tests has set must not leak in.
  for (const name of ENV_NAMES) vi.stubEnv(name, undefined);
});

const WHITESPACE = /has leading or trailing whitespace \(a copy-paste slip\?\): remove it/;
// Distinct values, so a message that printed one would be caught.
const PADDED = [
  ['a trailing newline', (value: string) => `${value}\n`],
  ['a trailing CRLF', (value: string) => `${value}\r\n`],
  ['a leading space', (value: string) => ` ${value}`],
  ['a trailing tab', (value: string) => `${value}\t`],
] as const;

/** The error `fn` throws (synchronously). */
function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

describe('PaymentsClient: the credential options and their variables', () => {
  const valid: ClientOptions = { environment: 'sandbox', ...CREDENTIALS, baseUrl: BASE_URL };
  const CREDENTIAL_OPTIONS = [
    ['merchantKey', 'BUSINESS_PAYMENTS_MERCHANT_KEY'],
    ['apiKey', 'BUSINESS_PAYMENTS_API_KEY'],
    ['apiSecret', 'BUSINESS_PAYMENTS_API_SECRET'],
  ] as const;

  describe.each(CREDENTIAL_OPTIONS)('%s', (option, envName) => {
    const value = CREDENTIALS[option];
    const { [option]: _dropped, ...withoutIt } = valid;

    test.each(PADDED)(`from ${envName} with %s: refused, naming the variable (it used to be trimmed silently)`, (_label, pad) => {
      vi.stubEnv(envName, pad(value));
      const error = thrown(() => new PaymentsClient(withoutIt));
      expect(error).toBeInstanceOf(ConfigurationError);
      expect(error.message).toMatch(new RegExp(`^${envName} ${WHITESPACE.source}\\.$`));
      expect(error.message).not.toContain(value);
    });

    test.each(PADDED)(`the ${option} option with %s: refused, naming the option`, (_label, pad) => {
      const error = thrown(() => new PaymentsClient({ ...valid, [option]: pad(value) }));
      expect(error).toBeInstanceOf(ConfigurationError);
      expect(error.message).toMatch(new RegExp(`^${option} option ${WHITESPACE.source}\\.$`));
      expect(error.message).not.toContain(value);
    });

    test(`only whitespace in ${envName} is refused as whitespace, not read as unset`, () => {
      vi.stubEnv(envName, ' \n');
      expect(thrown(() => new PaymentsClient(withoutIt)).message).toMatch(new RegExp(`^${envName} ${WHITESPACE.source}`));
    });

    test('missing (no option, no variable; an empty option or variable): "is not set", naming both ways to set it', () => {
      const notSet = `${option} is not set: pass new PaymentsClient({ ${option} }) or set ${envName}.`;
      expect(thrown(() => new PaymentsClient(withoutIt)).message).toBe(notSet);
      expect(thrown(() => new PaymentsClient({ ...valid, [option]: '' })).message).toBe(notSet);
      vi.stubEnv(envName, '');
      expect(thrown(() => new PaymentsClient(withoutIt)).message).toBe(notSet);
    });

    test('the option wins over the variable, and a clean value from either constructs', () => {
      vi.stubEnv(envName, `${value}\n`);
      expect(() => new PaymentsClient(valid)).not.toThrow();
      vi.stubEnv(envName, value);
      expect(() => new PaymentsClient(withoutIt)).not.toThrow();
    });
  });

  test('a wrong-environment credential from a variable names the variable', () => {
    vi.stubEnv('BUSINESS_PAYMENTS_API_SECRET', 'live_secret');
    const { apiSecret: _dropped, ...rest } = valid;
    expect(thrown(() => new PaymentsClient(rest)).message).toMatch(/^BUSINESS_PAYMENTS_API_SECRET is a live_ \(production\) credential/);
  });
});

describe('webhook secret: refused when the kit or the call is made, never as a failed delivery', () => {
  const SECRET = 'whsec_rule_0123456789';
  const client: FulfillmentClient = {
    environment: 'sandbox',
    payments: {
      verify: () => Promise.reject(new Error('not called')),
      list: async function* () {},
    },
  };
  const kit = (secret: unknown) => () => createFulfillment({ environment: 'sandbox', secret: secret as string, client, onPaid: () => {} });

  test.each(PADDED)(
    'createFulfillment with %s: ConfigurationError at construction (it used to answer its first delivery with a 500)',
    (_label, pad) => {
      for (const secret of [pad(SECRET), [SECRET, pad(SECRET)]]) {
        const error = thrown(kit(secret));
        expect(error).toBeInstanceOf(ConfigurationError);
        expect(error.message).toMatch(new RegExp(`^createFulfillment\\(\\{ secret \\}\\): webhook secret ${WHITESPACE.source}\\.$`));
        expect(error.message).not.toContain(SECRET);
      }
    },
  );

  test.each([
    ['undefined (an unset variable)', undefined],
    ['empty', ''],
    ['an empty array', []],
    ['an array with an empty string', [SECRET, '']],
  ])('createFulfillment with %s: "webhook secret is not set", with where the docs take it from', (_label, secret) => {
    const error = thrown(kit(secret));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).toBe(
      'createFulfillment({ secret }): webhook secret is not set. Pass the webhook signing secret, e.g. process.env.BUSINESS_PAYMENTS_WEBHOOK_SECRET.',
    );
  });

  test('a clean secret (or rotation array) builds the kit, and it verifies deliveries', async () => {
    expect(kit(SECRET)).not.toThrow();
    const fulfillment = kit([`${SECRET}_new`, SECRET])();
    const { body, headers } = await signWebhook({ secret: SECRET, payload: { id: 'evt_1', type: 'invoice.created', data: {} } });
    expect((await fulfillment.handleWebhook({ payload: body, headers })).status).toBe(200);
  });

  test.each(PADDED)(
    'verifyWebhook / verifyWebhookSignature with %s: a ConfigurationError from that call, whatever arrives',
    async (_label, pad) => {
      const { body, headers } = await signWebhook({ secret: pad(SECRET), payload: { id: 'evt_1', type: 'invoice.created', data: {} } });
      const request = new Request('https://shop.example.com/hooks', { method: 'POST', body, headers });
      for (const call of [
        verifyWebhook({ payload: body, headers, secret: pad(SECRET) }),
        verifyWebhookSignature({ payload: body, headers, secret: [SECRET, pad(SECRET)] }),
        verifyWebhook(request, pad(SECRET)),
        // A delivery that is junk as well: the configuration is still what is reported.
        verifyWebhook({ payload: 'junk', headers: {}, secret: pad(SECRET) }),
      ]) {
        const error = await call.then(
          () => new Error('expected a rejection'),
          (e: unknown) => e as Error,
        );
        expect(error).toBeInstanceOf(ConfigurationError);
        expect(error).not.toBeInstanceOf(WebhookVerificationError);
        expect(error.message).toMatch(new RegExp(`^webhook secret ${WHITESPACE.source}\\.$`));
        expect(error.message).not.toContain(SECRET);
      }
    },
  );

  test.each([
    ['undefined', undefined],
    ['empty', ''],
    ['an empty array', []],
  ])('verifyWebhook with %s: "webhook secret is not set"', async (_label, secret) => {
    const error = await verifyWebhook({ payload: '{}', headers: {}, secret: secret as string }).catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toBe('webhook secret is not set.');
  });
});

describe('diagnose(): a padded webhookSecret fails its check, never signs the test delivery', () => {
  test('the webhook endpoint check says so, without the value, and nothing is sent to the endpoint', async () => {
    const sent: string[] = [];
    const diagnosis = await diagnose({
      environment: 'sandbox',
      ...CREDENTIALS,
      baseUrl: BASE_URL,
      // The service answers 500: the signed call fails, the webhook check still runs.
      fetch: async (input) => {
        sent.push(String(input instanceof Request ? input.url : input));
        return new Response('{}', { status: 500, headers: { 'content-type': 'application/json' } });
      },
      webhookUrl: 'https://shop.example.com/hooks',
      webhookSecret: 'whsec_diagnose_rule\n',
    });
    const check = diagnosis.checks.find((c) => c.name === 'webhook endpoint');
    expect(check).toMatchObject({ status: 'fail', detail: 'webhookSecret has leading or trailing whitespace (a copy-paste slip?)' });
    expect(JSON.stringify(diagnosis)).not.toContain('whsec_diagnose_rule');
    expect(sent.some((url) => url.startsWith('https://shop.example.com'))).toBe(false);
  });
});

describe('CLI: the flag, or the variable the value came from', () => {
  const API_SECRET = 'test_secret_cli_rule';
  const WEBHOOK_SECRET = 'whsec_cli_rule_0123';
  const sign = ['sign', '--method', 'GET', '--path', '/api/v1/balance'];
  const trigger = ['trigger', 'payment.completed', '--url', 'http://127.0.0.1:9/hooks'];
  const client = {
    BUSINESS_PAYMENTS_BASE_URL: 'http://127.0.0.1:9',
    BUSINESS_PAYMENTS_MERCHANT_KEY: CREDENTIALS.merchantKey,
    BUSINESS_PAYMENTS_API_KEY: CREDENTIALS.apiKey,
    BUSINESS_PAYMENTS_API_SECRET: API_SECRET,
  };

  /** Runs the CLI and expects a usage error whose reason is `reason` exactly, without `secret` in it. */
  async function refused(argv: string[], env: Record<string, string>, reason: string, secret: string) {
    const run = await runCli(argv, { env });
    expectUsageError(run, new RegExp(`^business-payments ${argv[0]}: ${reason.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
    expect(run.stderr).not.toContain(secret);
  }
  const whitespace = (source: string) => `${source} has leading or trailing whitespace (a copy-paste slip?): remove it`;

  test.each([
    ['sign', sign, 'BUSINESS_PAYMENTS_API_SECRET', API_SECRET],
    ['trigger', trigger, 'BUSINESS_PAYMENTS_WEBHOOK_SECRET', WEBHOOK_SECRET],
    ['trigger (the environment’s own variable)', trigger, 'BUSINESS_PAYMENTS_WEBHOOK_SECRET_SANDBOX', WEBHOOK_SECRET],
    ['verify-webhook', ['verify-webhook'], 'BUSINESS_PAYMENTS_WEBHOOK_SECRET', WEBHOOK_SECRET],
  ])('%s: a padded secret from the environment blames the variable, not --secret', async (_label, argv, variable, secret) => {
    await refused(argv, { [variable]: `${secret}\n` }, whitespace(variable), secret);
  });

  test.each([
    ['sign', sign, API_SECRET],
    ['trigger', trigger, WEBHOOK_SECRET],
    ['verify-webhook', ['verify-webhook'], WEBHOOK_SECRET],
  ])('%s: a padded --secret blames the flag', async (_label, argv, secret) => {
    await refused([...argv, '--secret', `${secret}\n`], {}, whitespace('--secret'), secret);
  });

  test('sign: padded keys from the environment blame their variables; a whitespace-only variable is refused too', async () => {
    await refused(
      [...sign, '--secret', API_SECRET],
      { BUSINESS_PAYMENTS_MERCHANT_KEY: 'test_merchant_001\n' },
      whitespace('BUSINESS_PAYMENTS_MERCHANT_KEY'),
      'test_merchant_001',
    );
    await refused(
      [...sign, '--secret', API_SECRET],
      { BUSINESS_PAYMENTS_API_KEY: ' ' },
      whitespace('BUSINESS_PAYMENTS_API_KEY'),
      API_SECRET,
    );
    await refused([...sign, '--secret', API_SECRET, '--api-key', 'k\n'], {}, whitespace('--api-key'), API_SECRET);
  });

  test.each([
    ['doctor', ['doctor']],
    ['reconcile (dry run)', ['reconcile', '--since', '24h']],
  ])('%s: a padded credential from the environment blames the variable, before anything is sent', async (_label, argv) => {
    await refused(
      argv,
      { ...client, BUSINESS_PAYMENTS_API_SECRET: `${API_SECRET}\r\n` },
      whitespace('BUSINESS_PAYMENTS_API_SECRET'),
      API_SECRET,
    );
    await refused([...argv, '--api-key', ' key'], client, whitespace('--api-key'), API_SECRET);
  });

  test('doctor: a padded webhook secret from the environment blames the variable', async () => {
    await refused(
      ['doctor', '--webhook-url', 'http://127.0.0.1:9/hooks'],
      { ...client, BUSINESS_PAYMENTS_WEBHOOK_SECRET: `${WEBHOOK_SECRET}\n` },
      whitespace('BUSINESS_PAYMENTS_WEBHOOK_SECRET'),
      WEBHOOK_SECRET,
    );
  });

  test.each([
    ['sign', sign, '--secret is not set: pass it or set BUSINESS_PAYMENTS_API_SECRET'],
    [
      'trigger',
      trigger,
      '--secret is not set: pass it or set BUSINESS_PAYMENTS_WEBHOOK_SECRET_SANDBOX or BUSINESS_PAYMENTS_WEBHOOK_SECRET',
    ],
    ['verify-webhook', ['verify-webhook'], '--secret is not set: pass it or set BUSINESS_PAYMENTS_WEBHOOK_SECRET'],
    ['reconcile (dry run)', ['reconcile', '--since', '24h'], '--api-secret is not set: pass it or set BUSINESS_PAYMENTS_API_SECRET'],
  ])('%s: a missing secret "is not set", naming the flag and the variables', async (_label, argv, reason) => {
    const env = argv[0] === 'reconcile' ? { ...client, BUSINESS_PAYMENTS_API_SECRET: '' } : {};
    await refused(argv, env, reason, API_SECRET);
  });

  test('a clean secret from the environment is used as set', async () => {
    const run = await runCli([...sign, '--timestamp', '1700000000'], { env: { BUSINESS_PAYMENTS_API_SECRET: API_SECRET } });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^X-Signature: sha256=[\da-f]{64}$/m);
  });
});
