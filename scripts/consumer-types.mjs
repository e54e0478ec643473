// The packed tarball's types as a consumer compiles them: installed into a fresh project
// WITHOUT msw (an optional peer), every entry imported, `tsc` with `skipLibCheck: false`,
// `strict` and `exactOptionalPropertyTypes`, under moduleResolution node16 (ESM and
// CommonJS consumers) and bundler; then, with msw added, that `setupServer(...mock.handlers)`
// compiles as msw users write it. One line per setting; exit 1 on any error.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import list from '../entries.json' with { type: 'json' };

const root = fileURLToPath(new URL('..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'bp-consumer-'));
// --ignore-scripts: `npm run test:package` has just built dist/ (lint:package; prepack would build it again).
execFileSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', work], {
  cwd: root,
  stdio: ['ignore', 'ignore', 'inherit'],
});
const tarball = join(
  work,
  readdirSync(work).find((f) => f.endsWith('.tgz')),
);

// What a consumer writes: every entry, the public names it imports, strict options.
const USE = `
const client = new PaymentsClient({ environment: 'sandbox', baseUrl: process.env.BASE_URL, apiKey: undefined });
export async function use(): Promise<string> {
  const payment = await client.payments.create({ payment_amount: 25, currency_code: 'USD', ref_trx: 'o-1' });
  const event = await verifyWebhook({ payload: '{}', headers: {}, secret: 'whsec_x' });
  const mock = createMockService();
  const handlers: unknown[] = [...mock.handlers];
  const report = await diagnose({});
  // The fulfillment kit takes the client itself, and a store on the merchant's database.
  const pool = { query: async (_text: string, _values?: unknown[]) => ({ rows: [] as unknown[] }) };
  const store = process.env.REDIS ? redisStore(redis) : process.env.PG ? postgresStore(pool) : memoryStore();
  const kit = createFulfillment({ environment: 'sandbox', secret: 'whsec_x', client, store, onPaid: (tx) => void tx.amount });
  const settled = await kit.handleVerified(await client.payments.verify(payment.trx_id), { merchantRef: undefined });
  // The payout kit: the same client and a durable store, or its own memoryStore() for tests.
  const payoutStore = process.env.REDIS ? redisStore(redis) : process.env.PG ? postgresStore(pool) : payoutMemory();
  const payouts = createPayouts({ client, store: payoutStore, onChange: ({ from, to }) => void (from ?? to) });
  const intent = await payouts.send({ key: 'settle-1', amount: 10, destination: undefined });
  const resolved = await payouts.resolve();
  return payment.trx_id + event.type + String(handlers.length) + String(report.ok) + settled + intent.state + resolved.review.length;
}
declare const redis: Parameters<typeof redisStore>[0];
`;
const ESM_HEAD =
  `import { PaymentsClient } from 'business-payments';\nimport { verifyWebhook } from 'business-payments/webhooks';\nimport { createMockService } from 'business-payments/testing';\nimport { diagnose } from 'business-payments/doctor';\n` +
  `import { createFulfillment, memoryStore } from 'business-payments/fulfillment';\nimport { postgresStore } from 'business-payments/fulfillment/postgres';\nimport { redisStore } from 'business-payments/fulfillment/redis';\nimport { createPayouts, memoryStore as payoutMemory } from 'business-payments/payouts';\n`;
// CommonJS: \`import x = require()\` of each entry.
const CJS_HEAD =
  `import sdk = require('business-payments');\nimport webhooks = require('business-payments/webhooks');\nimport testing = require('business-payments/testing');\nimport doctor = require('business-payments/doctor');\n` +
  `import fulfillment = require('business-payments/fulfillment');\nimport postgres = require('business-payments/fulfillment/postgres');\nimport redisEntry = require('business-payments/fulfillment/redis');\nimport payoutsEntry = require('business-payments/payouts');\n` +
  `const { PaymentsClient } = sdk;\nconst { verifyWebhook } = webhooks;\nconst { createMockService } = testing;\nconst { diagnose } = doctor;\n` +
  `const { createFulfillment, memoryStore } = fulfillment;\nconst { postgresStore } = postgres;\nconst { redisStore } = redisEntry;\nconst { createPayouts, memoryStore: payoutMemory } = payoutsEntry;\n`;
