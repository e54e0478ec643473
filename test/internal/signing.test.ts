// The signer against the published vectors (test/fixtures/signing-vectors.json, also in
// docs/signing.md). The expected signatures were computed with openssl, never with the SDK,
// so a bug in signRequest cannot agree with itself here.
import { readFileSync } from 'node:fs';
import { describe, expect, test, vi } from 'vitest';
import { InvalidParamsError, signRequest } from '../../src/index.js';
import { signingPayload, type SignRequestInput } from '../../src/internal/signing.js';
import fixture from '../fixtures/signing-vectors.json';

interface Vector {
  name: string;
  note: string;
  secret: string;
  timestamp: number | string;
  method: string;
  pathWithQuery: string;
  body: string;
  payload: string;
  signature: string;
}

const vectors: Vector[] = fixture.vectors;
const input = ({ secret, timestamp, method, pathWithQuery, body }: Vector): SignRequestInput => ({
  secret,
  timestamp,
  method,
  pathWithQuery,
  body,
});
const vector = (name: string): Vector => {
  const found = vectors.find((v) => v.name === name);
  if (!found) throw new Error(`no vector ${name}`);
  return found;
};

/** A fresh copy of signing.ts + hmac.ts (hmac.ts caches its node:crypto lookup per module). */
async function freshSigner() {
  vi.resetModules();
  return import('../../src/internal/signing.js');
}

describe('published vectors', () => {
  test('the fixture covers what docs/signing.md promises', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(8);
    expect(new Set(vectors.map((v) => v.name)).size).toBe(vectors.length);
    for (const v of vectors) {
      expect(v.signature).toMatch(/^sha256=[0-9a-f]{64}$/);
      // The stored payload is the documented concatenation of the stored inputs.
      expect(v.payload).toBe(`${v.timestamp}.${v.method}.${v.pathWithQuery}.${v.body}`);
    }
    expect(vectors.some((v) => typeof v.timestamp === 'number')).toBe(true);
    expect(vectors.some((v) => typeof v.timestamp === 'string')).toBe(true);
    expect(vectors.some((v) => v.method === 'GET' && v.payload.endsWith('.'))).toBe(true);
    expect(vectors.some((v) => /[^\x00-\x7f]/.test(v.body))).toBe(true);
    expect(vectors.some((v) => /%26|%2F|%3F/.test(v.pathWithQuery.split('?')[1] ?? ''))).toBe(true);
  });

  test.each(vectors.map((v) => [v.name, v] as const))('signRequest matches %s', async (_name, v) => {
    expect(await signRequest(input(v))).toBe(v.signature);
  });

  test.each(vectors.map((v) => [v.name, v] as const))('signingPayload of %s is the published payload', (_name, v) => {
    const { secret: _secret, ...rest } = input(v);
    expect(signingPayload(rest)).toBe(v.payload);
  });

  test('docs/signing.md publishes every vector: inputs, payload and signature', () => {
    const docs = readFileSync(new URL('../../docs/signing.md', import.meta.url), 'utf8');
    for (const v of vectors) {
      const block = docs.slice(docs.indexOf(`#### \`${v.name}\``));
      expect(block, v.name).toContain(`payload:         ${v.payload}\n`);
      expect(block, v.name).toContain(`X-Signature:     ${v.signature}\n`);
      expect(block, v.name).toContain(`path_with_query: ${v.pathWithQuery}\n`);
      expect(block, v.name).toContain(`secret:          ${v.secret}\n`);
    }
  });

  test('a number and a string timestamp sign the same', async () => {
    const asNumber = vector('get-empty-body');
    const asString = vector('get-timestamp-string');
    expect(asNumber.timestamp).toBe(1700000000);
    expect(asString.timestamp).toBe('1700000000');
    expect(await signRequest(input(asNumber))).toBe(await signRequest(input(asString)));
  });

  test('one byte of difference on the wire is a different signature', async () => {
    const v = vector('get-query-reserved');
    // `+` and `%20` decode alike, but the signature covers the bytes as sent.
    const pct20 = await signRequest({ ...input(v), pathWithQuery: v.pathWithQuery.replaceAll('+', '%20') });
    expect(pct20).not.toBe(v.signature);
    const post = vector('post-json');
    expect(await signRequest({ ...input(post), body: `${post.body} ` })).not.toBe(post.signature);
    expect(await signRequest({ ...input(post), timestamp: Number(post.timestamp) + 1 })).not.toBe(post.signature);
    expect(await signRequest({ ...input(post), secret: `${post.secret}x` })).not.toBe(post.signature);
  });
});

