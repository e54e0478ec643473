// The sandbox as a service left running: malformed requests over a raw socket get a 4xx with
// the spec's error shape (never a 5xx, never a reset), an oversized body gets 413 without
// being buffered, and every store stays bounded.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createMockService, type MockServer, type MockService } from '../../../src/testing.js';
import { LINGER_MAX_BYTES, LINGER_TIME_MS } from '../../../src/testing/mock-service/http-server.js';

let mock: MockService;
let server: MockServer;
let port: number;

beforeAll(async () => {
  mock = createMockService({ autoRun: false });
  server = await mock.listen({ port: 0, maxBodyBytes: 64 * 1024 });
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  await server.close();
  await mock.close();
});

/** Sends raw bytes, resolves to the status line's code and the body (the server closes or answers once). */
function raw(bytes: string | Uint8Array): Promise<{ status: number; body: string; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      const text = Buffer.concat(chunks).toString('latin1');
      const head = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(text)?.[1];
      if (head >= 0 && length !== undefined && Buffer.concat(chunks).length >= head + 4 + Number(length)) socket.end();
    });
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, body: text.slice(text.indexOf('\r\n\r\n') + 4), text });
    });
    socket.on('error', reject);
    socket.setTimeout(5_000, () => socket.destroy(new Error('no answer within 5 s')));
    socket.write(bytes);
  });
}

const line = (requestLine: string, headers = 'Host: 127.0.0.1\r\n', body = '') =>
  `${requestLine}\r\n${headers}Connection: close\r\n\r\n${body}`;

const PROBES: Array<[name: string, request: string]> = [
  ['TRACE on an API route', line('TRACE /api/v1/balance HTTP/1.1')],
  ['CONNECT', line('CONNECT 127.0.0.1:443 HTTP/1.1')],
  ['a websocket upgrade', line('GET /api/v1/balance HTTP/1.1', 'Host: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n')],
  ['an unknown method token', line('BREW /api/v1/balance HTTP/1.1')],
  ['OPTIONS *', line('OPTIONS * HTTP/1.1')],
  ['a malformed absolute target', line('GET http://[bad/api/v1/balance HTTP/1.1')],
  ['an absolute target of another scheme', line('GET ftp://x/api/v1/balance HTTP/1.1')],
  ['a target that is not a path', line('GET api/v1/balance HTTP/1.1')],
  ['a bad percent-escape in the path', line('GET /api/v1/payments/%E0%A4%A HTTP/1.1')],
  ['a path with dot segments', line('GET /api/v1/../../etc/passwd HTTP/1.1')],
  ['a garbage request line', 'THIS IS NOT HTTP\r\n\r\n'],
  ['an invalid header name', line('GET /api/v1/balance HTTP/1.1', 'Host: 127.0.0.1\r\nBad Header: x\r\n')],
  ['a header value with a control character', line('GET /api/v1/balance HTTP/1.1', 'Host: 127.0.0.1\r\nX-Api-Key: a\x01b\r\n')],
  ['a huge header block', line('GET /api/v1/balance HTTP/1.1', `Host: 127.0.0.1\r\nX-Pad: ${'x'.repeat(100_000)}\r\n`)],
  ['a Host header that is not a host', line('GET /api/v1/balance HTTP/1.1', 'Host: a b c\r\n')],
  ['no credentials', line('GET /api/v1/balance HTTP/1.1')],
  [
    'a POST with a body that is not JSON',
    line('POST /api/v1/payments HTTP/1.1', 'Host: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 5\r\n', '{"a":'),
  ],
  [
    'a POST whose body is not UTF-8',
    line('POST /api/v1/payments HTTP/1.1', 'Host: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n', '\xff\xfe'),
  ],
  [
    'a chunked body with a bad chunk size',
    line('POST /api/v1/payments HTTP/1.1', 'Host: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n', 'zz\r\nabc\r\n0\r\n\r\n'),
  ],
  [
    'Content-Length and Transfer-Encoding together',
    line('POST /api/v1/payments HTTP/1.1', 'Host: 127.0.0.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n', '0\r\n\r\n'),
  ],
  ['a negative Content-Length', line('POST /api/v1/payments HTTP/1.1', 'Host: 127.0.0.1\r\nContent-Length: -1\r\n')],
  [
    'a gzip Content-Encoding the service does not read',
    line(
      'POST /api/v1/payments HTTP/1.1',
      'Host: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\n',
      '\x1f\x8b\x08\x00',
    ),
  ],
  ['PUT on a POST route', line('PUT /api/v1/payments HTTP/1.1')],
  ['HEAD on the root', line('HEAD / HTTP/1.1')],
  ['a checkout with an unknown id', line('GET /checkout/%ZZ HTTP/1.1')],
];

