// listen(): a real local HTTP server on node:http, found at run time so this module stays
// runtime-neutral. Each IncomingMessage becomes a Fetch Request that keeps the raw request
// target and the raw body bytes (the signature covers both exactly as sent).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HandleContext } from './router.js';
import type { MockServer } from './types.js';
import { phpJson } from './php-json.js';
import { RAW_TEXT } from './responses.js';

type HandleWith = (request: Request, via: HandleContext) => Promise<Response>;

function loadHttp(): typeof import('node:http') {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const http = proc?.getBuiltinModule?.('node:http') as typeof import('node:http') | undefined;
  if (!http) {
    throw new Error(
      'createMockService().listen() needs node:http (Node 20.16+ or 22.3+, Deno or Bun); in other runtimes use mock.handle(request) or mock.handlers.',
    );
  }
  return http;
}

/** Limits of the HTTP adapter: what a long-running local service must not let a client do. */
export interface HttpLimits {
  /** Largest request body in bytes; more gets 413 without being buffered. Default 1 MiB. */
  maxBodyBytes?: number | undefined;
  /** Time a client has to send its headers, in ms. Default 10 s. */
  headersTimeoutMs?: number | undefined;
  /** Time a client has to send its whole request, in ms. Default 30 s. */
  requestTimeoutMs?: number | undefined;
}

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

// Lingering close after a 413, as nginx does: the answer goes out, then whatever the client
// still sends is read and thrown away (never kept) so that it reads the 413 before the socket
// closes. nginx waits up to 30 s in all (lingering_time) and 5 s for each read
// (lingering_timeout); a local sandbox needs less: a client on loopback sends 50 MB in well
// under a second, and a socket held longer only ties up the service.
/** Longest a refused body is drained, in all, before the socket is closed. */
export const LINGER_TIME_MS = 5_000;
/** Longest wait for the next bytes of a refused body before the socket is closed. */
const LINGER_IDLE_MS = 1_000;
/**
 * Most bytes of a refused body drained before the socket is closed. Each chunk read is
 * dropped at once, but node copies it into a fresh buffer that only the next GC frees (V8
 * waits for about 64 MB of them), so every byte drained is briefly memory: 8 MiB keeps that
 * to a few MB over the limit, and is far more than a client needs to read its 413 first.
 */
export const LINGER_MAX_BYTES = 8 * 1024 * 1024;

/** Internal (tests only): other linger bounds, and what each lingering close came to. */
export interface LingerOptions {
  timeMs?: number;
  idleMs?: number;
  maxBytes?: number;
  onDone?: (outcome: { bytes: number; ms: number; reason: 'end' | 'idle' | 'time' | 'bytes' | 'closed' }) => void;
}

class TooLarge extends Error {}

/** The body, or TooLarge as soon as it passes `max` bytes (nothing past that is kept). */
function readBody(req: IncomingMessage, max: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    const onData = (chunk: Uint8Array) => {
      size += chunk.length;
      if (size > max) {
        chunks.length = 0;
        // Stop keeping it: the 413 goes out and the rest is drained by refuseTooLarge().
        req.off('data', onData);
        req.pause();
        reject(new TooLarge());
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => {
      if (size > max) return; // already refused
      const out = new Uint8Array(size);
      let offset = 0;
      for (const chunk of chunks) {
        out.set(chunk, offset);
        offset += chunk.length;
      }
      resolve(out);
    });
    req.on('error', reject);
  });
}

// Methods a Fetch Request can carry (TRACE, CONNECT and TRACK are forbidden there).
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Writes the head and body of a 4xx with the spec's error shape; the caller ends the response. */
function writeError(res: ServerResponse, status: number, error: string, message: string, headers: Record<string, string> = {}): void {
  const body = phpJson({ error, message });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers });
  res.write(body);
}

/** A 4xx with the spec's error shape, written straight to the socket's response. */
function refuse(res: ServerResponse, status: number, error: string, message: string, headers: Record<string, string> = {}): undefined {
  writeError(res, status, error, message, headers);
  res.end();
  return undefined;
}

/**
 * A 4xx with the spec's error shape written on the bare socket, then closed: for what never
 * becomes a request (CONNECT, an upgrade, a request the parser refuses).
 */
