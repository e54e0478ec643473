// The proxy recipes of docs/runtimes.md ("Behind a proxy"), proved on the wire for Node: a
// real forward proxy on loopback (node:http, CONNECT tunnels and absolute-form plain-HTTP
// requests, each target recorded) in front of the sandbox on a real socket (`mock.listen()`,
// no msw: nothing in this file or in the suite's global setup patches fetch). The sandbox
// checks every signature, so a call that succeeds through the proxy was signed correctly,
// and the proxy's record must match what the sandbox answered, request for request.
import { spawn } from 'node:child_process';
import { createServer, request as forward, type IncomingHttpHeaders } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { fetch as undiciFetch, ProxyAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuthenticationError, type ClientOptions, type PaymentsClient } from '../../src/index.js';
import { startReceiver, startSandbox, type Receiver, type Sandbox } from '../support/sandbox.js';

/** One request the proxy carried: how it came, to which host:port, and its request line. */
interface Sighting {
  via: 'CONNECT' | 'absolute-form';
  target: string;
  /** Method and request-target, e.g. `POST /api/v1/payments`. */
  request: string;
}

interface Proxy {
  url: string;
  /** Every request carried so far, in order (requests inside a tunnel read from its bytes). */
  requests(): Sighting[];
  close(): Promise<void>;
}

const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'transfer-encoding', 'te', 'upgrade'];
const withoutHopByHop = (headers: IncomingHttpHeaders) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.includes(name)));
// A request line inside a tunnel (the sandbox speaks plain HTTP, so the tunnel is readable).
const REQUEST_LINE = /(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) (\/\S*) HTTP\/1\.1\r\n/g;

