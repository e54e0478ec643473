// nodeHmacSha256 computes HMAC-SHA256 from precomputed key pads with node:crypto's one-shot
// hash: it must give exactly createHmac's bytes for every key and body shape.
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, test, vi } from 'vitest';
import { loadNodeCrypto, nodeHmacSha256 } from '../../src/internal/hmac.js';

const node = loadNodeCrypto()!;
const reference = (secret: string, prefix: string, body: string | Uint8Array) =>
  createHmac('sha256', secret).update(prefix).update(body).digest('hex');
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe('nodeHmacSha256', () => {
  test.each([
    ['short ASCII secret', 'whsec_1', 'hello'],
    ['secret of exactly 64 bytes', 'k'.repeat(64), 'body'],
    ['secret longer than 64 bytes (hashed first)', 's'.repeat(200), 'body'],
    ['non-ASCII secret', 'sïcrét-☕', 'Malipo ya Agizo ☕ — café'],
    ['empty body', 'whsec_1', ''],
    ['body larger than the 64 KiB scratch', 'whsec_1', 'x'.repeat(200_000)],
  ])('%s', (_name, secret, body) => {
    expect(hex(nodeHmacSha256(node, secret, '1700000000.', body))).toBe(reference(secret, '1700000000.', body));
    const bytes = new TextEncoder().encode(body);
    expect(hex(nodeHmacSha256(node, secret, '1700000000.', bytes))).toBe(reference(secret, '1700000000.', bytes));
  });

  test('a long body after a short one and a short after a long reuse the scratch correctly', () => {
    const calls = ['a'.repeat(10), 'b'.repeat(5000), 'c', 'd'.repeat(70_000), 'e'.repeat(3)];
    for (const body of calls) expect(hex(nodeHmacSha256(node, 'whsec_1', '1.', body))).toBe(reference('whsec_1', '1.', body));
  });

  test('matches createHmac for arbitrary secrets and bodies', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 100, unit: 'grapheme' }),
        fc.string({ unit: 'grapheme', maxLength: 3000 }),
        (secret, body) => {
          expect(hex(nodeHmacSha256(node, secret, '42.', body))).toBe(reference(secret, '42.', body));
        },
      ),
      { seed: 20261122, numRuns: 300 },
    );
  });

  test('falls back to createHmac where node:crypto has no one-shot hash', () => {
    const withoutHash = { createHmac: node.createHmac, timingSafeEqual: node.timingSafeEqual };
    const spy = vi.spyOn(withoutHash, 'createHmac');
    expect(hex(nodeHmacSha256(withoutHash, 'whsec_1', '1.', 'body'))).toBe(reference('whsec_1', '1.', 'body'));
    expect(spy).toHaveBeenCalled();
  });
});
