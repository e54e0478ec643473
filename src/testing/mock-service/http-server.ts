// listen(): a real local HTTP server on node:http, found at run time so this module stays
// runtime-neutral. Each IncomingMessage becomes a Fetch Request that keeps the raw request
// target and the raw body bytes (the signature covers both exactly as sent).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HandleContext } from './service.js';
import type { MockServer } from './types.js';

type HandleWith = (request: Request, via: HandleContext) => Promise<Response>;

function loadHttp(): typeof import('node:http') {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const http = proc?.getBuiltinModule?.('node:http') as typeof import('node:http') | undefined;
  if (!http) {
    throw new Error('createMockService().listen() needs node:http (Node ≥ 22.3, Deno or Bun); in other runtimes use mock.handle(request) or mock.handlers.');
  }
  return http;
}

function readBody(req: IncomingMessage): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    req.on('data', (chunk: Uint8Array) => chunks.push(chunk));
    req.on('end', () => {
      const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
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
export function startServer(handleWith: HandleWith, options: { port?: number; host?: string }): Promise<MockServer> {
  const http = loadHttp();
  const host = options.host ?? '127.0.0.1';
  let origin = '';

  const onRequest = async (req: IncomingMessage, res: ServerResponse) => {
    try {
      const target = req.url ?? '/';
      const method = (req.method ?? 'GET').toUpperCase();
      const body = await readBody(req);
      let url: string;
      let rawTarget: string;
      if (target.startsWith('/')) {
        const hostHeader = req.headers.host;
        const base = hostHeader && /^[\w.-]+(:\d+)?$|^\[[0-9a-fA-F:.]+\](:\d+)?$/.test(hostHeader) ? `http://${hostHeader}` : origin;
        url = base + target;
        rawTarget = target;
      } else {
        // absolute-form target
        const parsed = new URL(target);
        url = parsed.href;
        rawTarget = parsed.pathname + parsed.search;
      }
      const request = new Request(url, {
        method,
        headers: toHeaders(req),
        body: method === 'GET' || method === 'HEAD' || body.length === 0 ? undefined : body,
      });
      const response = await handleWith(request, { rawTarget, clientIp: req.socket.remoteAddress ?? 'unknown' });
      const payload = new Uint8Array(await response.arrayBuffer());
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
