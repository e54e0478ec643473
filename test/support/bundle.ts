// An entry as a bundler ships it (esbuild, minified ESM, platform neutral): which source
// files it pulls in, and its min+gzip size. For the tests that hold an entry standalone
// (no ky, no client, no driver) and small.
import { build } from 'esbuild';
import { gzipSync } from 'node:zlib';

export async function bundleEntry(entry: string): Promise<{ inputs: string[]; gzipBytes: number }> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'neutral',
    write: false,
    metafile: true,
    logLevel: 'error',
  });
  return { inputs: Object.keys(result.metafile.inputs).sort(), gzipBytes: gzipSync(result.outputFiles[0]!.contents, { level: 9 }).length };
}
