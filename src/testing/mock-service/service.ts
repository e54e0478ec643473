// createMockService: the Business Payments API server simulated in memory, written from the
// spec. It is a second, independent implementation: no file under src/testing imports
// anything from the rest of src/ (not the client's HMAC, signer, schemas, event list,
// resources or HTTP layer; the ESLint rule `no-restricted-imports` on src/testing/** fails
// the build otherwise), so a client bug cannot hide behind code both sides share.
// Runtime-neutral: web-standard APIs only; node:crypto (HMAC) and node:http (listen()) are
// found at run time where they exist, msw by the handlers getter.
import { getBalance, getSiteInfo, logo } from './account.js';
import { authenticate, availability } from './auth.js';
import { RateLimiter } from './rate-limit.js';
import { createPlan, createSubscription, listInvoices } from './billing.js';
import { showCheckout, submitCheckout } from './checkout.js';
import type { ApiRequest, Ctx } from './context.js';
import { DEFAULT_BASE_URL, defaultGateways, defaultMerchant } from './defaults.js';
import { startServer } from './http-server.js';
import { DEFAULT_MAX_KEYS, IdempotencyStore } from './idempotency.js';
import { mswHandlers } from './msw.js';
import { openApiDocument } from './openapi.js';
import { createPayment, getPayment, listPayments, pushPayment, settlePayment, verifyPayment, type PaymentRow } from './payments.js';
import { createPayout, getPayout, listPayouts, previewPayout } from './payouts.js';
import { Scheduler } from './scheduler.js';
import type { MockRequestLogEntry, MockServer, MockService, MockServiceOptions, MockState } from './types.js';
import { randomHex } from './ids.js';
import { errorResponse, json, RAW_TEXT } from './responses.js';
import { capList, capMap, isObject, safeDecode } from './util.js';
import { handleConsole, isConsolePath, PAGE_VIEWS } from './console.js';
import { emitEvent, linkWebhookSecrets, webhookSecretOf } from './webhooks.js';

type Handler = (ctx: Ctx, req: ApiRequest) => Response | Promise<Response>;

interface Route {
  method: 'GET' | 'POST';
  pattern: RegExp;
  names: string[];
  handler: Handler;
  /** A create route: Idempotency-Key applies. */
  create: boolean;
}

