// Public shapes of the simulated service (`createMockService`). The service is a second,
// independent implementation of the spec: these types are its own, none is taken from the
// client (src/testing imports nothing from the rest of src/; an ESLint rule enforces it).
import type { TestClock } from '../test-clock.js';

/** One environment's credential set. */
export interface MockCredentials {
  merchantKey: string;
  apiKey: string;
  apiSecret: string;
  /**
   * Secret that signs this environment's webhook deliveries: each environment has its own.
   * Sandbox default: the merchant's `webhookSecret`. Production default: the sandbox secret
   * with `_live` appended (never the sandbox one itself). The earlier generation has no
   * webhook secret and ignores this: its IPN is signed with `apiSecret`.
   */
  webhookSecret?: string;
}

/** A merchant of the simulated service. */
export interface MockMerchant {
  /** Numeric merchant id (echoed as `info.merchant_id`). */
  id: number;
  name: string;
  /** `approved` may use production; `pending` gets 403 Merchant Pending Approval there; `rejected`/`disabled` are blocked. */
  status: 'approved' | 'pending' | 'rejected' | 'disabled';
  /** KYB approval, a payout gate. */
  kybApproved: boolean;
  /** Approved settlement mobile number (payout destination), or null. */
  settlementNumber: string | null;
  /** Credentials per environment, each with its own webhook secret. */
  credentials: { sandbox: MockCredentials; production: MockCredentials };
  /**
   * The sandbox webhook secret, as older code sets it: the same value as
   * `credentials.sandbox.webhookSecret` (which wins when both are given). In `mock.state` the
   * two are one property: setting either rotates the sandbox secret. Production deliveries
   * are signed with `credentials.production.webhookSecret`, never with this.
   */
  webhookSecret?: string;
  /** Default webhook URL (API Config), used when a payment gives none. */
  defaultWebhookUrl: string | null;
  /** Site URL: the default success/cancel redirect. */
  siteUrl: string;
  /** Supported currencies; `wallet` says whether the receiver wallet is active. */
  currencies: Record<string, { wallet: boolean; balance: number }>;
  /** Gateways selected on API Config; empty = every active gateway of the currency. */
  selectedGatewayIds: number[];
}

/** An automatic payment gateway, bound to one currency. */
export interface MockGateway {
  id: number;
  code: string;
  name: string;
  currency: string;
  active: boolean;
}

/** How the sandbox answers new payouts (createMockService's `payoutBehaviour()`, the console's Payouts switch). */
export interface MockPayoutBehaviour {
  /** 'normal' (by amount, as documented), or every new payout answers 'INPROGRESS' or 'AMBIGUOUS' and settles later. */
  answer: 'normal' | 'INPROGRESS' | 'AMBIGUOUS';
  /** How an INPROGRESS or AMBIGUOUS payout made under this behaviour settles: 'SUCCESS' (default) or 'FAILED' (refunded to the wallet). */
  settleAs: 'SUCCESS' | 'FAILED';
  /** After how long (ms, service clock, scaled by timeScale) it settles. Default 60,000. */
  settleAfterMs: number;
  /**
   * Lose the answer: the payout is made (and its Idempotency-Key answer kept, so a replay with
   * the same key returns it), then the answer never reaches the caller. 0 (default) never, 1
   * always, in between a probability per payout.
   */
  loseAnswer: number;
}

