// A payments server of our own that is not our sandbox (the real server, not our mirror).
// A real node:http server on 127.0.0.1 (port 0): it reads the request-target as it
// came over the socket and the raw body bytes, and checks X-Signature with its own
// node:crypto HMAC (never the SDK's signer), the 300 s window and the sandbox credentials. Each
// test tells it how to answer a route: the shapes other servers faithful to the spec may use
// (other envelopes, other id names, decimal strings, 201/202, Laravel or DRF pagination...).
// Nothing here imports the SDK's reading code: only the client, to point it at the server.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { PaymentsClient, type ClientOptions } from '../../src/index.js';

/** Sandbox credentials of the other server (test_ prefix, as the spec marks sandbox ones). */
const OTHER_CREDENTIALS = {
  merchantKey: 'test_merchant_other',
  apiKey: 'test_key_other',
  apiSecret: 'test_secret_other',
} as const;

const TOLERANCE_S = 300;

/** One request as the server saw it. */
export interface Seen {
  method: string;
  /** The request-target as received: path and query, byte for byte. */
  target: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  rawBody: string;
  /** The body parsed as JSON (undefined when empty or not JSON). */
  json: unknown;
  /** X-Signature matched the server's own HMAC of `<ts>.<METHOD>.<target>.<raw body>`. */
  signatureValid: boolean;
  /** X-Timestamp within 300 s of the server's clock. */
  fresh: boolean;
}

/** How to answer: a JSON `body`, or raw `text`, or nothing (an empty body). */
export interface Reply {
  status?: number;
  body?: unknown;
  text?: string;
  headers?: Record<string, string>;
}

type Handler = (req: Seen, params: Record<string, string>) => Reply | Promise<Reply>;

interface Route {
  method: string;
  match: (path: string) => Record<string, string> | undefined;
  handler: Handler;
}

/** A running server of our own and a sandbox client for it. */
export interface OtherServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Every request, in order of arrival. */
  readonly seen: Seen[];
  /**
   * Answers `method` `pattern` (`/api/v1/payments/:trx_id`; `*` for any method or path)
   * with `handler`, after the signature check. The newest matching route wins.
   */
  on(method: string, pattern: string, handler: Handler | Reply): void;
  /** Answers with each reply in turn (the last one repeats). */
  sequence(method: string, pattern: string, replies: Reply[]): void;
  /** Forgets the routes and the requests seen. */
  reset(): void;
  /** A sandbox client aimed at this server. */
  client(options?: ClientOptions): PaymentsClient;
  /** Requests whose signature or timestamp the server refused. */
  refused(): Seen[];
  close(): Promise<void>;
}

function header(req: IncomingMessage, name: string): string {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(',') : (value ?? '');
}

/** The spec's signature: sha256= + hex HMAC-SHA256(secret, `<ts>.<METHOD>.<path_with_query>.<raw_body>`). */
function expectedSignature(secret: string, ts: string, method: string, target: string, rawBody: string): string {
  return 'sha256=' + createHmac('sha256', secret).update(`${ts}.${method}.${target}.${rawBody}`, 'utf8').digest('hex');
}

function compile(pattern: string): Route['match'] {
  if (pattern === '*') return () => ({});
  const names: string[] = [];
  const source = pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:(\w+)/g, (_, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  const regex = new RegExp(`^${source}$`);
  return (path) => {
    const found = regex.exec(path);
    if (!found) return undefined;
    return Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(found[i + 1]!)]));
  };
}

async function readRaw(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, reply: Reply): void {
  const status = reply.status ?? 200;
  if (reply.text !== undefined) {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...reply.headers });
    res.end(reply.text);
  } else if (reply.body === undefined) {
    res.writeHead(status, { ...reply.headers });
    res.end();
  } else {
    res.writeHead(status, { 'content-type': 'application/json', ...reply.headers });
    res.end(JSON.stringify(reply.body));
  }
}

