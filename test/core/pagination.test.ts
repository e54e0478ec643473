// payments.list, payouts.list, billing.invoices.list: one page on await, every item on `for await`.
import { describe, expect, test } from 'vitest';
import * as z from 'zod/mini';
import {
  InvalidParamsError,
  PaymentListParams,
  PaymentsError,
  PayoutListParams,
  ResponseValidationError,
  type PagePromise,
} from '../../src/index.js';
import { MAX_STALE_PAGES } from '../../src/core/pagination.js';
import type { PaymentsClient } from '../../src/index.js';
import { rejection } from '../support/assertions.js';
import { testTransport } from '../support/client.js';
import { BASE_URL, type SeenRequest } from '../support/fake-api.js';
import { useFakeApi } from '../support/harness.js';

const { api, setup } = useFakeApi();

/** Collects an async iterable, failing (instead of hanging) past `max` items. */
async function collect<T>(iterable: AsyncIterable<T>, max = 100): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) {
    out.push(item);
    if (out.length > max) throw new Error(`iteration did not stop after ${max} items`);
  }
  return out;
}

/** A list call whose items have no id (the walk's id-less path), on the pipeline itself. */
function idless(value: { limit?: number }) {
  return testTransport().requestPage({
    operation: 'payments.list',
    method: 'GET',
    path: '/api/v1/payments',
    params: PaymentListParams,
    value,
    item: z.looseObject({ amount: z.number() }),
  });
}

function query(req: SeenRequest): URLSearchParams {
  return new URL(req.pathWithQuery, BASE_URL).searchParams;
}
/** The offset each request asked for (absent means 0). */
const offsets = () => api.seen.map((r) => Number(query(r).get('offset') ?? 0));

type Envelope = 'data' | 'bare' | 'nested';
/** A server holding `items`, answering each request with the slice at offset/limit. */
function serve(
  items: () => Array<Record<string, unknown>>,
  {
    envelope = 'data',
    defaultLimit = 50,
    ignoreOffset = false,
    hasMore,
    total,
  }: { envelope?: Envelope; defaultLimit?: number; ignoreOffset?: boolean; hasMore?: boolean; total?: boolean } = {},
) {
  return (req: SeenRequest) => {
    const q = query(req);
    const offset = ignoreOffset ? 0 : Number(q.get('offset') ?? 0);
    const limit = Number(q.get('limit') ?? defaultLimit);
    const all = items();
    const data = all.slice(offset, offset + limit);
    const meta: Record<string, unknown> = {};
    if (hasMore !== undefined) meta.has_more = hasMore;
    if (total) meta.total = all.length;
    if (envelope === 'bare') return { body: data };
    if (envelope === 'nested') return { body: { status: 'success', data: { current_page: 1, data, ...meta } } };
    return { body: { data, ...meta } };
  };
}

const payments = ['TRX1', 'TRX2', 'TRX3', 'TRX4', 'TRX5'].map((trx_id, i) => ({
  trx_id,
  merchant_ref: `order-${i + 1}`,
  amount: 10 + i,
  currency: 'USD',
  status: 'success',
}));

// Items are read as plain records here: each route's own type is checked elsewhere.
type Lister = (client: PaymentsClient, params?: Record<string, unknown>) => PagePromise<Record<string, unknown>>;
const routes: Array<{ name: string; path: string; list: Lister; items: Array<Record<string, unknown>>; key: string }> = [
  {
    name: 'payments.list',
    path: '/api/v1/payments',
    list: (c, p) => c.payments.list(p) as unknown as PagePromise<Record<string, unknown>>,
    items: payments,
    key: 'trx_id',
  },
  {
    name: 'payouts.list',
    path: '/api/v1/payouts',
    list: (c, p) => c.payouts.list(p) as unknown as PagePromise<Record<string, unknown>>,
    items: [1, 2, 3, 4, 5].map((n) => ({ id: `00000000-0000-4000-8000-00000000000${n}`, amount: n * 100, status: 'SUCCESS' })),
    key: 'id',
  },
  {
    name: 'billing.invoices.list',
    path: '/api/v1/billing/invoices',
    list: (c, p) => c.billing.invoices.list(p) as unknown as PagePromise<Record<string, unknown>>,
    items: [1, 2, 3, 4, 5].map((n) => ({ id: `inv_${n}`, subscription: 'sub_1', status: 'paid', amount: 10000, currency: 'TZS' })),
    key: 'id',
  },
];

