// PaymentsClient: its options, its resources (one-line methods over the route table), and
// the one request pipeline they all go through (src/internal/transport.ts), built here and
// handed to them.
import { CLIENT_ROUTES } from './resources/routes.js';
import type { APIPromise } from './core/api-promise.js';
import { APIError, InternalServerError, InvalidParamsError, RouteNotSupportedError } from './core/error.js';
import type { PhoneCountry } from './core/phone.js';
import { resolveOptions, type ClientOptions, type Environment, type RequestOptions, type ResolvedOptions } from './internal/options.js';
import { pace } from './internal/pace.js';
import { Transport } from './internal/transport.js';
import { Balance } from './resources/balance.js';
import { Billing } from './resources/billing/index.js';
import { Payments } from './resources/payments.js';
import { Payouts } from './resources/payouts.js';
import { SiteInfoResource } from './resources/site-info.js';
import { routeCaller, type RouteCaller } from './resources/resource.js';
import type { OpenAPIDocument } from './schemas/openapi.js';

/** How long an `'earlier'` answer holds before generation() asks again (10 minutes). */
const EARLIER_KEPT_MS = 600_000;

/** Which generation of the service a server runs (see `client.generation()` and docs/generations.md). */
export type ServiceGeneration = 'current' | 'earlier';

/**
 * The Business Payments API client. One client holds one environment's credential set.
 *
 * @example
 * ```ts
 * import { PaymentsClient } from 'business-payments';
 *
 * const client = new PaymentsClient(); // reads BUSINESS_PAYMENTS_* env vars
 * const payment = await client.payments.create({
 *   payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1002~a1', // one ref per attempt
 *   ipn_url: 'https://shop.example.com/webhooks/payments', // needed unless API Config has a default
 * });
 * console.log(payment.checkout_url);
 * ```
 */
export class PaymentsClient {
  /** Payments: hosted checkout and USSD push, list, retrieve, verify. */
  readonly payments: Payments;
  /** Wallet balances. */
  readonly balance: Balance;
  /** Gateway branding and environment labels. */
  readonly siteInfo: SiteInfoResource;
  /** Payouts of settled balance to the approved settlement number. */
  readonly payouts: Payouts;
  /** Recurring billing: plans, subscriptions, invoices. */
  readonly billing: Billing;

  // Private: the secret must never show in JSON.stringify, util.inspect or an error.
  readonly #options: ResolvedOptions;
  readonly #allowBrowser: boolean | undefined;
  // The request pipeline every call of this client goes through.
  readonly #transport: Transport;
  // The routes by name, over the transport: what the resources hold.
  readonly #routes: RouteCaller;
  // What this client has learnt of the server's generation (generation()'s probe, in flight
  // or answered, or what its calls met), and until when on the monotonic clock: 'current' for
  // good, 'earlier' for EARLIER_KEPT_MS (one route-not-found 404 may be a proxy's or a deploy's).
  #generation: Promise<ServiceGeneration> | undefined;
  #until = Infinity;