/** A forward proxy on 127.0.0.1: CONNECT tunnels, and plain-HTTP requests in absolute form. */
async function startProxy(): Promise<Proxy> {
  const forwarded: Sighting[] = [];
  const tunnels: { target: string; bytes: string }[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    if (!URL.canParse(req.url ?? '')) return void res.writeHead(400).end('a proxy takes absolute-form targets');
    const url = new URL(req.url ?? '');
    forwarded.push({ via: 'absolute-form', target: url.host, request: `${req.method} ${url.pathname}${url.search}` });
    const upstream = forward(
      {
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: url.pathname + url.search,
        headers: withoutHopByHop(req.headers),
        agent: false,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, withoutHopByHop(answer.headers));
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  server.on('connect', (req, client: Socket, head: Buffer) => {
    const tunnel = { target: req.url ?? '', bytes: head.toString('latin1') };
    tunnels.push(tunnel);
    const url = new URL(`http://${tunnel.target}`);
    const upstream = connect(Number(url.port), url.hostname.replace(/^\[|\]$/g, ''), () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      client.on('data', (chunk: Buffer) => (tunnel.bytes += chunk.toString('latin1')));
      client.pipe(upstream);
      upstream.pipe(client);
    });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const seen = (): Sighting[] => [
    ...forwarded,
    ...tunnels.flatMap(({ target, bytes }) =>
      [...bytes.matchAll(REQUEST_LINE)].map(([, method, path]) => ({ via: 'CONNECT' as const, target, request: `${method} ${path}` })),
    ),
  ];
  return {
    url: `http://127.0.0.1:${port}`,
    requests: seen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

let sandbox: Sandbox;
let sink: Receiver;
let proxy: Proxy;
let sandboxHost: string;
const agents: ProxyAgent[] = [];

/** A ProxyAgent closed after the test. */
function proxyAgent(options: ConstructorParameters<typeof ProxyAgent>[0] = proxy.url): ProxyAgent {
  const agent = new ProxyAgent(options);
  agents.push(agent);
  return agent;
}

beforeEach(async () => {
  sandbox = await startSandbox({ timeScale: 0.001 });
  // The sandbox's own webhook deliveries go here, directly (they are not the client's fetch).
  sink = await startReceiver(sandbox.mock.credentials.webhookSecret);
  proxy = await startProxy();
  sandboxHost = new URL(sandbox.server.url).host;
});

afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.close()));
  await proxy.close();
  await sandbox.close();
  await sink.close();
});

const client = (options: ClientOptions = {}) => sandbox.clientWith({ maxRetries: 0, ...options });

/** A GET (balance) and a signed POST (a hosted payment): both must succeed. */
async function getAndPost(payments: PaymentsClient, ref = 'proxied-1'): Promise<void> {
  await payments.balance.retrieve();
  const payment = await payments.payments.create({ payment_amount: 25, currency_code: 'USD', ref_trx: ref, ipn_url: sink.url });
  expect(payment).toMatchObject({ status: 'pending', merchant_ref: ref });
}

/** What the sandbox answered, as the proxy's request lines. */
const answered = () => sandbox.mock.state.requests.map((r) => ({ request: `${r.method} ${r.path}`, status: r.status }));
const GET_AND_POST = ['GET /api/v1/balance', 'POST /api/v1/payments'];

describe('Node: fetchOptions.dispatcher = new ProxyAgent(url) (undici)', () => {
  it('sends a GET and a signed POST through the proxy (CONNECT), and the sandbox accepts both', async () => {
    await getAndPost(client({ fetchOptions: { dispatcher: proxyAgent() } }));
    expect(proxy.requests()).toEqual(GET_AND_POST.map((request) => ({ via: 'CONNECT', target: sandboxHost, request })));
    // Everything the sandbox answered came through the proxy, and it answered 2xx.
    expect(answered().map((r) => r.request)).toEqual(GET_AND_POST);
    expect(answered().every((r) => r.status < 300)).toBe(true);
  });

  it('a POST signed with the wrong secret is refused through the proxy too (the sandbox checks signatures)', async () => {
    const wrong = client({ apiSecret: 'not-the-secret', fetchOptions: { dispatcher: proxyAgent() } });
    const refused = wrong.payments.create({ payment_amount: 25, currency_code: 'USD', ref_trx: 'wrong-1', ipn_url: sink.url });
    await expect(refused).rejects.toBeInstanceOf(AuthenticationError);
    expect(proxy.requests()).toEqual([{ via: 'CONNECT', target: sandboxHost, request: 'POST /api/v1/payments' }]);
  });

  it('without fetchOptions the proxy sees nothing: Node fetch goes direct', async () => {
    await getAndPost(client());
    expect(answered().map((r) => r.request)).toEqual(GET_AND_POST);
    expect(proxy.requests()).toEqual([]);
  });

  it('per call: { fetchOptions } on one call proxies that call only', async () => {
    const payments = client();
    await payments.balance.retrieve({ fetchOptions: { dispatcher: proxyAgent() } });
    await payments.balance.retrieve();
    expect(answered()).toHaveLength(2);
    expect(proxy.requests()).toEqual([{ via: 'CONNECT', target: sandboxHost, request: 'GET /api/v1/balance' }]);
  });

  it('client.withOptions({ fetchOptions }) proxies the derived client and leaves the original direct', async () => {
    const direct = client();
    const proxied = direct.withOptions({ fetchOptions: { dispatcher: proxyAgent() } });
    await getAndPost(proxied, 'derived-1');
    await getAndPost(direct, 'original-1');
    expect(answered()).toHaveLength(4);
    expect(proxy.requests().map((s) => s.request)).toEqual(GET_AND_POST);
  });

  it('ProxyAgent({ proxyTunnel: false }): plain-HTTP targets go in absolute form, still signed correctly', async () => {
    await getAndPost(client({ fetchOptions: { dispatcher: proxyAgent({ uri: proxy.url, proxyTunnel: false }) } }));
    expect(proxy.requests()).toEqual(GET_AND_POST.map((request) => ({ via: 'absolute-form', target: sandboxHost, request })));
    expect(answered().map((r) => r.request)).toEqual(GET_AND_POST);
  });

  it("the custom-fetch fallback: undici's own fetch, handed the parts of the SDK's Request", async () => {
    const dispatcher = proxyAgent();
    // As in docs/runtimes.md: the SDK calls fetch(request, init) with a standard Request,
    // which undici's fetch (a different Request class) cannot take as it is.
    const viaUndici: typeof fetch = (input, init) => {
      const request = input as Request;
      return undiciFetch(request.url, {
        ...init,
        method: request.method,
        headers: [...request.headers],
        body: request.body,
        duplex: 'half',
        redirect: request.redirect,
        signal: request.signal,
        dispatcher,
      }) as unknown as Promise<Response>;
    };
    await getAndPost(client({ fetch: viaUndici }));
    expect(proxy.requests()).toEqual(GET_AND_POST.map((request) => ({ via: 'CONNECT', target: sandboxHost, request })));
  });
});

// The client, loaded from src/ by a Node 24 child (type stripping; a resolve hook maps the
// sources' `./x.js` imports to `./x.ts`), makes the same two calls with the environment given.
const SRC = new URL('../../src/index.ts', import.meta.url).href;
const CHILD = `
import { registerHooks } from 'node:module';
registerHooks({
  resolve(specifier, context, next) {
    if (/^\\.\\.?\\//.test(specifier) && specifier.endsWith('.js') && context.parentURL?.endsWith('.ts')) {
      specifier = specifier.slice(0, -3) + '.ts';
    }
    return next(specifier, context);
  },
});
const [src, options, ipn] = process.argv.slice(1);
const { PaymentsClient } = await import(src);
const client = new PaymentsClient(JSON.parse(options));
await client.balance.retrieve();
const payment = await client.payments.create({ payment_amount: 25, currency_code: 'USD', ref_trx: 'env-1', ipn_url: ipn });
console.log(JSON.stringify({ status: payment.status, node: process.version }));
`;

const PROXY_VARIABLES = ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy', 'NODE_USE_ENV_PROXY'];

/** Runs CHILD on this Node (process.execPath, Node 24 under vitest) with only `env`'s proxy settings. */
async function inChild(env: Record<string, string>): Promise<{ status: string; node: string }> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !PROXY_VARIABLES.includes(name)));
  const options = JSON.stringify({
    environment: 'sandbox',
    ...sandbox.mock.credentials.sandbox,
    baseUrl: sandbox.server.url,
    maxRetries: 0,
  });
  const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, SRC, options, sink.url], {
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`child exited ${code}:\n${stdout}\n${stderr}`);
  return JSON.parse(stdout.trim().split('\n').pop() ?? '') as { status: string; node: string };
}

