// The router of the simulated service: one table of rows (routes.ts), each a method, a path
// pattern, the request steps that apply and a handler, tried in order. The first row whose
// path, method and condition hold answers; a path only the API's rows know with another method
// is a 405 that names theirs; anything else is a 404. Both come from the table's fallback: the
// spec's `{ error, message }` by default, Laravel's for the earlier generation
// (laravel-errors.ts). Every other part of the site (console, checkout, preflight) lists its
// own rows for a wrong method, so it answers in its own words.
import type { Caller, Ctx } from './context.js';
import type { IdempotencyStore } from './idempotency.js';
import type { FixedWindowLimiter, RateLimiter } from './rate-limit.js';
import { errorResponse } from './responses.js';
import { safeDecode } from './util.js';

export type Method = 'GET' | 'HEAD' | 'POST' | 'OPTIONS';

/** How a request reached the service (listen mode knows more than a bare Request). */
export interface HandleContext {
  /** The request target exactly as received (pathname + query); default: from request.url. */
  rawTarget?: string;
  /** Client IP for the rate limit; default `local`. */
  clientIp?: string;
  /** The body bytes when the caller already has them (the HTTP adapter): not read again from the Request. */
  rawBody?: Uint8Array;
  /**
   * The host the request was sent for, when it is not one of the server's own names (the HTTP
   * adapter, http-server.ts): the console refuses it (a DNS-rebound page). Unset elsewhere.
   */
  foreignHost?: string | undefined;
}

/** What the rows of one service share: its state and the stores of the request steps. */
export interface ServiceParts {
  ctx: Ctx;
  rateLimiter: RateLimiter;
  idempotency: IdempotencyStore;
  /** The web console's form token (see console.ts). */
  consoleToken: string;
  /** The OpenAPI document with `server` as base (openapi.ts; handed in, as it reads the route table). */
  openApi: (server: string) => Record<string, unknown>;
  /** The earlier generation's rate limit: a fixed 60 s window per merchant and IP. */
  fixedWindow: FixedWindowLimiter;
}

/** One request on its way through a row: what the router read, and what the steps add. */
export interface Exchange {
  readonly service: ServiceParts;
  readonly request: Request;
  readonly url: URL;
  /** Upper-case. */
  readonly method: string;
  /** The path below the service's base path. */
  readonly path: string;
  /** Public base of the service as the caller reached it (origin plus any base path). */
  readonly base: string;
  /** The request target exactly as received (pathname + query). */
  readonly rawTarget: string;
  /** The body bytes (none for GET and HEAD). */
  readonly rawBody: Uint8Array;
  readonly clientIp: string;
  /** The host it was sent for when that is not one of the server's own names (see HandleContext). */
  readonly foreignHost: string | undefined;
  /** The row's path parameters, decoded. */
  params: Record<string, string>;
  /** The authenticated caller: set by the authenticate step. */
  caller?: Caller;
  /** Requests left in the caller's rate-limit window: set by the rateLimit step. */
  remaining?: number;
  /** The JSON body (`{}` when there is none): set by the jsonBody step. */
  body: Record<string, unknown>;
}

export type Handler = (x: Exchange) => Response | Promise<Response>;

/**
 * A request step: answers the request itself (a refusal) or passes it on with `next` (the
 * later steps and the handler), and may then change the answer.
 */
export type Step = (x: Exchange, next: () => Promise<Response>) => Promise<Response>;

/** One row of the route table. */
export interface Route {
  /** The methods the row answers (`*`: any). */
  method: Method | readonly Method[] | '*';
  /**
   * Path pattern: `{name}` is one segment, `{name:a|b}` one of those words, `*` any rest; a
   * final `/?` allows a trailing slash.
   */
  path: string;
  /** The request steps, in order, before the handler. */
  steps: readonly Step[];
  handler: Handler;
  /** When set, the row answers only the requests it holds for. */
  when?: (x: Exchange) => boolean;
  /** A segment that is not valid %-encoding: kept as sent, or this answer (default: the 404 of no route). */
  badSegment?: 'keep' | (() => Response);
  /** Methods a 405 on this row's path names (default: an API row's own method; other rows none). */
  allow?: readonly string[];
}

/** The answers for a path no row takes (404) and for a known path with another method (405). */
export interface Fallback {
  notFound: (x: Exchange) => Response;
  notAllowed: (x: Exchange, allow: string[]) => Response;
}

/** An /api/v1 row: what the OpenAPI document describes. */
export interface ApiRoute extends Route {
  method: 'GET' | 'POST';
  /** Path in OpenAPI form, e.g. `/api/v1/payouts/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  /** A create: Idempotency-Key applies, and a full key store answers 503. */
  create: boolean;
}

