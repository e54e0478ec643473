// The simulated service is a second opinion only if it shares no code with the client: a
// signing bug in the client's HMAC would otherwise be "confirmed" by the same code on the
// other side. Checked here: the ESLint rule that forbids such imports (shown to fire, and to
// pass on the real files), every import specifier under src/testing resolved by hand
// (dynamic ones too, which the rule does not see), the service's own HMAC held to node:crypto
// on both of its paths (and run in an edge runtime, where only WebCrypto exists), and its
// event list held to the SDK's.
import { createHmac } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EdgeVM } from '@edge-runtime/vm';
import { build } from 'esbuild';
import { ESLint } from 'eslint';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { DEFAULT_CREDENTIALS } from '../../src/testing.js';
import { EVENT_TYPES } from '../../src/testing/mock-service/webhooks.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/webhooks/events.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const TESTING = join(ROOT, 'src/testing');
const RULE = 'no-restricted-imports';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

describe('src/testing imports nothing of the client', () => {
  const eslint = new ESLint({ cwd: ROOT });
  // Snippets at paths that do not exist: the repository's config with only this rule on, and
  // without type information (the type-aware parser wants files that are in the project).
  const snippets = new ESLint({
    cwd: ROOT,
    ruleFilter: ({ ruleId }) => ruleId === RULE,
    overrideConfig: { files: ['src/**/*.ts'], languageOptions: { parserOptions: { projectService: false } } },
  });
  const errorsOf = async (code: string, filePath: string) =>
    (await snippets.lintText(code, { filePath })).flatMap((r) => r.messages).filter((m) => m.ruleId === RULE || m.fatal);

  test.each([
    ['src/testing/mock-service/x.ts', "import { hmacSha256Hex } from '../../internal/hmac.js';"],
    ['src/testing/mock-service/x.ts', "import type { WebhookEventType } from '../../webhooks/events.js';"],
    ['src/testing/mock-service/x.ts', "export { PaymentsClient } from '../../client.js';"],
    ['src/testing/mock-service/x.ts', "import { PaymentsClient } from 'business-payments';"],
    ['src/testing/x.ts', "import { signRequest } from '../internal/signing.js';"],
    ['src/testing/x.ts', "import { APIError } from '../core/error.js';"],
    ['src/testing/x.ts', "import { verifyWebhook } from 'business-payments/webhooks';"],
  ])('%s: %s is an error', async (filePath, code) => {
    const errors = await errorsOf(`${code}\nexport const x = 1;\n`, filePath);
    expect(errors).toEqual([expect.objectContaining({ severity: 2, message: expect.stringContaining('independent simulated service') })]);
  });

  test('imports inside src/testing are fine', async () => {
    const code =
      "import { hmacHex } from './hmac.js';\nimport { signWebhook } from '../sign-webhook.js';\nexport const x = [hmacHex, signWebhook];\n";
    expect(await errorsOf(code, 'src/testing/mock-service/x.ts')).toEqual([]);
  });

  test('the real files lint clean of the rule', async () => {
    const results = await eslint.lintFiles(['src/testing/**/*.ts']);
    expect(results.length).toBe(sources(TESTING).length);
    const found = results.flatMap((r) =>
      r.messages.filter((m) => m.ruleId === RULE).map((m) => `${relative(ROOT, r.filePath)}: ${m.message}`),
    );
    expect(found).toEqual([]);
  }, 60_000);

  test('every import specifier, static or dynamic, stays inside src/testing (or is a runtime built-in / msw)', () => {
    const outside: string[] = [];
    for (const file of sources(TESTING)) {
      // Comments out first (JSDoc examples import the package, as users do).
      const text = readFileSync(file, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      for (const [, spec] of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)) {
        const inside = spec!.startsWith('.')
          ? !relative(TESTING, resolve(dirname(file), spec!)).startsWith('..')
          : /^(node:|msw$)/.test(spec!);
        if (!inside) outside.push(`${relative(ROOT, file)}: ${spec}`);
      }
    }
    expect(outside).toEqual([]);
  });
});

