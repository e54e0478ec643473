import * as z from 'zod/mini';
import { APIPromise, type WithResponse } from './api-promise.js';
import { InvalidParamsError, PaginationError, PaymentsError } from './error.js';
import { isCount, isRecord, toFlag, toNumber } from './values.js';

/**
 * One page of a list, as plain JSON (`data`, `offset`, `limit`, `has_more`, `total`) plus
 * two helpers that do not serialise: `hasNextPage()` and `getNextPage()`.
 *
 * @example
 * ```ts
 * let page = await client.payments.list({ limit: 50 });
 * while (page.hasNextPage()) page = await page.getNextPage();
 * ```
 */
export interface ListPage<T> {
  /** The items of this page. */
  data: T[];
  /** Offset this page started at. */
  offset: number;
  /** Page size asked for, if any. */
  limit: number | undefined;
  /** Whether a next page may exist: the server's word, else a full page with no total reached. */
  has_more: boolean;
  /** Total item count, when the server sent one. */
  total?: number | undefined;
  /** True when the server's answer says another page may follow. */
  hasNextPage(): boolean;
  /** Fetches the page after this one (same params, next offset). Throws when there is none. */
  getNextPage(): Promise<ListPage<T>>;
}

/**
 * A walk that has not ended after this many pages, or this many pages' worth of items (of
 * the `limit` asked for, else the largest page the spec allows), is a server that ignores
 * `offset` or `limit`, or a list growing faster than it is read: it ends in a PaginationError
 * instead of looping forever. Items count too: a server that ignores `limit` (400,000 new ids
 * a page) would take 10,000 pages of them.
 */
const MAX_PAGES = 10_000;
/** The largest `limit` the list routes take: the page the item bound counts when none was asked for. */
const MAX_LIMIT = 100;
/**
 * Pages in a row that bring nothing new (every id already seen, or the same id-less rows
 * again) before the walk gives up: rows shifted by inserts at the head give a few such
 * pages, a server that ignores offset gives them forever.
 */
export const MAX_STALE_PAGES = 10;
/**
 * Ids a walk remembers to skip rows that shift to a later page: the most recent ones only,
 * so a server that ignores `limit` (a page of 400,000 new ids, without end) cannot fill memory.
 */
const MAX_SEEN_IDS = 10_000;
/** Largest `limit` of `toArray({ limit })`: more belongs in a `for await` loop. */
const MAX_TO_ARRAY = 10_000;

/**
 * List bodies are not shown in the spec, so every common envelope is read: a bare array,
 * `{ data: [...] }` with `has_more` / `total` at the top or in `meta`, Laravel's paginator
 * (`{ data, links: { next }, meta: { current_page, last_page, per_page, total } }`), one
 * nested in a success envelope (`{ status, data: { data: [...] } }`), or the items under
 * `items`, `results` or the resource's own plural (`payouts`). Items are read by their own
 * (provisional) schema. The item array is what a walk acts on: a body without one fails.
 */
export function listBody<T>(item: z.ZodMiniType<T>, names: readonly string[] = []): z.ZodMiniType<ListBody<T>> {
  // One shape after a plain function, not a z.union of several (lighter to ship, and the
  // issues name the list's own fields).
  return z.pipe(
    z.transform((body) => normalizeList(body, names)),
    z.looseObject({ data: z.array(item) }),
  );
}

const ITEM_KEYS = ['data', 'items', 'results', 'records'];
const record = (value: unknown): Record<string, unknown> => (isRecord(value) ? value : {});
const count = (value: unknown): number | undefined => {
  const n = toNumber(value);
  return isCount(n, 0) ? n : undefined;
};

// Brings each accepted envelope to a `ListBody`; a body with no item array goes on as it
// came, for the object schema to refuse.
function normalizeList(body: unknown, names: readonly string[]): unknown {
  if (Array.isArray(body)) return { data: body };
  if (!isRecord(body)) return body;
  const find = (holder: Record<string, unknown>) => [...ITEM_KEYS, ...names].map((key) => holder[key]).find(Array.isArray);
  let holder = body;
  let data = find(body);
  // A paginator inside a success envelope: its meta sits beside the items, one level down.
  if (!data && isRecord(body.data)) data = find((holder = { ...body, ...body.data }));
  if (!data) return body;
  const meta = { ...record(holder.pagination), ...record(holder.meta) };
  const links = record(holder.links);
  const more = toFlag(holder.has_more ?? meta.has_more ?? holder.hasMore);
  const next = 'next' in links ? links.next : (holder.next_page_url ?? meta.next ?? holder.next);
  const list: ListBody<unknown> = { data };
  if (typeof more === 'boolean') list.has_more = more;
  if (typeof next === 'string' || next === null) list.next = next;
  list.total = count(holder.total ?? meta.total);
  list.current_page = count(meta.current_page ?? holder.current_page);
  list.last_page = count(meta.last_page ?? holder.last_page);
  return list;
}