// And every entry of entries.json whole, under each head, so that an entry USE does not call yet
// is compiled as a consumer compiles it too.
const EVERY = (line) => `${list.entries.map((entry, i) => line(`entry${i}`, entry.specifier)).join('\n')}\n`;
const ESM_EVERY = EVERY((name, specifier) => `import * as ${name} from '${specifier}';`);
const CJS_EVERY = EVERY((name, specifier) => `import ${name} = require('${specifier}');`);
const EVERY_USED = `export const entries = [${list.entries.map((_, i) => `entry${i}`).join(', ')}];\n`;

const app = join(work, 'app');
mkdirSync(app);
writeFileSync(
  join(app, 'package.json'),
  JSON.stringify({ name: 'consumer', private: true, dependencies: { 'business-payments': `file:${tarball}` } }),
);
execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--omit=peer'], {
  cwd: app,
  stdio: ['ignore', 'ignore', 'inherit'],
});
if (existsSync(join(app, 'node_modules/msw'))) throw new Error('msw got installed: the check needs a project without it');
// Node's types (process.env) without installing anything else: point at the repo's copy.
const typeRoots = [join(root, 'node_modules/@types')];
const tsc = join(root, 'node_modules/typescript/bin/tsc');

const SETTINGS = [
  {
    name: 'node16, ESM consumer',
    type: 'module',
    module: 'node16',
    moduleResolution: 'node16',
    file: 'use.mts',
    head: ESM_HEAD + ESM_EVERY,
  },
  {
    name: 'node16, CommonJS consumer',
    type: 'commonjs',
    module: 'node16',
    moduleResolution: 'node16',
    file: 'use.cts',
    head: CJS_HEAD + CJS_EVERY,
  },
  { name: 'bundler', type: 'module', module: 'esnext', moduleResolution: 'bundler', file: 'use.ts', head: ESM_HEAD + ESM_EVERY },
  // And a project that has msw: `mock.handlers` (typed loosely so the others compile) goes
  // into msw's setupServer as msw users write it, with no cast.
  {
    name: 'bundler, with msw',
    label: 'bundler, skipLibCheck false, msw installed: setupServer(...mock.handlers)',
    type: 'module',
    module: 'esnext',
    moduleResolution: 'bundler',
    file: 'use.ts',
    source: `import { setupServer } from 'msw/node';\nimport { createMockService } from 'business-payments/testing';\nconst server = setupServer(...createMockService().handlers);\nexport const stop = (): void => server.close();\n`,
    modules: { msw: join(root, 'node_modules/msw') },
  },
];
let failed = 0;
for (const setting of SETTINGS) {
  const dir = join(work, setting.name.replace(/\W+/g, '-'));
  mkdirSync(dir);
  if (setting.modules) {
    // The tarball's install, plus the extra packages (linked: their own dependencies resolve where they live).
    mkdirSync(join(dir, 'node_modules'));
    const links = {
      ...Object.fromEntries(readdirSync(join(app, 'node_modules')).map((name) => [name, join(app, 'node_modules', name)])),
      ...setting.modules,
    };
    for (const [name, target] of Object.entries(links)) execFileSync('ln', ['-s', target, join(dir, 'node_modules', name)]);
  } else {
    execFileSync('ln', ['-s', join(app, 'node_modules'), join(dir, 'node_modules')]);
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: setting.type }));
  writeFileSync(join(dir, setting.file), setting.source ?? setting.head + USE + EVERY_USED);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        exactOptionalPropertyTypes: true,
        skipLibCheck: false,
        noEmit: true,
        module: setting.module,
        moduleResolution: setting.moduleResolution,
        target: 'es2022',
        lib: ['es2023', 'dom'],
        types: ['node'],
        typeRoots,
      },
      files: [setting.file],
    }),
  );
  const result = spawnSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8' });
  const errors = (result.stdout + result.stderr).trim();
  if (result.status !== 0) failed++;
  console.log(
    `${result.status === 0 ? '✓' : '✗'} types: ${setting.label ?? `${setting.name}, skipLibCheck false, no msw`}${result.status === 0 ? '' : `\n${errors.split('\n').slice(0, 10).join('\n')}`}`,
  );
}
process.exit(failed ? 1 : 0);
