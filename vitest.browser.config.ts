// Tests that drive a real headless Chromium (Debian's chromium at /usr/bin/chromium, through
// playwright-core): `npm run test:browser`. Kept out of `npm test`, which needs only `npm ci`.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  resolve: base.resolve,
  test: {
    include: ['test/browser/**/*.browser.ts'],
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