describe.each(routes)('$name', ({ path, list, items, key }) => {
  test('await resolves to one page { data, offset, limit, has_more } of plain JSON', async () => {
    api.on(
      'get',
      path,
      serve(() => items),
    );
    const { client } = setup();
    const page = await list(client, { limit: 2 });
    expect(page).toStrictEqual({ data: items.slice(0, 2), offset: 0, limit: 2, has_more: true });
    expect(Object.getPrototypeOf(page)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(page.data[0])).toBe(Object.prototype);
    expect(structuredClone(page)).toStrictEqual(page);
    expect(api.seen).toHaveLength(1);
    const req = api.seen[0]!;
    expect(req.method).toBe('GET');
    expect(req.pathWithQuery).toBe(`${path}?limit=2`);
    expect(req.rawBody).toBe('');
    expect(req.signatureValid).toBe(true);
    expect(req.headers['idempotency-key']).toBeUndefined();
  });

  test('.withResponse() gives { data: page, response }', async () => {
    api.on(
      'get',
      path,
      serve(() => items),
    );
    const { client } = setup();
    const { data, response } = await list(client, { limit: 3, offset: 1 }).withResponse();
    expect(response.status).toBe(200);
    expect(data).toStrictEqual({ data: items.slice(1, 4), offset: 1, limit: 3, has_more: true });
    expect(query(api.seen[0]!).toString()).toContain('offset=1');
  });

  test('for await walks pages by offset 0, 2, 4 and yields each item exactly once', async () => {
    api.on(
      'get',
      path,
      serve(() => items),
    );
    const { client } = setup();
    const got = await collect(list(client, { limit: 2 }));
    expect(got).toStrictEqual(items);
    expect(offsets()).toEqual([0, 2, 4]);
    expect(api.seen.map((r) => query(r).get('limit'))).toEqual(['2', '2', '2']);
    expect(api.seen.every((r) => r.signatureValid)).toBe(true);
  });

  test('a bare-array body works, and a last full page ends on the empty page after it', async () => {
    api.on(
      'get',
      path,
      serve(() => items.slice(0, 4), { envelope: 'bare' }),
    );
    const { client } = setup();
    expect(await collect(list(client, { limit: 2 }))).toStrictEqual(items.slice(0, 4));
    expect(offsets()).toEqual([0, 2, 4]);
  });

  test('a { status, data: { data: [...] } } envelope works', async () => {
    api.on(
      'get',
      path,
      serve(() => items, { envelope: 'nested', total: true }),
    );
    const { client } = setup();
    const page = await list(client, { limit: 2 });
    expect(page).toStrictEqual({ data: items.slice(0, 2), offset: 0, limit: 2, has_more: true, total: 5 });
    expect(await collect(list(client, { limit: 2 }))).toStrictEqual(items);
  });

  test('an item repeated on the next page (the list shifted) is yielded once', async () => {
    const fresh = { ...items[0]!, [key]: `${String(items[0]![key])}-new` };
    let shifted = false;
    api.on('get', path, (req) => {
      const reply = serve(() => (shifted ? [fresh, ...items] : items))(req);
      shifted = true; // a new item lands at the top after the first page
      return reply;
    });
    const { client } = setup();
    const got = await collect(list(client, { limit: 2 }));
    expect(got.map((x) => x[key])).toEqual(items.map((x) => x[key]));
    // First page [1, 2]; then, shifted by one: [2, 3], [4, 5], and an empty page after the full one.
    expect(offsets()).toEqual([0, 2, 4, 6]);
  });

  test('a server that ignores offset does not loop forever: a typed error after MAX_STALE_PAGES pages of nothing new', async () => {
    api.on(
      'get',
      path,
      serve(() => items, { ignoreOffset: true, hasMore: true }),
    );
    const { client } = setup();
    const got: unknown[] = [];
    const error = await rejection(
      (async () => {
        for await (const item of list(client, { limit: 2 })) got.push(item);
      })(),
    );
    expect(got).toStrictEqual(items.slice(0, 2));
    expect(error).toBeInstanceOf(PaymentsError);
    expect(error.message).toMatch(/may ignore offset/);
    expect(api.seen).toHaveLength(1 + MAX_STALE_PAGES);
  });

  test("the server's has_more: false stops the walk even after a full page", async () => {
    api.on(
      'get',
      path,
      serve(() => items, { hasMore: false }),
    );
    const { client } = setup();
    expect(await collect(list(client, { limit: 2 }))).toStrictEqual(items.slice(0, 2));
    expect(api.seen).toHaveLength(1);
  });

  test('without a limit, pages of the server default size are walked until an empty page', async () => {
    api.on(
      'get',
      path,
      serve(() => items, { defaultLimit: 3 }),
    );
    const { client } = setup();
    expect(await collect(list(client))).toStrictEqual(items);
    expect(api.seen[0]!.pathWithQuery).toBe(path);
    expect(offsets()).toEqual([0, 3, 5]);
  });

  test('breaking out early fetches no further pages', async () => {
    api.on(
      'get',
      path,
      serve(() => items),
    );
    const { client } = setup();
    const got: unknown[] = [];
    for await (const item of list(client, { limit: 2 })) {
      got.push(item);
      if (got.length === 3) break;
    }
    expect(got).toStrictEqual(items.slice(0, 3));
    expect(offsets()).toEqual([0, 2]);
  });

  test('starting at an offset walks on from there', async () => {
    api.on(
      'get',
      path,
      serve(() => items),
    );
    const { client } = setup();
    expect(await collect(list(client, { limit: 2, offset: 1 }))).toStrictEqual(items.slice(1));
    expect(offsets()).toEqual([1, 3, 5]);
  });

  // Provisional items: nothing in an item makes a list throw.
  test('a mistyped item is kept as it came (an id number read as its digits)', async () => {
    const body = { data: [{ ...items[0]!, [key]: 12, amount: 'n/a' }] };
    api.on('get', path, { body });
    const { client } = setup();
    expect((await list(client)).data).toStrictEqual([{ ...items[0]!, [key]: '12', amount: 'n/a' }]);
  });

  test('a body with no item list → ResponseValidationError keeping the raw body', async () => {
    const body = { message: 'maintenance' };
    api.on('get', path, { body });
    const { client } = setup();
    const error = await rejection(list(client));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as ResponseValidationError).body).toBe(JSON.stringify(body));
  });

  test.each([
    [{ limit: 0 }, 'limit'],
    [{ limit: 2.5 }, 'limit'],
    [{ limit: '10' }, 'limit'],
    [{ offset: -1 }, 'offset'],
    [{ offset: 1.5 }, 'offset'],
  ])('refuses %j before sending (await and for await)', async (params, field) => {
    api.on(
      'get',
      path,
      serve(() => items),
    );
    const { client } = setup();
    const error = (await rejection(list(client, params))) as InvalidParamsError;
    expect(error).toBeInstanceOf(InvalidParamsError);
    expect(Object.keys(error.errors)).toEqual([field]);
    expect(await rejection(collect(list(client, params)))).toBeInstanceOf(InvalidParamsError);
    expect(api.seen).toHaveLength(0);
  });

  test('refuses unknown keys, all fields listed at once', async () => {
    api.on(
      'get',
      path,
      serve(() => items),
    );
    const { client } = setup();
    const error = (await rejection(list(client, { page: 2, limit: 0 }))) as InvalidParamsError;
    expect(error).toBeInstanceOf(InvalidParamsError);
    expect(error.errors.limit).toBeDefined();
    expect(JSON.stringify(error.errors)).toContain('page');
    expect(api.seen).toHaveLength(0);
  });
});

