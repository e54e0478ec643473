// DNS rebinding: a page of another site whose name is made to resolve to 127.0.0.1 is, to the
// browser, of the same origin as the sandbox under that name. Its requests carry that name in
// Host, and the console (pages and actions) refuses them over a real socket; loopback names
// and IP literals still work. The API rows do not look at Host (signed calls; see docs/testing.md).
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createMockService, type MockService } from '../../../src/testing.js';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** One request over a real socket to 127.0.0.1:`port`, with exactly these headers (Host included). */
function send(port: number, method: string, path: string, headers: Record<string, string>, body = ''): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, setHost: false, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const HTML = { Accept: 'text/html' };
let mocks: MockService[] = [];

async function started(options: Record<string, unknown> = {}) {
  const mock = createMockService();
  mocks.push(mock);
  const server = await mock.listen({ port: 0, ...options });
  const port = Number(new URL(server.url).port);
  const page = (host: string) => send(port, 'GET', '/', { Host: host, ...HTML });
  const token = /name="token" value="([0-9a-f]+)"/.exec((await page(`127.0.0.1:${port}`)).text)![1]!;
  /** The JSON control call of the Payouts switch, as a page of `origin` sends it for `host`. */
  const flip = (host: string, origin: string) =>
    send(
      port,
      'POST',
      '/console/payouts/behaviour',
      { Host: host, Origin: origin, 'Content-Type': 'application/json' },
      JSON.stringify({ token, answer: 'AMBIGUOUS' }),
    );
  /** The test-event form, posted as a page of `origin` for `host`. */
  const testEvent = (host: string, origin: string) =>
    send(
      port,
      'POST',
      '/console/events/test',
      { Host: host, Origin: origin, 'Content-Type': 'application/x-www-form-urlencoded' },
      new URLSearchParams({ token, type: 'payment.completed', url: 'http://169.254.169.254/anywhere' }).toString(),
    );
  return { mock, port, page, token, flip, testEvent };
}

afterEach(async () => {
  await Promise.all(mocks.map((mock) => mock.close()));
  mocks = [];
});

describe('sandbox console: only for its own host names (DNS rebinding)', () => {
  it('a rebound page (Host evil.example:PORT, its own Origin) reads no page and no token, and changes nothing', async () => {
    const { mock, port, page, token, flip, testEvent } = await started();
    const evil = `evil.example:${port}`;
    const origin = `http://${evil}`;
    const home = await page(evil);
    expect(home.status).toBe(403);
    expect(home.text).toContain('only at its own address');
    expect(home.text).not.toContain(token);
    expect(home.text).not.toContain(mock.credentials.sandbox.apiSecret);
    const flipped = await flip(evil, origin);
    expect(flipped.status).toBe(403);
    expect(mock.payoutBehaviour().answer).toBe('normal');
    expect((await testEvent(evil, origin)).status).toBe(403);
    expect(mock.state.events).toHaveLength(0);
    expect((await send(port, 'GET', '/console/events/x', { Host: evil, ...HTML })).status).toBe(403);
  });

  it('localhost, 127.0.0.1 and [::1] (any port, any case, a final dot) still work', async () => {
    const { mock, port, page, flip, testEvent } = await started();
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'LOCALHOST', `localhost.:${port}`]) {
      expect((await page(host)).status, host).toBe(200);
    }
    const flipped = await flip(`localhost:${port}`, `http://localhost:${port}`);
    expect(flipped.status).toBe(200);
    expect(mock.payoutBehaviour().answer).toBe('AMBIGUOUS');
    const sent = await testEvent(`127.0.0.1:${port}`, `http://127.0.0.1:${port}`);
    expect(sent.status).toBe(303);
    expect(mock.state.events).toHaveLength(1);
  });

  it('an IP address of this machine is one of its names (an IP literal cannot be rebound); other names are not', async () => {
    const { port, page } = await started();
    expect((await page(`192.168.1.20:${port}`)).status).toBe(200);
    expect((await page(`[fe80::1]:${port}`)).status).toBe(200);
    for (const host of [`localhost.evil.example:${port}`, `127.0.0.1.nip.io:${port}`, `EVIL.example`, `a b`, `sandbox:${port}`]) {
      expect((await page(host)).status, host).toBe(403);
    }
  });

  it('an absolute-form target for another host is refused too, whatever its Host header says', async () => {
    const { port } = await started();
    const answer = await send(port, 'GET', `http://evil.example:${port}/console`, { Host: `localhost:${port}`, ...HTML });
    expect(answer.status).toBe(403);
  });

  it('names given to the server are its own (allowedHosts, internal until the listen() type has it)', async () => {
    const { port, page } = await started({ allowedHosts: ['Sandbox.Internal'] });
    expect((await page(`sandbox.internal:${port}`)).status).toBe(200);
    expect((await page(`other.internal:${port}`)).status).toBe(403);
  });

  it('the API answers whatever the Host (its calls are signed): a container reaching it by a service name', async () => {
    const { port } = await started();
    const index = await send(port, 'GET', '/', { Host: `sandbox:${port}`, Accept: 'application/json' });
    expect(index.status).toBe(200);
    const unsigned = await send(port, 'GET', '/api/v1/balance', { Host: `sandbox:${port}` });
    expect(unsigned.status).toBe(401);
  });
});
