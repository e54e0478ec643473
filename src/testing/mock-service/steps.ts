// The request steps of the /api/v1 rows, in the order a row lists them (routes.ts):
// authenticate (credentials, signature, merchant availability), rateLimit (per merchant and
// IP), jsonBody (a JSON object), rateLimitHeaders (on the answer of what follows) and, on
// creates, idempotent (Idempotency-Key: replay, reuse, full store). Each either refuses the
// request with its answer or passes it on.
import { authenticate as checkCredentials, availability } from './auth.js';
import type { Caller } from './context.js';
import { errorResponse } from './responses.js';
import type { Exchange, Step } from './router.js';
import { isObject } from './util.js';

/** The authenticated caller (the authenticate step runs first on every row that asks). */
export function callerOf(x: Exchange): Caller {
  if (!x.caller) throw new Error(`${x.method} ${x.path}: the route reads the caller without the authenticate step.`);
  return x.caller;
}

/** Credentials and signature (401), then merchant availability (403): sets `x.caller`. */
export const authenticate: Step = async (x, next) => {
  const input = { headers: x.request.headers, method: x.method, rawTarget: x.rawTarget, rawBody: x.rawBody };
  const auth = await checkCredentials(x.service.ctx, input);
  if (auth instanceof Response) return auth;
  const blocked = availability(auth.merchant, auth.environment);
  if (blocked) return blocked;
  x.caller = { merchant: auth.merchant, environment: auth.environment, clientIp: x.clientIp, base: x.base };
  return next();
};

/** Counts the request against its merchant and IP: 429 past the limit, else sets `x.remaining`. */
export const rateLimit: Step = async (x, next) => {
  const { ctx, rateLimiter } = x.service;
  const perMinute = ctx.rateLimitPerMinute;
  const limit = rateLimiter.hit(`${callerOf(x).merchant.id}|${x.clientIp}`, ctx.now(), perMinute);
  if (limit.allowed) {
    x.remaining = limit.remaining;
    return next();
  }
  return errorResponse(
    429,
    'Too Many Requests',
    `Rate limit of ${perMinute} requests per minute exceeded; retry after ${limit.retryAfter} s.`,
    { headers: { 'Retry-After': String(limit.retryAfter), 'X-RateLimit-Limit': String(perMinute), 'X-RateLimit-Remaining': '0' } },
  );
};

/** X-RateLimit-Limit and X-RateLimit-Remaining on the answer of the steps and handler after it. */
export const rateLimitHeaders: Step = async (x, next) => {
  const response = await next();
  response.headers.set('X-RateLimit-Limit', String(x.service.ctx.rateLimitPerMinute));
  response.headers.set('X-RateLimit-Remaining', String(x.remaining));
  return response;
};

/** A POST's body, a JSON object sent as JSON (blank reads as `{}`): sets `x.body`, else 400. */
export const jsonBody: Step = async (x, next) => {
  if (x.method === 'POST' && x.rawBody.length > 0) {
    const body = readJsonObject(x.request.headers.get('content-type') ?? '', x.rawBody);
    if (body instanceof Response) return body;
    x.body = body;
  }
  return next();
};

function readJsonObject(contentType: string, raw: Uint8Array): Record<string, unknown> | Response {
  if (!/^application\/([\w.-]+\+)?json\b/i.test(contentType.trim())) {
    return errorResponse(400, 'Bad Request', 'Send the body as JSON with Content-Type: application/json.');
  }
  let parsed: unknown;
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
    parsed = text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    return errorResponse(400, 'Bad Request', 'The request body is not valid JSON.');
  }
  return isObject(parsed) ? parsed : errorResponse(400, 'Bad Request', 'The request body must be a JSON object.');
}

/** Idempotency-Key on a create: replays a kept answer, refuses a reuse or a full store, or creates once. */
export const idempotent: Step = (x, next) => {
  const { merchant, environment } = callerOf(x);
  const scope = { merchantId: merchant.id, environment, path: x.path, headers: x.request.headers, body: x.body };
  return x.service.idempotency.run(x.service.ctx, scope, next);
};