describe('method and body', () => {
  test.each(['get', 'Get', 'gEt'])('method %s is upper-cased', async (method) => {
    const v = vector('get-empty-body');
    expect(signingPayload({ ...input(v), method })).toBe(v.payload);
    expect(await signRequest({ ...input(v), method })).toBe(v.signature);
  });

  test.each(['post', 'Post'])('method %s is upper-cased', async (method) => {
    const v = vector('post-json-unicode');
    expect(signingPayload({ ...input(v), method })).toContain('.POST./api/v1/payments.');
    expect(await signRequest({ ...input(v), method })).toBe(v.signature);
  });

  test('a GET payload ends with a dot, and an omitted body is the empty body', async () => {
    const v = vector('get-path-encoded-trx');
    const { body: _body, ...withoutBody } = input(v);
    expect(signingPayload(withoutBody)).toBe(`${v.timestamp}.GET.${v.pathWithQuery}.`);
    expect(signingPayload(withoutBody).endsWith('.')).toBe(true);
    expect(await signRequest(withoutBody)).toBe(v.signature);
  });

  test('an empty JSON object body is not the empty body', async () => {
    const v = vector('post-empty-object');
    expect(v.payload.endsWith('.{}')).toBe(true);
    expect(await signRequest({ ...input(v), body: '' })).not.toBe(v.signature);
  });
});

describe('runtime paths of hmac.ts', () => {
  test('Node uses node:crypto (process.getBuiltinModule), not WebCrypto', async () => {
    const { signRequest: fresh } = await freshSigner();
    const lookup = vi.spyOn(process, 'getBuiltinModule');
    const subtle = vi.spyOn(crypto.subtle, 'sign');
    for (const v of vectors) expect(await fresh(input(v))).toBe(v.signature);
    expect(lookup).toHaveBeenCalledWith('node:crypto');
    expect(subtle).not.toHaveBeenCalled();
  });

  test('the WebCrypto fallback (no process.getBuiltinModule) gives the same signatures', async () => {
    // Node 20, Deno without node compat, edge runtimes and browsers have no getBuiltinModule.
    vi.stubGlobal('process', Object.create(process, { getBuiltinModule: { value: undefined } }));
    const { signRequest: fresh } = await freshSigner();
    const subtle = vi.spyOn(crypto.subtle, 'sign');
    const importKey = vi.spyOn(crypto.subtle, 'importKey');
    for (const v of vectors) expect(await fresh(input(v))).toBe(v.signature);
    expect(subtle).toHaveBeenCalledTimes(vectors.length);
    // Second round: keys come from the cache, signatures are unchanged.
    const imported = importKey.mock.calls.length;
    expect(imported).toBe(new Set(vectors.map((v) => v.secret)).size);
    for (const v of vectors) expect(await fresh(input(v))).toBe(v.signature);
    expect(importKey).toHaveBeenCalledTimes(imported);
    // Methods are upper-cased on this path too.
    const get = vector('get-empty-body');
    expect(await fresh({ ...input(get), method: 'get' })).toBe(get.signature);
  });

  test('the WebCrypto fallback when getBuiltinModule does not return node:crypto', async () => {
    vi.spyOn(process, 'getBuiltinModule').mockReturnValue(undefined as never);
    const { signRequest: fresh } = await freshSigner();
    const subtle = vi.spyOn(crypto.subtle, 'sign');
    for (const v of vectors) expect(await fresh(input(v))).toBe(v.signature);
    expect(subtle).toHaveBeenCalledTimes(vectors.length);
  });

  test('the WebCrypto fallback when a process shim throws', async () => {
    vi.spyOn(process, 'getBuiltinModule').mockImplementation(() => {
      throw new Error('not supported in this runtime');
    });
    const { signRequest: fresh } = await freshSigner();
    const subtle = vi.spyOn(crypto.subtle, 'sign');
    for (const v of vectors) expect(await fresh(input(v))).toBe(v.signature);
    expect(subtle).toHaveBeenCalled();
  });

  test('the WebCrypto key cache stays correct past its bound (secret rotation)', async () => {
    vi.stubGlobal('process', Object.create(process, { getBuiltinModule: { value: undefined } }));
    const { signRequest: fresh } = await freshSigner();
    const v = vector('post-json');
    // Many secrets evict the cache; the vector's secret must still sign correctly after.
    for (let i = 0; i < 40; i++) {
      const other = await fresh({ ...input(v), secret: `rotated_${i}` });
      expect(other).not.toBe(v.signature);
      expect(await fresh(input(v))).toBe(v.signature);
    }
  });
});