describe('payments.list query', () => {
  test('encodes limit, offset, status and merchant_ref, and signs the encoded query', async () => {
    api.on('get', '/api/v1/payments', { body: { data: [] } });
    const { client } = setup();
    const page = await client.payments.list({ limit: 10, offset: 20, status: 'success', merchant_ref: 'order 1&2=ü' });
    expect(api.seen[0]!.pathWithQuery).toBe('/api/v1/payments?limit=10&offset=20&status=success&merchant_ref=order+1%262%3D%C3%BC');
    expect(api.seen[0]!.signatureValid).toBe(true);
    expect(query(api.seen[0]!).get('merchant_ref')).toBe('order 1&2=ü');
    expect(page).toStrictEqual({ data: [], offset: 20, limit: 10, has_more: false });
  });

  test('keeps the filters on every page while walking', async () => {
    api.on(
      'get',
      '/api/v1/payments',
      serve(() => payments),
    );
    const { client } = setup();
    await collect(client.payments.list({ limit: 2, status: 'success' }));
    expect(api.seen.map((r) => r.pathWithQuery)).toEqual([
      '/api/v1/payments?limit=2&status=success',
      '/api/v1/payments?limit=2&offset=2&status=success',
      '/api/v1/payments?limit=2&offset=4&status=success',
    ]);
  });

  test('list() without params sends no query', async () => {
    api.on('get', '/api/v1/payments', { body: [] });
    const { client } = setup();
    expect({ ...(await client.payments.list()) }).toStrictEqual({ data: [], offset: 0, limit: undefined, has_more: false });
    expect(api.seen[0]!.pathWithQuery).toBe('/api/v1/payments');
  });

  test.each([
    [{ status: '' }, 'status'],
    [{ merchant_ref: 'r'.repeat(61) }, 'merchant_ref'],
    [{ merchant_ref: '' }, 'merchant_ref'],
  ])('refuses %j before sending', async (params, field) => {
    const { client } = setup();
    const error = (await rejection(client.payments.list(params as never))) as InvalidParamsError;
    expect(error).toBeInstanceOf(InvalidParamsError);
    expect(Object.keys(error.errors)).toEqual([field]);
    expect(api.seen).toHaveLength(0);
  });

  test('a total from the server decides has_more', async () => {
    api.on(
      'get',
      '/api/v1/payments',
      serve(() => payments, { total: true }),
    );
    const { client } = setup();
    expect((await client.payments.list({ limit: 2, offset: 4 })).has_more).toBe(false);
    expect((await client.payments.list({ limit: 2, offset: 2 })).has_more).toBe(true);
    expect(await collect(client.payments.list({ limit: 2 }))).toStrictEqual(payments);
    // Pages at offsets 4, 2, then the walk: 0, 2, 4 (the last page is known to be the end).
    expect(offsets()).toEqual([4, 2, 0, 2, 4]);
  });
});