/** Options of `createMockService`. */
export interface MockServiceOptions {
  /**
   * Which server the sandbox plays. `current` (default): the spec's API. `earlier`: the
   * generation deployed today (only initiate-payment, verify-payment and site-info; its own
   * error bodies, verify shapes and rate limit; the IPN signed with the API secret and no
   * timestamp header). See "The earlier generation" in docs/testing.md.
   */
  generation?: 'current' | 'earlier';
  /**
   * Earlier generation: Laravel's debug mode (APP_DEBUG, on in the shipped configuration):
   * the framework's 404 and 405 JSON bodies also carry `exception`, `file`, `line` and
   * `trace`, and its HTML 404 page the message. Default true.
   */
  debug?: boolean;
  /** Earlier generation: the merchant's fee on a payment, a fraction (verify's `fee`; `amount` is then the net). Default 0.025. */
  merchantFeeRate?: number;
  /** Merchants; default: one approved merchant (USD and TZS with wallets, EUR without). */
  merchants?: MockMerchant[];
  /** Gateways; default: card + paypal (USD), mpesa + tigopesa + airtelmoney (TZS), sepa (EUR). */
  gateways?: MockGateway[];
  /** Time source in ms; default `Date.now`. (With a test clock, pass `clock` instead.) */
  now?: () => number;
  /**
   * A test clock (`createTestClock()`): the service clock, which also runs the service's
   * scheduled work (push answers, webhook attempts, payout settlement, renewals and dunning)
   * at each due time as it advances, with no real timers (`autoRun` is false; `runDue()`
   * still runs what is due at its time). `close()` unties the service from it. Not with `now`.
   *
   * @example
   * ```ts
   * import { createMockService, createTestClock } from 'business-payments/testing';
   * const clock = createTestClock();
   * const mock = createMockService({ clock });
   * await clock.advance(30 * 86_400_000); // a month of the service's scheduled work
   * ```
   */
  clock?: TestClock;
  /**
   * Multiplies every simulated delay: the webhook retry schedule (0, 3, 6, 12, 24 min) and
   * the USSD push answer time. `0.001` turns 3 minutes into 180 ms. Default 1.
   */
  timeScale?: number;
  /** Deliver webhooks and push outcomes on real timers. Default true (false with a `clock`); set false with an injected `now` and call `runDue()`. */
  autoRun?: boolean;
  /** Signed-request timestamp tolerance in seconds. Default 300. */
  toleranceSeconds?: number;
  /** Requests per minute per merchant and IP. Default 120. */
  rateLimitPerMinute?: number;
  /**
   * Bounds for a service left running for days. `requestLog` (state.requests) 1,000;
   * `records` (payments, payouts, plans, subscriptions, invoices, each) 5,000; `events`
   * (events and deliveries, each) 5,000: these keep the newest, dropping the oldest first (a
   * trimmed payment is a 404, as an unknown one, and its ref_trx is free again).
   * `idempotencyKeys` 50,000: each key is kept its full 24 h on the service clock (about 1 KB
   * each); when all are younger than that, a request with a new key gets 503 with a
   * Retry-After, never an answer whose replay could create a second payment.
   */
  limits?: { requestLog?: number; records?: number; events?: number; idempotencyKeys?: number };
  /** Brand in webhook header names (`X-<Brand>-Signature`). Default `Service`. */
  brand?: string;
  /** Origin the msw handlers answer on. Default `https://sandbox.business-payments.test`. */
  baseUrl?: string;
  /** fetch used to deliver webhooks. Default the global fetch. */
  fetch?: typeof fetch;
  /**
   * Whether every /api/v1 call must carry X-Timestamp and X-Signature. Default true; false
   * acts as an administrator who disabled merchant API signatures (keys are still checked).
   */
  requireSignatures?: boolean;
  /** Called after each answered request (method, raw path, status, clock time): for logging, e.g. the CLI. */
  onRequest?: (entry: MockRequestLogEntry) => void;
  /**
   * How new payouts are answered from the start (merged over the defaults: `normal`,
   * `SUCCESS`, 60 s, 0); change it later with `mock.payoutBehaviour()` or the console.
   */
  payoutBehaviour?: Partial<MockPayoutBehaviour>;
}

/** One answered request, as `state.requests` and `onRequest` see it. */
export interface MockRequestLogEntry {
  method: string;
  /** Raw request target: pathname and query, exactly as received. */
  path: string;
  /** The status answered; 0 when the answer was lost on purpose (`payoutBehaviour().loseAnswer`): the caller got none. */
  status: number;
  /** Clock time (ms). */
  at: number;
  /** For a 4xx or 5xx: the error message the service answered with (why it refused); `answer lost (payout behaviour)` for a lost answer. */
  reason?: string;
  /** The `X-Request-Id` it answered with (`req_…`). */
  requestId?: string;
}

/** One webhook event the service emitted, with its delivery status. */
export interface MockWebhookEvent {
  /** Event id (`evt_…`), the same on every attempt. */
  id: string;
  type: string;
  merchantId: number;
  environment: 'sandbox' | 'production';
  /** Target URL, or null when neither the resource nor the merchant has one (nothing is sent). */
  url: string | null;
  /** The payload as sent. */
  payload: Record<string, unknown>;
  /** The exact body bytes (as text) sent on every attempt. */
  body: string;
  /**
   * `'earlier'` on an IPN of the earlier generation (the IPN carries no event id or type:
   * `id` and `type` here are the sandbox's labels for the log and console); absent on the
   * current generation's events.
   */
  generation?: 'earlier';
  /**
   * `pending` while attempts remain, `delivered` after a 2xx, `abandoned` after the 5th
   * failure (an earlier-generation IPN: after a non-2xx, a refused connection or its third
   * timeout), `no_endpoint` when there is no URL.
   */
  status: 'pending' | 'delivered' | 'abandoned' | 'no_endpoint';
  /** Attempts made so far. */
  attempts: number;
  /** Clock time (ms) of the next scheduled attempt, or null when none is due (delivered, abandoned, no URL). */
  nextAttemptAt?: number | null;
}

/** One webhook delivery attempt, for inspection in tests. */
export interface MockDeliveryAttempt {
  eventId: string;
  type: string;
  url: string;
  attempt: number;
  /** Clock time (ms) it was sent. */
  at: number;
  /** HTTP status the endpoint answered, or null on a network error. */
  status: number | null;
  /** Why no status came back (connection refused, timeout…), when `status` is null. */
  error?: string;
  /** A resend from the web console (outside the retry schedule). */
  manual?: boolean;
}

/** A running local HTTP server. */
export interface MockServer {
  /** e.g. `http://127.0.0.1:4010` */
  url: string;
  /** Stops the server: open connections are closed and the port is freed. */
  close(): Promise<void>;
}

