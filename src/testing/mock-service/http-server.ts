// listen(): a real local HTTP server on node:http, found at run time so this module stays
// runtime-neutral. Each IncomingMessage becomes a Fetch Request that keeps the raw request
// target and the raw body bytes (the signature covers both exactly as sent).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HandleContext } from './service.js';
import type { MockServer } from './types.js';
import { RAW_TEXT } from './util.js';

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

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

class TooLarge extends Error {}

/** The body, or TooLarge as soon as it passes `max` bytes (nothing past that is kept). */
function readBody(req: IncomingMessage, max: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    req.on('data', (chunk: Uint8Array) => {
      size += chunk.length;
      if (size > max) {
        chunks.length = 0;
        // Stop reading: the 413 goes out and the connection is closed after it.
        req.pause();
        reject(new TooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
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

/** A 4xx with the spec's error shape, written straight to the socket's response. */
function refuse(res: ServerResponse, status: number, error: string, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ error, message });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers });
  res.end(body);
}

/** The Fetch URL and the raw target of a request line, or undefined when it is malformed. */
function target(req: IncomingMessage, origin: string): { url: string; rawTarget: string } | undefined {
  const raw = req.url ?? '/';
  try {
    if (raw.startsWith('/')) {
      const hostHeader = req.headers.host;
      const base = hostHeader && /^[\w.-]+(:\d+)?$|^\[[0-9a-fA-F:.]+\](:\d+)?$/.test(hostHeader) ? `http://${hostHeader}` : origin;
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

/** Starts the server; resolves once it listens. */
export function startServer(handleWith: HandleWith, options: { port?: number; host?: string } & HttpLimits): Promise<MockServer> {
  const http = loadHttp();
  const host = options.host ?? '127.0.0.1';
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  let origin = '';

  // Every way a request can be malformed ends in a 4xx here, before the service sees it.
  const onRequest = async (req: IncomingMessage, res: ServerResponse) => {
    try {
      const method = (req.method ?? 'GET').toUpperCase();
      if (!METHODS.has(method)) {
        return refuse(res, 405, 'Method Not Allowed', `${method} is not supported by this service.`, { Allow: 'GET, POST' });
      }
      const where = target(req, origin);
      if (!where)
        return refuse(
          res,
          400,
          'Bad Request',
          `The request target ${JSON.stringify((req.url ?? '').slice(0, 100))} is not a path or an http(s) URL.`,
        );
      const declared = Number(req.headers['content-length'] ?? 0);
      if (declared > maxBody) {
        // Refused from the header alone: not one byte of the body is buffered.
        res.once('finish', () => req.destroy());
        return refuse(res, 413, 'Payload Too Large', `The body is ${declared} bytes; the limit is ${maxBody}.`, { connection: 'close' });
      }
      let body: Uint8Array;
      try {
        body = await readBody(req, maxBody);
      } catch (error) {
        if (!(error instanceof TooLarge)) throw error;
        res.once('finish', () => req.destroy());
        return refuse(res, 413, 'Payload Too Large', `The body is over the limit of ${maxBody} bytes.`, { connection: 'close' });
      }
      let request: Request;
      try {
        // The body goes to the service as bytes (via.rawBody): no stream to build and read back.
        request = new Request(where.url, { method, headers: toHeaders(req) });
      } catch (error) {
        return refuse(res, 400, 'Bad Request', `The request could not be read: ${error instanceof Error ? error.message : String(error)}.`);
      }
      const response = await handleWith(request, {
        rawTarget: where.rawTarget,
        clientIp: req.socket.remoteAddress ?? 'unknown',
        rawBody: body,
      });
      // json() answers keep their text: written as it is, without reading the stream back.
      const text = RAW_TEXT.get(response);
      const payload = text !== undefined ? Buffer.from(text) : new Uint8Array(await response.arrayBuffer());
      const headers: Record<string, string> = {};
      response.headers.forEach((value, name) => {
        headers[name] = value;
      });
      headers['content-length'] = String(payload.length);
      res.writeHead(response.status, headers);
      res.end(method === 'HEAD' ? undefined : payload);
    } catch (error) {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'Internal Server Error', message: error instanceof Error ? error.message : String(error) }));
      } else {
        res.destroy();
      }
    }
  };

  const server = http.createServer((req, res) => void onRequest(req, res));
  // Slow clients are cut off (Node answers 408): a client must not hold a socket forever.
  server.headersTimeout = options.headersTimeoutMs ?? 10_000;
  server.requestTimeout = options.requestTimeoutMs ?? 30_000;
  // CONNECT (a proxy tunnel) and protocol upgrades: not this service's business, said plainly.
  const rawRefusal = (socket: import('node:stream').Duplex, status: number, reason: string, message: string) => {
    const body = JSON.stringify({ error: reason, message });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };
  server.on('connect', (_req, socket) => rawRefusal(socket, 405, 'Method Not Allowed', 'CONNECT is not supported by this service.'));
  server.on('upgrade', (_req, socket) => rawRefusal(socket, 400, 'Bad Request', 'Protocol upgrades are not supported by this service.'));
  // A request line or header block the parser refuses: a 400 with the error shape, not a reset.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const body = JSON.stringify({
      error: status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request',
      message: `The request could not be parsed (${error.code ?? 'invalid HTTP'}).`,
    });
    socket.end(
      `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : options.port;
      const hostPart = host.includes(':') ? `[${host}]` : host;
      origin = `http://${hostPart}:${port}`;
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
