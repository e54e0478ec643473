// The request pipeline: every call the client makes goes through Transport.request, and
// reads top to bottom here: the Idempotency-Key, decided once → the inputs checked → path,
// query and body → ky sends under the payment retry policy, each attempt signed afresh in
// its hooks → a failure mapped to its SDK error → the body read under its own bounds →
// validated against the route's schema. Traced (diagnostics_channel) and logged when asked.
import type { BeforeRetryState, Options } from 'ky';
import type * as z from 'zod/mini';
import { APIPromise, type DataRequest, type SentRequest } from '../core/api-promise.js';
import { APIError, ConfigurationError, PaymentsError, requestIdOf, retryAfterSeconds, RouteNotSupportedError } from '../core/error.js';
import { listBody, PagePromise, toPage, type Cursor, type ListBody, type ListPage } from '../core/pagination.js';
import { redactPersonalData } from '../core/personal-data.js';
import { loadKy } from './ky.js';
import { checkFetchOptions, LOG_LEVELS, type LogLevel, type RequestOptions, type ResolvedOptions } from './options.js';
import type { Pace } from './pace.js';
import { bodyError, decodeResponse, type DecodeContext } from './parse.js';
import { parseErrorJson, readBody } from './read-body.js';
import { redactBody, redactHeaders } from './redact.js';
import { retryOptions, sendsKey, type RetryMode } from './retry.js';
import { signatureHeader } from './signing.js';
import { callError, EARLIER_GENERATION_OPERATIONS, type CallInfo } from './to-error.js';
import { channel, listened, traced, tracingChannel, type RequestTrace, type Tracing } from './trace.js';
import { validateInputs, type ParamToCheck } from './validate.js';
import { VERSION } from '../version.js';

/** @internal One call of the pipeline: a route of the table with its inputs, or a test's own. */
export interface RequestSpec<S extends z.ZodMiniType> {
  /** `resource.method`, used in error messages and logs. */
  operation: string;
  method: 'GET' | 'POST';
  /** Route with `{name}` placeholders filled from `pathParams`, percent-encoded. */
  path: string;
  pathParams?: Record<string, ParamToCheck>;
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
  /** The result's field that must name the path id asked for (verify's `trx_id`): an answer about another one is refused. */
  sameId?: string | undefined;
  /** Query params the SDK adds itself (a page number), sent after the validated ones. */
  query?: Record<string, number> | undefined;
  /** A same-origin URL the server gave (a next-page link): sent instead of path and query. */
  url?: string | undefined;
}

/** @internal A list call: each item's (provisional) schema instead of a response schema. */
export type PageSpec<T> = Omit<RequestSpec<z.ZodMiniType>, 'response'> & {
  item: z.ZodMiniType<T>;
  /** Names a server may keep the items under besides `data` (`payouts`). */
  names?: readonly string[] | undefined;
};

// The call's own state as the pipeline fills it in: what the error mapping reads, and the
// key every attempt carries.
type Call = CallInfo & { spec: RequestSpec<z.ZodMiniType>; options: RequestOptions };

/**
 * @internal The request pipeline of one client: its resolved options, its base URL, and the
 * steps every call goes through. The client builds one and hands it to its resources.
 */
export class Transport {
  // Private: the secret must never show in JSON.stringify, util.inspect or an error.
  readonly #options: ResolvedOptions;
  // Parsed once: errors name its origin until a call has its own URL.
  readonly #baseUrl: URL;
  // Told when a route of the current generation answers 2xx (true) or turns out missing (false): the client's generation().
  readonly #onRoute: ((found: boolean) => void) | undefined;
  /** The client's pacer: every attempt is counted in it, a 429 pauses it, and what the SDK sends on its own waits on it. */
  pace: Pace;

  constructor(options: ResolvedOptions, pace: Pace, onRoute?: (found: boolean) => void) {
    this.#options = options;
    this.#baseUrl = new URL(options.baseUrl);
    this.pace = pace;
    this.#onRoute = onRoute;
  }

