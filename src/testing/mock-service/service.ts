// createMockService: the Business Payments API server simulated in memory, written from the
// spec. It is a second, independent implementation: no file under src/testing imports
// anything from the rest of src/ (not the client's HMAC, signer, schemas, event list,
// resources or HTTP layer; the ESLint rule `no-restricted-imports` on src/testing/** fails
// the build otherwise), so a client bug cannot hide behind code both sides share.
// Runtime-neutral: web-standard APIs only; node:crypto (HMAC) and node:http (listen()) are
// found at run time where they exist, msw by the handlers getter.
//
// The parts: the state and its context (context.ts), the scheduler, the router over the one
// route table (router.ts, routes.ts), the front door that stamps and logs each answer
// (front-door.ts), and the adapters: msw handlers, a local HTTP server.
import type { Ctx, Generation } from './context.js';
import { DEFAULT_BASE_URL, defaultGateways, defaultMerchant, EARLIER_FEE_RATE, earlierMerchant } from './defaults.js';
import { settleEarlier } from './earlier-payments.js';
import { EARLIER_ROUTES } from './earlier-routes.js';
import { frontDoor, type HandleWith } from './front-door.js';
import { startServer } from './http-server.js';
import { DEFAULT_MAX_KEYS, IdempotencyStore } from './idempotency.js';
import { randomHex } from './ids.js';
import { mswHandlers } from './msw.js';
import { openApiDocument } from './openapi.js';
import { settlePayment, type PaymentRow } from './payments.js';
import { payoutBehaviour } from './payouts.js';
import { LARAVEL_FALLBACK } from './laravel-errors.js';
import { FixedWindowLimiter, RateLimiter } from './rate-limit.js';
import { createRouter } from './router.js';
import { ROUTES } from './routes.js';
import { Scheduler } from './scheduler.js';
import type { MockServer, MockService, MockServiceOptions, MockState } from './types.js';
import { emitEvent, linkWebhookSecrets, webhookSecretOf } from './webhooks.js';