function route(method: Route['method'], path: string, handler: Handler, create = false): Route {
  const names: string[] = [];
  const source = path.replace(/[.]/g, '\\.').replace(/\{(\w+)\}/g, (_, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  return { method, pattern: new RegExp(`^${source}$`), names, handler, create };
}

const ROUTES: Route[] = [
  route('POST', '/api/v1/payments', (ctx, req) => createPayment(ctx, req, false), true),
  route('GET', '/api/v1/payments', listPayments),
  route('GET', '/api/v1/payments/{trx_id}', getPayment),
  route('POST', '/api/v1/payments/{trx_id}/push', pushPayment),
  route('GET', '/api/v1/balance', getBalance),
  route('POST', '/api/v1/initiate-payment', (ctx, req) => createPayment(ctx, req, true), true),
  route('GET', '/api/v1/verify-payment/{trxId}', verifyPayment),
  route('GET', '/api/v1/site-info', getSiteInfo),
  route('POST', '/api/v1/payouts/preview', previewPayout),
  route('POST', '/api/v1/payouts', createPayout, true),
  route('GET', '/api/v1/payouts', listPayouts),
  route('GET', '/api/v1/payouts/{id}', getPayout),
  route('POST', '/api/v1/billing/plans', createPlan, true),
  route('POST', '/api/v1/billing/subscriptions', createSubscription, true),
  route('GET', '/api/v1/billing/invoices', listInvoices),
  route('GET', '/api/v1/openapi.json', (_ctx, req) => json(200, openApiDocument(req.caller.base))),
];

/** How a request reached the service (listen mode knows more than a bare Request). */
export interface HandleContext {
  /** The request target exactly as received (pathname + query); default: from request.url. */
  rawTarget?: string;
  /** Client IP for the rate limit; default `local`. */
  clientIp?: string;
  /** The body bytes when the caller already has them (the HTTP adapter): not read again from the Request. */
  rawBody?: Uint8Array;
}

/**
 * Creates the simulated Business Payments service: the spec's server side in memory.
 *
 * @example
 * ```ts
 * import { createMockService } from 'business-payments/testing';
 * import { PaymentsClient } from 'business-payments';
 *
 * const mock = createMockService();
 * const server = await mock.listen({ port: 0 });
 * const client = new PaymentsClient({ environment: 'sandbox', ...mock.credentials.sandbox, baseUrl: server.url });
 * const payment = await client.payments.create({ payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1', ipn_url: 'https://shop.example.com/ipn' });
 * await mock.completeCheckout(payment.trx_id, 'success');
 * await mock.close();
 * ```
 */
export function createMockService(options: MockServiceOptions = {}): MockService {
  const now = options.now ?? (() => Date.now());
  const timeScale = options.timeScale ?? 1;
  if (!Number.isFinite(timeScale) || timeScale < 0) throw new RangeError('createMockService: timeScale must be a finite number ≥ 0.');
  const autoRun = options.autoRun ?? true;
  const merchants = options.merchants ? structuredClone(options.merchants) : [defaultMerchant()];
  if (merchants.length === 0) throw new RangeError('createMockService: merchants must hold at least one merchant.');
  for (const merchant of merchants) linkWebhookSecrets(merchant);
  const baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  const basePath = new URL(baseUrl).pathname.replace(/\/+$/, '');
  const userFetch = options.fetch;

  const state: MockState = {
    merchants,
    gateways: options.gateways ? structuredClone(options.gateways) : defaultGateways(),
    payments: new Map(),
    payouts: new Map(),
    plans: new Map(),
    subscriptions: new Map(),
    invoices: new Map(),
    deliveries: [],
    events: [],
    requests: [],
  };

  const scheduler = new Scheduler(now, autoRun);
  const ctx: Ctx = {
    state,
    now,
    timeScale,
    autoRun,
    toleranceSeconds: options.toleranceSeconds ?? 300,
    rateLimitPerMinute: options.rateLimitPerMinute ?? 120,
    requireSignatures: options.requireSignatures ?? true,
    brand: options.brand ?? 'Service',
    fetch: (input, init) => (userFetch ? userFetch(input, init) : globalThis.fetch(input, init)),
    scheduler,
    checkoutKey: randomHex(32),
    emit: (input) => void emitEvent(ctx, input),
    scaled: (ms) => ms * timeScale,
    limits: {
      requestLog: options.limits?.requestLog ?? 1_000,
      records: options.limits?.records ?? 5_000,
      events: options.limits?.events ?? 5_000,
      idempotencyKeys: options.limits?.idempotencyKeys ?? DEFAULT_MAX_KEYS,
    },
    references: new Map(),
  };
  const rateLimiter = new RateLimiter();
  // The web console's form token (see console.ts).
  const consoleToken = randomHex(16);
  const idempotency = new IdempotencyStore(ctx.limits.idempotencyKeys);
  const servers = new Set<MockServer>();
  let handlers: ReturnType<typeof mswHandlers> | undefined;

  async function dispatch(request: Request, via: HandleContext): Promise<Response> {
    const url = new URL(request.url);
    const rawTarget = via.rawTarget ?? url.pathname + url.search;
    const method = request.method.toUpperCase();
    let path = url.pathname;
    let prefix = '';
    if (basePath && (path === basePath || path.startsWith(`${basePath}/`))) {
      prefix = basePath;
      path = path.slice(basePath.length) || '/';
    }
    const base = url.origin + prefix;
    const rawBody = method === 'GET' || method === 'HEAD' ? new Uint8Array() : (via.rawBody ?? new Uint8Array(await request.arrayBuffer()));

    // The root: the web console for a browser, a JSON index for an API client.
    if (path === '/' && method === 'GET' && !/\btext\/html\b/.test(request.headers.get('accept') ?? '')) {
      return json(200, {
        service: 'Business Payments API (simulated)',
        api: `${base}/api/v1`,
        openapi: `${base}/api/v1/openapi.json`,
        console: `${base}/`,
      });
    }
    if (isConsolePath(path)) {
      const form = method === 'POST' ? new URLSearchParams(new TextDecoder().decode(rawBody)) : new URLSearchParams();
      return handleConsole(
        {
          ctx,
          token: consoleToken,
          base,
          origin: request.headers.get('origin'),
          settle: async () => (autoRun ? scheduler.runDue() : undefined),
        },
        method,
        path,
        form,
      );
    }
    // CORS preflight of an API call from a page (the sandbox is a local development server).
    if (method === 'OPTIONS' && path.startsWith('/api/') && request.headers.has('access-control-request-method')) {
      return new Response(null, {
        status: 204,
        headers: {
          'Access-Control-Allow-Origin': request.headers.get('origin') ?? '*',
          'Access-Control-Allow-Methods': 'GET, POST',
          'Access-Control-Allow-Headers': request.headers.get('access-control-request-headers') ?? '*',
          'Access-Control-Max-Age': '600',
          Vary: 'Origin',
        },
      });
    }
    if (path === '/assets/logo.svg' && method === 'GET') return logo();

    const checkout = /^\/checkout\/([^/]+)(?:\/(pay|decline|cancel))?\/?$/.exec(path);
    if (checkout) {
      const trx = safeDecode(checkout[1]!);
      const verb = checkout[2] as 'pay' | 'decline' | 'cancel' | undefined;
      if (trx === null) return errorResponse(404, 'Not Found', 'No such checkout.');
      if (!verb && method === 'GET') return showCheckout(ctx, trx, url);
      if (verb && method === 'POST') return submitCheckout(ctx, trx, url, verb, new URLSearchParams(new TextDecoder().decode(rawBody)));
      return errorResponse(405, 'Method Not Allowed', `${method} is not allowed here.`, { headers: { Allow: verb ? 'POST' : 'GET' } });
    }

    const matches = ROUTES.filter((r) => r.pattern.test(path));
    if (matches.length === 0) return errorResponse(404, 'Not Found', `No route for ${method} ${path}.`);
    const found = matches.find((r) => r.method === method);
    if (!found) {
      const allow = [...new Set(matches.map((r) => r.method))].join(', ');
      return errorResponse(405, 'Method Not Allowed', `${method} is not allowed on ${path}; use ${allow}.`, { headers: { Allow: allow } });
    }
    const params: Record<string, string> = {};
    const values = found.pattern.exec(path)!.slice(1);
    for (const [i, name] of found.names.entries()) {
      const value = safeDecode(values[i]!);
      if (value === null) return errorResponse(404, 'Not Found', `No route for ${method} ${path}.`);
      params[name] = value;
    }

    // 1. Authenticate; 2. merchant availability; then the rate limit per merchant and IP.
    const auth = await authenticate(ctx, { headers: request.headers, method, rawTarget, rawBody });
    if (auth instanceof Response) return auth;
    const blocked = availability(auth.merchant, auth.environment);
    if (blocked) return blocked;
    const clientIp = via.clientIp ?? 'local';
    const limit = rateLimiter.hit(`${auth.merchant.id}|${clientIp}`, now(), ctx.rateLimitPerMinute);
    if (!limit.allowed) {
      return errorResponse(
        429,
        'Too Many Requests',
        `Rate limit of ${ctx.rateLimitPerMinute} requests per minute exceeded; retry after ${limit.retryAfter} s.`,
        {
          headers: {
            'Retry-After': String(limit.retryAfter),
            'X-RateLimit-Limit': String(ctx.rateLimitPerMinute),
            'X-RateLimit-Remaining': '0',
          },
        },
      );
    }

    let body: Record<string, unknown> = {};
    if (method === 'POST' && rawBody.length > 0) {
      const contentType = request.headers.get('content-type') ?? '';
      if (!/^application\/([\w.-]+\+)?json\b/i.test(contentType.trim())) {
        return errorResponse(400, 'Bad Request', 'Send the body as JSON with Content-Type: application/json.');
      }
      let parsed: unknown;
      try {
        const text = new TextDecoder('utf-8', { fatal: true }).decode(rawBody);
        parsed = text.trim() === '' ? {} : JSON.parse(text);
      } catch {
        return errorResponse(400, 'Bad Request', 'The request body is not valid JSON.');
      }
      if (!isObject(parsed)) return errorResponse(400, 'Bad Request', 'The request body must be a JSON object.');
      body = parsed;
    }

    const req: ApiRequest = {
      caller: { merchant: auth.merchant, environment: auth.environment, clientIp, base },
      body,
      query: url.searchParams,
      params,
      headers: request.headers,
    };
    const response = found.create
      ? await idempotency.run(
          ctx,
          { merchantId: auth.merchant.id, environment: auth.environment, path, headers: request.headers, body },
          async () => found.handler(ctx, req),
        )
      : await found.handler(ctx, req);
    response.headers.set('X-RateLimit-Limit', String(ctx.rateLimitPerMinute));
    response.headers.set('X-RateLimit-Remaining', String(limit.remaining));
    return response;
  }

  // The message of an error answer, for the log: why the service refused.
  function reasonOf(response: Response): string | undefined {
    try {
      const message = (JSON.parse(RAW_TEXT.get(response) ?? '{}') as { message?: unknown }).message;
      return typeof message === 'string' ? message : undefined;
    } catch {
      return undefined;
    }
  }

  let requestCount = 0;
  async function handleWith(request: Request, via: HandleContext = {}): Promise<Response> {
    let response: Response;
    try {
      response = await dispatch(request, via);
    } catch (error) {
      response = errorResponse(
        500,
        'Internal Server Error',
        `The simulated service failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    const at = now();
    try {
      response.headers.set('Date', new Date(at).toUTCString());
    } catch {
      // immutable headers: leave them
    }
    let path = via.rawTarget;
    if (path === undefined) {
      const url = new URL(request.url);
      path = url.pathname + url.search;
    }
    // The spec names no request id header; this sandbox sends X-Request-Id, as many services do.
    const requestId = `req_${(++requestCount).toString(36).padStart(6, '0')}`;
    if (path.includes('/api/')) {
      allowCors(response);
      try {
        response.headers.set('X-Request-Id', requestId);
      } catch {
        // immutable headers: leave them
      }
    }
    if (PAGE_VIEWS.has(response)) return response; // a console page view: not an API request
    const entry: MockRequestLogEntry = { method: request.method.toUpperCase(), path, status: response.status, at, requestId };
    if (response.status >= 400) entry.reason = reasonOf(response);
    state.requests.push(entry);
    // Bounded stores: a sandbox left running for days must not grow without end.
    capList(state.requests, ctx.limits.requestLog);
    capList(state.events, ctx.limits.events);
    capList(state.deliveries, ctx.limits.events);
    for (const store of [state.payments, state.payouts, state.plans, state.subscriptions, state.invoices])
      capMap(store, ctx.limits.records);
    capMap(ctx.references, ctx.limits.records);
    try {
      options.onRequest?.(entry);
    } catch {
      // a logging hook must not break the answer
    }
    return response;
  }

  const service: MockService & { handleWith: typeof handleWith; readonly baseUrl: string } = {
    get handlers() {
      handlers ??= mswHandlers(baseUrl, (request) => service.handle(request));
      return handlers;
    },
    baseUrl,
    handle: (request) => handleWith(request),
    handleWith,
    async listen(listenOptions = {}) {
      const server = await startServer(handleWith, listenOptions);
      servers.add(server);
      return {
        url: server.url,
        close: async () => {
          servers.delete(server);
          await server.close();
        },
      };
    },
    get credentials() {
      const first = state.merchants[0]!;
      const sandbox = { ...first.credentials.sandbox, webhookSecret: webhookSecretOf(first, 'sandbox') };
      const production = { ...first.credentials.production, webhookSecret: webhookSecretOf(first, 'production') };
      return { sandbox, production, webhookSecret: sandbox.webhookSecret };
    },
    state,
    runDue: () => scheduler.runDue(),
    async completeCheckout(trxId, outcome) {
      if (outcome !== 'success' && outcome !== 'failed') throw new TypeError("completeCheckout: outcome must be 'success' or 'failed'.");
      const row = state.payments.get(trxId) as PaymentRow | undefined;
      if (!row) throw new Error(`completeCheckout: no payment ${JSON.stringify(trxId)}.`);
      if (row.status !== 'pending') throw new Error(`completeCheckout: payment ${trxId} is already ${row.status}.`);
      settlePayment(
        ctx,
        trxId,
        outcome,
        outcome === 'success' ? {} : { reason: 'CANCELED', message: 'The customer canceled hosted checkout.' },
      );
      if (autoRun) await scheduler.runDue();
    },
    async close() {
      scheduler.close();
      await Promise.all([...servers].map((server) => server.close()));
      servers.clear();
    },
  };
  return service;
}

// API answers readable by a page on any origin: the SDK in a browser (dangerouslyAllowBrowser)
// reads the rate-limit headers and the Date header (clock skew) too.
function allowCors(response: Response): void {
  try {
    if (response.headers.has('Access-Control-Allow-Origin')) return; // a preflight's own answer
    response.headers.set('Access-Control-Allow-Origin', '*');
    response.headers.set(
      'Access-Control-Expose-Headers',
      'Date, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, Idempotency-Key, Idempotent-Replayed, X-Request-Id',
    );
  } catch {
    // immutable headers: leave them
  }
}