/** Raw list body after `listBody`: the items and what the server said about the next page. */
export type ListBody<T> = {
  data: T[];
  has_more?: boolean | undefined;
  total?: number | undefined;
  /** The server's link to the next page (`links.next`), or null when it says there is none. */
  next?: string | null | undefined;
  current_page?: number | undefined;
  last_page?: number | undefined;
};

/**
 * Where a page starts: `offset` items in. The next page is asked for by offset, by page
 * number (`page`, a Laravel paginator) or by the server's own same-origin link (`url`).
 */
export interface Cursor {
  offset: number;
  page?: number | undefined;
  url?: string | undefined;
}

/** The page at `cursor`, as the client fetches it. */
export type FetchPage<T> = (cursor: Cursor) => Promise<WithResponse<ListPage<T>>>;

/**
 * A page from a list body. The walk ends only when the server says so, in the first of
 * these it gives: `has_more: false`; its next-page link (null: the end); `current_page` of
 * `last_page`; `has_more: true`; `total` reached. A server that says none of these ends it
 * with an empty page or one shorter than the `limit` asked for.
 */
export function toPage<T>(
  body: ListBody<T>,
  at: Cursor,
  limit: number | undefined,
  resolve: (link: string) => URL | undefined,
  fetchPage: FetchPage<T>,
): ListPage<T> {
  const next = nextCursor(body, at.offset, limit, resolve);
  const page = { data: body.data, offset: at.offset, limit, has_more: next !== undefined } as ListPage<T>;
  if (body.total !== undefined) page.total = body.total;
  // Not enumerable: the page stays plain JSON for JSON.stringify, structuredClone and Next.js.
  Object.defineProperties(page, {
    hasNextPage: { value: () => page.has_more },
    getNextPage: {
      value: async () => {
        if (!next) throw new PaymentsError('No next page: check page.hasNextPage() first.');
        if (next instanceof PaymentsError) throw next;
        return (await fetchPage(next)).data;
      },
    },
  });
  return page;
}

function nextCursor<T>(
  body: ListBody<T>,
  offset: number,
  limit: number | undefined,
  resolve: (link: string) => URL | undefined,
): Cursor | PaymentsError | undefined {
  const { has_more: more, next: link, total, current_page: current, last_page: last } = body;
  const after = { offset: offset + body.data.length };
  const byPage = current !== undefined && last !== undefined;
  if (more === false) return undefined;
  if (link !== undefined) {
    if (link === null) return undefined;
    const url = resolve(link);
    if (url) return { ...after, url: url.href };
    // Never a byte to another origin: page by number where the server numbers its pages.
    if (!byPage)
      return new PaymentsError(`The server's next-page link ${JSON.stringify(link)} is not on the baseUrl origin: not followed.`);
  }
  if (byPage) return current < last ? { ...after, page: current + 1 } : undefined;
  if (more === true) return after;
  if (total !== undefined) return after.offset < total ? after : undefined;
  return body.data.length === 0 || (limit !== undefined && body.data.length < limit) ? undefined : after;
}

/**
 * What a `list()` call returns: await it for the first page, or `for await` over it to
 * walk every page by offset, each item yielded once.
 *
 * @example
 * ```ts
 * const page = await client.payments.list({ limit: 50 });
 * for await (const payment of client.payments.list({ status: 'success' })) {
 *   console.log(payment.trx_id);
 * }
 * for await (const page of client.payments.list().iterPages()) console.log(page.data.length);
 * const recent = await client.payments.list({ limit: 100 }).toArray({ limit: 500 });
 * ```
 */