/**
 * Creates the simulated Business Payments service: the spec's server side in memory, or,
 * with `generation: 'earlier'`, the generation deployed today (three routes, its own error
 * bodies, the IPN signed with the API secret; docs/testing.md). Every JSON answer is encoded
 * as PHP's json_encode writes it (`\/`, `\uXXXX`).
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
  const ctx = createContext(options);
  payoutBehaviour(ctx, options.payoutBehaviour, 'createMockService: payoutBehaviour');
  const baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  const basePath = new URL(baseUrl).pathname.replace(/\/+$/, '');
  const parts = {
    ctx,
    rateLimiter: new RateLimiter(),
    idempotency: new IdempotencyStore(ctx.limits.idempotencyKeys),
    consoleToken: randomHex(16),
    openApi: openApiDocument,
    fixedWindow: new FixedWindowLimiter(),
  };
  const router =
    ctx.generation === 'earlier' ? createRouter(EARLIER_ROUTES, parts, basePath, LARAVEL_FALLBACK) : createRouter(ROUTES, parts, basePath);
  const handleWith = frontDoor(ctx, router, options.onRequest);
  return serviceOf(ctx, baseUrl, handleWith, options.clock?.join(ctx.scheduler));
}

function generationOf(options: MockServiceOptions): Generation {
  const generation = options.generation ?? 'current';
  if (generation !== 'current' && generation !== 'earlier')
    throw new RangeError("createMockService: generation must be 'current' or 'earlier'.");
  return generation;
}

function feeRateOf(options: MockServiceOptions): number {
  const rate = options.merchantFeeRate ?? EARLIER_FEE_RATE;
  if (!Number.isFinite(rate) || rate < 0 || rate >= 1)
    throw new RangeError('createMockService: merchantFeeRate must be a fraction in [0, 1).');
  return rate;
}

/** The state, the clock, the scheduler and the settings every part of the service reads. */
function createContext(options: MockServiceOptions): Ctx {
  const { now, autoRun } = clockOf(options);
  const timeScale = options.timeScale ?? 1;
  if (!Number.isFinite(timeScale) || timeScale < 0) throw new RangeError('createMockService: timeScale must be a finite number ≥ 0.');
  const userFetch = options.fetch;
  const generation = generationOf(options);
  const ctx: Ctx = {
    state: initialState(options, generation),
    generation,
    debug: options.debug ?? true,
    merchantFeeRate: feeRateOf(options),
    settle: (trx, result, detail) =>
      generation === 'earlier' ? settleEarlier(ctx, trx, result, detail) : settlePayment(ctx, trx, result, detail),
    now,
    timeScale,
    autoRun,
    toleranceSeconds: options.toleranceSeconds ?? 300,
    rateLimitPerMinute: options.rateLimitPerMinute ?? 120,
    requireSignatures: options.requireSignatures ?? true,
    brand: options.brand ?? 'Service',
    fetch: (input, init) => (userFetch ? userFetch(input, init) : globalThis.fetch(input, init)),
    scheduler: new Scheduler(now, autoRun),
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
  return ctx;
}

// The service clock: a test clock's (which then runs the scheduled work: no real timers), else
// `now` and real timers unless autoRun is false.
function clockOf({ clock, now, autoRun }: MockServiceOptions): { now: () => number; autoRun: boolean } {
  if (clock === undefined) return { now: now ?? (() => Date.now()), autoRun: autoRun ?? true };
  if (typeof clock?.now !== 'function' || typeof clock.join !== 'function')
    throw new TypeError('createMockService: clock must be a test clock (createTestClock()).');
  if (now !== undefined) throw new RangeError('createMockService: pass clock or now, not both (the clock is the service clock).');
  if (autoRun) throw new RangeError('createMockService: autoRun cannot be true with a clock: the clock runs the scheduled work.');
  return { now: clock.now, autoRun: false };
}

function initialState(options: MockServiceOptions, generation: Generation): MockState {
  const merchants = options.merchants
    ? structuredClone(options.merchants)
    : [generation === 'earlier' ? earlierMerchant() : defaultMerchant()];
  if (merchants.length === 0) throw new RangeError('createMockService: merchants must hold at least one merchant.');
  // The earlier generation has no webhook secret (its IPN is signed with the API secret).
  if (generation === 'current') for (const merchant of merchants) linkWebhookSecrets(merchant);
  return {
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
}

/** The MockService face: the adapters (msw handlers, listen) and the test controls. */
function serviceOf(ctx: Ctx, baseUrl: string, handleWith: HandleWith, leaveClock?: () => void): MockService {
  const { state, scheduler } = ctx;
  const servers = new Set<MockServer>();
  let handlers: ReturnType<typeof mswHandlers> | undefined;
  const service: MockService & { handleWith: HandleWith; readonly baseUrl: string } = {
    get handlers() {
      handlers ??= mswHandlers(baseUrl, (request) => service.handle(request));
      return handlers;
    },
    baseUrl,
    handle: (request) => handleWith(request),
    handleWith,
    listen: async (listenOptions = {}) => tracked(servers, await startServer(handleWith, listenOptions)),
    get credentials() {
      return ctx.generation === 'earlier' ? earlierCredentialsOf(state) : credentialsOf(state);
    },
    state,
    runDue: () => scheduler.runDue(),
    completeCheckout: (trxId, outcome) => completeCheckout(ctx, trxId, outcome),
    payoutBehaviour: (next) => payoutBehaviour(ctx, next),
    async close() {
      scheduler.close();
      leaveClock?.();
      await Promise.all([...servers].map((server) => server.close()));
      servers.clear();
    },
  };
  return service;
}

/** A listening server, kept in `servers` until it is closed (close() closes those left). */
function tracked(servers: Set<MockServer>, server: MockServer): MockServer {
  servers.add(server);
  return {
    url: server.url,
    close: async () => {
      servers.delete(server);
      await server.close();
    },
  };
}

function credentialsOf(state: MockState): MockService['credentials'] {
  const first = state.merchants[0]!;
  const sandbox = { ...first.credentials.sandbox, webhookSecret: webhookSecretOf(first, 'sandbox') };
  const production = { ...first.credentials.production, webhookSecret: webhookSecretOf(first, 'production') };
  return { sandbox, production, webhookSecret: sandbox.webhookSecret };
}

// The earlier generation signs its IPN with the API secret: that is its "webhook secret".
function earlierCredentialsOf(state: MockState): MockService['credentials'] {
  const { sandbox, production } = state.merchants[0]!.credentials;
  const withSecret = (c: typeof sandbox) => ({
    merchantKey: c.merchantKey,
    apiKey: c.apiKey,
    apiSecret: c.apiSecret,
    webhookSecret: c.apiSecret,
  });
  return { sandbox: withSecret(sandbox), production: withSecret(production), webhookSecret: sandbox.apiSecret };
}

async function completeCheckout(ctx: Ctx, trxId: string, outcome: 'success' | 'failed'): Promise<void> {
  if (outcome !== 'success' && outcome !== 'failed') throw new TypeError("completeCheckout: outcome must be 'success' or 'failed'.");
  const row = ctx.state.payments.get(trxId) as PaymentRow | undefined;
  if (!row) throw new Error(`completeCheckout: no payment ${JSON.stringify(trxId)}.`);
  if (row.status !== 'pending') throw new Error(`completeCheckout: payment ${trxId} is already ${row.status}.`);
  const failure = { reason: 'CANCELED', message: 'The customer canceled hosted checkout.' };
  ctx.settle(trxId, outcome, outcome === 'success' ? {} : failure);
  if (ctx.autoRun) await ctx.scheduler.runDue();
}