  /** Sends one call through the pipeline; the body is read and validated when data is asked for. */
  request<S extends z.ZodMiniType>(spec: RequestSpec<S>, options: RequestOptions = {}): APIPromise<z.output<S>> {
    const dataRequest: DataRequest = {};
    return new APIPromise(this.#run(spec, options, dataRequest), dataRequest);
  }

  /** A list call: the first page now, every page on `for await`. */
  requestPage<T>(spec: PageSpec<T>, options: RequestOptions = {}): PagePromise<T> {
    const response: z.ZodMiniType<ListBody<T>> = listBody(spec.item, spec.names);
    const { limit, offset = 0 } = (spec.value ?? {}) as { offset?: number; limit?: number };
    const base = this.#baseUrl;
    const route = base.origin + basePath(base) + spec.path;
    const fetchPage = (at: Cursor): Promise<SentRequest<ListPage<T>>> => {
      // Page numbers and links replace the offset; the caller's other params stay.
      const value = at.offset === offset || at.page !== undefined ? spec.value : { ...(spec.value as object), offset: at.offset };
      const page: RequestSpec<typeof response> = { ...spec, value, response, url: at.url };
      if (at.page !== undefined) page.query = { page: at.page };
      return this.#run(page, options).then((sent) => ({
        response: sent.response,
        parse: async () => toPage(await sent.parse(), at, limit, (link) => sameOrigin(link, route, base), next),
      }));
    };
    const next = (at: Cursor) => new APIPromise(fetchPage(at)).withResponse();
    return new PagePromise(fetchPage({ offset }));
  }

  // The call's state, with its Idempotency-Key decided here and only here: the caller's, else
  // a fresh one when the call's mode sends one. Every attempt carries it, and the trace has it
  // from its start.
  #run<S extends z.ZodMiniType>(spec: RequestSpec<S>, options: RequestOptions, dataRequest?: DataRequest) {
    const mode = modeOf(spec);
    const call: Call = {
      spec,
      options,
      operation: spec.operation,
      mode,
      acted: typeof spec.acted === 'function' ? spec.acted(spec.value) : spec.acted,
      route: `${spec.method} ${spec.path}`,
      origin: this.#baseUrl.origin,
      pathWithQuery: this.#baseUrl.pathname,
      timeout: options.timeout ?? this.#options.timeout,
      signal: options.signal,
      // One key per call, reused by every retry: the server replays instead of charging twice.
      idempotencyKey: options.idempotencyKey ?? (sendsKey(mode) ? crypto.randomUUID() : undefined),
      attempts: 0,
      hint: spec.failureHint,
      started: Date.now(),
    };
    const tracing = tracingChannel('business-payments:request');
    if (!listened(tracing)) return this.#call<S>(call);
    return this.#traced<S>(tracing, call, dataRequest);
  }

  // One TracingChannel trace per call (business-payments:request) when someone listens: from
  // the input checks to the final response, and through reading the body when the caller
  // asked for data before the response came (then a ResponseValidationError is traced too).
  #traced<S extends z.ZodMiniType>(tracing: Tracing, call: Call, dataRequest?: DataRequest): Promise<SentRequest<z.output<S>>> {
    const { spec } = call;
    const trace: RequestTrace = (call.trace = {
      operation: spec.operation,
      method: spec.method,
      route: spec.path,
      environment: this.#options.environment,
      idempotencyKey: call.idempotencyKey,
      attempt: 0,
    });
    const run = async () => {
      const sent = await this.#call<S>(call);
      trace.status = sent.response.status;
      trace.requestId = requestIdOf(sent.response.headers);
      if (dataRequest?.asked) await sent.parse();
      return sent;
    };
    return traced(tracing, trace, run, (context, error) => {
      noteFailure(context, error as PaymentsError, (error as PaymentsError).attempts ?? context.attempt);
    });
  }

  // The pipeline, top to bottom: check the inputs, build the path, query and body, send
  // through ky (which signs each attempt in a hook, retries under the payment policy and
  // times each attempt out); the body is read and validated when data is asked for. Every
  // failure leaves through #toError, stamped with the Idempotency-Key and the attempt count.
  async #call<S extends z.ZodMiniType>(call: Call): Promise<SentRequest<z.output<S>>> {
    const { spec, options } = call;
    let response: Response;
    try {
      const { path, params } = validateInputs(spec.operation, spec, this.#options.environment, options, this.#options.phoneCountry);
      call.fetchOptions = checkFetchOptions(options.fetchOptions, 'options.fetchOptions');
      call.pathWithQuery = pathWithQuery(this.#baseUrl, spec, path, params);
      const body = spec.method === 'POST' ? JSON.stringify(params ?? {}) : undefined;
      response = await this.#send(call, params, body);
    } catch (cause) {
      throw this.#toError(cause, call);
    }
    this.#routeOf(spec.operation, true);
    let parsed: Promise<z.output<S>> | undefined;
    // Once: a traced call may read the body before the APIPromise asks for it.
    const parse = () => (parsed ??= this.#read(call, response));
    return { response, parse };
  }

  /** Sends the call through ky under the retry policy: resolves to the final attempt's 2xx Response. */
  async #send(call: Call, params: unknown, body: string | undefined): Promise<Response> {
    const { spec, options } = call;
    const resolved = this.#options;
    const signer = new AttemptSigner(resolved, spec.method, call.pathWithQuery, body);
    const headers = this.#headers(options, call.idempotencyKey);
    const limit = options.maxRetries ?? resolved.maxRetries;
    // Only the options this call needs: ky merges every key it is given, on every call.
    const request: Options = {
      timeout: call.timeout,
      retry: retryOptions(call.mode!, limit, resolved.maxRetryAfter),
      fetch: (input, init) => this.#fetch(input as Request, init, call),
      // A redirect would carry the credentials and the body to another origin: refuse it.
      redirect: 'manual',
      // Error bodies only (the SDK reads 2xx bodies itself): too deep a body stays text.
      parseJson: parseErrorJson,
      // Headers go onto ky's Request in hooks, not through options.headers: ky would copy
      // them through four Headers objects per call. Every attempt is signed afresh there.
      hooks: { beforeRequest: [(state) => this.#sign(state.request, call, signer, params, headers, 0)] },
    };
    if (limit > 0) request.hooks!.beforeRetry = [(state) => this.#resign(state, call, signer, params)];
    if (spec.method !== 'GET') {
      request.method = spec.method;
      request.body = body!;
    }
    if (options.signal) request.signal = options.signal;
    const loaded = loadKy();
    return (loaded instanceof Promise ? await loaded : loaded).default(call.origin + call.pathWithQuery, request);
  }

  /** Reads the 2xx body under its own bounds and validates it; every failure leaves as an SDK error. */
  async #read<S extends z.ZodMiniType>(call: Call, response: Response): Promise<z.output<S>> {
    const { spec, options } = call;
    if (response.bodyUsed)
      throw new PaymentsError(`${spec.operation}: the body was already read through asResponse(); use withResponse() for both.`);
    const context: DecodeContext = { operation: spec.operation, serverMayHaveActed: call.mode !== 'safe', emptyBodyOk: spec.emptyBodyOk };
    // maxResponseBytes (after decompression) and JSON depth; the per-attempt timeout and the
    // caller's signal end a read that stalls, and cancel the connection.
    const bounds = { limit: options.maxResponseBytes ?? this.#options.maxResponseBytes, timeout: call.timeout, signal: call.signal };
    let text: string;
    try {
      text = await readBody(response, bounds, context);
    } catch (cause) {
      throw this.#toError(cause, call, true);
    }
    try {
      const data = decodeResponse(spec.response as S, text, response, context);
      const asked = spec.sameId && String(Object.values(spec.pathParams!)[0]![1]);
      const said = asked && String((data as Record<string, unknown>)[spec.sameId!]);
      // An answer about another payment (a proxy's cache, a hostile server) is never returned.
      // Ids match as the earlier generation matches them: case-insensitively.
      if (said && said.toLowerCase() !== asked.toLowerCase())
        throw bodyError(
          response,
          context,
          `the ${spec.sameId} of another payment (${said}, not ${asked}): nothing should be fulfilled from it`,
          text,
        );
      return data;
    } catch (cause) {
      throw this.#toError(cause, call);
    }
  }

  /**
   * Signs attempt `retry` (0: the first) on ky's Request: the first gets the SDK's `headers`
   * too, a retry a fresh X-Timestamp and X-Signature over what it carries.
   */
  #sign(
    request: Request,
    call: Call,
    signer: AttemptSigner,
    params: unknown,
    headers: Record<string, string>,
    retry: number,
  ): void | Promise<void> {
    const put = (signed: Record<string, string>) => {
      for (const name in signed) request.headers.set(name, signed[name]!);
      this.#logAttempt(call, retry ? request.headers : signed, params, retry);
    };
    const signed = signer.sign(headers);
    // A Promise only on the WebCrypto path: node:crypto signs at once.
    return signed instanceof Promise ? signed.then(put) : put(signed);
  }

  /** ky's beforeRetry hook: the failed attempt told (warn, trace), and the retry signed afresh. */
  async #resign(state: BeforeRetryState, call: Call, signer: AttemptSigner, params: unknown): Promise<void> {
    const retry = channel('business-payments:request:retry');
    if (this.#willLog('warn') || (call.trace && retry?.hasSubscribers)) {
      // A throwaway mapping for the log line and the trace only: what the caller would see.
      const failure = callError(state.error, { ...call });
      this.log('warn', `${call.operation} attempt ${state.retryCount} failed (${failure.message}); retrying`);
      if (call.trace) {
        noteFailure(call.trace, failure, call.attempts + 1);
        retry!.publish(call.trace);
      }
    }
    return this.#sign(state.request, call, signer, params, {}, state.retryCount);
  }

  #logAttempt(call: Call, headers: Record<string, string> | Headers, params: unknown, retry: number): void {
    if (!this.#willLog('debug')) return;
    this.log('debug', `${call.spec.method} ${call.pathWithQuery} attempt ${retry + 1}`, {
      headers: redactHeaders(headers instanceof Headers ? Object.fromEntries(headers) : headers),
      body: params === undefined ? undefined : redactBody(params),
    });
  }

  /** Calls fetch as a plain function (workerd and browsers refuse a foreign `this`). */
  async #fetch(input: Request, init: RequestInit | undefined, call: Call): Promise<Response> {
    // Looked up per call: a polyfill or instrumentation installed after the client is used.
    const fetchImpl = this.#options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== 'function') throw new ConfigurationError('No fetch is available in this runtime: pass options.fetch.');
    // An already aborted signal: fetch rejects without sending, so it is not an attempt.
    if (!input.signal?.aborted) {
      call.attempts++;
      this.pace.sent();
    }
    if (call.trace) call.trace.attempt = call.attempts;
    const started = Date.now();
    // The caller's fetchOptions (a proxy dispatcher…), the call's over the client's.
    const { fetchOptions } = this.#options;
    if (fetchOptions ?? call.fetchOptions) init = { ...init, ...fetchOptions, ...call.fetchOptions } as RequestInit;
    // async: a fetch that throws synchronously becomes a rejection, so ky clears its timer.
    const response = await fetchImpl(input, init);
    // A 429 (the merchant's call or the SDK's own) pauses what the SDK sends on its own, for
    // no longer than the wait the client would retry after (maxRetryAfter).
    if (response.status === 429) this.pace.limited(retryAfterSeconds(response.headers), this.#options.maxRetryAfter);
    if (this.#willLog('info')) {
      this.log('info', `${input.method} ${call.pathWithQuery} → ${response.status} in ${Date.now() - started} ms`);
    }
    return response;
  }

  #headers(options: RequestOptions, idempotencyKey: string | undefined): Record<string, string> {
    const resolved = this.#options;
    const headers: Record<string, string> = {
      ...USER_AGENT,
      ...resolved.defaultHeaders,
      ...options.headers,
      'Content-Type': 'application/json',
      Accept: 'application/json',
      'X-Environment': resolved.environment,
      'X-Merchant-Key': resolved.merchantKey,
      'X-API-Key': resolved.apiKey,
    };
    if (idempotencyKey !== undefined) headers['Idempotency-Key'] = idempotencyKey;
    return headers;
  }

  /** Maps a failure to its SDK error and logs it (API errors at warn, the rest at error). */
  #toError(cause: unknown, call: CallInfo, reading = false): PaymentsError {
    const error = callError(cause, call, reading);
    if (error instanceof RouteNotSupportedError) this.#routeOf(call.operation, false);
    this.log(error instanceof APIError ? 'warn' : 'error', `${call.operation} failed: ${error.message}`);
    return error;
  }

  /** Tells the client what a route of the current generation (not one of the earlier generation's three) met. */
  #routeOf(operation: string, found: boolean): void {
    if (!EARLIER_GENERATION_OPERATIONS.includes(operation)) this.#onRoute?.(found);
  }

  /** Whether `level` is logged: checked before building a costly line. */
  #willLog(level: Exclude<LogLevel, 'off'>): boolean {
    return LOG_LEVELS.indexOf(level) <= LOG_LEVELS.indexOf(this.#options.logLevel);
  }

  /**
   * Writes one line to the client's logger at `level`. Every line is redacted (customer phone
   * numbers and e-mail addresses), and a logger that throws never changes what a call returns.
   */
  log(level: Exclude<LogLevel, 'off'>, message: string, details?: unknown): void {
    if (!this.#willLog(level)) return;
    const line = `[business-payments] ${redactPersonalData(message)}`;
    try {
      if (details === undefined) this.#options.logger[level](line);
      else this.#options.logger[level](line, details);
    } catch {
      // The logger's own failure is not the call's.
    }
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

/** Signs attempts of one request: `<ts>.<METHOD>.<path_with_query>.<raw_body>`, afresh each time, on the client's clock. */
class AttemptSigner {
  readonly #options: Pick<ResolvedOptions, 'apiSecret' | 'now'>;
  readonly #request: { method: string; pathWithQuery: string; body: string | undefined };

  constructor(options: Pick<ResolvedOptions, 'apiSecret' | 'now'>, method: string, pathWithQuery: string, body: string | undefined) {
    this.#options = options;
    this.#request = { method, pathWithQuery, body };
  }

  /** `headers` plus X-Timestamp and X-Signature for now; a Promise only on the WebCrypto path. */
  sign(headers: Record<string, string>): Record<string, string> | Promise<Record<string, string>> {
    const { apiSecret, now = Date.now } = this.#options;
    const timestamp = Math.floor(now() / 1000);
    const signature = signatureHeader(apiSecret, { timestamp, ...this.#request });
    const done = (value: string) => Object.assign(headers, { 'X-Timestamp': String(timestamp), 'X-Signature': value });
    return typeof signature === 'string' ? done(signature) : signature.then(done);
  }
}

/** The retry mode of a call: its route's (for its params), else `safe` for GET and `create` for POST. */
const modeOf = ({ retry, method, value }: RequestSpec<z.ZodMiniType>): RetryMode =>
  typeof retry === 'function' ? retry(value) : (retry ?? (method === 'GET' ? 'safe' : 'create'));

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
  let out = basePath(base);
  for (let i = 0; i < route.length; i++) out += i % 2 ? encodeURIComponent(path[route[i]!]!) : route[i];
  const query = spec.method === 'GET' && (params || spec.query) ? toQuery({ ...(params as object), ...spec.query }) : '';
  return query ? `${out}?${query}` : out;
}

/** The baseUrl's path that routes are appended to: '' for the root. */
const basePath = (base: URL): string => (base.pathname === '/' ? '' : base.pathname);

// Route templates split once: `/api/v1/payments/{trx_id}` → ['/api/v1/payments/', 'trx_id', ''].
const TEMPLATES = new Map<string, string[]>();

/** @internal `path` split once and kept: odd parts are placeholder names, even parts literal text. */
export function template(path: string): string[] {
  let parts = TEMPLATES.get(path);
  if (!parts) TEMPLATES.set(path, (parts = path.split(/\{(\w+)\}/)));
  return parts;
}

function toQuery(params: Record<string, unknown>): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null) query.append(key, `${value as string | number | boolean}`);
  }
  return query.toString();
}

/** A next-page link, followed only on the baseUrl origin. */
function sameOrigin(link: string, route: string, base: URL): URL | undefined {
  try {
    const url = new URL(link, route);
    return url.origin === base.origin ? url : undefined;
  } catch {
    return undefined;
  }
}

/** Writes what a trace may carry of a failure: its class, and the status and request id of an API error. */
function noteFailure(trace: RequestTrace, error: PaymentsError, attempt: number): void {
  const { status, requestId } = error as Partial<APIError>;
  Object.assign(trace, { attempt, errorClass: error.name, status, requestId });
}
