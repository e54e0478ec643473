// The transport against hostile servers on real sockets: redirects are refused (no byte
// reaches another origin), odd answers are typed, and error class names survive bundling.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import * as sdk from '../../src/index.js';
import { APIConnectionError, APIError, PaymentsClient, ResponseValidationError, type ClientOptions } from '../../src/index.js';
import { rejection } from '../support/assertions.js';
import { fixtures } from '../support/fake-api.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A loopback server whose answer each test sets; it counts what reaches it. */
async function startServer() {
  const hits: string[] = [];
  let handler: Handler = (_req, res) => res.end();
  const server: Server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => handler(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    hits,
    answer(next: Handler) {
      handler = next;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let api: Awaited<ReturnType<typeof startServer>>;
let elsewhere: Awaited<ReturnType<typeof startServer>>;
beforeAll(async () => {
  api = await startServer();
  elsewhere = await startServer();
});
afterEach(() => {
  api.hits.length = 0;
  elsewhere.hits.length = 0;
  vi.useRealTimers();
});
afterAll(async () => {
  await api.close();
  await elsewhere.close();
});

function client(options: ClientOptions = {}) {
  return new PaymentsClient({
    environment: 'sandbox',
    merchantKey: 'test_m',
    apiKey: 'test_k',
    apiSecret: 'test_s',
    baseUrl: api.origin,
    ...options,
  });
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
const createBody = { status: 'success', data: fixtures.payment, payment_url: fixtures.payment.checkout_url, trx_id: 'TRX123456' };
const createParams = { payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1001' };

describe('redirects are refused, never followed', () => {
  const calls = {
    'GET balance': (c: PaymentsClient) => c.balance.retrieve(),
    'POST payments.create': (c: PaymentsClient) => c.payments.create(createParams),
    'POST payments.push (a phone number in the body)': (c: PaymentsClient) => c.payments.push('TRX1', { customer_phone: '255712345678' }),
  };
  for (const status of [301, 302, 303, 307, 308]) {
    for (const [name, call] of Object.entries(calls)) {
      test(`${status} on ${name}: a typed error naming the Location origin; nothing reaches it; not retried`, async () => {
        api.answer((_req, res) => {
          res.writeHead(status, { location: `${elsewhere.origin}/steal` });
          res.end();
        });
        const error = await rejection(call(client()));
        expect(error).toBeInstanceOf(APIError);
        expect(error.status).toBe(status);
        expect(error.message).toContain(elsewhere.origin);
        expect(error.attempts).toBe(1);
        expect(api.hits).toHaveLength(1);
        expect(elsewhere.hits).toEqual([]);
      });
    }
  }

  test('a relative Location is refused too (same origin, still not followed)', async () => {
    api.answer((_req, res) => {
      res.writeHead(307, { location: '/api/v2/balance' });
      res.end();
    });
    const error = await rejection(client().balance.retrieve());
    expect(error.status).toBe(307);
    expect(error.message).toContain(api.origin);
    expect(api.hits).toEqual(['GET /api/v1/balance']);
  });
});

describe('odd answers from a real server', () => {
  test('a status newer than the SDK on a created payment: the payment is returned, not thrown', async () => {
    api.answer(json(200, { ...createBody, data: { ...fixtures.payment, status: 'processing', risk_score: 3 } }));
    const payment = await client().payments.create(createParams);
    expect(payment.status).toBe('processing');
    expect((payment as unknown as Record<string, unknown>).risk_score).toBe(3);
  });

  test('push answered 204 with no body resolves (the phone rang: no retry)', async () => {
    api.answer((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    expect(await client().payments.push('TRX1')).toEqual({});
    expect(api.hits).toHaveLength(1);
  });

  test('an HTML 200 to a GET → ResponseValidationError with the text; the server did not act', async () => {
    api.answer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>maintenance</html>');
    });
    const error = await rejection(client().payments.verify('TRX1'));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.body).toBe('<html>maintenance</html>');
    expect(error.serverMayHaveActed).toBe(false);
  });

  test('a create answered 200 without trx_id → ResponseValidationError that says the server may have acted, with the key', async () => {
    api.answer(json(200, { status: 'success', data: { amount: 25 } }));
    const error = await rejection(client().payments.create(createParams));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.serverMayHaveActed).toBe(true);
    expect(error.message).toMatch(/same idempotencyKey/);
    expect(error.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('a connection reset mid-body → APIConnectionError, one attempt, no SyntaxError', async () => {
    api.answer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
      res.write('{"status":"succ');
      setTimeout(() => res.destroy(), 5);
    });
    const error = await rejection(client().payments.verify('TRX1'));
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error.message).toMatch(/while reading the response body/);
    expect(error.attempts).toBe(1);
  });
});

describe('error class names survive bundling', () => {
  test('constructor.name === name for every exported error class, in an esbuild bundle', async () => {
    const result = await build({
      entryPoints: ['src/index.ts'],
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      external: ['ky', 'zod'],
      write: false,
      logLevel: 'error',
    });
    // Inside the project so that the bundle's `ky` and `zod` imports resolve.
    const dir = join('node_modules', '.cache', 'error-names-test');
    mkdirSync(dir, { recursive: true });
    const file = join(process.cwd(), dir, 'index.mjs');
    writeFileSync(file, result.outputFiles[0]!.text);
    const bundled = (await import(file)) as Record<string, unknown>;
    const names = Object.keys(sdk).filter((name) => /Error$/.test(name) && typeof (sdk as Record<string, unknown>)[name] === 'function');
    expect(names.length).toBeGreaterThanOrEqual(16);
    for (const name of names) {
      expect((bundled[name] as { name: string }).name, name).toBe(name);
    }
  });
});
