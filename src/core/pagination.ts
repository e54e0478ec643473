import * as z from 'zod';
import { APIPromise, type WithResponse } from './api-promise.js';

/**
 * One page of a list, as plain JSON. `has_more` is the server's word when it sends one;
 * otherwise it is inferred: a full page (`data.length === limit`) may have more after it.
 */
export interface ListPage<T> {
  /** The items of this page. */
  data: T[];
  /** Offset this page started at. */
  offset: number;
  /** Page size asked for, if any. */
  limit: number | undefined;
  /** Whether a next page may exist. */
  has_more: boolean;
  /** Total item count, when the server sent one. */
  total?: number | undefined;
}

const meta = { has_more: z.boolean().optional(), total: z.number().optional() };

/**
 * List bodies are not shown in the spec, so the schema is lenient on the envelope: a bare
 * array, `{ data: [...] }`, or a paginator nested in a success envelope
 * `{ data: { data: [...] } }`. Items are checked with their own (lenient) schema.
 */
export function listBody<T extends z.ZodType>(item: T) {
  const items = z.array(item);
  return z.union([
    items.transform((data) => ({ data, has_more: undefined, total: undefined })),
    z.looseObject({ data: items, ...meta }),
    z.looseObject({ data: z.looseObject({ data: items, ...meta }) }).transform((body) => body.data),
  ]);
}

/** Raw list body after `listBody`. */
export type ListBody<T> = { data: T[]; has_more?: boolean | undefined; total?: number | undefined };

export function toPage<T>(body: ListBody<T>, offset: number, limit: number | undefined): ListPage<T> {
  const inferred =
    body.total !== undefined
      ? offset + body.data.length < body.total
      : limit !== undefined
        ? body.data.length >= limit
        : body.data.length > 0;
  const page: ListPage<T> = { data: body.data, offset, limit, has_more: body.has_more ?? inferred };
  if (body.total !== undefined) page.total = body.total;
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
 * ```
 */
export class PagePromise<T> extends APIPromise<ListPage<T>> implements AsyncIterable<T> {
  readonly #fetchPage: (offset: number) => Promise<WithResponse<ListPage<T>>>;

  /** @internal */
  constructor(first: Promise<WithResponse<ListPage<T>>>, fetchPage: (offset: number) => Promise<WithResponse<ListPage<T>>>) {
    super(first);
    this.#fetchPage = fetchPage;
  }

  /** Walks every page by offset, yielding each item once. */
  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    // Items inserted while walking shift later pages: ids already yielded are skipped.
    const seen = new Set<string>();
    let page = (await this.withResponse()).data;
    for (;;) {
      let fresh = 0;
      for (const item of page.data) {
        const id = itemId(item);
        if (seen.has(id)) continue;
        seen.add(id);
        fresh++;
        yield item;
      }
      // A page of nothing new means the server ignores offset: stop rather than loop forever.
      if (!page.has_more || page.data.length === 0 || fresh === 0) return;
      page = (await this.#fetchPage(page.offset + page.data.length)).data;
    }
  }
}

// An item's identity: its id when it has one, else its whole JSON (an item without an id
// that comes back unchanged is the same item), so a server ignoring offset cannot loop us.
function itemId(item: unknown): string {
  if (typeof item === 'object' && item !== null) {
    const record = item as Record<string, unknown>;
    const id = record.trx_id ?? record.id;
    if (typeof id === 'string' || typeof id === 'number') return `id:${String(id)}`;
  }
  return `json:${JSON.stringify(item)}`;
}