describe('Node: NODE_USE_ENV_PROXY=1 with HTTP_PROXY / HTTPS_PROXY / NO_PROXY (Node ≥ 24.0 / 22.21)', () => {
  it('NODE_USE_ENV_PROXY=1 HTTP_PROXY=…: the global fetch tunnels both calls, loopback included', async () => {
    const result = await inChild({ NODE_USE_ENV_PROXY: '1', HTTP_PROXY: proxy.url });
    expect(result).toEqual({ status: 'pending', node: process.version });
    expect(proxy.requests()).toEqual(GET_AND_POST.map((request) => ({ via: 'CONNECT', target: sandboxHost, request })));
    expect(answered().map((r) => r.request)).toEqual(GET_AND_POST);
  }, 30_000);

  it('NO_PROXY=127.0.0.1 exempts the sandbox: the calls go direct', async () => {
    const result = await inChild({ NODE_USE_ENV_PROXY: '1', HTTP_PROXY: proxy.url, NO_PROXY: '127.0.0.1' });
    expect(result.status).toBe('pending');
    expect(answered().map((r) => r.request)).toEqual(GET_AND_POST);
    expect(proxy.requests()).toEqual([]);
  }, 30_000);

  it('HTTP_PROXY alone (no NODE_USE_ENV_PROXY) is ignored by Node fetch', async () => {
    const result = await inChild({ HTTP_PROXY: proxy.url });
    expect(result.status).toBe('pending');
    expect(answered().map((r) => r.request)).toEqual(GET_AND_POST);
    expect(proxy.requests()).toEqual([]);
  }, 30_000);
});