/** Starts a server of our own on 127.0.0.1:0. Close it with `close()` (afterAll). */
export async function startOtherServer(): Promise<OtherServer> {
  const seen: Seen[] = [];
  let routes: Route[] = [];

  const server = createServer((req, res) => {
    void (async () => {
      const target = req.url ?? '/';
      const rawBody = await readRaw(req);
      const method = req.method ?? 'GET';
      const ts = header(req, 'x-timestamp');
      const given = header(req, 'x-signature');
      const want = expectedSignature(OTHER_CREDENTIALS.apiSecret, ts, method, target, method === 'GET' ? '' : rawBody);
      const signatureValid = given.length === want.length && timingSafeEqual(Buffer.from(given), Buffer.from(want));
      const fresh = /^\d+$/.test(ts) && Math.abs(Number(ts) - Math.floor(Date.now() / 1000)) <= TOLERANCE_S;
      const url = new URL(target, 'http://127.0.0.1');
      let json: unknown;
      try {
        json = rawBody ? JSON.parse(rawBody) : undefined;
      } catch {
        json = undefined;
      }
      const request: Seen = {
        method,
        target,
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        rawBody,
        json,
        signatureValid,
        fresh,
      };
      seen.push(request);
      const credentialsOk =
        header(req, 'x-api-key') === OTHER_CREDENTIALS.apiKey &&
        header(req, 'x-merchant-key') === OTHER_CREDENTIALS.merchantKey &&
        header(req, 'x-environment') === 'sandbox';
      if (!signatureValid || !fresh || !credentialsOk || (method === 'GET' && rawBody !== '')) {
        return send(res, { status: 401, body: { error: 'Invalid API credentials', message: 'Invalid API credentials' } });
      }
      for (let i = routes.length - 1; i >= 0; i--) {
        const route = routes[i]!;
        if (route.method !== '*' && route.method !== method) continue;
        const params = route.match(url.pathname);
        if (params) return send(res, await route.handler(request, params));
      }
      send(res, { status: 404, body: { error: 'Not Found', message: `No route for ${method} ${url.pathname}` } });
    })().catch((error: unknown) => {
      // A broken handler is the test's fault: say so in a 599 the test will see.
      if (!res.headersSent) send(res, { status: 599, body: { error: 'Test server error', message: String(error) } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const on: OtherServer['on'] = (method, pattern, handler) => {
    routes.push({
      method: method.toUpperCase(),
      match: compile(pattern),
      handler: typeof handler === 'function' ? handler : () => handler,
    });
  };
  return {
    url,
    seen,
    on,
    sequence(method, pattern, replies) {
      let i = 0;
      on(method, pattern, () => replies[Math.min(i++, replies.length - 1)]!);
    },
    reset() {
      routes = [];
      seen.length = 0;
    },
    client(options = {}) {
      return new PaymentsClient({ environment: 'sandbox', ...OTHER_CREDENTIALS, baseUrl: url, timeout: 5_000, ...options });
    },
    refused: () => seen.filter((req) => !req.signatureValid || !req.fresh),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

// --- Lists: the pagination styles of other servers -------------------------------------------

/**
 * How a server pages a list:
 * - `has_more`: `{ data, has_more }`, honouring limit/offset.
 * - `meta_total_clamped`: `{ data, meta: { total, limit, offset } }`, pages of at most 7
 *   whatever limit was asked (no has_more: only the total says there is more).
 * - `laravel`: Laravel's API resource collection `{ data, links: { next }, meta: {
 *   current_page, last_page, per_page: 15, total } }`; ignores limit and offset, pages by
 *   `?page=` through a same-origin `links.next`.
 * - `laravel_foreign_next`: the same, but `links.next` names another origin (a CDN or a
 *   misconfigured APP_URL): the SDK must not follow it and may page by number instead.
 * - `laravel_nested`: `LengthAwarePaginator::toArray()` inside `{ status: "success", data }`
 *   (`links` is an array there; `next_page_url` is the link).
 * - `bare`: a bare array, honouring limit/offset.
 * - `plural_total_string`: the items under the resource's plural, `total` as a string.
 * - `drf`: Django REST framework's `{ count, next, previous, results }` (next: a full URL).
 * - `records_pagination`: `{ success: true, records, pagination: { has_more, total } }`.
 */
export const LIST_DIALECTS = [
  'has_more',
  'meta_total_clamped',
  'laravel',
  'laravel_foreign_next',
  'laravel_nested',
  'bare',
  'plural_total_string',
  'drf',
  'records_pagination',
] as const;
export type ListDialect = (typeof LIST_DIALECTS)[number];

/** Default page size of the other servers when the client asks for none. */
const SERVER_DEFAULT_LIMIT = 10;
const LARAVEL_PER_PAGE = 15;
const CLAMP = 7;

/**
 * The reply of a server in `dialect` holding `items`, to `req` (its limit, offset, page).
 * `origin` and `plural` build links and the plural key.
 */
export function listReply(dialect: ListDialect, items: readonly unknown[], req: Seen, origin: string, plural: string): Reply {
  const q = req.query;
  const limit = Number(q.get('limit') ?? SERVER_DEFAULT_LIMIT);
  const offset = Number(q.get('offset') ?? 0);
  const total = items.length;
  const link = (query: string) => `${origin}${req.path}?${query}`;
  const slice = (from: number, size: number) => items.slice(from, from + size);
  switch (dialect) {
    case 'has_more': {
      const data = slice(offset, limit);
      return { body: { data, has_more: offset + data.length < total } };
    }
    case 'meta_total_clamped':
      return { body: { data: slice(offset, Math.min(limit, CLAMP)), meta: { total, limit: Math.min(limit, CLAMP), offset } } };
    case 'laravel':
    case 'laravel_foreign_next':
    case 'laravel_nested': {
      const page = Number(q.get('page') ?? 1);
      const last = Math.max(1, Math.ceil(total / LARAVEL_PER_PAGE));
      const data = slice((page - 1) * LARAVEL_PER_PAGE, LARAVEL_PER_PAGE);
      const base = dialect === 'laravel_foreign_next' ? `https://cdn.elsewhere.test${req.path}?` : link('');
      const next = page < last ? `${base}page=${page + 1}` : null;
      const from = data.length ? (page - 1) * LARAVEL_PER_PAGE + 1 : null;
      const to = data.length ? (page - 1) * LARAVEL_PER_PAGE + data.length : null;
      if (dialect === 'laravel_nested') {
        const paginator = {
          current_page: page,
          data,
          first_page_url: `${base}page=1`,
          from,
          last_page: last,
          last_page_url: `${base}page=${last}`,
          links: [{ url: null, label: '&laquo; Previous', active: false }],
          next_page_url: next,
          path: origin + req.path,
          per_page: LARAVEL_PER_PAGE,
          prev_page_url: page > 1 ? `${base}page=${page - 1}` : null,
          to,
          total,
        };
        return { body: { status: 'success', data: paginator } };
      }
      return {
        body: {
          data,
          links: { first: `${base}page=1`, last: `${base}page=${last}`, prev: page > 1 ? `${base}page=${page - 1}` : null, next },
          meta: { current_page: page, from, last_page: last, path: origin + req.path, per_page: LARAVEL_PER_PAGE, to, total },
        },
      };
    }
    case 'bare':
      return { body: slice(offset, limit) };
    case 'plural_total_string':
      return { body: { [plural]: slice(offset, limit), total: String(total), limit, offset } };
    case 'drf': {
      const data = slice(offset, limit);
      const after = offset + data.length;
      return {
        body: {
          count: total,
          next: after < total ? link(`limit=${limit}&offset=${after}`) : null,
          previous: offset > 0 ? link(`limit=${limit}&offset=${Math.max(0, offset - limit)}`) : null,
          results: data,
        },
      };
    }
    case 'records_pagination': {
      const data = slice(offset, limit);
      return { status: 200, body: { success: true, records: data, pagination: { has_more: offset + data.length < total, total } } };
    }
  }
}

// --- Nothing lost: every field the server sent is in the result ------------------------------

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

// A number the spec names may come as a decimal string: read as that number.
const DECIMAL = /^-?\d+(\.\d+)?$/;
// Ids the SDK acts on may come as whole numbers: read as their digits.
const ID_FIELDS = new Set(['trx_id', 'id', 'plan_code', 'subscription', 'merchant_id']);
// PHP / form-encoded booleans of the spec's boolean fields.
const FLAG_FIELDS = new Set(['is_sandbox', 'merchant_payment_methods_restricted']);
const FLAGS = new Map<unknown, boolean>([
  [1, true],
  [0, false],
  ['1', true],
  ['0', false],
  ['true', true],
  ['false', false],
]);

/**
 * Whether `got` is `sent` as the server sent it, or read as the spec's type: a decimal
 * string as its number, a whole-number id as its digits, a 1/0 flag as a boolean; objects
 * and arrays field by field (extra fields in `got` are fine).
 */
export function keptOrRead(sent: unknown, got: unknown, key?: string): boolean {
  if (isDeepStrictEqual(sent, got)) return true;
  if (typeof sent === 'string' && DECIMAL.test(sent.trim()) && got === Number(sent)) return true;
  if (typeof sent === 'number' && Number.isSafeInteger(sent) && key !== undefined && ID_FIELDS.has(key) && got === String(sent))
    return true;
  if (key !== undefined && FLAG_FIELDS.has(key) && FLAGS.has(sent) && got === FLAGS.get(sent)) return true;
  if (Array.isArray(sent) && Array.isArray(got)) return sent.length === got.length && sent.every((item, i) => keptOrRead(item, got[i]));
  if (isRecord(sent) && isRecord(got)) return Object.entries(sent).every(([k, v]) => Object.hasOwn(got, k) && keptOrRead(v, got[k], k));
  return false;
}

/**
 * The fields of `sent` (the server's resource) missing from `got` or changed beyond being
 * read as the spec's type; `moved` names fields the SDK may move aside (a payout's `status`
 * to `server_status` once read). An empty list: nothing the server sent is lost.
 */
export function lostFields(got: unknown, sent: unknown, moved: Record<string, string> = {}): string[] {
  if (!isRecord(sent)) return keptOrRead(sent, got) ? [] : [`$: sent ${JSON.stringify(sent)}, got ${JSON.stringify(got)}`];
  if (!isRecord(got)) return [`$: sent an object, got ${JSON.stringify(got)}`];
  const lost: string[] = [];
  for (const [key, value] of Object.entries(sent)) {
    if (Object.hasOwn(got, key) && keptOrRead(value, got[key], key)) continue;
    const aside = moved[key];
    if (aside !== undefined && Object.hasOwn(got, aside) && keptOrRead(value, got[aside], key)) continue;
    lost.push(`${key}: sent ${JSON.stringify(value)}, got ${Object.hasOwn(got, key) ? JSON.stringify(got[key]) : 'nothing'}`);
  }
  return lost;
}

// --- A payout ledger: transfers counted, only 2xx answers stored per Idempotency-Key ----------

/** What a payout ledger saw: every transfer it made, and every request, with its key. */
export interface PayoutLedger {
  /** The Idempotency-Key of each transfer made (a replay makes none). */
  transfers: string[];
  /** The Idempotency-Key of each POST /api/v1/payouts received. */
  requests: Array<string | undefined>;
}

/**
 * Serves POST /api/v1/payouts as a server that keeps only 2xx answers per Idempotency-Key
 * (many do: a failed answer is not worth replaying, they reason). A request whose key has a
 * stored answer gets it replayed, with no transfer; any other request makes a transfer and
 * gets `answer(n)` (n: transfers so far, from 1). A non-2xx answer is not stored, so a
 * retry with the same key makes another transfer: the money moves again.
 */
export function payoutLedger(server: OtherServer, answer: (transfer: number) => Reply): PayoutLedger {
  const ledger: PayoutLedger = { transfers: [], requests: [] };
  const stored = new Map<string, Reply>();
  server.on('POST', '/api/v1/payouts', (req) => {
    const raw = req.headers['idempotency-key'];
    const key = Array.isArray(raw) ? raw.join(',') : raw;
    ledger.requests.push(key);
    const replay = key === undefined ? undefined : stored.get(key);
    if (replay) return replay;
    ledger.transfers.push(key ?? '');
    const reply = answer(ledger.transfers.length);
    if (key !== undefined && (reply.status ?? 200) < 300) stored.set(key, reply);
    return reply;
  });
  return ledger;
}