function refuseOnSocket(socket: import('node:stream').Duplex, status: number, reason: string, message: string): void {
  const body = phpJson({ error: reason, message });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Writes the service's Fetch Response (no body for HEAD), with its exact Content-Length. */
async function writeResponse(res: ServerResponse, response: Response, head: boolean): Promise<void> {
  // json() answers keep their text: written as it is, without reading the stream back.
  const text = RAW_TEXT.get(response);
  const payload = text !== undefined ? Buffer.from(text) : new Uint8Array(await response.arrayBuffer());
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  headers['content-length'] = String(payload.length);
  res.writeHead(response.status, headers);
  res.end(head ? undefined : payload);
}

/** A Host header (or an absolute target's host) that is a host: a name or an IP literal, with an optional port. */
const HOST_FORM = /^[\w.-]+(:\d+)?$|^\[[0-9a-fA-F:.]+\](:\d+)?$/;

/** The Fetch URL and the raw target of a request line, or undefined when it is malformed. */
function target(req: IncomingMessage, origin: string): { url: string; rawTarget: string } | undefined {
  const raw = req.url ?? '/';
  try {
    if (raw.startsWith('/')) {
      const hostHeader = req.headers.host;
      const base = hostHeader && HOST_FORM.test(hostHeader) ? `http://${hostHeader}` : origin;
      const url = base + raw;
      new URL(url); // throws on a target the URL parser refuses (e.g. a bad %-escape in the host)
      return { url, rawTarget: raw };
    }
    // absolute-form target (a proxy's request line)
    const parsed = new URL(raw);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
    return { url: parsed.href, rawTarget: parsed.pathname + parsed.search };
  } catch {
    return undefined;
  }
}

/** Sockets draining a refused body, each with the function that ends its linger. */
const lingering = new WeakMap<object, (reason: 'closed') => void>();

/**
 * The 413, then a lingering close: the answer is written whole (Content-Length, Connection:
 * close) but the response is ended only once the client has sent its body, gone quiet, or
 * passed the time or byte bound; until then every chunk is counted and dropped.
 */
function refuseTooLarge(req: IncomingMessage, res: ServerResponse, message: string, bounds: LingerOptions): void {
  writeError(res, 413, 'Payload Too Large', message, { connection: 'close' });
  const started = Date.now();
  const socket = req.socket;
  let bytes = 0;
  let idle: ReturnType<typeof setTimeout> | undefined;
  const done = (reason: 'end' | 'idle' | 'time' | 'bytes' | 'closed') => {
    if (!lingering.has(socket)) return;
    lingering.delete(socket);
    clearTimeout(idle);
    clearTimeout(total);
    req.off('data', onData);
    req.off('end', onEnd);
    socket.off('close', onClose);
    // Still sending after the bounds: closed anyway (the client may then see a reset).
    if (reason !== 'end') res.once('finish', () => socket.destroy());
    res.end();
    bounds.onDone?.({ bytes, ms: Date.now() - started, reason });
  };
  const armIdle = () => {
    clearTimeout(idle);
    idle = setTimeout(() => done('idle'), bounds.idleMs ?? LINGER_IDLE_MS);
    idle.unref?.();
  };
  const onData = (chunk: Uint8Array) => {
    bytes += chunk.length; // counted, never kept
    if (bytes > (bounds.maxBytes ?? LINGER_MAX_BYTES)) done('bytes');
    else armIdle();
  };
  const onEnd = () => done('end');
  const onClose = () => done('closed');
  const total = setTimeout(() => done('time'), bounds.timeMs ?? LINGER_TIME_MS);
  total.unref?.();
  lingering.set(socket, done);
  req.on('data', onData);
  req.once('end', onEnd);
  socket.once('close', onClose);
  if (req.complete) return done('end');
  armIdle();
  req.resume();
}

function toHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    try {
      headers.append(raw[i]!, raw[i + 1]!);
    } catch {
      // a header the Fetch API refuses: skip it
    }
  }
  return headers;
}

/** What the adapter takes of a request: what a service call needs, or nothing (refused here). */
interface Incoming {
  request: Request;
  rawTarget: string;
  body: Uint8Array;
}

interface BodyLimits {
  maxBody: number;
  linger: LingerOptions;
}

// DNS rebinding: a page of another site whose name is made to resolve to 127.0.0.1 is, to
// the browser, of the same origin as the sandbox under that name: it could read the console's
// form token and post with a matching Origin. Its requests carry that name in Host, so the
// console answers only requests for one of the server's own names (router.ts: foreignHost).
// An IP literal cannot be rebound (the browser connects to that very address, so one that
// reached this server is one of its addresses), nor can `localhost`; other names only when
// given: the name it was bound to, or `allowedHosts`. The port does not matter.
/** The host names the console answers for besides every IP literal, lower case, without a final dot. */
function ownNames(bound: string, allowed: readonly string[] = []): ReadonlySet<string> {
  return new Set(['localhost', bound, ...allowed].map((name) => name.toLowerCase().replace(/\.$/, '')));
}

/** The host a request was sent for (Host, or an absolute target's) when it is not one of `own`, else undefined. */
function foreignHost(req: IncomingMessage, url: string, own: ReadonlySet<string>): string | undefined {
  const hosts = [new URL(url).host];
  if (req.headers.host !== undefined) hosts.push(req.headers.host);
  for (const host of hosts) {
    const name = HOST_FORM.test(host) ? host.replace(/:\d+$/, '').toLowerCase().replace(/\.$/, '') : '';
    const literal = /^\d{1,3}(\.\d{1,3}){3}$/.test(name) || name.startsWith('[');
    if (!literal && !own.has(name)) return host;
  }
  return undefined;
}

