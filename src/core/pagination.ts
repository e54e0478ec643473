import * as z from 'zod/mini';
import { APIPromise, type SentRequest, type WithResponse } from './api-promise.js';
import { InvalidParamsError, PaymentsError } from './error.js';

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
 * A walk that has not ended after this many pages is a server that ignores `offset` or a
 * list growing faster than it is read: it ends in a PaymentsError instead of looping forever.
 */
export const MAX_PAGES = 10_000;
/**
 * Pages in a row that bring nothing new (every id already seen, or the same id-less rows
 * again) before the walk gives up: rows shifted by inserts at the head give a few such
 * pages, a server that ignores offset gives them forever.
 */
export const MAX_STALE_PAGES = 10;
/** Largest `limit` of `toArray({ limit })`: more belongs in a `for await` loop. */
export const MAX_TO_ARRAY = 10_000;

/**
 * List bodies are not shown in the spec, so the schema is lenient on the envelope: a bare
 * array, `{ data: [...] }`, `{ data: [...], meta: { total, has_more } }`, or a paginator
 * nested in a success envelope `{ data: { data: [...] } }`. Items are checked with their own
 * schema.
 */
export function listBody<T>(item: z.ZodMiniType<T>): z.ZodMiniType<ListBody<T>> {
  // One shape after a plain function, not a z.union of three (lighter to ship, and the
  // issues name the list's own fields).
  return z.pipe(
    z.transform(normalizeList),
    z.looseObject({ data: z.array(item), has_more: z.optional(z.boolean()), total: z.optional(z.number()) }),
  );
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

// Brings each accepted envelope to `{ data, has_more, total }`; anything else goes on as it
// came, for the object schema to refuse.
function normalizeList(body: unknown): unknown {
  if (Array.isArray(body)) return { data: body };
  if (!isRecord(body)) return body;
  if (isRecord(body.data) && Array.isArray(body.data.data)) return body.data;
  const meta = isRecord(body.meta) ? body.meta : {};
  return { data: body.data, has_more: body.has_more ?? meta.has_more, total: body.total ?? meta.total };
}

/** Raw list body after `listBody`. */
export type ListBody<T> = { data: T[]; has_more?: boolean | undefined; total?: number | undefined };

/** The page after `offset`, as the client fetches it. */
export type FetchPage<T> = (offset: number) => Promise<WithResponse<ListPage<T>>>;

/**
 * A page from a list body. The walk ends when the server says so: `has_more: false`, a
 * page shorter than `limit`, an empty page, or `total` reached.
 */
export function toPage<T>(body: ListBody<T>, offset: number, limit: number | undefined, fetchPage: FetchPage<T>): ListPage<T> {
  const count = body.data.length;
  const ended =
    body.has_more === false ||
    count === 0 ||
    (limit !== undefined && count < limit) ||
    (body.total !== undefined && offset + count >= body.total);
  const page = { data: body.data, offset, limit, has_more: !ended } as ListPage<T>;
  if (body.total !== undefined) page.total = body.total;
  // Not enumerable: the page stays plain JSON for JSON.stringify, structuredClone and Next.js.
  Object.defineProperties(page, {
    hasNextPage: { value: () => page.has_more },
    getNextPage: {
      value: async () => {
        if (!page.has_more) throw new PaymentsError('No next page: check page.hasNextPage() first.');
        return (await fetchPage(offset + count)).data;
      },
    },
  });
  return page;
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

  /** @internal */
  constructor(first: Promise<SentRequest<ListPage<T>>>) {
    super(first);
  }

  /**
   * Walks the pages by offset until the server says the list ended. Never loops forever:
   * 10 pages in a row with nothing new, or 10,000 pages in all, end the walk with a
   * PaymentsError.
   */
  async *iterPages(): AsyncGenerator<ListPage<T>, void, undefined> {
    const seen = new Set<string>();
    let page: ListPage<T> = (await this.withResponse()).data;
    let previous: ListPage<T> | undefined;
    let stale = 0;
    for (let count = 1; ; count++) {
      const novelty = whatIsNew(page, previous, seen);
      stale = novelty === 'fresh' ? 0 : stale + 1;
      if (novelty === 'repeat') this.#repeats.add(page);
      yield page;
      if (!page.hasNextPage()) return;
      if (stale >= MAX_STALE_PAGES || count >= MAX_PAGES) {
        const why = stale >= MAX_STALE_PAGES ? `${stale} pages in a row brought nothing new` : `it did not end after ${count} pages`;
        throw new PaymentsError(`The list walk stopped at offset ${page.offset + page.data.length}: ${why}. The server may ignore offset.`);
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
          seen.add(id);
        }
        yield item;
      }
    }
  }

  /** The first `limit` items of the walk (1 to 10,000; required, so a list never fills memory). */
  async toArray(options: { limit: number }): Promise<T[]> {
    const limit = (options as { limit?: unknown } | undefined)?.limit;
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_TO_ARRAY) {
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
      seen.add(id);
      fresh = true;
    }
  }
  if (fresh) return 'fresh';
  if (!idless) return 'seen';
  return previous !== undefined && JSON.stringify(previous.data) === JSON.stringify(page.data) ? 'repeat' : 'fresh';
}

// An item's identity is its id; an item without one has none (two identical id-less rows
// are two rows), and the page cap, not deduplication, stops a server that ignores offset.
function itemId(item: unknown): string | undefined {
  if (typeof item !== 'object' || item === null) return undefined;
  const record = item as Record<string, unknown>;
  const id = record.trx_id ?? record.id;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
}
