// `npm run demo`: the built package, run as a merchant would run examples/demo/demo.ts.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, inject, test } from 'vitest';
import { packageCopyReady, root } from '../support/cli.js';

// `npm run demo` is `npm run build && node examples/demo/demo.ts`: the same, in a private
// copy of the package (built once for the suite by test/global-setup.ts).
const pkg = { dir: inject('packageCopy') };
let demo: string;
beforeAll(async () => {
  await packageCopyReady(pkg.dir);
  demo = join(pkg.dir, 'examples', 'demo', 'demo.ts');
  mkdirSync(join(pkg.dir, 'examples', 'demo'), { recursive: true });
  copyFileSync(join(root, 'examples', 'demo', 'demo.ts'), demo);
}, 180_000);

test('the demo runs the whole flow on the local sandbox and exits 0', () => {
  const started = Date.now();
  const result = spawnSync(process.execPath, [demo], { cwd: pkg.dir, encoding: 'utf8', timeout: 30_000 });
  const elapsed = Date.now() - started;
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  expect(elapsed).toBeLessThan(20_000);

  const out = result.stdout;
  const steps = [...out.matchAll(/^(\d+)\. (.+)$/gm)].map((m) => Number(m[1]));
  expect(steps).toEqual(steps.map((_, i) => i + 1));
  expect(steps.length).toBeGreaterThanOrEqual(8);
  expect(out).toMatch(/^ {3}✓ listening on http:\/\/127\.0\.0\.1:\d+$/m);
  expect(out).toMatch(/^ {5}checkout URL: http:\/\/127\.0\.0\.1:\d+\/checkout\/\S+$/m);
  expect(out).toMatch(/^ {3}✓ form POST \/checkout\/\S+\/pay .* answered 303/m);
  expect(out).toMatch(
    /^ {3}✓ signature verified: payment\.completed evt_\S+ \(status completed; gross USD 25\.00, fees USD 0\.75, net USD 24\.25\)$/m,
  );
  expect(out).toMatch(/^ {3}✓ payments\.verify\(\S+\): success: USD 25\.00, fee USD 0\.75, net USD 24\.25$/m);
  expect(out).toMatch(/^\d+\. USSD push to 255700000001/m);
  expect(out).toMatch(/^ {3}✓ webhook verified: payment\.completed evt_\S+ \(status completed; gross TZS 15,000\.00/m);
  expect(out).toMatch(/^ {3}✓ payments\.waitForOutcome: success: TZS 15,000\.00, fee TZS 450\.00, net TZS 14,550\.00$/m);
  expect(out).toMatch(/\nDone in \d+\.\d s: 2 payments settled, 2 webhooks verified, 0 duplicates ignored\.\n$/);
  // Nothing left the machine: every URL printed is on 127.0.0.1 (redirect targets are not fetched).
  const urls = [...out.matchAll(/https?:\/\/[^\s),]+/g)].map((m) => new URL(m[0]).hostname);
  expect(new Set(urls.filter((host) => host !== 'shop.example.com'))).toEqual(new Set(['127.0.0.1']));
}, 40_000);

// Item 7: a handler that re-serialises the body before verifying fails in the demo as it would in
// production. The sandbox writes the webhook as the service does (PHP's json_encode: "Zoë" as
// "Zo\u00eb"), so JSON.stringify(JSON.parse(body)) is not the signed bytes: `--reserialise`
// makes the demo's endpoint verify that instead, and the delivery is refused with 401.
test('--reserialise: the endpoint verifies JSON.stringify(JSON.parse(body)); the delivery is refused (401) and the demo stops at step 5', () => {
  const started = Date.now();
  const result = spawnSync(process.execPath, [demo, '--reserialise'], { cwd: pkg.dir, encoding: 'utf8', timeout: 30_000 });
  expect(result.status).toBe(1);
  expect(Date.now() - started).toBeLessThan(10_000); // refused at once, not at the 20 s deadline
  expect(result.stdout).toMatch(/^ {5}--reserialise: it verifies JSON\.stringify\(JSON\.parse\(body\)\)/m);
  expect(result.stdout).toMatch(/^ {3}✓ form POST \/checkout\/\S+\/pay .* answered 303/m);
  expect(result.stdout).toMatch(/\n5\. Receive the signed webhook\n$/);
  expect(result.stderr).toBe(
    '\n✗ demo failed at step 5 (Receive the signed webhook): the webhook endpoint answered 401 invalid_signature ' +
      '(it verified JSON.stringify(JSON.parse(body)): "Zo\\u00eb Mwinyi" became "Zoë Mwinyi")\n',
  );
}, 40_000);
