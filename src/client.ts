// PaymentsClient: the resources (one-line methods over the route table, src/resources/routes.ts)
// and the one pipeline every call goes through: check inputs, sign, send through ky under the
// payment retry policy, read the body bounded, validate it; traced and logged when asked.
import type { BeforeRetryState, Options, ResponsePromise } from 'ky';
import type * as z from 'zod/mini';
import { APIPromise, type SentRequest } from './core/api-promise.js';
import {
  APIError,
  ConfigurationError,
  InternalServerError,
  PaymentsError,
  requestIdOf,
  retryAfterSeconds,
  RouteNotSupportedError,
} from './core/error.js';
import { listBody, PagePromise, toPage, type Cursor, type ListBody, type ListPage } from './core/pagination.js';
import { callError, EARLIER_GENERATION_OPERATIONS, type CallInfo } from './internal/to-error.js';
import {
  checkFetchOptions,
  LOG_LEVELS,
  resolveOptions,
  type ClientOptions,
  type Environment,
  type LogLevel,
  type RequestOptions,
  type ResolvedOptions,
} from './internal/options.js';
import { ky } from './internal/ky.js';
import { pace, PACE, type Paced } from './internal/pace.js';
import { decodeResponse } from './internal/parse.js';
import { parseErrorJson, readBody } from './internal/read-body.js';
import { redactText } from './core/personal-data.js';
import { redactBody, redactHeaders } from './internal/redact.js';
import { retryOptions, sendsKey, type RetryMode } from './internal/retry.js';
import { signatureHeader } from './internal/signing.js';
import { channel, listened, traced, tracingChannel, type RequestTrace } from './internal/trace.js';
import { validateInputs, type Checked } from './internal/validate.js';
import { Balance } from './resources/balance.js';
import { Billing } from './resources/billing/index.js';
import type { OpenAPIDocument } from './resources/openapi.js';
import {
  CLIENT_ROUTES,
  type ClientRoute,
  type ListRoute,
  type ResultOf,
  type RouteArgs,
  type RouteName,
  type RouteOf,
} from './resources/routes.js';
import { Payments } from './resources/payments.js';
import { Payouts } from './resources/payouts.js';
import { SiteInfoResource } from './resources/site-info.js';
import { VERSION } from './version.js';

/** @internal One call of the pipeline: a route of the table with its inputs, or a test's own. */
export interface RequestSpec<S extends z.ZodMiniType> {
  /** `resource.method`, used in error messages and logs. */
  operation: string;
  method: 'GET' | 'POST';
  /** Route with `{name}` placeholders filled from `pathParams`, percent-encoded. */
  path: string;
  pathParams?: Record<string, Checked>;
  /** Schema of the body (POST) or query (GET) params… */
  params?: z.ZodMiniType | undefined;
  /** …and the caller's value of them. */
  value?: unknown;
  /** URL fields of `params` that must be https:// in production. */
  httpsInProduction?: readonly string[] | undefined;
  response: S;
  /** Default: `safe` for GET, `create` for POST; a function of the params when they decide it (a push-mode payment). */
  retry?: RetryMode | ((params: unknown) => RetryMode) | undefined;
  /** What the server may have done when a call fails without a clear answer, and how to look it up. */
  acted?: string | ((params: unknown) => string) | undefined;
  /** Words added to the message of an error from this route (how to look a payout up). */
  failureHint?: ((error: PaymentsError) => string | undefined) | undefined;
  /** The spec shows no response body: an empty 2xx is a success (push). */
  emptyBodyOk?: boolean | undefined;
  /** Query params the SDK adds itself (a page number), sent after the validated ones. */
  query?: Record<string, number> | undefined;
  /** A same-origin URL the server gave (a next-page link): sent instead of path and query. */
  url?: string | undefined;
}

/** Which generation of the service a server runs (see `client.generation()` and docs/generations.md). */
export type ServiceGeneration = 'current' | 'earlier';