describe('malformed requests over a raw socket: a 4xx with the error shape, never a 5xx', () => {
  test.each(PROBES)('%s', async (_name, request) => {
    const answer = await raw(request);
    expect(answer.status, answer.text.slice(0, 300)).toBeGreaterThanOrEqual(200);
    expect(answer.status, answer.text.slice(0, 300)).toBeLessThan(500);
    if (answer.status >= 400 && answer.body.trim() !== '') {
      expect(JSON.parse(answer.body)).toMatchObject({ error: expect.any(String), message: expect.any(String) });
    }
  });

  test('no probe made the service log a 5xx', () => {
    expect(mock.state.requests.filter((r) => r.status >= 500)).toEqual([]);
  });
});

describe('bodies over the limit', () => {
  test('a declared Content-Length over the limit: 413 at once, the body never read', async () => {
    const answer = await raw(
      line(
        'POST /api/v1/payments HTTP/1.1',
        `Host: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${50 * 1024 * 1024}\r\n`,
      ),
    );
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'Payload Too Large' });
  });

  test('a 50 MB chunked body against the default 1 MiB limit: 413, and the server keeps none of it', async () => {
    const defaults = await mock.listen({ port: 0 });
    const before = process.memoryUsage().rss;
    const answer = await new Promise<number>((resolve) => {
      const socket = connect(Number(new URL(defaults.url).port), '127.0.0.1');
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString('latin1')));
      socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)));
      socket.on('error', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)));
      socket.setTimeout(10_000, () => socket.destroy(new Error('timeout')));
      socket.write(
        'POST /api/v1/payments HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
      );
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      let sent = 0;
      const pump = () => {
        while (sent < 50 && !socket.destroyed) {
          sent++;
          socket.write(`${chunk.length.toString(16)}\r\n`);
          socket.write(chunk);
          if (!socket.write('\r\n')) return void socket.once('drain', pump);
        }
        if (!socket.destroyed) socket.end('0\r\n\r\n');
      };
      pump();
    });
    await defaults.close();
    expect(answer).toBe(413);
    // The body was not buffered: far less than 50 MB more memory in this (shared) process.
    expect(process.memoryUsage().rss - before).toBeLessThan(20 * 1024 * 1024);
  });
});