describe('billing.invoices.list query', () => {
  test('keeps the subscription filter on every page', async () => {
    const invoices = [1, 2, 3].map((n) => ({ id: `inv_${n}`, subscription: 'sub_9', status: 'open', amount: 500, currency: 'TZS' }));
    api.on(
      'get',
      '/api/v1/billing/invoices',
      serve(() => invoices),
    );
    const { client } = setup();
    expect(await collect(client.billing.invoices.list({ subscription: 'sub_9', limit: 2 }))).toStrictEqual(invoices);
    expect(api.seen.map((r) => r.pathWithQuery)).toEqual([
      '/api/v1/billing/invoices?subscription=sub_9&limit=2',
      '/api/v1/billing/invoices?subscription=sub_9&limit=2&offset=2',
    ]);
  });
});

describe('the walk ends when the server says so, and never drops or loops', () => {
  const seven = Array.from({ length: 7 }, (_, i) => ({ trx_id: `TRX${i + 1}`, amount: i + 1, currency: 'USD', status: 'pending' }));

  test('two payments created at the head during a walk over limit 2: every item that existed is yielded, once', async () => {
    let rows = seven.slice(2);
    api.on(
      'get',
      '/api/v1/payments',
      serve(() => rows, { hasMore: undefined }),
    );
    const { client } = setup();
    const got: string[] = [];
    for await (const p of client.payments.list({ limit: 2 })) {
      got.push(p.trx_id!);
      // After the first page, two new payments arrive at the head (newest first).
      if (got.length === 1) rows = [...seven.slice(0, 2), ...rows];
    }
    // The old walk stopped at the page of shifted rows, after 2 of the 5; offset paging cannot
    // see rows created at the head after it passed, but it must not lose the others.
    expect(got).toEqual(['TRX3', 'TRX4', 'TRX5', 'TRX6', 'TRX7']);
  });

  test('two identical rows without an id are both yielded', async () => {
    // Every public list item has an id now; the walk itself still handles rows without
    // one (a list of a shape with no id), through the pipeline's own list call.
    const rows = [{ amount: 5 }, { amount: 5 }, { amount: 6 }];
    api.on(
      'get',
      '/api/v1/payments',
      serve(() => rows),
    );
    expect(await collect(idless({ limit: 2 }))).toStrictEqual(rows);
  });

  test('meta.total is read from a { data, meta } envelope', async () => {
    api.on('get', '/api/v1/payments', (req) => {
      const offset = Number(query(req).get('offset') ?? 0);
      return { body: { data: payments.slice(offset, offset + 2), meta: { total: payments.length } } };
    });
    const { client } = setup();
    expect(await collect(client.payments.list({ limit: 2 }))).toStrictEqual(payments);
    expect(offsets()).toEqual([0, 2, 4]);
  });

  test('page.hasNextPage() / page.getNextPage(); the helpers do not serialise', async () => {
    api.on(
      'get',
      '/api/v1/payments',
      serve(() => payments, { total: true }),
    );
    const { client } = setup();
    let page = await client.payments.list({ limit: 2 });
    const seen = [...page.data];
    while (page.hasNextPage()) {
      page = await page.getNextPage();
      seen.push(...page.data);
    }
    expect(seen).toStrictEqual(payments);
    expect(JSON.parse(JSON.stringify(page))).toStrictEqual({ data: payments.slice(4), offset: 4, limit: 2, has_more: false, total: 5 });
    expect(Object.keys(structuredClone(page))).toEqual(['data', 'offset', 'limit', 'has_more', 'total']);
    await expect(page.getNextPage()).rejects.toBeInstanceOf(PaymentsError);
  });

  test('list.iterPages() yields each page; list.toArray({ limit }) stops at the limit', async () => {
    api.on(
      'get',
      '/api/v1/payments',
      serve(() => payments),
    );
    const { client } = setup();
    const sizes: number[] = [];
    for await (const page of client.payments.list({ limit: 2 }).iterPages()) sizes.push(page.data.length);
    expect(sizes).toEqual([2, 2, 1]);
    api.seen.length = 0;
    expect(await client.payments.list({ limit: 2 }).toArray({ limit: 3 })).toStrictEqual(payments.slice(0, 3));
    expect(offsets()).toEqual([0, 2]);
  });

  test.each([undefined, {}, { limit: 0 }, { limit: 1.5 }, { limit: 10_001 }])(
    'toArray(%j) is refused: the limit is required',
    async (options) => {
      api.on(
        'get',
        '/api/v1/payments',
        serve(() => payments),
      );
      const { client } = setup();
      const list = client.payments.list();
      const error = await rejection(list.toArray(options as { limit: number }));
      expect(error).toBeInstanceOf(InvalidParamsError);
      expect(Object.keys(error.errors)).toEqual(['limit']);
      // The list's first page was already sent: let it land in this test, not the next.
      await list;
    },
  );
});

