// Bounded reads: a 2xx body over maxResponseBytes (counted after decompression) or JSON
// nested beyond what any answer needs ends in a typed error carrying the idempotency key,
// with memory bounded; an error body nested thousands deep still gives its APIError, never
// a bare RangeError. Real sockets on 127.0.0.1 throughout. The hostile bodies (1 GiB, a
// gzip bomb, a 422 nested 5,000 deep, …) are read by the built package in a child process,
// which reports its own peak memory growth.
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createGzip, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import {
  APITimeoutError,
  ConfigurationError,
  InvalidParamsError,
  PaymentsClient,
  ResponseValidationError,
  UnprocessableEntityError,
  type ClientOptions,
} from '../../src/index.js';
import { MAX_JSON_DEPTH, nestedDeeperThan, readBody } from '../../src/internal/read-body.js';
import { UUID, rejection } from '../support/assertions.js';
import { packageCopyReady } from '../support/cli.js';
import { fixtures } from '../support/fake-api.js';

const KIB = 1024;
const MIB = 1024 * KIB;
const GIB = 1024 * MIB;
const DEFAULT_LIMIT = 8 * MIB;
/** Peak RSS growth allowed while a hostile body is read (unbounded, the 1 GiB body took 2.2 GB, the bomb 1.3 GB). */
const RSS_BOUND = 150 * 1000 * 1000;
const HOSTILE_DEPTH = 5_000;

const createParams = { payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1001' };
const createBody = { status: 'success', data: fixtures.payment, payment_url: fixtures.payment.checkout_url, trx_id: 'TRX123456' };
const nest = (depth: number, inner = '') => '['.repeat(depth) + inner + ']'.repeat(depth);
/** The create body with an extra field nested `depth` deep (the whole body is one level more). */
const nestedCreate = (depth: number) => JSON.stringify({ ...createBody, extra: 0 }).replace('"extra":0', `"extra":${nest(depth)}`);
/** A valid create body of exactly `bytes` bytes. */
function createOfSize(bytes: number): string {
  const bare = JSON.stringify({ ...createBody, pad: '' });
  if (bytes < bare.length) throw new Error(`${bytes} B is below the ${bare.length} B of the bare body`);
  return JSON.stringify({ ...createBody, pad: 'x'.repeat(bytes - bare.length) });
}

type Handler = (req: IncomingMessage, res: ServerResponse, arg: string) => void;

const sent = { gib: 0, big: 0 };
const closed = { stall: false, big: false };
let bomb: Buffer;

/** `/<route>[/<arg>]/api/v1/…`: each test points its client's baseUrl at one route. */
const routes: Record<string, Handler> = {
  ok: (_req, res) => reply(res, 200, gzipSync(JSON.stringify(createBody)), { 'content-encoding': 'gzip' }),
  sized: (_req, res, arg) => reply(res, 200, createOfSize(Number(arg))),
  gzipped: (_req, res, arg) => reply(res, 200, gzipSync(createOfSize(Number(arg))), { 'content-encoding': 'gzip' }),
  nested: (_req, res, arg) => reply(res, 200, nestedCreate(Number(arg))),
  // 1 GiB, made as it is sent (never held in memory); it stops when the client hangs up.
  gib: (_req, res) => streamBody(res, GIB, (n) => (sent.gib = n)),
  big: (req, res, arg) => {
    req.socket.once('close', () => (closed.big = true));
    streamBody(res, Number(arg), (n) => (sent.big = n));
  },
  bomb: (_req, res) => reply(res, 200, bomb, { 'content-encoding': 'gzip' }),
  bomb422: (_req, res) => reply(res, 422, bomb, { 'content-encoding': 'gzip' }),
  deep200: (_req, res) => reply(res, 200, nestedCreate(HOSTILE_DEPTH)),
  deep422: (_req, res) =>
    reply(
      res,
      422,
      `{"error":"Validation failed","message":"The given data was invalid.","errors":{"amount":${nest(HOSTILE_DEPTH, '"is nested"')}}}`,
    ),
  // Headers and a first byte, then nothing: only the attempt timeout ends the read.
  stall: (req, res) => {
    req.socket.once('close', () => (closed.stall = true));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100000' });
    res.write('{');
  },
};

function reply(res: ServerResponse, status: number, body: string | Buffer, headers: Record<string, string> = {}): void {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(bytes.length), ...headers });
  res.end(bytes);
}