describe('the client signs every attempt on the WebCrypto path too', () => {
  test('first attempt and a retry carry the SDK headers and the published signature', async () => {
    // No getBuiltinModule (Node 20, browsers, edge): the client's signing hook is async here.
    vi.stubGlobal('process', Object.create(process, { getBuiltinModule: { value: undefined } }));
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: 1_700_000_000_000 });
    try {
      vi.resetModules();
      const { testTransport } = await import('../support/client.js');
      const { settle } = await import('../support/assertions.js');
      const { fixtures } = await import('../support/fake-api.js');
      const seen: Headers[] = [];
      const fetch = async (request: Request) => {
        seen.push(new Headers(request.headers));
        return seen.length === 1 ? new Response('{}', { status: 503 }) : Response.json(fixtures.verified);
      };
      const subtle = vi.spyOn(crypto.subtle, 'sign');
      const v = vector('get-empty-body');
      // The pipeline itself: the vector's path is no route of the table.
      const transport = testTransport({
        merchantKey: 'test_m',
        apiKey: 'test_k',
        apiSecret: v.secret,
        baseUrl: 'https://api.payments.test',
        fetch: fetch as unknown as typeof globalThis.fetch,
        maxRetries: 1,
      });
      // The retry waits 437 ms (500 ms less the jitter): still the vector's second.
      const { data } = await settle(
        transport
          .request({ operation: 'balance.retrieve', method: 'GET', path: v.pathWithQuery, response: (await import('zod')).unknown() })
          .withResponse(),
      );
      expect(data).toEqual(fixtures.verified);
      expect(seen).toHaveLength(2);
      expect(subtle).toHaveBeenCalledTimes(2);
      for (const headers of seen) {
        expect(headers.get('x-timestamp')).toBe(String(v.timestamp));
        expect(headers.get('x-signature')).toBe(v.signature);
        expect(headers.get('x-api-key')).toBe('test_k');
        expect(headers.get('x-merchant-key')).toBe('test_m');
        expect(headers.get('x-environment')).toBe('sandbox');
        expect(headers.get('content-type')).toBe('application/json');
        expect(headers.get('accept')).toBe('application/json');
      }
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('signRequest: bad input', () => {
  test('bad input is an InvalidParamsError naming each field, never a bare error', async () => {
    const error = await signRequest({ secret: '', timestamp: 'soon', method: 'G ET', pathWithQuery: 'api', body: 5 as never }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidParamsError);
    expect(Object.keys((error as InvalidParamsError).errors).sort()).toEqual(['body', 'method', 'pathWithQuery', 'secret', 'timestamp']);
  });
});