// Servers that shape lists otherwise than the sandbox. A walk used to stop after
// a short page even when the server said there was more, and ignored Laravel's paginator.
describe('other list envelopes: the walk ends only when the server says so', () => {
  const many = Array.from({ length: 120 }, (_, i) => ({ trx_id: `TRX${i + 1}`, amount: i + 1, currency: 'USD', status: 'success' }));
  const page = (req: SeenRequest) => Number(query(req).get('page') ?? 1);

  test('a server that clamps limit 100 to 50 and says total 120: all 120, by offset', async () => {
    api.on('get', '/api/v1/payments', (req) => {
      const offset = Number(query(req).get('offset') ?? 0);
      return { body: { data: many.slice(offset, offset + 50), meta: { total: 120, limit: 50, offset } } };
    });
    const { client } = setup();
    const items = await collect(client.payments.list({ limit: 100 }), 200);
    expect(items.map((p) => p.trx_id)).toEqual(many.map((p) => p.trx_id));
    expect(api.seen.map((r) => r.pathWithQuery)).toEqual([
      '/api/v1/payments?limit=100',
      '/api/v1/payments?limit=100&offset=50',
      '/api/v1/payments?limit=100&offset=100',
    ]);
  });

  test('has_more: true on a short page goes on', async () => {
    api.on('get', '/api/v1/payments', (req) => {
      const offset = Number(query(req).get('offset') ?? 0);
      const data = many.slice(offset, Math.min(offset + 30, 90));
      return { body: { data, has_more: offset + data.length < 90 } };
    });
    const { client } = setup();
    expect(await collect(client.payments.list({ limit: 100 }), 200)).toHaveLength(90);
  });

  const laravel = (req: SeenRequest, links: boolean, nextBase = BASE_URL) => {
    const current = page(req);
    const data = many.slice((current - 1) * 15, current * 15);
    const next = current < 3 ? `${nextBase}/api/v1/payments?page=${current + 1}` : null;
    const body: Record<string, unknown> = { data, meta: { current_page: current, last_page: 3, per_page: 15, total: 45 } };
    if (links) body.links = { first: `${nextBase}/api/v1/payments?page=1`, next, prev: null };
    return { body };
  };

  test('a Laravel paginator that ignores offset: its same-origin links.next is followed, signed', async () => {
    api.on('get', '/api/v1/payments', (req) => laravel(req, true));
    const { client } = setup();
    const items = await collect(client.payments.list(), 100);
    expect(items).toHaveLength(45);
    expect(api.seen.map((r) => r.pathWithQuery)).toEqual(['/api/v1/payments', '/api/v1/payments?page=2', '/api/v1/payments?page=3']);
    expect(api.seen.every((r) => r.signatureValid)).toBe(true);
  });

  test('a Laravel paginator without links: paged by page number', async () => {
    api.on('get', '/api/v1/payments', (req) => laravel(req, false));
    const { client } = setup();
    expect(await collect(client.payments.list({ limit: 15 }), 100)).toHaveLength(45);
    expect(api.seen.map((r) => query(r).get('page'))).toEqual([null, '2', '3']);
  });

  test('a links.next on another origin is never followed: page numbers where the server has them', async () => {
    api.on('get', '/api/v1/payments', (req) => laravel(req, true, 'http://internal.example:8080'));
    const { client } = setup();
    expect(await collect(client.payments.list(), 100)).toHaveLength(45);
    expect(api.seen.map((r) => query(r).get('page'))).toEqual([null, '2', '3']);
  });

  test('a links.next on another origin, with nothing else to page by: a PaymentsError, nothing sent there', async () => {
    api.on('get', '/api/v1/payments', () => ({
      body: { data: many.slice(0, 10), links: { next: 'https://evil.example/api/v1/payments?page=2' } },
    }));
    const { client } = setup();
    const first = await client.payments.list();
    expect(first.hasNextPage()).toBe(true);
    const error = await rejection(first.getNextPage());
    expect(error).toBeInstanceOf(PaymentsError);
    expect(error.message).toContain('not on the baseUrl origin');
    expect(api.seen).toHaveLength(1);
  });

  test('a relative links.next and a { status, data: { payouts: [...] } } envelope', async () => {
    const ids = ['p1', 'p2', 'p3'];
    api.on('get', '/api/v1/payouts', (req) => {
      const n = page(req);
      const next = n < 3 ? `/api/v1/payouts?page=${n + 1}` : null;
      return {
        body: { status: 'success', data: { payouts: [{ payout_id: ids[n - 1], amount: '5.00', status: 'PAID' }], links: { next } } },
      };
    });
    const { client } = setup();
    const items = await collect(client.payouts.list(), 10);
    expect(items.map((p) => [p.id, p.amount, p.status])).toEqual([
      ['p1', 5, 'SUCCESS'],
      ['p2', 5, 'SUCCESS'],
      ['p3', 5, 'SUCCESS'],
    ]);
  });
});

describe('pagination: id-less items', () => {
  test('items without ids from a server that ignores offset do not loop forever (nor repeat)', async () => {
    // Public list items all have ids now: a list of id-less rows goes through the client's
    // pipeline's own list call, as a shape without an id would.
    api.on('get', '/api/v1/payouts', { body: { data: [{ amount: 1 }, { amount: 2 }] } });
    const seen: unknown[] = [];
    const list = testTransport().requestPage({
      operation: 'payouts.list',
      method: 'GET',
      path: '/api/v1/payouts',
      params: PayoutListParams,
      value: { limit: 2 },
      item: z.looseObject({ amount: z.number() }),
    });
    const failure = await (async () => {
      for await (const payout of list) seen.push(payout);
    })().catch((e: unknown) => e);
    expect(seen).toEqual([{ amount: 1 }, { amount: 2 }]);
    expect(failure).toBeInstanceOf(PaymentsError);
    expect(api.seen).toHaveLength(1 + MAX_STALE_PAGES);
  });
});