describe("the service's own HMAC", () => {
  afterEach(() => {
    vi.resetModules();
  });

  const cases: Array<[string, string, string | Uint8Array]> = [
    ['whsec_test_1001', '1700000000.', '{"id":"evt_1"}'],
    ['sécret-🔑', '1700000000.POST./api/v1/payments.', '{"ref_trx":"Zoë 東京 🎉"}'],
    ['k'.repeat(100), '', new Uint8Array([0, 255, 10, 13, 0xc3])],
  ];
  const reference = (secret: string, prefix: string, body: string | Uint8Array) =>
    createHmac('sha256', secret).update(prefix).update(body).digest('hex');

  test('on node:crypto: equals a plain createHmac', async () => {
    const { hmacHex } = await import('../../src/testing/mock-service/hmac.js');
    for (const [secret, prefix, body] of cases) expect(await hmacHex(secret, prefix, body)).toBe(reference(secret, prefix, body));
  });

  test('on WebCrypto alone (no process.getBuiltinModule, as in workerd or a browser): the same digests', async () => {
    const proc = process as { getBuiltinModule?: unknown };
    const saved = proc.getBuiltinModule;
    proc.getBuiltinModule = undefined;
    try {
      vi.resetModules();
      const sign = vi.spyOn(crypto.subtle, 'sign');
      const { hmacHex } = await import('../../src/testing/mock-service/hmac.js');
      for (const [secret, prefix, body] of cases) expect(await hmacHex(secret, prefix, body)).toBe(reference(secret, prefix, body));
      expect(sign).toHaveBeenCalledTimes(cases.length);
    } finally {
      vi.restoreAllMocks();
      proc.getBuiltinModule = saved;
    }
  });
});

test('bundled into an edge runtime (no process: WebCrypto only), the service checks signatures and signs webhooks', async () => {
  const bundle = await build({
    entryPoints: [join(ROOT, 'src/testing.ts')],
    bundle: true,
    write: false,
    format: 'iife',
    globalName: '__testing',
    platform: 'browser',
    target: 'es2022',
    logLevel: 'silent',
  });
  const vm = new EdgeVM();
  vm.evaluate(bundle.outputFiles[0]!.text);
  expect(vm.evaluate('typeof process')).toBe('undefined');
  const ts = 1_700_000_000;
  const path = '/api/v1/balance';
  const { sandbox } = DEFAULT_CREDENTIALS;
  const signature = `sha256=${createHmac('sha256', sandbox.apiSecret).update(`${ts}.GET.${path}.`).digest('hex')}`;
  // Runs inside the VM: one signed API call, one signWebhook.
  const run = vm.evaluate(`(async (input) => {
    const mock = __testing.createMockService({ now: () => input.ts * 1000, autoRun: false });
    const answer = await mock.handle(new Request('https://sandbox.business-payments.test' + input.path, { headers: input.headers }));
    const signed = await __testing.signWebhook({ payload: '{"id":"evt_1"}', secret: input.secret, timestamp: input.ts });
    return { status: answer.status, signature: signed.headers['X-Service-Signature'] };
  })`) as (input: unknown) => Promise<{ status: number; signature: string }>;
  const headers = {
    'X-Environment': 'sandbox',
    'X-Merchant-Key': sandbox.merchantKey,
    'X-API-Key': sandbox.apiKey,
    'X-Timestamp': String(ts),
  };
  const ok = await run({ ts, path, secret: sandbox.webhookSecret, headers: { ...headers, 'X-Signature': signature } });
  expect(ok).toEqual({ status: 200, signature: createHmac('sha256', sandbox.webhookSecret).update(`${ts}.{"id":"evt_1"}`).digest('hex') });
  const bad = await run({ ts, path, secret: sandbox.webhookSecret, headers: { ...headers, 'X-Signature': `sha256=${'0'.repeat(64)}` } });
  expect(bad.status).toBe(401);
});

test("the service's event list (written from the spec) is the SDK's", () => {
  expect([...EVENT_TYPES]).toEqual([...WEBHOOK_EVENT_TYPES]);
});