interface Compiled {
  route: Route;
  pattern: RegExp;
  names: string[];
}

/** The router over `routes`: answers a request below `basePath` with the first row that takes it. */
export function createRouter(
  routes: readonly Route[],
  service: ServiceParts,
  basePath: string,
  fallback: Fallback = SPEC_FALLBACK,
): (request: Request, via: HandleContext) => Promise<Response> {
  const rows = routes.map(compile);
  return async (request, via) => {
    const x = await readExchange(request, via, service, basePath);
    const picked = pick(rows, x, fallback);
    if (picked instanceof Response) return picked;
    const params = decodeParams(picked.row, picked.values, x, fallback);
    if (params instanceof Response) return params;
    x.params = params;
    return run(picked.row.route, x);
  };
}

function compile(route: Route): Compiled {
  const names: string[] = [];
  const source = route.path.replace(/\{(\w+)(?::([\w|]+))?\}|\*|\/\?$|[.+()[\]^$\\|]/g, (token, name?: string, words?: string) => {
    if (name === undefined) return token === '*' ? '.*' : token === '/?' ? '/?' : `\\${token}`;
    names.push(name);
    return words === undefined ? '([^/]+)' : `(${words})`;
  });
  return { route, pattern: new RegExp(`^${source}$`), names };
}

async function readExchange(request: Request, via: HandleContext, service: ServiceParts, basePath: string): Promise<Exchange> {
  const url = new URL(request.url);
  const method = request.method.toUpperCase();
  const inBase = basePath !== '' && (url.pathname === basePath || url.pathname.startsWith(`${basePath}/`));
  const bodyless = method === 'GET' || method === 'HEAD';
  return {
    service,
    request,
    url,
    method,
    path: inBase ? url.pathname.slice(basePath.length) || '/' : url.pathname,
    base: url.origin + (inBase ? basePath : ''),
    rawTarget: via.rawTarget ?? url.pathname + url.search,
    rawBody: bodyless ? new Uint8Array() : (via.rawBody ?? new Uint8Array(await request.arrayBuffer())),
    clientIp: via.clientIp ?? 'local',
    foreignHost: via.foreignHost,
    params: {},
    body: {},
  };
}

/** A posted HTML form (console actions, checkout buttons). */
export const formOf = (x: Exchange): URLSearchParams => new URLSearchParams(new TextDecoder().decode(x.rawBody));

const isApiRoute = (route: Route): route is ApiRoute => 'operationId' in route;

function answers(route: Route, method: string): boolean {
  if (route.method === '*') return true;
  return typeof route.method === 'string' ? route.method === method : route.method.includes(method as Method);
}

/** The first row that takes the request, with its path's captured segments; else the 404 or 405. */
function pick(rows: Compiled[], x: Exchange, fallback: Fallback): { row: Compiled; values: string[] } | Response {
  const allowed = new Set<string>();
  for (const row of rows) {
    const match = row.pattern.exec(x.path);
    if (!match) continue;
    if (!answers(row.route, x.method)) {
      for (const method of row.route.allow ?? (isApiRoute(row.route) ? [row.route.method] : [])) allowed.add(method);
      continue;
    }
    if (row.route.when && !row.route.when(x)) continue;
    return { row, values: match.slice(1) };
  }
  return allowed.size === 0 ? fallback.notFound(x) : fallback.notAllowed(x, [...allowed]);
}

/** The spec's server: `{ error, message }` for a path no row takes and for a wrong method. */
const SPEC_FALLBACK: Fallback = {
  notFound: (x) => errorResponse(404, 'Not Found', `No route for ${x.method} ${x.path}.`),
  notAllowed: (x, methods) => {
    const allow = methods.join(', ');
    return errorResponse(405, 'Method Not Allowed', `${x.method} is not allowed on ${x.path}; use ${allow}.`, {
      headers: { Allow: allow },
    });
  },
};

function decodeParams(row: Compiled, values: string[], x: Exchange, fallback: Fallback): Record<string, string> | Response {
  const params: Record<string, string> = {};
  for (const [i, name] of row.names.entries()) {
    const value = safeDecode(values[i]!);
    const { badSegment } = row.route;
    if (value !== null) params[name] = value;
    else if (badSegment === 'keep') params[name] = values[i]!;
    else return badSegment ? badSegment() : fallback.notFound(x);
  }
  return params;
}

/** The row's steps in order, the handler last. */
function run(route: Route, x: Exchange): Promise<Response> {
  const from = async (i: number): Promise<Response> => (i < route.steps.length ? route.steps[i]!(x, () => from(i + 1)) : route.handler(x));
  return from(0);
}
