// Webhook verification in Node: the shared core suite on node:crypto, then what only Node
// has (Buffer, IncomingMessage headers, a real HTTP server, other realms), the typed event
// union, and the entry's import graph.
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import ts from 'typescript';
import { Request as EdgeRequest, Headers as EdgeHeaders } from '@edge-runtime/primitives';
import { describe, expect, expectTypeOf, test, vi } from 'vitest';
import * as root from '../../src/index.js';
import { loadNodeCrypto } from '../../src/internal/hmac.js';
import {
  verifyWebhook,
  verifyWebhookSignature,
  WebhookVerificationError,
  type InvoicePaidEvent,
  type KnownWebhookEvent,
  type LegacyPaymentCompletedEvent,
  type LegacyPaymentFailedEvent,
  type PaymentCompletedEvent,
  type PaymentFailedEvent,
  type UnknownWebhookEvent,
  type VerifiedWebhookSignature,
  type WebhookEvent,
  type WebhookEventType,
  type WebhookHeaders,
  type WebhookPayload,
} from '../../src/webhooks.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/index.js';
import { configurationError, delivery, expectReason, fetchHeaders, NOW, current, paymentEvent, SECRET, T, webhookSuite } from './suite.js';

type NodeCryptoModule = typeof import('node:crypto');
const nodeCrypto = process.getBuiltinModule('node:crypto') as NodeCryptoModule;

// On Node the HMAC is node:crypto's one-shot hash over the precomputed key pads (twice per HMAC).
webhookSuite({ name: 'Node', hmac: 'node:crypto', spyHmac: () => vi.spyOn(nodeCrypto, 'hash'), callsPerHmac: 2 });

describe('HMAC path in Node', () => {
  test('node:crypto is found at run time, the very module process.getBuiltinModule returns', () => {
    expect(loadNodeCrypto()).toBe(nodeCrypto);
  });

  test('a verification runs on node:crypto, never on WebCrypto', async () => {
    const d = await delivery();
    const subtle = vi.spyOn(crypto.subtle, 'verify');
    const hash = vi.spyOn(nodeCrypto, 'hash');
    const timingSafeEqual = vi.spyOn(nodeCrypto, 'timingSafeEqual');
    await expect(verifyWebhook({ payload: d.body, headers: d.headers, secret: SECRET, now: NOW })).resolves.toEqual(
      current(paymentEvent()),
    );
    expect(hash).toHaveBeenCalledTimes(2);
    expect(hash).toHaveBeenCalledWith('sha256', expect.any(Uint8Array), 'buffer');
    expect(timingSafeEqual).toHaveBeenCalledTimes(1);
    expect(subtle).not.toHaveBeenCalled();
  });

  test('works on a runtime with process.getBuiltinModule but no global Buffer', async () => {
    // Deno, and Workers with some compatibility flags, expose node:crypto without a global
    // Buffer: the Node path must not reach for one.
    const d = await delivery();
    vi.stubGlobal('Buffer', undefined);
    const outcome = await verifyWebhook({ payload: d.body, headers: d.headers, secret: SECRET, now: NOW }).then(
      (event) => event,
      (error: unknown) => error,
    );
    vi.unstubAllGlobals();
    expect(outcome).toEqual(current(paymentEvent()));
  });
});