  /** @throws {ConfigurationError} when configuration is missing or contradictory. */
  constructor(options: ClientOptions = {}) {
    this.#options = resolveOptions(options);
    this.#allowBrowser = options.dangerouslyAllowBrowser;
    // A route of the current generation answered 2xx: the server is of it. One missing: it may
    // be of the earlier one, unless the client knows better (or its probe is asking).
    const onRoute = (found: boolean) => {
      if (found || !this.#generation) this.#generation = Promise.resolve(this.#keep(found ? 'current' : 'earlier'));
    };
    // Paced by its own count, or over the budget given (which stands in with its own when its store fails).
    const { pollingBudget, requestBudget } = this.#options;
    const own = pace(pollingBudget);
    this.#transport = new Transport(
      this.#options,
      requestBudget?.pace(own, pollingBudget, this.#options.merchantKey, this) ?? own,
      onRoute,
    );
    this.#routes = routeCaller(this.#transport);
    this.payments = new Payments(this.#routes);
    this.balance = new Balance(this.#routes);
    this.siteInfo = new SiteInfoResource(this.#routes);
    this.payouts = new Payouts(this.#routes);
    this.billing = new Billing(this.#routes);
  }

  /** @internal The kits' seam (src/core/kit-client.ts): a slot in the polling budget for what the SDK sends on its own. */
  pollSlot(signal?: AbortSignal): Promise<void> {
    return this.#transport.pace.slot(signal);
  }

  /** @internal The kits' seam: a warn line of this client's logger. */
  warn(line: string): void {
    this.#transport.log('warn', line);
  }

  /** @internal The kits' seam: whether this client refused a call's params before sending it. */
  refused(error: unknown): boolean {
    return error instanceof InvalidParamsError;
  }

  /** @internal The kits' seam: whether `error` says this server generation has no such route. */
  unsupported(error: unknown): boolean {
    return error instanceof RouteNotSupportedError;
  }

  /** The environment every request is sent to (`X-Environment`). */
  get environment(): Environment {
    return this.#options.environment;
  }

  /** The service address routes are appended to. */
  get baseUrl(): string {
    return this.#options.baseUrl;
  }

  /** The country phone numbers in local form are read in (`phoneCountry`; the payout kit reads it too). */
  get phoneCountry(): PhoneCountry {
    return this.#options.phoneCountry;
  }

  /**
   * A new client with the same configuration and credentials, and `options` changed (for a
   * part of your code that needs another timeout, retry count, logger or fetchOptions).
   * Options set to `undefined` keep this client's value. The new client is checked as a new
   * one is: switching `environment` without that environment's credentials throws. It shares
   * this client's count of requests for the polling budget (`pollingBudget`), unless given a
   * `pollingBudget` or a `requestBudget` of its own.
   *
   * @example
   * ```ts
   * const fast = client.withOptions({ timeout: 5_000, maxRetries: 0 });
   * ```
   */
  withOptions(options: ClientOptions): PaymentsClient {
    const changed: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(options)) if (value !== undefined) changed[name] = value;
    const client = new PaymentsClient({ ...this.#options, dangerouslyAllowBrowser: this.#allowBrowser, ...changed });
    // One count of what the clients send (the server limits per merchant), unless given a budget of its own.
    if (!changed.pollingBudget && !changed.requestBudget) client.#transport.pace = this.#transport.pace;
    return client;
  }

  /**
   * Which generation of the service `baseUrl` runs: `'current'` (the spec's routes) or
   * `'earlier'` (the generation deployed today on many servers: `payments.initiate`,
   * `payments.verify` and `siteInfo.retrieve` only; see docs/generations.md). Asked when the
   * client does not know yet, and cached: one signed GET of the payment list (`limit=1`), which moves no money,
   * and when that route is missing, `siteInfo.retrieve` to tell an earlier server from a wrong
   * `baseUrl`. A call that meets a missing route teaches the client the same for free, and a
   * 2xx of a route only the current generation has teaches `'current'`. `'current'` is kept for
   * the client's life; `'earlier'` for 10 minutes, then asked again (a 404 may be a proxy's).
   *
   * @example
   * ```ts
   * if ((await client.generation()) === 'earlier') await client.payments.initiate({ ...params, success_redirect, cancel_redirect, ipn_url });
   * else await client.payments.create(params);
   * ```
   * @throws {APIConnectionError} when the server cannot be reached (nothing is cached then).
   * @throws {RouteNotSupportedError} when the server has none of the service's routes (`baseUrl` is wrong).
   */
  generation(options?: RequestOptions): Promise<ServiceGeneration> {
    if (performance.now() >= this.#until) this.#generation = undefined;
    return (this.#generation ??= this.#detectGeneration(options).then(
      (generation) => this.#keep(generation),
      (error: unknown) => {
        this.#generation = undefined;
        throw error;
      },
    ));
  }

  // Sets how long `generation` holds, and gives it back.
  #keep(generation: ServiceGeneration): ServiceGeneration {
    this.#until = generation === 'earlier' ? performance.now() + EARLIER_KEPT_MS : Infinity;
    return generation;
  }

  async #detectGeneration(options: RequestOptions | undefined): Promise<ServiceGeneration> {
    const list = CLIENT_ROUTES['payments.list'];
    const probe = { ...list, operation: 'generation', response: list.result, query: { limit: 1 } };
    // Any answer of the route itself (a page, 401, 403, 429) says it exists; a 5xx may be a
    // proxy's, and a refused redirect is not the route's answer: those say nothing and are thrown.
    const answered = await this.#transport
      .request(probe, options)
      .asResponse()
      .then(
        (response) => (void response.body?.cancel().catch(() => {}), true),
        (error: unknown) => {
          if (error instanceof RouteNotSupportedError) return false;
          if (error instanceof APIError && error.status >= 400 && !(error instanceof InternalServerError)) return true;
          throw error;
        },
      );
    if (answered) return 'current';
    // The earlier generation has site-info; a server without it is not this service at all.
    await this.siteInfo.retrieve(options).catch((error: unknown) => {
      if (error instanceof RouteNotSupportedError || !(error instanceof APIError)) throw error;
    });
    return 'earlier';
  }

  /** The service's machine-readable description (GET /api/v1/openapi.json). */
  openapi(options?: RequestOptions): APIPromise<OpenAPIDocument> {
    return this.#routes.get('openapi', options);
  }

  /** What `JSON.stringify(client)` shows: configuration without credentials. */
  toJSON(): Record<string, unknown> {
    return { environment: this.environment, baseUrl: this.baseUrl, maxRetries: this.#options.maxRetries, timeout: this.#options.timeout };
  }

  /** What `util.inspect(client)` (and console.log) shows: no credentials. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `PaymentsClient ${JSON.stringify(this.toJSON())}`;
  }
}