function streamBody(res: ServerResponse, total: number, progress: (bytes: number) => void): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(total) });
  const chunk = Buffer.alloc(64 * KIB, 'x');
  chunk.write('{"pad":"');
  let bytes = 0;
  const pump = () => {
    while (bytes < total && !res.destroyed) {
      const size = Math.min(chunk.length, total - bytes);
      bytes += size;
      progress(bytes);
      if (!res.write(size === chunk.length ? chunk : chunk.subarray(0, size))) return void res.once('drain', pump);
    }
    if (bytes >= total) res.end();
  };
  pump();
}

/** ~400 MiB of zeros as gzip (about 400 KB), compressed as a stream: never whole in memory. */
async function gzipBomb(inflated: number): Promise<Buffer> {
  const gzip = createGzip({ level: 9 });
  const parts: Buffer[] = [];
  gzip.on('data', (part: Buffer) => parts.push(part));
  const ended = new Promise((resolve) => gzip.on('end', resolve));
  const zeros = Buffer.alloc(MIB);
  for (let written = 0; written < inflated; written += zeros.length) {
    if (!gzip.write(zeros)) await new Promise((resolve) => gzip.once('drain', resolve));
  }
  gzip.end();
  await ended;
  return Buffer.concat(parts);
}

let server: Server;
let origin: string;
const hits: string[] = [];
const pkg = { dir: inject('packageCopy') };

beforeAll(async () => {
  bomb = await gzipBomb(400 * MIB);
  server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    req.resume();
    const [, route = '', arg = ''] = /^\/(\w+)(?:\/(\d+))?\//.exec(req.url ?? '') ?? [];
    const handler = routes[route];
    if (handler) handler(req, res, arg);
    else reply(res, 404, '{"error":"Not Found"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The built package (test/global-setup.ts builds it once for the suite) runs in the children.
  await packageCopyReady(pkg.dir);
}, 180_000);

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function client(route: string, options: ClientOptions = {}) {
  return new PaymentsClient({
    environment: 'sandbox',
    merchantKey: 'test_m',
    apiKey: 'test_k',
    apiSecret: 'test_s',
    baseUrl: `${origin}/${route}`,
    maxRetries: 0,
    ...options,
  });
}

interface ChildReport {
  resolved?: true;
  name?: string;
  constructorName?: string;
  paymentsError?: boolean;
  message?: string;
  idempotencyKey?: string;
  attempts?: number;
  status?: number;
  serverMayHaveActed?: boolean;
  label?: string;
  bodyType?: string;
  bodyLength?: number;
  ms: number;
  sampledGrowth: number;
  peakGrowth: number;
}

const CHILD = join(import.meta.dirname, '..', 'support', 'bounded-read-child.mjs');

/** One `payments.create` on `route` in a child process running the built package. */
function inChild(route: string, extra: { clientOptions?: ClientOptions; idempotencyKey?: string } = {}): Promise<ChildReport> {
  const config = { dist: join(pkg.dir, 'dist', 'index.js'), warmUrl: `${origin}/ok`, baseUrl: `${origin}/${route}`, ...extra };
  const child = spawn(process.execPath, ['--expose-gc', CHILD, JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 100_000);
  return new Promise((resolve, reject) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.trim().split('\n').pop() ?? '';
      try {
        const report = JSON.parse(line) as ChildReport;
        // Printed for the record: the figures the budget is judged on.
        console.log(`${route}: ${report.constructorName ?? 'resolved'}, peak RSS growth ${mb(report.peakGrowth)} in ${report.ms} ms`);
        resolve(report);
      } catch {
        reject(new Error(`child for ${route} ended (code ${code}, signal ${signal}) without a report:\n${stdout}\n${stderr}`));
      }
    });
  });
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

