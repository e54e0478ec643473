// HMAC-SHA256 that runs on every runtime: node:crypto where the runtime has it (found at
// run time, so no bundler ever sees a `node:` import), else WebCrypto with each key
// imported once and cached. One source file for Node, Deno, Bun, edge and browsers.

type NodeHmac = {
  update(data: string | Uint8Array): NodeHmac;
  digest(): Uint8Array;
  digest(encoding: 'hex'): string;
};

/** The part of node:crypto this package uses. */
export type NodeCrypto = {
  createHmac(algorithm: string, key: string): NodeHmac;
  timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean;
};

let nodeCrypto: NodeCrypto | null | undefined;

export function loadNodeCrypto(): NodeCrypto | null {
  if (nodeCrypto !== undefined) return nodeCrypto;
  nodeCrypto = null;
  try {
    const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
    const mod = proc?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined;
    if (mod && typeof mod.createHmac === 'function') nodeCrypto = mod;
  } catch {
    // Some runtimes expose a `process` shim that throws: WebCrypto is the fallback.
  }
  return nodeCrypto;
}

const keyCache = new Map<string, ReturnType<typeof crypto.subtle.importKey>>();
export const encoder = new TextEncoder();

/** WebCrypto HMAC-SHA256 key for `secret`, imported once and cached. */
export function importHmacKey(secret: string): ReturnType<typeof crypto.subtle.importKey> {
  let key = keyCache.get(secret);
  if (!key) {
    key = crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
      'sign',
    ]);
    // Bound the cache: a long-lived process that rotates secrets must not grow forever.
    if (keyCache.size >= 16) keyCache.clear();
    keyCache.set(secret, key);
  }
  return key;
}

function toHex(buffer: ArrayBuffer): string {
  const bytes = new Uint8Array(buffer);
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += bytes[i]! < 16 ? `0${bytes[i]!.toString(16)}` : bytes[i]!.toString(16);
  return out;
}

/** Lower-case hex HMAC-SHA256 of `message` (UTF-8) keyed with `secret` (UTF-8). */
export async function hmacSha256Hex(secret: string, message: string | Uint8Array): Promise<string> {
  const node = loadNodeCrypto();
  if (node) return node.createHmac('sha256', secret).update(message).digest('hex');
  const key = await importHmacKey(secret);
  const data = typeof message === 'string' ? encoder.encode(message) : message;
  return toHex(await crypto.subtle.sign('HMAC', key, data as Uint8Array<ArrayBuffer>));
}
