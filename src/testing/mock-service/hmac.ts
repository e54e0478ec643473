// The simulated service's own HMAC-SHA256, written apart from the client's on purpose: the
// two sides must not share signing code, or a bug in it would sign and verify alike and
// every test would pass. node:crypto where the runtime has it (found at run time, so no
// bundler sees a `node:` import): synchronous and one-shot, no thread-pool round trip per
// request, which keeps fewer requests in flight under load. WebCrypto everywhere else
// (Deno without Node compatibility, workerd, browsers).

type NodeHmac = { update(data: string | Uint8Array): NodeHmac; digest(encoding: 'hex'): string };
type NodeCrypto = { createHmac(algorithm: 'sha256', key: string): NodeHmac };

let nodeCrypto: NodeCrypto | null | undefined;

function loadNodeCrypto(): NodeCrypto | null {
  if (nodeCrypto !== undefined) return nodeCrypto;
  nodeCrypto = null;
  try {
    const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
    const mod = proc?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined;
    if (typeof mod?.createHmac === 'function') nodeCrypto = mod;
  } catch {
    // A `process` shim that throws (some edge runtimes): WebCrypto it is.
  }
  return nodeCrypto;
}

const encoder = new TextEncoder();
// WebCrypto keys by secret, imported once; cleared past 16 so rotated secrets do not pile up.
type WebKey = ReturnType<typeof crypto.subtle.importKey>;
const webKeys = new Map<string, WebKey>();

function webKey(secret: string): WebKey {
  let key = webKeys.get(secret);
  if (!key) {
    if (webKeys.size >= 16) webKeys.clear();
    key = crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    webKeys.set(secret, key);
  }
  return key;
}

function hex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += (b < 16 ? '0' : '') + b.toString(16);
  return out;
}

// Synchronous on Node, Bun and Deno; `undefined` where only WebCrypto exists.
function hmacHexSync(secret: string, prefix: string, body: string | Uint8Array = ''): string | undefined {
  return loadNodeCrypto()?.createHmac('sha256', secret).update(prefix).update(body).digest('hex');
}

/**
 * Lower-case hex HMAC-SHA256 under `secret` (UTF-8) of `prefix` followed by `body` (strings
 * as UTF-8, bytes as they are), on any runtime.
 */
export async function hmacHex(secret: string, prefix: string, body: string | Uint8Array = ''): Promise<string> {
  const sync = hmacHexSync(secret, prefix, body);
  if (sync !== undefined) return sync;
  const head = encoder.encode(prefix);
  const tail = typeof body === 'string' ? encoder.encode(body) : body;
  const data = new Uint8Array(head.length + tail.length);
  data.set(head);
  data.set(tail, head.length);
  return hex(new Uint8Array(await crypto.subtle.sign('HMAC', await webKey(secret), data)));
}