describe('hostile bodies, read by the built package in a child process', () => {
  test('a 1 GiB 2xx body: ResponseValidationError at maxResponseBytes, with the key; memory stays bounded', async () => {
    const report = await inChild('gib', { idempotencyKey: 'order-1001-attempt' });
    expect(report).toMatchObject({
      constructorName: 'ResponseValidationError',
      paymentsError: true,
      idempotencyKey: 'order-1001-attempt',
      attempts: 1,
      status: 200,
      serverMayHaveActed: true,
      bodyLength: 0,
    });
    expect(report.message).toContain(`a body larger than maxResponseBytes (${DEFAULT_LIMIT} bytes)`);
    expect(report.message).toContain('same idempotencyKey');
    expect(report.peakGrowth).toBeLessThan(RSS_BOUND);
    // The client hung up: the server got nowhere near the end of its gigabyte.
    expect(sent.gib).toBeLessThan(GIB / 4);
  }, 120_000);

  test('a ~400 KB gzip body that inflates to 400 MiB: counted after decompression, stopped at the limit', async () => {
    expect(bomb.length).toBeLessThan(500 * KIB);
    const report = await inChild('bomb');
    expect(report).toMatchObject({ constructorName: 'ResponseValidationError', paymentsError: true, attempts: 1, status: 200 });
    expect(report.idempotencyKey).toMatch(UUID);
    expect(report.message).toContain(`a body larger than maxResponseBytes (${DEFAULT_LIMIT} bytes)`);
    expect(report.peakGrowth).toBeLessThan(RSS_BOUND);
  }, 120_000);

  test('the same bomb as a 422: ky reads error bodies to 10 MiB at most, so the 422 error comes, memory bounded', async () => {
    const report = await inChild('bomb422');
    expect(report).toMatchObject({
      constructorName: 'UnprocessableEntityError',
      status: 422,
      attempts: 1,
      bodyType: 'string',
      bodyLength: 0,
    });
    expect(report.idempotencyKey).toMatch(UUID);
    expect(report.peakGrowth).toBeLessThan(RSS_BOUND);
  }, 120_000);

  test('a 10 KB 422 whose `errors` nests 5,000 deep: the 422 error with its key, never a bare RangeError', async () => {
    const report = await inChild('deep422', { idempotencyKey: 'order-1001-deep' });
    expect(report).toMatchObject({
      constructorName: 'UnprocessableEntityError',
      paymentsError: true,
      idempotencyKey: 'order-1001-deep',
      attempts: 1,
      status: 422,
      label: 'Validation failed',
    });
    expect(report.message).toMatch(/^422 Validation failed: amount: /);
    expect(report.peakGrowth).toBeLessThan(RSS_BOUND);
  }, 120_000);

  test('a 2xx body nested 5,000 deep: ResponseValidationError keeping the raw text, with the key', async () => {
    const report = await inChild('deep200', { idempotencyKey: 'order-1001-deep2' });
    expect(report).toMatchObject({
      constructorName: 'ResponseValidationError',
      idempotencyKey: 'order-1001-deep2',
      status: 200,
      serverMayHaveActed: true,
      bodyLength: nestedCreate(HOSTILE_DEPTH).length,
    });
    expect(report.message).toContain(`nested deeper than ${MAX_JSON_DEPTH} levels`);
  }, 120_000);
});

