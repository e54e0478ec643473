// What a webhook route ships: memoryStore() of the fulfillment entry carries no payout-intent
// code (the payout kit's memoryStore() is its own entry's), bundled as a bundler would.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const src = fileURLToPath(new URL('../../src/', import.meta.url));

/** The source files a bundle of `contents` (resolved from src/) takes code from. */
async function inputsOf(contents: string): Promise<string[]> {
  const result = await build({
    stdin: { contents, resolveDir: src, loader: 'ts' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    metafile: true,
    logLevel: 'error',
  });
  const output = Object.values(result.metafile.outputs)[0]!;
  return Object.entries(output.inputs)
    .filter(([, input]) => input.bytesInOutput > 0)
    .map(([path]) => path);
}

test('memoryStore() of business-payments/fulfillment bundles no payout code', async () => {
  const inputs = await inputsOf("export { memoryStore } from './fulfillment.ts';");
  expect(inputs.some((path) => path.includes('fulfillment/store.ts'))).toBe(true);
  expect(inputs.filter((path) => path.includes('payouts/'))).toEqual([]);
});

test('the check can fail: the payouts entry memoryStore() has it', async () => {
  const inputs = await inputsOf("export { memoryStore } from './payouts.ts';");
  expect(inputs.filter((path) => path.includes('payouts/'))).not.toEqual([]);
});
