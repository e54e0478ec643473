// @vitest-environment edge-runtime
// The core suite again, under vitest's edge-runtime environment (Vercel's EdgeVM globals),
// with the HMAC on WebCrypto.
//
// vitest's edge-runtime environment still exposes Node's `process` (with getBuiltinModule)
// and `Buffer`, which a real edge function does not have. So this file forces the WebCrypto
// path: before the first verification it hides process.getBuiltinModule while the SDK looks
// for node:crypto (which it does once and caches). The tests then assert that WebCrypto did
// the work and node:crypto did not. Buffer cannot be hidden for the whole suite (the
// environment's own Request/Response are built on it and hang without it), so one test hides
// it around verifications of plain payloads to show the WebCrypto path needs no Buffer.
import { afterAll, describe, expect, test, vi } from 'vitest';
import { loadNodeCrypto } from '../../src/internal/hmac.js';
import { signWebhook } from '../../src/testing.js';
import { verifyWebhook, verifyWebhookSignature } from '../../src/webhooks.js';
import vectors from '../fixtures/webhooks/openssl-vectors.json';
import { delivery, NOW, current, paymentEvent, SECRET, webhookSuite } from './suite.js';

type Proc = { getBuiltinModule?: (id: string) => unknown };
const proc = (globalThis as { process?: Proc }).process;
const nodeCrypto = proc?.getBuiltinModule?.('node:crypto') as { createHmac: (...args: unknown[]) => unknown } | undefined;

// Hide process.getBuiltinModule while the SDK looks for node:crypto: it caches "absent".
{
  const original = proc?.getBuiltinModule;
  if (proc) proc.getBuiltinModule = undefined;
  try {
    if (loadNodeCrypto() !== null) throw new Error('expected no node:crypto with process.getBuiltinModule hidden');
  } finally {
    if (proc) proc.getBuiltinModule = original;
  }
}

webhookSuite({ name: 'edge-runtime', hmac: 'webcrypto', spyHmac: () => vi.spyOn(crypto.subtle, 'verify'), callsPerHmac: 1 });

describe('edge-runtime environment', () => {
  test('runs inside the edge-runtime VM globals', () => {
    expect(typeof (globalThis as { EdgeRuntime?: unknown }).EdgeRuntime).toBe('string');
    expect(typeof crypto.subtle.sign).toBe('function');
  });

  test('the WebCrypto path needs no Buffer', async () => {
    const d = await delivery();
    const bytes = new TextEncoder().encode(d.body as string);
    vi.stubGlobal('Buffer', undefined);
    const outcomes = [];
    for (const payload of [d.body, bytes, bytes.buffer]) {
      outcomes.push(await verifyWebhook({ payload, headers: d.headers, secret: SECRET, now: NOW }).catch((e: unknown) => e));
    }
    outcomes.push(
      await verifyWebhook({ payload: `${d.body as string} `, headers: d.headers, secret: SECRET, now: NOW }).catch((e: unknown) => e),
    );
    vi.unstubAllGlobals();
    expect(outcomes.slice(0, 3)).toEqual([current(paymentEvent()), current(paymentEvent()), current(paymentEvent())]);
    expect(outcomes[3]).toMatchObject({ reason: 'invalid_signature' });
  });

  test('the SDK found no node:crypto, and a verification never touches it', async () => {
    expect(loadNodeCrypto()).toBeNull();
    const d = await delivery();
    const verify = vi.spyOn(crypto.subtle, 'verify');
    const createHmac = nodeCrypto ? vi.spyOn(nodeCrypto, 'createHmac') : undefined;
    await expect(verifyWebhook({ payload: d.body, headers: d.headers, secret: SECRET, now: NOW })).resolves.toEqual(
      current(paymentEvent()),
    );
    expect(verify).toHaveBeenCalledTimes(1);
    expect(verify.mock.calls[0]![0]).toBe('HMAC');
    if (createHmac) expect(createHmac).not.toHaveBeenCalled();
  });

  test('the CryptoKey is imported once per secret and cached', async () => {
    const secret = 'whsec_edge_cache_only_here';
    const d = await delivery({ secret });
    const importKey = vi.spyOn(crypto.subtle, 'importKey');
    for (let i = 0; i < 3; i++) {
      await expect(verifyWebhookSignature({ payload: d.body, headers: d.headers, secret, now: NOW })).resolves.toMatchObject({
        unsignedEventHeader: 'payment.completed',
      });
    }
    expect(importKey).toHaveBeenCalledTimes(1);
    await expect(
      verifyWebhookSignature({ payload: d.body, headers: d.headers, secret: ['whsec_other_edge', secret], now: NOW }),
    ).resolves.toBeTruthy();
    expect(importKey).toHaveBeenCalledTimes(2);
  });

  test('the openssl vectors verify on WebCrypto', async () => {
    for (const v of vectors.vectors) {
      const headers = {
        'x-service-signature': v.signature,
        'x-service-timestamp': String(v.timestamp),
        'x-service-event': v.type || 'payment.completed',
      };
      await expect(
        verifyWebhookSignature({ payload: v.body, headers, secret: v.secret, now: () => v.timestamp * 1000 }),
        v.name,
      ).resolves.toEqual({
        format: 'current',
        timestamp: v.timestamp,
        signed: { timestamp: String(v.timestamp), body: v.body },
        unsignedEventHeader: headers['x-service-event'],
      });
    }
  });

  test('signWebhook signs on WebCrypto the same as openssl', async () => {
    for (const v of vectors.vectors) {
      const { headers } = await signWebhook({ payload: v.body, secret: v.secret, timestamp: v.timestamp });
      expect(headers['X-Service-Signature'], v.name).toBe(v.signature);
    }
  });
});

describe('loadNodeCrypto on other runtimes (fresh module each time)', () => {
  const fresh = async () => {
    vi.resetModules();
    return (await import('../../src/internal/hmac.js')).loadNodeCrypto;
  };

  afterAll(() => {
    vi.resetModules();
  });

  test.each([
    ['no process at all', undefined],
    ['process without getBuiltinModule', {}],
    [
      'getBuiltinModule that throws',
      {
        getBuiltinModule: () => {
          throw new Error('not allowed');
        },
      },
    ],
    ['getBuiltinModule returning nothing', { getBuiltinModule: () => undefined }],
    ['a node:crypto stub without createHmac', { getBuiltinModule: () => ({}) }],
  ])('%s: WebCrypto', async (_label, fake) => {
    const load = await fresh();
    vi.stubGlobal('process', fake);
    let found: unknown;
    try {
      found = load();
    } finally {
      vi.unstubAllGlobals();
    }
    expect(found).toBeNull();
  });

  test('getBuiltinModule is consulted once, then cached', async () => {
    const load = await fresh();
    const getBuiltinModule = vi.fn(() => ({ createHmac: () => undefined, timingSafeEqual: () => true }));
    vi.stubGlobal('process', { getBuiltinModule });
    try {
      const first = load();
      expect(load()).toBe(first);
      expect(first).not.toBeNull();
    } finally {
      vi.unstubAllGlobals();
    }
    expect(getBuiltinModule).toHaveBeenCalledTimes(1);
    expect(getBuiltinModule).toHaveBeenCalledWith('node:crypto');
  });
});