describe('maxResponseBytes', () => {
  test('default 8 MiB: a body of exactly that size is read; one byte more is a ResponseValidationError', async () => {
    const payment = await client(`sized/${DEFAULT_LIMIT}`).payments.create(createParams);
    expect(payment.trx_id).toBe('TRX123456');
    const error = await rejection(client(`sized/${DEFAULT_LIMIT + 1}`).payments.create(createParams));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.message).toContain(`larger than maxResponseBytes (${DEFAULT_LIMIT} bytes)`);
  });

  test('the client option and the per-call option; the per-call one wins', async () => {
    const small = client('sized/2000', { maxResponseBytes: 1999 });
    const error = await rejection(small.payments.create(createParams, { idempotencyKey: 'k-1' }));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.message).toContain('maxResponseBytes (1999 bytes)');
    expect(error).toMatchObject({ status: 200, body: '', serverMayHaveActed: true, idempotencyKey: 'k-1', attempts: 1 });
    expect((await small.payments.create(createParams, { maxResponseBytes: 2000 })).trx_id).toBe('TRX123456');
    const perCall = await rejection(client('sized/2000').payments.create(createParams, { maxResponseBytes: 1000 }));
    expect(perCall.message).toContain('maxResponseBytes (1000 bytes)');
  });

  test('on a read (GET): serverMayHaveActed false, and not retried (the answer would be the same)', async () => {
    hits.length = 0;
    const error = await rejection(client('sized/2000', { maxRetries: 2, maxResponseBytes: 1000 }).payments.verify('TRX1'));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.serverMayHaveActed).toBe(false);
    expect(error.message).not.toContain('idempotencyKey');
    expect(hits).toHaveLength(1);
  });

  test('counted after decompression: 64 KiB gzipped into a few hundred bytes is still 64 KiB', async () => {
    const error = await rejection(client(`gzipped/${64 * KIB}`, { maxResponseBytes: 16 * KIB }).payments.create(createParams));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.message).toContain(`maxResponseBytes (${16 * KIB} bytes)`);
    const payment = await client(`gzipped/${64 * KIB}`, { maxResponseBytes: 64 * KIB }).payments.create(createParams);
    expect(payment.trx_id).toBe('TRX123456');
  });

  test('the read stops at the limit and the connection is closed: the rest is never downloaded', async () => {
    sent.big = 0;
    closed.big = false;
    const error = await rejection(client(`big/${256 * MIB}`, { maxResponseBytes: MIB }).payments.create(createParams));
    expect(error).toBeInstanceOf(ResponseValidationError);
    await expect.poll(() => closed.big).toBe(true);
    expect(sent.big).toBeLessThan(64 * MIB);
  });

  test("ky's attempt timeout still governs the (bounded) body read, and aborts the connection", async () => {
    closed.stall = false;
    const error = await rejection(client('stall', { timeout: 200 }).payments.create(createParams, { idempotencyKey: 'k-stall' }));
    expect(error).toBeInstanceOf(APITimeoutError);
    expect(error.message).toContain('timed out while reading the response body: an attempt ran past the per-attempt timeout of 200 ms');
    expect(error).toMatchObject({ idempotencyKey: 'k-stall', attempts: 1 });
    await expect.poll(() => closed.stall).toBe(true);
  });

  test("a custom fetch whose Response body is no web stream (node-fetch's): read by the Response itself, depth still checked", async () => {
    // What node-fetch returns: a Response-like object whose body is a Node stream, not a ReadableStream.
    const nodeFetchLike = (text: string) => async () =>
      ({
        [Symbol.toStringTag]: 'Response',
        ok: true,
        status: 200,
        type: 'basic',
        headers: new Headers({ 'content-type': 'application/json' }),
        bodyUsed: false,
        body: { pipe() {} },
        text: async () => text,
      }) as unknown as Response;
    const ok = client('sized/2000', { fetch: nodeFetchLike(JSON.stringify(createBody)) });
    expect((await ok.payments.create(createParams)).trx_id).toBe('TRX123456');
    const deep = client('sized/2000', { fetch: nodeFetchLike(nestedCreate(HOSTILE_DEPTH)) });
    expect(await rejection(deep.payments.create(createParams))).toBeInstanceOf(ResponseValidationError);
  });

  test('a body in many chunks, characters split between them, a BOM and a bad byte: read as Response.text() reads it', async () => {
    const text = JSON.stringify({ description: 'Café ☕ 𝄞 naïve', more: 'ü'.repeat(100) });
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(text)]);
    bytes[bytes.length - 3] = 0xff; // a bad byte: replaced
    // One byte a chunk: every multi-byte character arrives in pieces.
    const chunked = new Response(
      new ReadableStream({
        start(controller) {
          for (const byte of bytes) controller.enqueue(new Uint8Array([byte]));
          controller.close();
        },
      }),
    );
    const context = { operation: 'test.read', serverMayHaveActed: false };
    const read = await readBody(chunked, { limit: DEFAULT_LIMIT, timeout: 5_000 }, context);
    expect(read).toBe(await new Response(bytes).text());
    expect(read.startsWith('{"description":"Café ☕ 𝄞 naïve"')).toBe(true);
    expect(read).toContain('\uFFFD');
  });
  test('a bad client value is a ConfigurationError at construction', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '8MB']) {
      expect(() => client('sized/2000', { maxResponseBytes: bad as number })).toThrow(ConfigurationError);
    }
    expect(() => client('sized/2000', { maxResponseBytes: 0 })).toThrow(/maxResponseBytes must be a whole number from 1/);
  });

  test('a bad per-call value is an InvalidParamsError, and nothing is sent', async () => {
    hits.length = 0;
    for (const bad of [0, -5, 2.5, Number.NaN, '1MB']) {
      const error = await rejection(client('sized/2000').payments.create(createParams, { maxResponseBytes: bad as number }));
      expect(error).toBeInstanceOf(InvalidParamsError);
      expect(error.errors).toEqual({ maxResponseBytes: ['must be a whole number of bytes ≥ 1'] });
    }
    expect(hits).toEqual([]);
  });
});