/** Starts the server; resolves once it listens. */
export function startServer(
  handleWith: HandleWith,
  options: { port?: number; host?: string; linger?: LingerOptions; allowedHosts?: readonly string[] } & HttpLimits,
): Promise<MockServer> {
  const http = loadHttp();
  let origin = '';
  const host = options.host ?? '127.0.0.1';
  const limits = { maxBody: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES, linger: options.linger ?? {} };
  const onRequest = requestListener(handleWith, () => origin, limits, ownNames(host, options.allowedHosts));
  const server = http.createServer((req, res) => void onRequest(req, res));
  // Slow clients are cut off (Node answers 408): a client must not hold a socket forever.
  server.headersTimeout = options.headersTimeoutMs ?? 10_000;
  server.requestTimeout = options.requestTimeoutMs ?? 30_000;
  refuseNonRequests(server);
  return listening(server, options.port, host, (url) => (origin = url));
}

function requestListener(
  handleWith: HandleWith,
  originOf: () => string,
  limits: BodyLimits,
  own: ReadonlySet<string>,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    try {
      const method = (req.method ?? 'GET').toUpperCase();
      const incoming = await readIncoming(req, res, method, originOf(), limits);
      if (!incoming) return;
      const { request, rawTarget, body } = incoming;
      const clientIp = req.socket.remoteAddress ?? 'unknown';
      const response = await handleWith(request, { rawTarget, clientIp, rawBody: body, foreignHost: foreignHost(req, request.url, own) });
      if (response.type === 'error') return loseAnswer(req.socket);
      await writeResponse(res, response, method === 'HEAD');
    } catch (error) {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(phpJson({ error: 'Internal Server Error', message: error instanceof Error ? error.message : String(error) }));
      } else {
        res.destroy();
      }
    }
  };
}

/**
 * A lost answer (`Response.error()`: payout behaviour `loseAnswer`): nothing is written, the
 * connection is reset (RST where the runtime can, else closed), as when a network drops it.
 */
function loseAnswer(socket: import('node:net').Socket): void {
  if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
  else socket.destroy();
}

// Every way a request can be malformed ends in a 4xx here, before the service sees it.
async function readIncoming(
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  origin: string,
  { maxBody, linger }: BodyLimits,
): Promise<Incoming | undefined> {
  if (!METHODS.has(method)) {
    return refuse(res, 405, 'Method Not Allowed', `${method} is not supported by this service.`, { Allow: 'GET, POST' });
  }
  const where = target(req, origin);
  if (!where) {
    const shown = JSON.stringify((req.url ?? '').slice(0, 100));
    return refuse(res, 400, 'Bad Request', `The request target ${shown} is not a path or an http(s) URL.`);
  }
  const declared = Number(req.headers['content-length'] ?? 0);
  // Refused from the header alone: not one byte of the body is buffered.
  if (declared > maxBody) {
    refuseTooLarge(req, res, `The body is ${declared} bytes; the limit is ${maxBody}.`, linger);
    return undefined;
  }
  let body: Uint8Array;
  try {
    body = await readBody(req, maxBody);
  } catch (error) {
    if (!(error instanceof TooLarge)) throw error;
    refuseTooLarge(req, res, `The body is over the limit of ${maxBody} bytes.`, linger);
    return undefined;
  }
  try {
    // The body goes to the service as bytes (via.rawBody): no stream to build and read back.
    return { request: new Request(where.url, { method, headers: toHeaders(req) }), rawTarget: where.rawTarget, body };
  } catch (error) {
    return refuse(res, 400, 'Bad Request', `The request could not be read: ${error instanceof Error ? error.message : String(error)}.`);
  }
}

/** What never becomes a request (CONNECT, an upgrade, what the parser refuses) is answered on the socket. */
function refuseNonRequests(server: import('node:http').Server): void {
  // CONNECT (a proxy tunnel) and protocol upgrades: not this service's business, said plainly.
  server.on('connect', (_req, socket) => refuseOnSocket(socket, 405, 'Method Not Allowed', 'CONNECT is not supported by this service.'));
  server.on('upgrade', (_req, socket) =>
    refuseOnSocket(socket, 400, 'Bad Request', 'Protocol upgrades are not supported by this service.'),
  );
  // A request line or header block the parser refuses: a 400 with the error shape, not a reset.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    // A client that stops mid-body while its 413 lingers (or a timeout then): it has its answer.
    const endLinger = lingering.get(socket);
    if (endLinger) return endLinger('closed');
    if (!socket.writable) return socket.destroy();
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const reason = status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
    refuseOnSocket(socket, status, reason, `The request could not be parsed (${error.code ?? 'invalid HTTP'}).`);
  });
}

/** Listens on `host` and `port` (0: any free one); tells `onOrigin` the address once it does. */
function listening(
  server: import('node:http').Server,
  port: number | undefined,
  host: string,
  onOrigin: (origin: string) => void,
): Promise<MockServer> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port ?? 0, host, () => {
      server.off('error', reject);
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : port;
      const hostPart = host.includes(':') ? `[${host}]` : host;
      const origin = `http://${hostPart}:${bound}`;
      onOrigin(origin);
      let closing: Promise<void> | undefined;
      resolve({
        url: origin,
        close: () =>
          (closing ??= new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections?.();
          })),
      });
    });
  });
}
