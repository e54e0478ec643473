import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    webhooks: 'src/webhooks.ts',
    testing: 'src/testing.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
  platform: 'neutral',
  // ky and zod stay runtime dependencies, never bundled in.
  external: ['ky', 'zod', 'zod/mini'],
  splitting: true,
  treeshake: true,
});