/** The simulated service's records, inspectable (and editable) in tests. */
export interface MockState {
  merchants: MockMerchant[];
  gateways: MockGateway[];
  /** Payments by trx_id, as the server keeps them. */
  payments: Map<string, Record<string, unknown>>;
  /** Payouts by id. */
  payouts: Map<string, Record<string, unknown>>;
  /** Plans by plan_code. */
  plans: Map<string, Record<string, unknown>>;
  /** Subscriptions by id (sub_…). */
  subscriptions: Map<string, Record<string, unknown>>;
  /** Invoices by id. */
  invoices: Map<string, Record<string, unknown>>;
  /** Every webhook delivery attempt, in order. */
  deliveries: MockDeliveryAttempt[];
  /** Every webhook event emitted, in order, with its delivery status. */
  events: MockWebhookEvent[];
  /** Every request the service answered: method, path, status. */
  requests: MockRequestLogEntry[];
}

/**
 * One of msw's request handlers (msw's `RequestHandler`). Typed `any` on purpose: msw is an
 * optional peer dependency, and naming its type would make every project without msw fail
 * to type-check this package (`skipLibCheck: false`). `setupServer(...mock.handlers)`
 * type-checks as is.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type MswRequestHandler = any;

/** The simulated Business Payments service returned by `createMockService`. */
export interface MockService {
  /**
   * msw request handlers answering on `options.baseUrl`: `setupServer(...mock.handlers)`.
   * Needs msw (a peer dependency of the testing kit) installed in your project.
   */
  readonly handlers: MswRequestHandler[];
  /**
   * Answers one Fetch `Request` as the service would (msw and the HTTP server both use it). A
   * payout answer lost on purpose (`payoutBehaviour().loseAnswer`) is `Response.error()`
   * (type `error`, status 0): msw makes it a network error, `listen()` resets the connection.
   */
  handle(request: Request): Promise<Response>;
  /**
   * Starts a real HTTP server on 127.0.0.1 (port 0 = any free port). Malformed requests get
   * a 4xx with the error shape; a body over `maxBodyBytes` (default 1 MiB) gets 413 without
   * being buffered; a client slower than `headersTimeoutMs` (10 s) or `requestTimeoutMs`
   * (30 s) is cut off with 408.
   */
  listen(options?: {
    port?: number | undefined;
    host?: string | undefined;
    maxBodyBytes?: number | undefined;
    headersTimeoutMs?: number | undefined;
    requestTimeoutMs?: number | undefined;
  }): Promise<MockServer>;
  /**
   * Credentials of the default (first) merchant per environment, each with the webhook
   * secret that signs that environment's deliveries. `webhookSecret` at the top is the
   * sandbox one (kept for older code; equal to `sandbox.webhookSecret`). With
   * `generation: 'earlier'` each `webhookSecret` is that environment's `apiSecret`: the
   * earlier generation signs its IPN with the API secret (it has no webhook secret).
   */
  readonly credentials: { sandbox: Required<MockCredentials>; production: Required<MockCredentials>; webhookSecret: string };
  /** The records. */
  readonly state: MockState;
  /** Runs push outcomes and webhook attempts that are due at `now()` (for an injected clock). */
  runDue(): Promise<void>;
  /**
   * Simulates the customer finishing (`success`) or cancelling (`failed`) hosted checkout of
   * a pending payment, as the Pay / Cancel buttons of the checkout page do (either
   * generation; on the earlier one it sends the IPN). With `autoRun`
   * it resolves after the first webhook attempt; otherwise call `runDue()` (on a test clock,
   * or `clock.advance(0)`) to deliver.
   * Throws for an unknown trx_id or a payment that is no longer pending.
   */
  completeCheckout(trxId: string, outcome: 'success' | 'failed'): Promise<void>;
  /**
   * How new payouts are answered (also the console's Payouts switch): merges `next` into the
   * current behaviour and returns it (a copy); without `next` it only returns it. `answer`
   * `'INPROGRESS'` or `'AMBIGUOUS'`: every new payout answers so and becomes `settleAs` after
   * `settleAfterMs` (× timeScale; a FAILED one is refunded to the wallet). `loseAnswer`: the
   * share of new payouts whose answer is lost after the payout is made and its
   * Idempotency-Key answer kept (a real server resets the connection; `handle()` and msw give
   * a network error, `Response.error()`); a replay with the same key gets the kept answer.
   * Throws TypeError or RangeError for a bad value (nothing is changed then).
   *
   * @example
   * ```ts
   * mock.payoutBehaviour({ answer: 'AMBIGUOUS', settleAs: 'FAILED', settleAfterMs: 5_000 });
   * mock.payoutBehaviour({ loseAnswer: 1 }); // every payout is made, and its answer lost
   * mock.payoutBehaviour({ answer: 'normal', loseAnswer: 0 }); // back to the amounts table
   * ```
   */
  payoutBehaviour(next?: Partial<MockPayoutBehaviour>): MockPayoutBehaviour;
  /** Stops every timer and every server started by `listen()`; pending deliveries are dropped. */
  close(): Promise<void>;
}
