import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (file: string) => fileURLToPath(new URL(`./src/${file}`, import.meta.url));

export default defineConfig({
  resolve: {
    // Examples import the package by name: test them against the source, not a stale dist/.
    alias: [
      { find: /^business-payments$/, replacement: src('index.ts') },
      { find: /^business-payments\/webhooks$/, replacement: src('webhooks.ts') },
      { find: /^business-payments\/testing$/, replacement: src('testing.ts') },
      { find: /^business-payments\/fulfillment$/, replacement: src('fulfillment.ts') },
      { find: /^business-payments\/fulfillment\/postgres$/, replacement: src('fulfillment-postgres.ts') },
      { find: /^business-payments\/fulfillment\/redis$/, replacement: src('fulfillment-redis.ts') },
      { find: /^business-payments\/doctor$/, replacement: src('doctor.ts') },
      { find: /^business-payments\/payouts$/, replacement: src('payouts.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // The package is built once, before any test (the bin and demo tests use it).
    globalSetup: ['test/global-setup.ts'],
    environment: 'node',
    restoreMocks: true,
    unstubEnvs: true,
    unstubGlobals: true,
  },
});