export class PagePromise<T> extends APIPromise<ListPage<T>> implements AsyncIterable<T> {
  // Pages that repeat the previous page exactly (rows without ids): their items are not
  // yielded again by the item walk.
  readonly #repeats = new WeakSet<ListPage<T>>();

  /**
   * Walks the pages by offset until the server says the list ended. Never loops forever:
   * 10 pages in a row with nothing new, or 10,000 pages in all, or 10,000 × `limit` items
   * (`limit` 100 when none was asked for), end the walk with a PaginationError.
   */
  async *iterPages(): AsyncGenerator<ListPage<T>, void, undefined> {
    const seen = new Set<string>();
    let page: ListPage<T> = (await this.withResponse()).data;
    let previous: ListPage<T> | undefined;
    let stale = 0;
    let items = 0;
    for (let count = 1; ; count++) {
      const novelty = whatIsNew(page, previous, seen);
      stale = novelty === 'fresh' ? 0 : stale + 1;
      if (novelty === 'repeat') this.#repeats.add(page);
      items += page.data.length;
      yield page;
      if (!page.hasNextPage()) return;
      if (stale >= MAX_STALE_PAGES || count >= MAX_PAGES || items >= MAX_PAGES * (page.limit ?? MAX_LIMIT)) {
        const stuck = stale >= MAX_STALE_PAGES;
        const why = stuck ? `${stale} pages in a row brought nothing new` : `it did not end after ${count} pages (${items} items)`;
        const offset = page.offset + page.data.length;
        throw new PaginationError(
          stuck ? 'not_advancing' : 'never_ends',
          offset,
          `The list walk stopped at offset ${offset}: ${why}. The server may ignore offset or limit.`,
        );
      }
      previous = page;
      page = await page.getNextPage();
    }
  }

  /**
   * Walks every page, yielding each item once. Rows that shift to a later page while the
   * walk runs (new items at the head) are skipped by id; items without an id are all yielded.
   */
  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    const seen = new Set<string>();
    for await (const page of this.iterPages()) {
      if (this.#repeats.has(page)) continue;
      for (const item of page.data) {
        const id = itemId(item);
        if (id !== undefined) {
          if (seen.has(id)) continue;
          remember(seen, id);
        }
        yield item;
      }
    }
  }

  /** The first `limit` items of the walk (1 to 10,000; required, so a list never fills memory). */
  async toArray(options: { limit: number }): Promise<T[]> {
    // Not trusted to be a number: Number.isInteger is false for anything else.
    const limit = (options as { limit?: number } | undefined)?.limit as number;
    if (!isCount(limit, 1, MAX_TO_ARRAY)) {
      throw new InvalidParamsError('list.toArray', { limit: [`is required: a whole number from 1 to ${MAX_TO_ARRAY}`] });
    }
    const items: T[] = [];
    for await (const item of this) {
      items.push(item);
      if (items.length >= limit) break;
    }
    return items;
  }
}

// Records the page's ids and says what the page brought: a new id or id-less rows (`fresh`),
// only ids already seen (`seen`), or exactly the rows of the previous page (`repeat`).
function whatIsNew<T>(page: ListPage<T>, previous: ListPage<T> | undefined, seen: Set<string>): 'fresh' | 'seen' | 'repeat' {
  let fresh = false;
  let idless = false;
  for (const item of page.data) {
    const id = itemId(item);
    if (id === undefined) idless = true;
    else if (!seen.has(id)) {
      remember(seen, id);
      fresh = true;
    }
  }
  // The same rows as the previous page: a server that ignores offset, even when its page is
  // too large for its ids to stay remembered.
  if (previous?.data.length === page.data.length && JSON.stringify(previous.data) === JSON.stringify(page.data)) return 'repeat';
  if (fresh) return 'fresh';
  return idless ? 'fresh' : 'seen';
}

// Adds `id` to the walk's ids, forgetting the oldest past MAX_SEEN_IDS (a Set keeps insertion order).
function remember(seen: Set<string>, id: string): void {
  seen.add(id);
  if (seen.size > MAX_SEEN_IDS) seen.delete(seen.values().next().value!);
}

// An item's identity is its id; an item without one has none (two identical id-less rows
// are two rows), and the page cap, not deduplication, stops a server that ignores offset.
function itemId(item: unknown): string | undefined {
  const id = isRecord(item) ? (item.trx_id ?? item.id) : undefined;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
}