describe('Node inputs', () => {
  test('Buffer payloads: pooled, concatenated and sliced buffers give the same event', async () => {
    const d = await delivery();
    const body = d.body as string;
    const pooled = Buffer.from(body);
    const joined = Buffer.concat([Buffer.from(body.slice(0, 10)), Buffer.from(body.slice(10))]);
    const sliced = Buffer.from(`xx${body}yy`).subarray(2, 2 + Buffer.byteLength(body));
    for (const payload of [pooled, joined, sliced]) {
      await expect(verifyWebhook({ payload, headers: d.headers, secret: SECRET, now: NOW })).resolves.toEqual(current(paymentEvent()));
    }
    const changed = Buffer.from(body);
    changed[changed.length - 2]! ^= 0x20;
    await expectReason(verifyWebhook({ payload: changed, headers: d.headers, secret: SECRET, now: NOW }), 'invalid_signature');
  });

  test('a base64-encoded body (AWS Lambda isBase64Encoded) is refused with a hint to decode it; decoded, it verifies', async () => {
    const d = await delivery();
    const encoded = Buffer.from(d.body as string).toString('base64');
    const refused = await verifyWebhook({ payload: encoded, headers: d.headers, secret: SECRET, now: NOW }).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(WebhookVerificationError);
    expect(refused).toMatchObject({
      reason: 'invalid_signature',
      message: expect.stringContaining('looks base64-encoded: decode it first'),
    });
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    await expect(verifyWebhook({ payload: decoded, headers: d.headers, secret: SECRET, now: NOW })).resolves.toEqual(
      current(paymentEvent()),
    );
    // A JSON body with a wrong secret gets no such hint.
    const wrong = await verifyWebhook({ payload: d.body, headers: d.headers, secret: 'whsec_other', now: NOW }).catch(
      (error: Error) => error.message,
    );
    expect(wrong).toBe('Signature does not match: wrong secret, or a changed body.');
  });

  test('bytes from another realm (node:vm, an edge-runtime VM) are raw bytes too', async () => {
    const d = await delivery();
    const bytes = Array.from(new TextEncoder().encode(d.body as string));
    const context = vm.createContext({ bytes });
    const foreignBytes = vm.runInContext('new Uint8Array(bytes)', context) as Uint8Array;
    const foreignBuffer = vm.runInContext('new Uint8Array(bytes).buffer', context) as ArrayBuffer;
    expect(foreignBytes instanceof Uint8Array).toBe(false);
    expect(foreignBuffer instanceof ArrayBuffer).toBe(false);
    for (const payload of [foreignBytes, foreignBuffer]) {
      await expect(verifyWebhook({ payload, headers: d.headers, secret: SECRET, now: NOW })).resolves.toEqual(current(paymentEvent()));
    }
  });

  test('a Request from another implementation (edge-runtime primitives) is still a Request', async () => {
    const d = await delivery();
    const request = new EdgeRequest('https://merchant.example/webhooks', {
      method: 'POST',
      body: d.body as string,
      headers: new EdgeHeaders(d.headers),
    });
    expect(request instanceof Request).toBe(false);
    await expect(verifyWebhook(request as unknown as Request, SECRET, { now: NOW })).resolves.toEqual(current(paymentEvent()));
    await expect(request.text()).resolves.toBe(d.body);
  });

  test('IncomingHttpHeaders-shaped objects: undefined values and set-cookie arrays are ignored', async () => {
    const d = await delivery();
    const headers: IncomingHttpHeaders = { ...d.headers, 'set-cookie': ['a=1', 'b=2'], 'x-missing': undefined, host: 'merchant.example' };
    await expect(verifyWebhook({ payload: d.body, headers, secret: SECRET, now: NOW })).resolves.toEqual(current(paymentEvent()));
  });

  test('a real node:http server with the raw body (what express.raw gives)', async () => {
    const results: unknown[] = [];
    const server = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const payload = Buffer.concat(chunks);
      const headers = req.url === '/distinct' ? (req.headersDistinct as Record<string, string[]>) : req.headers;
      try {
        results.push(await verifyWebhook({ payload, headers, secret: SECRET, now: NOW, environment: 'sandbox' }));
        res.writeHead(204).end();
      } catch (error) {
        results.push(error instanceof WebhookVerificationError ? error.reason : String(error));
        res.writeHead(error instanceof WebhookVerificationError && error.reason === 'invalid_signature' ? 401 : 400).end();
      }
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const post = (path: string, body: string, headers: http.OutgoingHttpHeaders) =>
      new Promise<number>((done, fail) => {
        const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', headers }, (res) => {
          res.resume();
          res.on('end', () => done(res.statusCode!));
        });
        req.on('error', fail);
        // Two writes: the body arrives in more than one chunk.
        req.write(body.slice(0, 7));
        req.end(body.slice(7));
      });
    try {
      const event = paymentEvent({ data: { ...(paymentEvent().data as object), merchant_ref: 'café-№7 🎉' } });
      const d = await delivery({ event });
      const body = d.body as string;
      // Upper-case names on the wire: Node lower-cases them.
      const wire = {
        'X-Service-Signature': d.signature,
        'X-Service-Timestamp': String(T),
        'X-Service-Event': 'payment.completed',
        'X-Environment': 'sandbox',
        'Content-Type': 'application/json',
      };
      expect(await post('/', body, wire)).toBe(204);
      expect(results.pop()).toEqual(current(event));
      expect(await post('/', `${body} `, wire)).toBe(401);
      expect(results.pop()).toBe('invalid_signature');
      // Equal repeated timestamps: req.headers joins them ("T, T"), headersDistinct keeps copies.
      const repeated = { ...wire, 'X-Service-Timestamp': [String(T), String(T)] };
      expect(await post('/', body, repeated)).toBe(400);
      expect(results.pop()).toBe('invalid_timestamp');
      expect(await post('/distinct', body, repeated)).toBe(204);
      expect(results.pop()).toEqual(current(event));
      const differing = { ...wire, 'X-Service-Timestamp': [String(T), String(T + 1)] };
      expect(await post('/distinct', body, differing)).toBe(400);
      expect(results.pop()).toBe('invalid_timestamp');
    } finally {
      server.close();
      await once(server, 'close');
    }
  });
});

