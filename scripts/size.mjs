// Size check: min+gzip bytes of each entry with everything it imports (ky and zod
// included), as a bundler would ship it for a browser (esbuild, platform browser). In .ci/run.
//
// Two limits an entry:
// - BUDGET: the product's limit, what a user would notice (DESIGN's budgets: `import {
//   PaymentsClient }` 34,816 B, the money and phone rules added to its 32,768; the webhooks
//   entry, which serverless functions load cold, 4,096 B; the fulfilment kit with the webhooks
//   code it ships 10,240 B; payouts and billing 6,144 B each). It moves only with the
//   product's contract.
// - CEILING: the reviewed limit a change may grow the entry to: its measured size plus 10 %
//   headroom, never above the budget, so a newcomer's first route does not fail CI for a few
//   bytes and the budget is reached only by raising the ceiling. A raise is a commit of its
//   own, like a change to api/*.api.md: the new figure, its reason in a comment beside it and
//   a CHANGELOG line, for review. Code is never bent to fit a ceiling: when the budget is
//   wrong, that is the product's decision, not a comment in the code.
// The entries are those of entries.json, each under its dist name, plus `client`; one without a
// budget and ceiling here is measured only (printed, never failed).
// `npm run size` fails when an entry is over its ceiling, when a ceiling is over its budget, or
// when a budget or ceiling names no entry (a typo or a renamed entry would otherwise check
// nothing). It prints each entry's room left under its ceiling and under its budget.
import { build } from 'esbuild';
import { gzipSync } from 'node:zlib';
import list from '../entries.json' with { type: 'json' };

