// A list walk against a server that ignores `limit` (issue "Hardening", fault 6): pages of
// thousands of new ids, `has_more: true` for ever. The walk's bound counts items, 10,000 ×
// the `limit` asked for (100 when none was), not only pages, and ends in PaginationError.
// (The bound without a limit, 1,000,000 items, takes seconds to read: not walked here.)
import { describe, expect, test } from 'vitest';
import { PaginationError, PaymentsClient } from '../../src/index.js';
import { BASE_URL, CREDENTIALS } from '../support/fake-api.js';

/** A server that answers every page with `size` payments of new ids and `has_more: true`. */
function endless(size: number) {
  const seen: URLSearchParams[] = [];
  let next = 0;
  const client = new PaymentsClient({
    environment: 'sandbox',
    ...CREDENTIALS,
    baseUrl: BASE_URL,
    fetch: async (input) => {
      seen.push(new URL((input as Request).url).searchParams);
      const data = Array.from({ length: size }, () => ({ trx_id: `TRX${next++}`, status: 'success', amount: 1, currency: 'TZS' }));
      return Response.json({ data, has_more: true });
    },
  });
  return { client, seen };
}

/** Walks `list`, counting items, and gives the error it ended with (failing past `max` items). */
async function walk(list: AsyncIterable<unknown>, max: number): Promise<{ items: number; error: unknown }> {
  let items = 0;
  try {
    for await (const _ of list) if (++items > max) throw new Error(`the walk did not stop after ${max} items`);
  } catch (error) {
    return { items, error };
  }
  throw new Error('the walk ended without an error');
}

describe('the walk is bounded by items, not only pages', () => {
  test.each([
    [1, 4_000, 3],
    [3, 7_000, 5],
  ])(
    'limit %i, pages of %i new ids: PaginationError never_ends at the page that reaches 10,000 × limit items (%i pages)',
    async (limit, size, pages) => {
      const { client, seen } = endless(size);
      const { items, error } = await walk(client.payments.list({ limit }), 100_000);
      expect(error).toBeInstanceOf(PaginationError);
      expect(error).toMatchObject({ reason: 'never_ends', offset: pages * size });
      expect((error as Error).message).toContain(`did not end after ${pages} pages (${pages * size} items)`);
      expect(items).toBe(pages * size);
      expect(seen).toHaveLength(pages);
      expect(seen.every((query) => query.get('limit') === String(limit))).toBe(true);
    },
  );

  test('iterPages() ends the same way', async () => {
    const { client } = endless(5_000);
    let pages = 0;
    const error = await (async () => {
      for await (const _ of client.payments.list({ limit: 1 }).iterPages()) if (++pages > 10) return new Error('no end');
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaginationError);
    expect(pages).toBe(2);
  });
});