describe('entries', () => {
  test('the root entry re-exports the same verifier and error classes', async () => {
    expect(root.verifyWebhook).toBe(verifyWebhook);
    expect(root.verifyWebhookSignature).toBe(verifyWebhookSignature);
    expect(root.WebhookVerificationError).toBe(WebhookVerificationError);
    const d = await delivery();
    const error = await configurationError(verifyWebhook({ payload: d.body, headers: d.headers, secret: `${SECRET} ` }));
    expect(error).toBeInstanceOf(root.ConfigurationError);
    expect(error).toBeInstanceOf(root.PaymentsError);
  });

  test('WEBHOOK_EVENT_TYPES lists the 8 spec events', () => {
    expect([...WEBHOOK_EVENT_TYPES].sort()).toEqual(
      [
        'invoice.created',
        'invoice.paid',
        'invoice.payment_failed',
        'payment.completed',
        'payment.failed',
        'subscription.cancelled',
        'subscription.created',
        'subscription.suspended',
      ].sort(),
    );
  });

  test('src/webhooks.ts imports nothing beyond its own small modules: no ky, zod or client', () => {
    const srcDir = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');
    const seen = new Set<string>();
    const bare = new Set<string>();
    const walk = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const source = readFileSync(file, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      for (const [, spec] of source.matchAll(/(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
        if (spec === undefined) continue;
        if (spec.startsWith('.')) walk(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
        else bare.add(spec);
      }
    };
    walk(resolve(srcDir, 'webhooks.ts'));
    const files = [...seen].map((f) => f.slice(srcDir.length + 1)).sort();
    expect(bare).toEqual(new Set());
    expect(files).toEqual([
      'core/base-error.ts',
      'internal/credential.ts',
      'internal/hmac.ts',
      'webhooks.ts',
      'webhooks/errors.ts',
      'webhooks/events.ts',
      'webhooks/headers.ts',
      'webhooks/verify.ts',
    ]);
  });
});

describe('source shape', () => {
  // A function over about 60 lines is two ideas sharing a body (the repository's rule, also in ESLint); the verifier's
  // main check was 93 lines before it was split into one function per step.
  test('no function in the webhooks sources is over 60 lines', () => {
    const srcDir = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');
    const files = ['webhooks.ts', ...readdirSync(resolve(srcDir, 'webhooks')).map((f) => `webhooks/${f}`)].filter((f) => f.endsWith('.ts'));
    const long: string[] = [];
    for (const file of files) {
      const source = ts.createSourceFile(file, readFileSync(resolve(srcDir, file), 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node) => {
        if (ts.isFunctionLike(node) && 'body' in node && node.body) {
          const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
          const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
          if (last - first + 1 > 60) long.push(`${file}: ${node.name?.getText(source) ?? '(anonymous)'} is ${last - first + 1} lines`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(files).toContain('webhooks/verify.ts');
    expect(long).toEqual([]);
  });
});

describe('types', () => {
  test('event.type narrows the union, with the unknown-event branch in it', async () => {
    const d = await delivery();
    const event = await verifyWebhook({ payload: d.body, headers: d.headers, secret: SECRET, now: NOW });
    expectTypeOf(event).toEqualTypeOf<WebhookEvent>();
    expectTypeOf<Extract<WebhookEvent, UnknownWebhookEvent>>().not.toBeNever();
    expectTypeOf<WebhookEvent>().toEqualTypeOf<KnownWebhookEvent | UnknownWebhookEvent>();

    if (event.type === 'payment.completed' && event.format !== 'legacy') {
      expectTypeOf(event).toEqualTypeOf<PaymentCompletedEvent>();
      // Checked at run time: always there, always strings.
      expectTypeOf(event.id).toEqualTypeOf<string>();
      expectTypeOf(event.data.trx_id).toEqualTypeOf<string>();
      // Tolerated: may be missing or null (a decimal string arrives as its number).
      expectTypeOf(event.data.amount?.value).toEqualTypeOf<number | null | undefined>();
      expectTypeOf(event.data.settlement?.net?.currency).toEqualTypeOf<string | null | undefined>();
      expectTypeOf(event.data.environment).toEqualTypeOf<'sandbox' | 'production' | null | undefined>();
      expectTypeOf(event.api_version).toEqualTypeOf<string | null | undefined>();
      expect(event.data.amount?.value).toBe(1500);
    } else {
      expect.unreachable(`narrowed to ${String(event.type)}`);
    }
  });

  test('a switch narrows each case; the default branch is the unknown event', () => {
    const describeEvent = (event: WebhookEvent): string => {
      switch (event.type) {
        case 'payment.completed':
        case 'payment.failed':
          expectTypeOf(event).toEqualTypeOf<
            PaymentCompletedEvent | PaymentFailedEvent | LegacyPaymentCompletedEvent | LegacyPaymentFailedEvent
          >();
          return `${event.data.merchant_ref}:${event.data.amount?.value}`;
        case 'invoice.paid':
          expectTypeOf(event).toEqualTypeOf<InvoicePaidEvent>();
          // The spec shows no payload: nothing but the type is certain.
          expectTypeOf(event.data).toEqualTypeOf<Record<string, unknown> | null | undefined>();
          expectTypeOf(event.id).toEqualTypeOf<string | undefined>();
          expectTypeOf(event.type).toEqualTypeOf<'invoice.paid'>();
          return 'invoice';
        case 'subscription.created':
        case 'subscription.cancelled':
        case 'subscription.suspended':
        case 'invoice.created':
        case 'invoice.payment_failed':
          return event.type;
        default: {
          expectTypeOf(event).toEqualTypeOf<UnknownWebhookEvent>();
          expectTypeOf(event.data).toEqualTypeOf<Record<string, unknown> | null | undefined>();
          expectTypeOf(event.id).toEqualTypeOf<string | undefined>();
          // Forward compatibility: a newer type is not "impossible", so an exhaustive
          // never-check fails to compile instead of throwing on the first new event.
          // @ts-expect-error the unknown branch is still here
          const impossible: never = event;
          void impossible;
          return `unknown:${String(event.type)}`;
        }
      }
    };
    const completed = paymentEvent() as unknown as WebhookEvent;
    expect(describeEvent(completed)).toBe('order-42:1500');
    const newer = {
      id: 'evt_x',
      type: 'payout.settled',
      api_version: '2030-01-01',
      created_at: '2030-01-01T00:00:00Z',
      data: {},
    } as unknown as WebhookEvent;
    expect(describeEvent(newer)).toBe('unknown:payout.settled');
  });

  test('without narrowing, payment fields are not assumed', () => {
    const read = (event: WebhookEvent) => {
      // @ts-expect-error data.amount is unknown until type is checked
      const value: number = event.data.amount.value;
      return value;
    };
    expect(() => read({ type: 'invoice.paid', data: {} } as unknown as WebhookEvent)).toThrow(TypeError);
  });

  test('known event types, payloads and headers', () => {
    expectTypeOf<WebhookEventType>().toEqualTypeOf<KnownWebhookEvent['type']>();
    expectTypeOf<Buffer>().toExtend<WebhookPayload>();
    expectTypeOf<ArrayBuffer>().toExtend<WebhookPayload>();
    expectTypeOf<Record<string, unknown>>().not.toExtend<WebhookPayload>();
    expectTypeOf<IncomingHttpHeaders>().toExtend<WebhookHeaders>();
    expectTypeOf<Headers>().toExtend<WebhookHeaders>();
    expectTypeOf(verifyWebhookSignature).returns.resolves.toEqualTypeOf<VerifiedWebhookSignature>();
    expectTypeOf<VerifiedWebhookSignature>().toEqualTypeOf<{
      format: 'current' | 'legacy';
      timestamp: number;
      signed: { timestamp: string; body: string | Uint8Array };
      unsignedEventHeader: string;
    }>();
    // @ts-expect-error the unsigned event header is not offered as if it were signed
    void ({} as VerifiedWebhookSignature).eventType;
    // verifyWebhook(request, secret, options) and the options form both type-check.
    expectTypeOf(verifyWebhook).toBeCallableWith(new Request('https://x.example'), SECRET);
    expectTypeOf(verifyWebhook).toBeCallableWith(new Request('https://x.example'), [SECRET], { environment: 'sandbox' });
    expectTypeOf(verifyWebhook).toBeCallableWith({ payload: Buffer.from(''), headers: fetchHeaders({}), secret: SECRET });
    // @ts-expect-error a parsed body is not a payload
    void verifyWebhook({ payload: paymentEvent(), headers: {}, secret: SECRET }).catch(() => undefined);
  });
});