describe('lingering close after a 413', () => {
  type Outcome = { bytes: number; ms: number; reason: string };
  /** A raw POST declaring `declared` bytes, sending `send` of them in 1 MB writes (with backpressure). */
  function postTooLarge(url: string, declared: number, send: number) {
    return new Promise<{ text: string; error?: string; errorAt: number; fullAt: number }>((resolve) => {
      const socket = connect(Number(new URL(url).port), '127.0.0.1');
      let text = '';
      let error: string | undefined;
      let errorAt = 0;
      let fullAt = 0;
      socket.on('data', (chunk) => {
        text += chunk.toString('latin1');
        const head = text.indexOf('\r\n\r\n');
        const length = /\r\ncontent-length: *(\d+)/i.exec(text)?.[1];
        if (!fullAt && head >= 0 && length !== undefined && text.length >= head + 4 + Number(length)) fullAt = Date.now();
      });
      socket.on('error', (e: NodeJS.ErrnoException) => {
        error ??= e.code ?? e.message;
        errorAt ||= Date.now();
      });
      socket.on('close', () => resolve({ text, error, errorAt, fullAt }));
      socket.setTimeout(10_000, () => socket.destroy(new Error('no close within 10 s')));
      socket.write(
        `POST /api/v1/payments HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n`,
      );
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      let sent = 0;
      const pump = () => {
        while (sent < send && !socket.destroyed) {
          const part = chunk.subarray(0, Math.min(chunk.length, send - sent));
          sent += part.length;
          if (!socket.write(part)) return void socket.once('drain', pump);
        }
        if (!socket.destroyed && declared === send) socket.end();
      };
      pump();
    });
  }

  test('a 50 MB POST in 1 MB writes against the 1 MiB limit reads the whole 413 before any reset', async () => {
    const outcomes: Outcome[] = [];
    const options = { port: 0, linger: { onDone: (o: Outcome) => outcomes.push(o) } };
    const sandbox = await mock.listen(options);
    const size = 50 * 1024 * 1024;
    const answer = await postTooLarge(sandbox.url, size, size);
    await sandbox.close();
    // The whole answer (status line, headers, body) was read, and any error came only after it.
    expect(answer.fullAt, answer.error).toBeGreaterThan(0);
    if (answer.error !== undefined) expect(answer.errorAt).toBeGreaterThanOrEqual(answer.fullAt);
    expect(answer.text).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer.text).toMatch(/\r\nconnection: close\r\n/i);
    expect(JSON.parse(answer.text.slice(answer.text.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: 'Payload Too Large' });
    // Drained (counted, never kept) up to the byte bound, then closed well inside the time bound.
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]!.reason).toBe('bytes');
    expect(outcomes[0]!.bytes).toBeGreaterThan(LINGER_MAX_BYTES);
    expect(outcomes[0]!.bytes).toBeLessThan(LINGER_MAX_BYTES + 1024 * 1024);
    expect(outcomes[0]!.ms).toBeLessThan(LINGER_TIME_MS);
  });

  test('a body within the drain bound is read to its end: the client sees the 413 and a clean close, no error', async () => {
    const outcomes: Outcome[] = [];
    const options = { port: 0, linger: { maxBytes: 64 * 1024 * 1024, onDone: (o: Outcome) => outcomes.push(o) } };
    const sandbox = await mock.listen(options);
    const size = 50 * 1024 * 1024;
    const answer = await postTooLarge(sandbox.url, size, size);
    await sandbox.close();
    expect(answer.error).toBeUndefined(); // no ECONNRESET / EPIPE at all
    expect(answer.text).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer.fullAt).toBeGreaterThan(0);
    expect(outcomes.map((o) => [o.reason, o.bytes])).toEqual([['end', size]]);
  });

  test('a client that stops sending mid-body: the socket is closed after the idle bound', async () => {
    const outcomes: Outcome[] = [];
    const options = { port: 0, linger: { idleMs: 200, onDone: (o: Outcome) => outcomes.push(o) } };
    const sandbox = await mock.listen(options);
    const answer = await postTooLarge(sandbox.url, 50 * 1024 * 1024, 3 * 1024 * 1024);
    await sandbox.close();
    expect(answer.text).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer.fullAt).toBeGreaterThan(0);
    expect(outcomes.map((o) => o.reason)).toEqual(['idle']);
    expect(outcomes[0]!.bytes).toBeLessThanOrEqual(3 * 1024 * 1024);
    expect(outcomes[0]!.ms).toBeLessThan(2_000);
  });
});

/** A mock without signatures or rate limit, and a create/retrieve on it. */
function open(options: Parameters<typeof createMockService>[0] = {}) {
  const service = createMockService({ autoRun: false, requireSignatures: false, rateLimitPerMinute: 1e9, ...options });
  const { merchantKey, apiKey } = service.credentials.sandbox;
  const headers = { 'X-Environment': 'sandbox', 'X-Merchant-Key': merchantKey, 'X-API-Key': apiKey, 'Content-Type': 'application/json' };
  const create = async (ref: string, key?: string) => {
    const res = await service.handle(
      new Request('https://sandbox.business-payments.test/api/v1/payments', {
        method: 'POST',
        headers: key === undefined ? headers : { ...headers, 'Idempotency-Key': key },
        body: JSON.stringify({ payment_amount: 10, currency_code: 'USD', ref_trx: ref, ipn_url: 'https://shop.example.com/ipn' }),
      }),
    );
    const text = await res.text();
    const body = JSON.parse(text) as { data?: { trx_id: string } };
    return {
      status: res.status,
      text,
      body,
      trx: body.data?.trx_id ?? '',
      replayed: res.headers.get('idempotent-replayed'),
      retryAfter: res.headers.get('retry-after'),
    };
  };
  const retrieve = (trx: string) =>
    service.handle(new Request(`https://sandbox.business-payments.test/api/v1/payments/${trx}`, { headers }));
  return { mock: service, create, retrieve };
}