// The triggers' entries (pg-boss, BullMQ): DESIGN gives them no budget; 1,024 B each, far over
// what they measure (a few lines: the engine is the merchant's), so that growth is reviewed.
const BUDGET = {
  client: 34_816,
  webhooks: 4_096,
  fulfillment: 10_240,
  payouts: 6_144,
  billing: 6_144,
  'fulfillment/pg-boss': 1_024,
  'fulfillment/bullmq': 1_024,
};
/** @type {Record<keyof typeof BUDGET, number>} */
const CEILING = {
  // 34,583 B measured with the money and phone rules (exact amounts, normalizePhone's five
  // numbering plans), the hardening of the SDK's own polls (a monotonic budget, one send per
  // slot, an answer about another payment refused) and the kits' seam (unsupported()); the
  // kits' phone rules apart from the client's errors (core/phone-check.ts), money's exactAt;
  // +10 % is over the budget: held at it.
  client: 34_816,
  // 4,036 B measured (WEBHOOK_EVENT_TYPES at run time, the consumed-body error, a Request's
  // headers checked before its body, read up to maxBodyBytes; written plainly, not shaped
  // by its bytes); +10 % is over the budget.
  webhooks: 4_096,
  // 10,188 B measured (the price check at the currency's digits, through money's exactAt
  // without exactAmount's refusals; in-process retries, a lost lease said, handlerTimeout,
  // attempts that never repeat; no payout intents in its memoryStore(); one file per step;
  // triggers: process(id), the trigger sent with the record, queueTrigger; verifyPayload
  // without verifyWebhook's Request path); +10 % is over the budget.
  fulfillment: 10_240,
  // 6,090 B measured (the amount and destination checked before recording, the key window on
  // the service's clock, its own memoryStore(); one file per step over PayoutBase; the phone
  // rules without the client's errors, core/phone-check.ts); +10 % is over the budget.
  payouts: 6_144,
  // 5,936 B measured (the guard, the reducer, events read defensively, reconcile with its
  // replay of a create never answered, its own memoryStore() and the phone rules, without the
  // client's errors; one file per step over BillingBase); +10 % is over the budget.
  billing: 6_144,
  // 171 B measured (pgBossTrigger: send, and send in the inbox row's transaction); +10 % is
  // far under the 1,024 B budget: held at it.
  'fulfillment/pg-boss': 1_024,
  // 132 B measured (bullmqTrigger: its job id from the record's); held at the 1,024 B budget.
  'fulfillment/bullmq': 1_024,
};
let failed = false;
const notes = [];
// Every entry as a bundler ships all of it; `client` is what an app that makes calls ships: the
// client and what it reaches. `fulfillment` includes the webhooks code it shares (what a
// serverless webhook route ships); `payouts` is what a settlement job ships beside its store.
const ENTRIES = {
  client: "export { PaymentsClient } from './dist/index.js';",
  ...Object.fromEntries(list.entries.map((entry) => [entry.dist, `export * from './dist/${entry.dist}.js';`])),
};
for (const name of new Set([...Object.keys(BUDGET), ...Object.keys(CEILING)])) {
  if (!(name in ENTRIES)) {
    failed = true;
    notes.push(`${name} has a budget or a ceiling but is no entry (entries.json, by its dist name) nor client: rename it or drop it.`);
  } else if (!(name in BUDGET) || !(name in CEILING)) {
    failed = true;
    notes.push(
      `${name} has a ${name in BUDGET ? 'budget but no ceiling' : 'ceiling but no budget'}: an entry has both, or neither (measured only).`,
    );
  }
}
/** `contents` bundled and minified as a bundler ships it for a browser: the output bytes. */
async function bundled(contents) {
  const result = await build({
    stdin: { contents, resolveDir: process.cwd(), loader: 'js' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'error',
  });
  return result.outputFiles[0].contents;
}

for (const [name, contents] of Object.entries(ENTRIES)) {
  const code = await bundled(contents);
  const gz = gzipSync(code, { level: 9 }).length;
  console.log(`${name.padEnd(20)} ${String(code.length).padStart(7)} B min  ${String(gz).padStart(6)} B min+gzip${verdict(name, gz)}`);
}

/** The verdict of one entry against its ceiling and budget (empty when it has none); sets `failed` and `notes`. */
function verdict(name, gz) {
  const budget = BUDGET[name];
  const ceiling = CEILING[name];
  if (budget === undefined) return '';
  if (ceiling > budget) {
    failed = true;
    notes.push(`${name}'s ceiling (${ceiling} B) is over its budget (${budget} B): lower it to the budget at most.`);
  }
  if (gz > ceiling) {
    failed = true;
    notes.push(
      `${name} is ${gz - ceiling} B over its ceiling of ${ceiling} B: make it smaller, or raise the ceiling in a commit of its own with its reason (scripts/size.mjs, CONTRIBUTING.md).`,
    );
    return `  (ceiling ${ceiling}: OVER by ${gz - ceiling}; budget ${budget})`;
  }
  return `  (ceiling ${ceiling}: ok, ${ceiling - gz} B left; budget ${budget}: ${budget - gz} B left)`;
}
// The floor under the client's budget: ky and the zod/mini schema kinds the SDK uses, with
// no SDK code at all (what `client` costs beyond this is the SDK's own).
const FLOOR = `import ky from 'ky'; import * as z from 'zod/mini';
export const k = ky.create({ retry: 2, hooks: { beforeRequest: [() => {}] } });
export const s = [z.string().check(z.regex(/a/), z.minLength(1), z.maxLength(3), z.refine(() => true), z.trim()), z.number().check(z.minimum(1), z.maximum(2), z.gt(0)),
  z.boolean(), z.looseObject({}), z.strictObject({}), z.array(z.string()), z.optional(z.string()), z.nullable(z.string()), z.nullish(z.string()),
  z.custom(() => true), z.pipe(z.transform((x) => x), z.string())];
export const p = (schema, value) => schema.safeParse(value, { error: () => 'x' });`;
const floorCode = await bundled(FLOOR);
console.log(
  `${'ky+zod'.padEnd(20)} ${String(floorCode.length).padStart(7)} B min  ${String(gzipSync(floorCode, { level: 9 }).length).padStart(6)} B min+gzip  (floor of client: no SDK code)`,
);
for (const note of notes) console.log(`note: ${note}`);
process.exit(failed ? 1 : 0);
