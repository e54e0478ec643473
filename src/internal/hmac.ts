// HMAC-SHA256 that runs on every runtime: node:crypto where the runtime has it (found at
// run time, so no bundler ever sees a `node:` import), else WebCrypto with each key
// imported once and cached. One source file for Node, Deno, Bun, edge and browsers.

type NodeHmac = {
  update(data: string | Uint8Array): NodeHmac;
  digest(encoding?: 'buffer' | 'hex'): Uint8Array | string;
};

/** The part of node:crypto this package uses. */
export type NodeCrypto = {
  createHmac(algorithm: string, key: string): NodeHmac;
  timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean;
  /** One-shot digest (Node ≥ 21.7). */
  hash?(algorithm: string, data: Uint8Array, outputEncoding: 'buffer' | 'hex'): Uint8Array | string;
};

type NodeBuffer = Uint8Array & { write(s: string, offset: number): number; copy(target: Uint8Array, at: number): number };
type BufferClass = { allocUnsafe(n: number): NodeBuffer; from(s: string): NodeBuffer; byteLength(s: string | Uint8Array): number };

/** A Node built-in found at run time (`process.getBuiltinModule`; trace.ts uses it too): undefined where there is none, or the lookup throws. */
export function builtin(id: string): unknown {
  try {
    return (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.(id);
  } catch {
    // Some runtimes expose a `process` shim that throws.
  }
}

let nodeCrypto: NodeCrypto | null | undefined;

export function loadNodeCrypto(): NodeCrypto | null {
  if (nodeCrypto === undefined) {
    const mod = builtin('node:crypto') as NodeCrypto | undefined;
    // Anything without createHmac: WebCrypto is the fallback.
    nodeCrypto = typeof mod?.createHmac === 'function' ? mod : null;
  }
  return nodeCrypto;
}

const keyCache = new Map<string, ReturnType<typeof crypto.subtle.importKey>>();
export const encoder = new TextEncoder();

/** WebCrypto HMAC-SHA256 key for `secret`, imported once and cached. */
export function importHmacKey(secret: string): ReturnType<typeof crypto.subtle.importKey> {
  let key = keyCache.get(secret);
  if (!key) {
    key = crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
    // Bound the cache: a long-lived process that rotates secrets must not grow forever.
    if (keyCache.size >= 16) keyCache.clear();
    keyCache.set(secret, key);
  }
  return key;
}

function toHex(buffer: ArrayBuffer): string {
  let out = '';
  for (const byte of new Uint8Array(buffer)) out += (byte < 16 ? '0' : '') + byte.toString(16);
  return out;
}

/**
 * Lower-case hex HMAC-SHA256 of `message` (UTF-8) keyed with `secret` (UTF-8), at once where
 * node:crypto is there (its one-shot hash with cached key pads: no Hmac object per call);
 * `undefined` where only WebCrypto is.
 */
export function hmacSha256HexSync(secret: string, message: string | Uint8Array): string | undefined {
  const node = loadNodeCrypto();
  if (!node) return undefined;
  // Hex straight from the outer hash: no Buffer to convert.
  return nodeHmacSha256(node, secret, '', message, 'hex');
}

/** Lower-case hex HMAC-SHA256 of `message` (UTF-8) keyed with `secret` (UTF-8), on any runtime. */
export async function hmacSha256Hex(secret: string, message: string | Uint8Array): Promise<string> {
  const hex = hmacSha256HexSync(secret, message);
  if (hex !== undefined) return hex;
  const key = await importHmacKey(secret);
  const data = typeof message === 'string' ? encoder.encode(message) : message;
  // Needed under the DOM lib (a consumer's tsconfig), where BufferSource excludes shared buffers.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
  return toHex(await crypto.subtle.sign('HMAC', key, data as Uint8Array<ArrayBuffer>));
}

// RFC 2104 HMAC-SHA256 on node:crypto's one-shot hash with the key pads computed once per
// secret: the same bytes as createHmac(), without building an Hmac stream object per call
// (that object costs more than hashing a 1 KB webhook). Message = prefix + body, written
// into one reused scratch buffer after the inner pad, so nothing is allocated per call.
const pads = new Map<string, [inner: Uint8Array, outer: Uint8Array]>();
let scratch: NodeBuffer | undefined;

export function nodeHmacSha256(node: NodeCrypto, secret: string, prefix: string, body: string | Uint8Array): Uint8Array;
export function nodeHmacSha256(node: NodeCrypto, secret: string, prefix: string, body: string | Uint8Array, out: 'hex'): string;
export function nodeHmacSha256(
  node: NodeCrypto,
  secret: string,
  prefix: string,
  body: string | Uint8Array,
  out?: 'hex',
): Uint8Array | string {
  const B = (globalThis as { Buffer?: BufferClass }).Buffer;
  let pad = pads.get(secret);
  // Keys over one block (64 bytes) would need hashing first: rare, so createHmac does them.
  if (!pad && node.hash && B && B.byteLength(secret) <= 64) {
    const key = B.from(secret);
    // Past the key's end key[i] is undefined, and undefined ^ x is x: the zero padding. (The
    // outer pad's last 32 bytes are where each call writes the inner hash.)
    pad = [new Uint8Array(64).map((_, i) => key[i]! ^ 0x36), new Uint8Array(96).map((_, i) => key[i]! ^ 0x5c)];
    if (pads.size >= 16) pads.clear();
    pads.set(secret, pad);
  }
  if (!pad || !B) return node.createHmac('sha256', secret).update(prefix).update(body).digest(out);
  // (byteLength takes a view too: its length in bytes.)
  const size = 64 + B.byteLength(prefix) + B.byteLength(body);
  // Bodies over 64 KiB get their own buffer, so the scratch never pins megabytes.
  const buf = size > 65_536 ? B.allocUnsafe(size) : (scratch ??= B.allocUnsafe(65_536));
  buf.set(pad[0]);
  const at = 64 + buf.write(prefix, 64);
  // Written in full (size is what write() writes): the message ends at size.
  if (typeof body === 'string') buf.write(body, at);
  else buf.set(body, at);
  pad[1].set(node.hash!('sha256', buf.subarray(0, size), 'buffer') as Uint8Array, 64);
  return node.hash!('sha256', pad[1], out ?? 'buffer');
}