describe('bounded stores', () => {
  test('the request log is a ring, and idempotency keys are capped', async () => {
    const small = createMockService({
      autoRun: false,
      requireSignatures: false,
      limits: { requestLog: 50, idempotencyKeys: 20 },
      rateLimitPerMinute: 100_000,
    });
    const { merchantKey, apiKey } = small.credentials.sandbox;
    const headers = {
      'X-Environment': 'sandbox',
      'X-Merchant-Key': merchantKey,
      'X-API-Key': apiKey,
      'Content-Type': 'application/json',
      Accept: 'application/json',
    };
    for (let i = 0; i < 400; i++) await small.handle(new Request('https://sandbox.business-payments.test/api/v1/balance', { headers }));
    expect(small.state.requests.length).toBeLessThanOrEqual(50 + 16);
    expect(small.state.requests.at(-1)).toMatchObject({ path: '/api/v1/balance', status: 200 });
    await small.close();
  });

  test('records keep the newest; a trimmed payment is a 404 and frees its ref_trx; rows share their gateway lists', async () => {
    const small = open({ limits: { records: 30 } });
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) ids.push((await small.create(`r-${i}`)).trx);
    expect(small.mock.state.payments.size).toBeLessThanOrEqual(30 + 16);
    expect((await small.retrieve(ids[0]!)).status).toBe(404);
    expect((await small.retrieve(ids[99]!)).status).toBe(200);
    // The reference index is trimmed with the payments: a forgotten payment's ref_trx is free again.
    expect((await small.create('r-0')).status).toBe(200);
    expect((await small.create('r-99')).status).toBe(409);
    const [a, b] = [...small.mock.state.payments.values()].slice(-2) as Array<{ merchant_payment_method_codes: string[] }>;
    expect(a!.merchant_payment_method_codes).toBe(b!.merchant_payment_method_codes);
    expect(Object.isFrozen(a!.merchant_payment_method_codes)).toBe(true);
    await small.mock.close();
  });

  test('idempotency keys are kept 24 h: after more keys than the records it keeps, an early key still replays its first payment', async () => {
    // Records are capped (200 here, 5,000 by default); keys are kept by age, not by that cap.
    const busy = open({ limits: { records: 200 } });
    const first = await busy.create('early', 'key-early');
    for (let i = 0; i < 250; i++) expect((await busy.create(`later-${i}`, `key-${i}`)).status).toBe(200);
    // Its payment was trimmed from the records long ago; the key still answers with it.
    expect((await busy.retrieve(first.trx)).status).toBe(404);
    const replay = await busy.create('early', 'key-early');
    expect([replay.status, replay.trx, replay.replayed]).toEqual([200, first.trx, 'true']);
    expect(replay.text).toBe(first.text);
    await busy.mock.close();
  }, 60_000);

  test('at the cap a new key is refused (503, Retry-After) while kept keys replay; keys free up 24 h on', async () => {
    let now = Date.UTC(2025, 0, 15, 12);
    const full = open({ limits: { idempotencyKeys: 20 }, now: () => now });
    const kept: Array<{ trx: string }> = [];
    for (let i = 0; i < 20; i++) {
      kept.push(await full.create(`r-${i}`, `key-${i}`));
      now += 1_000;
    }
    const refused = await full.create('r-new', 'key-new');
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ error: 'Idempotency key store full', message: expect.stringContaining('24 hours') });
    // The oldest key was answered 20 s ago: it expires in 24 h minus 20 s.
    expect(refused.retryAfter).toBe(String(24 * 3600 - 20));
    expect(full.mock.state.payments.size).toBe(20);
    expect((await full.create('r-0', 'key-0')).trx).toBe(kept[0]!.trx);
    expect((await full.create('r-new')).status).toBe(200); // no key: nothing to keep
    now += 24 * 3_600_000 - 20_000;
    expect((await full.create('r-newer', 'key-new')).status).toBe(200);
    expect((await full.create('r-newest', 'key-newest')).status).toBe(503); // one place freed, one taken
    await full.mock.close();
  });
  test('an absurd amount is a 422, never a null in the answer', async () => {
    const { merchantKey, apiKey } = mock.credentials.sandbox;
    const open = createMockService({ autoRun: false, requireSignatures: false });
    const headers = {
      'X-Environment': 'sandbox',
      'X-Merchant-Key': open.credentials.sandbox.merchantKey,
      'X-API-Key': open.credentials.sandbox.apiKey,
      'Content-Type': 'application/json',
    };
    for (const [path, body] of [
      ['/api/v1/payouts/preview', { amount: 1e308 }],
      ['/api/v1/payments', { payment_amount: 1e300, currency_code: 'USD', ref_trx: 'big', ipn_url: 'https://shop.example.com/ipn' }],
      ['/api/v1/billing/plans', { name: 'Big', amount: 1e20 }],
    ] as const) {
      const res = await open.handle(
        new Request(`https://sandbox.business-payments.test${path}`, { method: 'POST', headers, body: JSON.stringify(body) }),
      );
      expect(res.status, path).toBe(422);
      expect(await res.text()).not.toContain('null');
    }
    void merchantKey;
    void apiKey;
    await open.close();
  });
});