/** @internal A list call: each item's (provisional) schema instead of a response schema. */
export type PageSpec<T> = Omit<RequestSpec<z.ZodMiniType>, 'response'> & {
  item: z.ZodMiniType<T>;
  /** Names a server may keep the items under besides `data` (`payouts`). */
  names?: readonly string[] | undefined;
};

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
  // Parsed once: errors name its origin until a call has its own URL.
  readonly #baseUrl: URL;
  // What this client has learnt of the server's generation: from generation(), or from a
  // route the server turned out not to have.
  #generation: Promise<ServiceGeneration> | undefined;

  /** @throws {ConfigurationError} when configuration is missing or contradictory. */
  constructor(options: ClientOptions = {}) {
    this.#options = resolveOptions(options);
    this.#allowBrowser = options.dangerouslyAllowBrowser;
    this.#baseUrl = new URL(this.#options.baseUrl);
    this.payments = new Payments(this);
    this.balance = new Balance(this);
    this.siteInfo = new SiteInfoResource(this);
    this.payouts = new Payouts(this);
    this.billing = new Billing(this);
    // What the SDK sends on its own waits on it (the fulfilment kit finds it by the symbol).
    (this as unknown as Paced)[PACE] = pace(this.#options.pollingBudget);
    // The kit logs why it refused a delivery through it: a warn line of this client's logger.
    (this as unknown as Record<symbol, unknown>)[Symbol.for('business-payments.log')] = (line: string) => this.#log('warn', line);
  }

  /** The environment every request is sent to (`X-Environment`). */
  get environment(): Environment {
    return this.#options.environment;
  }

  /** The service address routes are appended to. */
  get baseUrl(): string {
    return this.#options.baseUrl;
  }

  /**
   * A new client with the same configuration and credentials, and `options` changed (for a
   * part of your code that needs another timeout, retry count, logger or fetchOptions).
   * Options set to `undefined` keep this client's value. The new client is checked as a new
   * one is: switching `environment` without that environment's credentials throws. It shares
   * this client's count of requests for the polling budget (`pollingBudget`), unless given a
   * `pollingBudget` of its own.
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
    if (!changed.pollingBudget) (client as unknown as Paced)[PACE] = (this as unknown as Paced)[PACE];
    return client;
  }

  /**
   * Which generation of the service `baseUrl` runs: `'current'` (the spec's routes) or
   * `'earlier'` (the generation deployed today on many servers: `payments.initiate`,
   * `payments.verify` and `siteInfo.retrieve` only; see docs/generations.md). Asked once per
   * client and cached: one signed GET of the payment list (`limit=1`), which moves no money,
   * and when that route is missing, `siteInfo.retrieve` to tell an earlier server from a wrong
   * `baseUrl`. A call that meets a missing route teaches the client the same for free.
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
    return (this.#generation ??= this.#detectGeneration(options).catch((error: unknown) => {
      this.#generation = undefined;
      throw error;
    }));
  }

  async #detectGeneration(options: RequestOptions | undefined): Promise<ServiceGeneration> {
    const list = CLIENT_ROUTES['payments.list'];
    const probe = { ...list, operation: 'generation', response: list.result, query: { limit: 1 } };
    // Any answer of the route itself (a page, 401, 403, 429) says it exists; a 5xx may be a
    // proxy's, and a refused redirect is not the route's answer: those say nothing and are thrown.
    const answered = await this.request(probe, options)
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
    return this.get('openapi', options);
  }

  /** @internal A GET route of the table: `get('payouts.retrieve', id, options)`. */
  get<N extends RouteOf<'GET'>>(name: N, ...args: RouteArgs<N, [options?: RequestOptions]>): APIPromise<ResultOf<N>> {
    return this.request(...specOf(name, args, false)) as APIPromise<ResultOf<N>>;
  }

  /** @internal A POST route of the table: `post('payouts.create', params, options)`, the path id first when it has one. */
  post<N extends RouteOf<'POST'>>(name: N, ...args: RouteArgs<N, [params: unknown, options?: RequestOptions]>): APIPromise<ResultOf<N>> {
    return this.request(...specOf(name, args, true)) as APIPromise<ResultOf<N>>;
  }

  /** @internal A list route of the table: the first page now, every page on `for await`. */
  getPage<N extends ListRoute>(name: N, params: unknown, options?: RequestOptions): PagePromise<ResultOf<N>> {
    const [spec] = specOf(name, [params], true);
    return this.requestPage({ ...spec, item: spec.response, names: CLIENT_ROUTES[name].list }, options) as PagePromise<ResultOf<N>>;
  }

  /** @internal Sends one call through the pipeline: validate, sign, send, retry, parse. */
  request<S extends z.ZodMiniType>(spec: RequestSpec<S>, options?: RequestOptions): APIPromise<z.output<S>> {
    const wants: { data?: boolean } = {};
    return new APIPromise(this.#traced(spec, options, wants), wants);
  }

  /** @internal A list call: the first page now, every page on `for await`. */
  requestPage<T>(spec: PageSpec<T>, options?: RequestOptions): PagePromise<T> {
    const response: z.ZodMiniType<ListBody<T>> = listBody(spec.item, spec.names);
    const { limit, offset = 0 } = (spec.value ?? {}) as { offset?: number; limit?: number };
    const route = this.#baseUrl.origin + (this.#baseUrl.pathname === '/' ? '' : this.#baseUrl.pathname) + spec.path;
    // A next-page link is followed only on the baseUrl origin.
    const resolve = (link: string) => {
      try {
        const url = new URL(link, route);
        return url.origin === this.#baseUrl.origin ? url : undefined;
      } catch {
        return undefined;
      }
    };
    const fetchPage = (at: Cursor): Promise<SentRequest<ListPage<T>>> => {
      // Page numbers and links replace the offset; the caller's other params stay.
      const value = at.offset === offset || at.page !== undefined ? spec.value : { ...(spec.value as object), offset: at.offset };
      const page: RequestSpec<typeof response> = { ...spec, value, response, url: at.url };
      if (at.page !== undefined) page.query = { page: at.page };
      return this.#traced(page, options).then((sent) => ({
        response: sent.response,
        parse: async () => toPage(await sent.parse(), at, limit, resolve, next),
      }));
    };
    const next = (at: Cursor) => new APIPromise(fetchPage(at)).withResponse();
    return new PagePromise(fetchPage({ offset }));
  }

  // One TracingChannel trace per call (business-payments:request) when someone listens: from
  // the input checks to the final response, and through reading the body when the caller
  // asked for data before the response came (then a ResponseValidationError is traced too).
  #traced<S extends z.ZodMiniType>(spec: RequestSpec<S>, options: RequestOptions = {}, wants?: { data?: boolean }) {
    const tracing = tracingChannel('business-payments:request');
    if (!listened(tracing)) return this.#call(spec, options);
    // The key is made here, not in #call, so the trace has it from its start.
    const idempotencyKey = options.idempotencyKey ?? (sendsKey(modeOf(spec)) ? crypto.randomUUID() : undefined);
    if (idempotencyKey !== undefined) options = { ...options, idempotencyKey };
    const trace: RequestTrace = {
      operation: spec.operation,
      method: spec.method,
      route: spec.path,
      environment: this.#options.environment,
      idempotencyKey,
      attempt: 0,
    };
    const run = async () => {
      const sent = await this.#call(spec, options, trace);
      trace.status = sent.response.status;
      trace.requestId = requestIdOf(sent.response.headers);
      if (wants?.data) await sent.parse();
      return sent;
    };
    return traced(tracing, trace, run, (context, error) => {
      noteFailure(context, error as PaymentsError, (error as PaymentsError).attempts ?? context.attempt);
    });
  }

  // The pipeline, top to bottom: check inputs, sign the first attempt, send through ky
  // (which re-signs each retry in a hook, retries under the payment policy and times out),
  // then read and validate the body when data is asked for. Every failure leaves through
  // callError, stamped with the Idempotency-Key and the attempt count.
  async #call<S extends z.ZodMiniType>(
    spec: RequestSpec<S>,
    options: RequestOptions,
    trace?: RequestTrace,
  ): Promise<SentRequest<z.output<S>>> {
    const o = this.#options;
    const mode = modeOf(spec);
    const { acted } = spec;
    const call: CallInfo = {
      operation: spec.operation,
      mode,
      acted: typeof acted === 'function' ? acted(spec.value) : acted,
      route: `${spec.method} ${spec.path}`,
      origin: this.#baseUrl.origin,
      pathWithQuery: this.#baseUrl.pathname,
      timeout: options.timeout ?? o.timeout,
      signal: options.signal,
      // One key per call, reused by every retry: the server replays instead of charging twice.
      idempotencyKey: options.idempotencyKey ?? (sendsKey(mode) ? crypto.randomUUID() : undefined),
      attempts: 0,
      hint: spec.failureHint,
      started: Date.now(),
      trace,
    };
    let sent: ResponsePromise;
    let response: Response;
    try {
      const { path, params } = validateInputs(spec.operation, spec, o.environment, options);
      call.fetchOptions = checkFetchOptions(options.fetchOptions, 'options.fetchOptions');
      call.pathWithQuery = pathWithQuery(this.#baseUrl, spec, path, params);
      const body = spec.method === 'POST' ? JSON.stringify(params ?? {}) : undefined;
      const signer = new AttemptSigner(o.apiSecret, spec.method, call.pathWithQuery, body);
      const headers = this.#headers(options, call.idempotencyKey);
      const limit = options.maxRetries ?? o.maxRetries;
      // Only the options this call needs: ky merges every key it is given, on every call.
      const request: Options = {
        timeout: call.timeout,
        retry: retryOptions(mode, limit, o.maxRetryAfter),
        fetch: (input, init) => this.#fetch(input as Request, init, call),
        // A redirect would carry the credentials and the body to another origin: refuse it.
        redirect: 'manual',
        // Error bodies only (the SDK reads 2xx bodies itself): too deep a body stays text.
        parseJson: parseErrorJson,
        // Headers go onto ky's Request in hooks, not through options.headers: ky would copy
        // them through four Headers objects per call. Every attempt is signed afresh there.
        hooks: { beforeRequest: [(state) => this.#sign(state.request, spec, call, signer, params, headers)] },
      };
      if (limit > 0) request.hooks!.beforeRetry = [(state) => this.#resign(state, spec, call, signer, params)];
      if (spec.method !== 'GET') {
        request.method = spec.method;
        request.body = body as string;
      }
      if (options.signal) request.signal = options.signal;
      const transport = ky();
      sent = (transport instanceof Promise ? await transport : transport).default(call.origin + call.pathWithQuery, request);
      response = await sent;
    } catch (cause) {
      throw this.#failed(cause, call);
    }
    let parsed: Promise<z.output<S>> | undefined;
    // Once: a traced call may read the body before the APIPromise asks for it.
    const parse = () => (parsed ??= this.#read(spec, options, call, sent, response));
    return { response, parse };
  }

  /** Reads, bounds and validates a 2xx body; every failure leaves as an SDK error. */
  async #read<S extends z.ZodMiniType>(
    spec: RequestSpec<S>,
    options: RequestOptions,
    call: CallInfo,
    sent: ResponsePromise,
    response: Response,
  ): Promise<z.output<S>> {
    if (response.bodyUsed)
      throw new PaymentsError(`${spec.operation}: the body was already read through asResponse(); use withResponse() for both.`);
    const context = { operation: spec.operation, serverMayHaveActed: modeOf(spec) !== 'safe', emptyBodyOk: spec.emptyBodyOk };
    // Bounded (maxResponseBytes after decompression, JSON depth) and under ky's attempt timeout.
    const text = await readBody(sent, response, options.maxResponseBytes ?? this.#options.maxResponseBytes, context).catch(
      (cause: unknown) => Promise.reject(this.#failed(cause, call, true)),
    );
    try {
      return decodeResponse(spec.response, text, response, context);
    } catch (cause) {
      throw this.#failed(cause, call);
    }
  }

  /** ky's beforeRequest hook: the SDK's headers and the first attempt's signature. */
  #sign(
    request: Request,
    spec: RequestSpec<z.ZodMiniType>,
    call: CallInfo,
    signer: AttemptSigner,
    params: unknown,
    headers: Record<string, string>,
  ): void | Promise<void> {
    const put = (signed: Record<string, string>) => {
      for (const name in signed) request.headers.set(name, signed[name]!);
      this.#logAttempt(spec, call, signed, params, 0);
    };
    const signed = signer.sign(headers);
    // A Promise only on the WebCrypto path: node:crypto signs at once.
    return signed instanceof Promise ? signed.then(put) : put(signed);
  }

  /** ky's beforeRetry hook: a fresh X-Timestamp and X-Signature on the retry's Request. */
  async #resign(
    state: BeforeRetryState,
    spec: RequestSpec<z.ZodMiniType>,
    call: CallInfo,
    signer: AttemptSigner,
    params: unknown,
  ): Promise<void> {
    const retry = channel('business-payments:request:retry');
    if (this.#logs('warn') || (call.trace && retry?.hasSubscribers)) {
      // A throwaway mapping for the log line and the trace only: what the caller would see.
      const failure = callError(state.error, { ...call });
      this.#log('warn', `${spec.operation} attempt ${state.retryCount} failed (${failure.message}); retrying`);
      if (call.trace) {
        noteFailure(call.trace, failure, call.attempts + 1);
        retry!.publish(call.trace);
      }
    }
    const signed = await signer.sign({});
    for (const [name, value] of Object.entries(signed)) state.request.headers.set(name, value);
    this.#logAttempt(spec, call, state.request.headers, params, state.retryCount);
  }

  #logAttempt(
    spec: RequestSpec<z.ZodMiniType>,
    call: CallInfo,
    headers: Record<string, string> | Headers,
    params: unknown,
    retry: number,
  ): void {
    if (!this.#logs('debug')) return;
    this.#log('debug', `${spec.method} ${call.pathWithQuery} attempt ${retry + 1}`, {
      headers: redactHeaders(headers instanceof Headers ? Object.fromEntries(headers) : headers),
      body: params === undefined ? undefined : redactBody(params),
    });
  }

  /** Calls fetch as a plain function (workerd and browsers refuse a foreign `this`). */
  async #fetch(input: Request, init: RequestInit | undefined, call: CallInfo): Promise<Response> {
    // Looked up per call: a polyfill or instrumentation installed after the client is used.
    const fetchImpl = this.#options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== 'function') throw new ConfigurationError('No fetch is available in this runtime: pass options.fetch.');
    // An already aborted signal: fetch rejects without sending, so it is not an attempt.
    if (!input.signal?.aborted) {
      call.attempts++;
      (this as unknown as Paced)[PACE].sent();
    }
    if (call.trace) call.trace.attempt = call.attempts;
    const started = Date.now();
    // The caller's fetchOptions (a proxy dispatcher…), the call's over the client's.
    const { fetchOptions } = this.#options;
    if (fetchOptions ?? call.fetchOptions) init = { ...init, ...fetchOptions, ...call.fetchOptions } as RequestInit;
    // async: a fetch that throws synchronously becomes a rejection, so ky clears its timer.
    const response = await fetchImpl(input, init);
    // A 429 (the merchant's call or the SDK's own) pauses what the SDK sends on its own.
    if (response.status === 429) (this as unknown as Paced)[PACE].limited(retryAfterSeconds(response.headers));
    if (this.#logs('info')) {
      this.#log('info', `${input.method} ${call.pathWithQuery} → ${response.status} in ${Date.now() - started} ms`);
    }
    return response;
  }

  #headers(options: RequestOptions, idempotencyKey: string | undefined): Record<string, string> {
    const o = this.#options;
    const headers: Record<string, string> = {
      ...USER_AGENT,
      ...o.defaultHeaders,
      ...options.headers,
      'Content-Type': 'application/json',
      Accept: 'application/json',
      'X-Environment': o.environment,
      'X-Merchant-Key': o.merchantKey,
      'X-API-Key': o.apiKey,
    };
    if (idempotencyKey !== undefined) headers['Idempotency-Key'] = idempotencyKey;
    return headers;
  }

  /** Maps a failure to its SDK error and logs it (API errors at warn, the rest at error). */
  #failed(cause: unknown, call: CallInfo, reading = false): PaymentsError {
    const error = callError(cause, call, reading);
    // A route of the current generation missing: the server is of the earlier one.
    if (error instanceof RouteNotSupportedError && !EARLIER_GENERATION_OPERATIONS.includes(call.operation)) {
      this.#generation ??= Promise.resolve('earlier');
    }
    this.#log(error instanceof APIError ? 'warn' : 'error', `${call.operation} failed: ${error.message}`);
    return error;
  }

  /** Whether `level` is logged: checked before building a costly line. */
  #logs(level: Exclude<LogLevel, 'off'>): boolean {
    return LOG_LEVELS.indexOf(level) <= LOG_LEVELS.indexOf(this.#options.logLevel);
  }

  // Every line redacted (customer phone numbers and e-mail addresses), and a logger that
  // throws never changes what a call returns.
  #log(level: Exclude<LogLevel, 'off'>, message: string, details?: unknown): void {
    if (!this.#logs(level)) return;
    const line = `[business-payments] ${redactText(message)}`;
    try {
      if (details === undefined) this.#options.logger[level](line);
      else this.#options.logger[level](line, details);
    } catch {
      // The logger's own failure is not the call's.
    }
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

// `business-payments/<version> <runtime>/<version>`, where a client may set User-Agent
// (browsers keep their own). Deno and Bun also have process.versions.node: asked first.
const USER_AGENT = ((): Record<string, string> => {
  const g = globalThis as {
    Deno?: { version?: { deno?: string } };
    Bun?: { version?: string };
    EdgeRuntime?: unknown;
    navigator?: { userAgent?: string };
    process?: { versions?: { node?: string } };
    document?: unknown;
  };
  if (g.document !== undefined) return {};
  const runtime = g.Deno?.version?.deno
    ? `deno/${g.Deno.version.deno}`
    : g.Bun?.version
      ? `bun/${g.Bun.version}`
      : g.EdgeRuntime !== undefined
        ? 'edge-runtime'
        : g.navigator?.userAgent === 'Cloudflare-Workers'
          ? 'workerd'
          : g.process?.versions?.node
            ? `node/${g.process.versions.node}`
            : 'unknown';
  return { 'User-Agent': `business-payments/${VERSION} ${runtime}` };
})();

/** Signs attempts of one request: `<ts>.<METHOD>.<path_with_query>.<raw_body>`, afresh each time. */
class AttemptSigner {
  readonly #secret: string;
  readonly #request: { method: string; pathWithQuery: string; body: string | undefined };

  constructor(secret: string, method: string, pathWithQuery: string, body: string | undefined) {
    this.#secret = secret;
    this.#request = { method, pathWithQuery, body };
  }

  /** `headers` plus X-Timestamp and X-Signature for now; a Promise only on the WebCrypto path. */
  sign(headers: Record<string, string>): Record<string, string> | Promise<Record<string, string>> {
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = signatureHeader(this.#secret, { timestamp, ...this.#request });
    const done = (value: string) => Object.assign(headers, { 'X-Timestamp': String(timestamp), 'X-Signature': value });
    return typeof signature === 'string' ? done(signature) : signature.then(done);
  }
}

/**
 * Path and query as they go on the wire (and are signed): the base path, the route with its
 * params percent-encoded, and the query of a GET. encodeURIComponent and URLSearchParams
 * leave nothing the URL parser would re-encode, so this string is exactly what is sent.
 */
function pathWithQuery(base: URL, spec: RequestSpec<z.ZodMiniType>, path: Record<string, string>, params: unknown): string {
  if (spec.url !== undefined) {
    const url = new URL(spec.url);
    return url.pathname + url.search;
  }
  const route = template(spec.path);
  let out = base.pathname === '/' ? '' : base.pathname;
  for (let i = 0; i < route.length; i++) out += i % 2 ? encodeURIComponent(path[route[i]!]!) : route[i];
  const query = spec.method === 'GET' && (params || spec.query) ? toQuery({ ...(params as object), ...spec.query }) : '';
  return query ? `${out}?${query}` : out;
}

/** Writes what a trace may carry of a failure: its class, and the status and request id of an API error. */
function noteFailure(trace: RequestTrace, error: PaymentsError, attempt: number): void {
  const { status, requestId } = error as Partial<APIError>;
  Object.assign(trace, { attempt, errorClass: error.name, status, requestId });
}

/** The retry mode of a call: its route's (for its params), else `safe` for GET and `create` for POST. */
const modeOf = ({ retry, method, value }: RequestSpec<z.ZodMiniType>): RetryMode =>
  typeof retry === 'function' ? retry(value) : (retry ?? (method === 'GET' ? 'safe' : 'create'));

// Route templates split once: `/api/v1/payments/{trx_id}` → ['/api/v1/payments/', 'trx_id', ''].
const TEMPLATES = new Map<string, string[]>();

/** `path` split once and kept: odd parts are placeholder names, even parts literal text. */
function template(path: string): string[] {
  let parts = TEMPLATES.get(path);
  if (!parts) TEMPLATES.set(path, (parts = path.split(/\{(\w+)\}/)));
  return parts;
}

/** The pipeline's spec of a table route called with `args` (the path id first when it has one), and the options after them. */
function specOf(name: RouteName, args: unknown[], withParams: boolean): [RequestSpec<z.ZodMiniType>, RequestOptions | undefined] {
  const route: ClientRoute = CLIENT_ROUTES[name];
  const spec: RequestSpec<z.ZodMiniType> = { ...route, operation: name, response: route.result };
  // The placeholder's name keys the id's errors (`trx_id: …`).
  if (route.id) spec.pathParams = { [template(route.path)[1]!]: [route.id, args.shift()] };
  if (withParams) spec.value = args.shift();
  return [spec, args[0] as RequestOptions | undefined];
}

function toQuery(params: Record<string, unknown>): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null) query.append(key, `${value as string | number | boolean}`);
  }
  return query.toString();
}