describe('JSON nesting depth', () => {
  test(`a 2xx body ${MAX_JSON_DEPTH} levels deep is read; one level more is a ResponseValidationError`, async () => {
    const payment = await client(`nested/${MAX_JSON_DEPTH - 1}`).payments.create(createParams);
    expect(payment.trx_id).toBe('TRX123456');
    const error = await rejection(client(`nested/${MAX_JSON_DEPTH}`).payments.create(createParams));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.body).toBe(nestedCreate(MAX_JSON_DEPTH));
    expect(error.message).toContain(`nested deeper than ${MAX_JSON_DEPTH} levels`);
  });

  test('an error body nested 5,000 deep, in process: the typed 422 with its body', async () => {
    const error = await rejection(client('deep422').payments.create(createParams));
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    // The message is flattened a few levels down, as String() would, then cut.
    expect(error.errors).toEqual({ amount: ['…'] });
    expect(error.body).toMatchObject({ error: 'Validation failed' });
    // What lies deeper than MAX_JSON_DEPTH is cut: a logger can serialise the body.
    expect(JSON.stringify(error.body)).toContain('"…"');
    expect(() => structuredClone(error.body)).not.toThrow();
  });

  test('nestedDeeperThan counts brackets outside strings only', () => {
    expect(nestedDeeperThan('[[[]]]', 3)).toBe(false);
    expect(nestedDeeperThan('[[[[]]]]', 3)).toBe(true);
    expect(nestedDeeperThan('{"a":{"b":{"c":{}}}}', 3)).toBe(true);
    expect(nestedDeeperThan('{"a":{"b":{"c":1}}}', 3)).toBe(false);
    expect(nestedDeeperThan(`{"s":"${'['.repeat(50)}"}`, 3)).toBe(false);
    expect(nestedDeeperThan(`{"s":"\\"${'['.repeat(50)}\\\\"}`, 3)).toBe(false);
    expect(nestedDeeperThan(`{"s":"\\\\"}${'['.repeat(5)}`, 3)).toBe(true);
    expect(nestedDeeperThan(`{"s":"unterminated ${'['.repeat(50)}`, 3)).toBe(false);
    expect(nestedDeeperThan(nest(HOSTILE_DEPTH), MAX_JSON_DEPTH)).toBe(true);
  });
});
