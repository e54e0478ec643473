// What every request goes through around the router: a failure becomes a 500, every answer
// gets a Date, an API answer its CORS headers and an X-Request-Id, and each request but a
// console page view is logged (state.requests, onRequest), after which the bounded stores
// are trimmed. An answer marked lost (payout behaviour `loseAnswer`; responses.ts LOST) is
// logged with status 0 and becomes `Response.error()`: msw makes that a network error, the
// HTTP adapter resets the connection.
import { PAGE_VIEWS } from './console.js';
import type { Ctx } from './context.js';
import { allowCors } from './cors.js';
import { errorResponse, LOST, LOST_REASON, RAW_TEXT } from './responses.js';
import type { HandleContext } from './router.js';
import type { MockRequestLogEntry } from './types.js';
import { capList, capMap } from './util.js';

type Route = (request: Request, via: HandleContext) => Promise<Response>;
export type HandleWith = (request: Request, via?: HandleContext) => Promise<Response>;

/** The service's answer to a request: `route`'s, stamped and logged. */
export function frontDoor(ctx: Ctx, route: Route, onRequest?: (entry: MockRequestLogEntry) => void): HandleWith {
  let requestCount = 0;
  return async (request, via = {}) => {
    const response = await answer(route, request, via);
    const at = ctx.now();
    const path = via.rawTarget ?? targetOf(request);
    // The spec names no request id header; this sandbox sends X-Request-Id, as many services do.
    const requestId = `req_${(++requestCount).toString(36).padStart(6, '0')}`;
    if (LOST.has(response)) {
      record(ctx, { method: request.method.toUpperCase(), path, status: 0, at, reason: LOST_REASON, requestId }, onRequest);
      return Response.error();
    }
    stamp(response, at, path.includes('/api/') ? requestId : undefined);
    if (PAGE_VIEWS.has(response)) return response; // a console page view: not an API request
    const entry: MockRequestLogEntry = { method: request.method.toUpperCase(), path, status: response.status, at, requestId };
    if (response.status >= 400) entry.reason = reasonOf(response);
    record(ctx, entry, onRequest);
    return response;
  };
}

async function answer(route: Route, request: Request, via: HandleContext): Promise<Response> {
  try {
    return await route(request, via);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return errorResponse(500, 'Internal Server Error', `The simulated service failed: ${message}`);
  }
}

function targetOf(request: Request): string {
  const url = new URL(request.url);
  return url.pathname + url.search;
}

/** The Date header; on an API answer (it has a request id) CORS and X-Request-Id. */
function stamp(response: Response, at: number, requestId: string | undefined): void {
  setHeader(response, 'Date', new Date(at).toUTCString());
  if (requestId === undefined) return;
  allowCors(response);
  setHeader(response, 'X-Request-Id', requestId);
}

function setHeader(response: Response, name: string, value: string): void {
  try {
    response.headers.set(name, value);
  } catch {
    // immutable headers: leave them
  }
}

// The message of an error answer, for the log: why the service refused. The earlier
// generation's bodies may carry only `error` (a sentence) or only `errors` (per field).
function reasonOf(response: Response): string | undefined {
  try {
    const body = JSON.parse(RAW_TEXT.get(response) ?? '{}') as { message?: unknown; error?: unknown; errors?: unknown };
    if (typeof body.message === 'string') return body.message;
    if (typeof body.error === 'string') return body.error;
    const first: unknown = body.errors && typeof body.errors === 'object' ? Object.values(body.errors)[0] : undefined;
    return Array.isArray(first) && typeof first[0] === 'string' ? first[0] : undefined;
  } catch {
    return undefined;
  }
}

function record(ctx: Ctx, entry: MockRequestLogEntry, onRequest?: (entry: MockRequestLogEntry) => void): void {
  ctx.state.requests.push(entry);
  trimStores(ctx);
  try {
    onRequest?.(entry);
  } catch {
    // a logging hook must not break the answer
  }
}

// Bounded stores: a sandbox left running for days must not grow without end.
function trimStores(ctx: Ctx): void {
  const { state, limits } = ctx;
  capList(state.requests, limits.requestLog);
  capList(state.events, limits.events);
  capList(state.deliveries, limits.events);
  for (const store of [state.payments, state.payouts, state.plans, state.subscriptions, state.invoices]) capMap(store, limits.records);
  capMap(ctx.references, limits.records);
}
