// The core webhook-verification cases, as one function run twice: in Node (verify.test.ts,
// HMAC on node:crypto) and under vitest's edge-runtime environment (edge-runtime.test.ts,
// HMAC on WebCrypto). Web-standard APIs only here: no Buffer, no node: imports.
//
// Deliveries are signed by this file's own WebCrypto HMAC (sign() below), never by the SDK,
// so a bug shared by signWebhook and verifyWebhook cannot hide here; the openssl vectors
// (openssl-fixtures.test.ts) pin that HMAC to an outside implementation.
import { describe, expect, test, type MockInstance } from 'vitest';
import { paymentEvent } from '../support/events.js';
import { ConfigurationError, PaymentsError } from '../../src/core/base-error.js';
import {
  verifyWebhook,
  verifyWebhookSignature,
  WebhookVerificationError,
  type VerifyWebhookOptions,
  type WebhookVerificationReason,
} from '../../src/webhooks.js';

export const SECRET = 'whsec_test_9f8e7d6c5b4a';
/** The timestamp of the standard delivery, and "now" unless a test moves the clock. */
export const T = 1_700_000_000;
/** A `now` option: the clock at `seconds` (unix). */
const at = (seconds: number) => () => seconds * 1000;
export const NOW = at(T);

export type NodeHeaders = Record<string, string | string[] | undefined>;

export { paymentEvent };

const encoder = new TextEncoder();

/** hex(HMAC-SHA256(secret, message)), this test file's own implementation. */
export async function sign(secret: string, message: string | Uint8Array): Promise<string> {
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const data = typeof message === 'string' ? encoder.encode(message) : message;
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, data as Uint8Array<ArrayBuffer>));
  return [...mac].map((b) => b.toString(16).padStart(2, '0')).join('');
}

export function concat(...parts: (string | Uint8Array)[]): Uint8Array<ArrayBuffer> {
  const chunks = parts.map((p) => (typeof p === 'string' ? encoder.encode(p) : p));
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.length;
  }
  return out;
}

export interface DeliveryInit {
  /** The raw body; default: JSON of `event`. */
  body?: string | Uint8Array;
  event?: Record<string, unknown>;
  /** The timestamp header (and the signed prefix). Default T. */
  timestamp?: number | string;
  /** Signing secret. Default SECRET. */
  secret?: string;
  /** Header brand, as it appears in the names. Default 'Service'. */
  brand?: string;
  /** X-<Brand>-Event; default the event's type. */
  type?: string;
  /** X-Environment; null leaves it out. */
  environment?: string | null;
}

export interface Delivery {
  body: string | Uint8Array;
  /** Node-style: lower-case names, as `req.headers` has them. */
  headers: Record<string, string>;
  signature: string;
}

export async function delivery(init: DeliveryInit = {}): Promise<Delivery> {
  const event = init.event ?? paymentEvent();
  const body = init.body ?? JSON.stringify(event);
  const timestamp = String(init.timestamp ?? T);
  const signature = await sign(init.secret ?? SECRET, typeof body === 'string' ? `${timestamp}.${body}` : concat(`${timestamp}.`, body));
  const brand = (init.brand ?? 'Service').toLowerCase();
  const headers: Record<string, string> = {
    [`x-${brand}-signature`]: signature,
    [`x-${brand}-timestamp`]: timestamp,
    [`x-${brand}-event`]: init.type ?? String(event.type),
    'content-type': 'application/json',
  };
  if (init.environment !== null) headers['x-environment'] = init.environment ?? 'sandbox';
  return { body, headers, signature };
}

export function fetchHeaders(headers: NodeHeaders): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) out.append(name, v);
  }
  return out;
}

export function without(headers: Record<string, string>, ...names: string[]): Record<string, string> {
  const out = { ...headers };
  for (const name of names) delete out[name];
  return out;
}

/** The WebhookVerificationError `promise` rejects with (fails the test when it resolves or throws anything else). */
async function refusal(promise: Promise<unknown>): Promise<WebhookVerificationError> {
  const outcome = await promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected a WebhookVerificationError, but it resolved to ${JSON.stringify(outcome.value)}`);
  const { error } = outcome;
  if (!(error instanceof WebhookVerificationError)) {
    throw new Error(`expected a WebhookVerificationError, got ${String(error)}`, { cause: error });
  }
  expect(error).toBeInstanceOf(PaymentsError);
  expect(error.name).toBe('WebhookVerificationError');
  return error;
}

export async function expectReason(
  promise: Promise<unknown>,
  reason: WebhookVerificationReason,
  message?: RegExp,
): Promise<WebhookVerificationError> {
  const error = await refusal(promise);
  expect(error.reason).toBe(reason);
  if (message) expect(error.message).toMatch(message);
  return error;
}

export async function configurationError(promise: Promise<unknown>, message?: RegExp): Promise<ConfigurationError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigurationError);
  expect(error).toBeInstanceOf(PaymentsError);
  expect(error).not.toBeInstanceOf(WebhookVerificationError);
  if (message) expect((error as Error).message).toMatch(message);
  return error as ConfigurationError;
}

/**
 * What verifyWebhookSignature resolves to for a delivery: the signed parts (timestamp digits
 * and body, exactly as signed) apart from the unsigned event header.
 */
export function signatureResult(body: string | Uint8Array, unsignedEventHeader = 'payment.completed', timestamp: number | string = T) {
  return { format: 'current', timestamp: Number(timestamp), signed: { timestamp: String(timestamp), body }, unsignedEventHeader };
}

/** What verifyWebhook resolves to for a delivery of the current form: the event as sent, with `format: 'current'`. */
export const current = <E extends object>(event: E) => ({ ...event, format: 'current' as const });

/** verifyWebhook with the standard delivery's defaults (clock at T, SECRET). */
function verify(options: Partial<VerifyWebhookOptions> & Pick<VerifyWebhookOptions, 'payload' | 'headers'>) {
  return verifyWebhook({ secret: SECRET, now: NOW, ...options });
}
function verifySignature(options: Partial<VerifyWebhookOptions> & Pick<VerifyWebhookOptions, 'payload' | 'headers'>) {
  return verifyWebhookSignature({ secret: SECRET, now: NOW, ...options });
}

function flipByte(bytes: Uint8Array, index: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(bytes);
  out[index]! ^= 0x01;
  return out;
}

export interface SuiteRuntime {
  /** Label for the describe block. */
  name: string;
  /** Which HMAC implementation this runtime must use. */
  hmac: 'node:crypto' | 'webcrypto';
  /** A spy on the primitive each HMAC computation calls on that path. */
  spyHmac: () => MockInstance;
  /** Calls of that primitive per HMAC (node:crypto's one-shot hash runs twice per HMAC). */
  callsPerHmac: number;
}

/** The core cases; `runtime` says which HMAC path they must run on. */
export function webhookSuite(runtime: SuiteRuntime): void {
  describe(`webhook verification core (${runtime.name}, HMAC on ${runtime.hmac})`, () => {
    describe('a valid delivery', () => {
      test('verifyWebhook returns the parsed event; verifyWebhookSignature the signed parts and the unsigned event header', async () => {
        const d = await delivery();
        await expect(verify({ payload: d.body, headers: d.headers })).resolves.toEqual(current(paymentEvent()));
        await expect(verifySignature({ payload: d.body, headers: d.headers })).resolves.toEqual(signatureResult(d.body));
      });

      test('payload as string, Uint8Array, ArrayBuffer and a Uint8Array view into a larger buffer: same event', async () => {
        const d = await delivery();
        const bytes = encoder.encode(d.body as string);
        const padded = concat('GARBAGE-BEFORE', bytes, 'GARBAGE-AFTER');
        const view = padded.subarray(14, 14 + bytes.length);
        expect(new TextDecoder().decode(view)).toBe(d.body);
        const payloads = [d.body, bytes, bytes.buffer.slice(0), view];
        for (const payload of payloads) {
          await expect(verify({ payload, headers: d.headers })).resolves.toEqual(current(paymentEvent()));
        }
      });

      test('a Uint8Array on a SharedArrayBuffer (which WebCrypto will not sign directly)', async () => {
        const d = await delivery();
        const bytes = encoder.encode(d.body as string);
        const shared = new Uint8Array(new SharedArrayBuffer(bytes.length));
        shared.set(bytes);
        await expect(verify({ payload: shared, headers: d.headers })).resolves.toEqual(current(paymentEvent()));
      });

      test('headers as Fetch Headers, lower-case object, mixed-case object, and arrays of equal copies', async () => {
        const d = await delivery();
        const mixed = {
          'X-SERVICE-SIGNATURE': d.headers['x-service-signature'],
          'x-Service-Timestamp': d.headers['x-service-timestamp'],
          'X-Service-Event': d.headers['x-service-event'],
          'X-Environment': 'sandbox',
        };
        const arrays = Object.fromEntries(Object.entries(d.headers).map(([k, v]) => [k, [v, v]]));
        for (const headers of [fetchHeaders(d.headers), d.headers, mixed, arrays]) {
          await expect(verify({ payload: d.body, headers, environment: 'sandbox' })).resolves.toEqual(current(paymentEvent()));
        }
      });

      test('an unknown event type passes through untouched', async () => {
        const event = {
          id: 'evt_new',
          type: 'payout.settled',
          api_version: '2030-01-01',
          created_at: '2030-01-01T00:00:00Z',
          data: { payout_id: 'po_1', extra: [1, 2] },
          more: true,
        };
        const d = await delivery({ event });
        await expect(verify({ payload: d.body, headers: d.headers })).resolves.toEqual(current(event));
      });

      test('a non-ASCII body is signed over its UTF-8 bytes, as string or bytes', async () => {
        const event = paymentEvent({ id: 'evt_ünïcödé', data: { ...(paymentEvent().data as object), merchant_ref: 'café 東京 🎉' } });
        const d = await delivery({ event });
        await expect(verify({ payload: d.body, headers: d.headers })).resolves.toEqual(current(event));
        await expect(verify({ payload: encoder.encode(d.body as string), headers: d.headers })).resolves.toEqual(current(event));
      });

      test('an upper-case hex signature and a sha256= prefix are tolerated', async () => {
        const d = await delivery();
        for (const signature of [d.signature.toUpperCase(), `sha256=${d.signature}`]) {
          const headers = { ...d.headers, 'x-service-signature': signature };
          await expect(verify({ payload: d.body, headers })).resolves.toEqual(current(paymentEvent()));
        }
      });

      test('without `now`, the real clock is used', async () => {
        const fresh = await delivery({ timestamp: Math.floor(Date.now() / 1000) });
        await expect(verifyWebhook({ payload: fresh.body, headers: fresh.headers, secret: SECRET })).resolves.toEqual(
          current(paymentEvent()),
        );
        const stale = await delivery({ timestamp: Math.floor(Date.now() / 1000) - 3600 });
        await expectReason(verifyWebhook({ payload: stale.body, headers: stale.headers, secret: SECRET }), 'timestamp_too_old');
      });
    });

    describe('missing_header', () => {
      test.each([
        ['signature', 'x-service-signature', /Signature/],
        ['timestamp', 'x-service-timestamp', /Timestamp/],
        ['event', 'x-service-event', /Event/],
      ])('without the %s header', async (_label, name, message) => {
        const d = await delivery();
        const headers = without(d.headers, name);
        await expectReason(verify({ payload: d.body, headers }), 'missing_header', message);
        await expectReason(verify({ payload: d.body, headers: fetchHeaders(headers) }), 'missing_header', message);
        await expectReason(verifySignature({ payload: d.body, headers }), 'missing_header', message);
      });

      test('with no headers at all', async () => {
        const d = await delivery();
        await expectReason(verify({ payload: d.body, headers: {} }), 'missing_header');
        await expectReason(verify({ payload: d.body, headers: new Headers() }), 'missing_header');
        await expectReason(verify({ payload: d.body, headers: { 'content-type': 'application/json' } }), 'missing_header');
        for (const headers of [undefined, null, 'x-service-signature: abc', 42]) {
          await expectReason(verify({ payload: d.body, headers: headers as never }), 'missing_header');
        }
      });

      test('an empty array of copies counts as missing', async () => {
        const d = await delivery();
        await expectReason(verify({ payload: d.body, headers: { ...d.headers, 'x-service-timestamp': [] } }), 'missing_header');
      });

      test('two different brands without `brand` are ambiguous; `brand` pins one', async () => {
        const service = await delivery();
        const acme = await delivery({ brand: 'Acme', secret: 'whsec_acme_other' });
        const both = { ...service.headers, ...acme.headers };
        await expectReason(
          verify({ payload: service.body, headers: both }),
          'missing_header',
          /x-service-signature.*x-acme-signature|x-acme-signature.*x-service-signature/,
        );
        await expectReason(verify({ payload: service.body, headers: fetchHeaders(both) }), 'missing_header', /brand/);
        await expect(verify({ payload: service.body, headers: both, brand: 'Service' })).resolves.toEqual(current(paymentEvent()));
        await expect(verify({ payload: service.body, headers: fetchHeaders(both), brand: 'service' })).resolves.toEqual(
          current(paymentEvent()),
        );
        // Pinned to Acme: its signature was made with another secret.
        await expectReason(verify({ payload: service.body, headers: both, brand: 'ACME' }), 'invalid_signature');
        await expect(verify({ payload: service.body, headers: both, brand: 'Acme', secret: 'whsec_acme_other' })).resolves.toEqual(
          current(paymentEvent()),
        );
      });

      test('ambiguity does not depend on which brand an earlier delivery used', async () => {
        // Both signatures valid: only the ambiguity can refuse this delivery.
        const service = await delivery();
        const acme = await delivery({ brand: 'Acme' });
        await expect(verify({ payload: acme.body, headers: acme.headers })).resolves.toEqual(current(paymentEvent()));
        await expectReason(verify({ payload: service.body, headers: { ...service.headers, ...acme.headers } }), 'missing_header', /brand/);
        await expect(verify({ payload: service.body, headers: service.headers })).resolves.toEqual(current(paymentEvent()));
        await expectReason(
          verify({ payload: service.body, headers: fetchHeaders({ ...acme.headers, ...service.headers }) }),
          'missing_header',
          /brand/,
        );
      });

      test('`brand` naming headers that are absent', async () => {
        const d = await delivery();
        await expectReason(verify({ payload: d.body, headers: d.headers, brand: 'Acme' }), 'missing_header');
      });

      test('a custom brand is found by suffix', async () => {
        const d = await delivery({ brand: 'Pay-Hub' });
        expect(d.headers['x-pay-hub-signature']).toBeDefined();
        await expect(verify({ payload: d.body, headers: d.headers })).resolves.toEqual(current(paymentEvent()));
        await expect(verify({ payload: d.body, headers: fetchHeaders(d.headers), brand: 'Pay-Hub' })).resolves.toEqual(
          current(paymentEvent()),
        );
      });
    });

    describe('invalid_signature', () => {
      test('wrong secret', async () => {
        const d = await delivery({ secret: 'whsec_someone_else' });
        await expectReason(verify({ payload: d.body, headers: d.headers }), 'invalid_signature', /does not match/);
        await expectReason(verifySignature({ payload: d.body, headers: d.headers }), 'invalid_signature');
      });

      test('one flipped byte anywhere in the body, in every payload form', async () => {
        const d = await delivery();
        const bytes = encoder.encode(d.body as string);
        for (const index of [0, 1, Math.floor(bytes.length / 2), bytes.length - 1]) {
          const changed = flipByte(bytes, index);
          for (const payload of [new TextDecoder().decode(changed), changed, changed.buffer]) {
            await expectReason(verifySignature({ payload, headers: d.headers }), 'invalid_signature');
          }
        }
      });

      test('a body with a byte added or removed at the end', async () => {
        const d = await delivery();
        await expectReason(verify({ payload: `${d.body as string} `, headers: d.headers }), 'invalid_signature');
        await expectReason(verify({ payload: (d.body as string).slice(0, -1), headers: d.headers }), 'invalid_signature');
      });

      test('the signature of another timestamp (a replay restamped)', async () => {
        const d = await delivery({ timestamp: T - 10 });
        const headers = { ...d.headers, 'x-service-timestamp': String(T) };
        await expectReason(verify({ payload: d.body, headers }), 'invalid_signature');
        // Same number, different digits: the signed string differs.
        await expectReason(
          verify({ payload: d.body, headers: { ...d.headers, 'x-service-timestamp': `0${T - 10}` } }),
          'invalid_signature',
        );
      });

      test.each([
        ['empty', ''],
        ['truncated', 'TRUNC'],
        ['one character short', 'SHORT'],
        ['one character long', 'LONG'],
        ['non-hex of the right length', 'g'.repeat(64)],
        ['with spaces', 'SPACED'],
        ['a different prefix', 'PREFIX'],
        ['base64 of the digest', 'BASE64'],
      ])('a malformed signature: %s', async (_label, kind) => {
        const d = await delivery();
        const signature =
          {
            TRUNC: d.signature.slice(0, 32),
            SHORT: d.signature.slice(0, 63),
            LONG: `${d.signature}0`,
            SPACED: ` ${d.signature} `,
            PREFIX: `sha1=${d.signature}`,
            BASE64: btoa(String.fromCharCode(...d.signature.match(/../g)!.map((h) => parseInt(h, 16)))),
          }[kind] ?? kind;
        await expectReason(verify({ payload: d.body, headers: { ...d.headers, 'x-service-signature': signature } }), 'invalid_signature');
      });

      test('a signature array: any copy may match (rotation on the sender side); none matching is refused', async () => {
        const d = await delivery();
        const other = await delivery({ secret: 'whsec_other' });
        await expect(
          verify({ payload: d.body, headers: { ...d.headers, 'x-service-signature': [other.signature, d.signature] } }),
        ).resolves.toEqual(current(paymentEvent()));
        await expectReason(
          verify({ payload: d.body, headers: { ...d.headers, 'x-service-signature': [other.signature, 'junk'] } }),
          'invalid_signature',
        );
      });
    });

    describe('timestamp window', () => {
      test.each([
        [-300, null],
        [-301, 'timestamp_too_old'],
        [300, null],
        [301, 'timestamp_in_future'],
        [0, null],
        [-86_400 * 365, 'timestamp_too_old'],
        [86_400 * 365, 'timestamp_in_future'],
      ] as const)('delivery stamped %i s from now (default tolerance 300)', async (offset, reason) => {
        const d = await delivery({ timestamp: T + offset });
        const call = verify({ payload: d.body, headers: d.headers });
        if (reason === null) await expect(call).resolves.toEqual(current(paymentEvent()));
        else await expectReason(call, reason, /tolerance 300 s/);
      });

      test.each([
        [10, -10, null],
        [10, -11, 'timestamp_too_old'],
        [10, 10, null],
        [10, 11, 'timestamp_in_future'],
        [1, 0, null],
        [1, -1, null],
        [1, -2, 'timestamp_too_old'],
        [1, 2, 'timestamp_in_future'],
        [0.5, 0, null],
        [0.5, -1, 'timestamp_too_old'],
        [3600, -3600, null],
        [3600, -3601, 'timestamp_too_old'],
        [3600, 3600, null],
        [3600, 3601, 'timestamp_in_future'],
      ] as const)('toleranceSeconds %i, stamped %i s from now', async (toleranceSeconds, offset, reason) => {
        const d = await delivery({ timestamp: T + offset });
        const call = verify({ payload: d.body, headers: d.headers, toleranceSeconds });
        if (reason === null) await expect(call).resolves.toEqual(current(paymentEvent()));
        else await expectReason(call, reason);
      });

      test('toleranceSeconds: undefined means the default', async () => {
        const d = await delivery({ timestamp: T - 300 });
        await expect(verify({ payload: d.body, headers: d.headers, toleranceSeconds: undefined })).resolves.toEqual(
          current(paymentEvent()),
        );
        const old = await delivery({ timestamp: T - 301 });
        await expectReason(verify({ payload: old.body, headers: old.headers, toleranceSeconds: undefined }), 'timestamp_too_old');
      });

      test('the clock counts whole seconds: 300.999 s is still inside, 301 s is not', async () => {
        const d = await delivery({ timestamp: T });
        await expect(verify({ payload: d.body, headers: d.headers, now: () => (T + 300) * 1000 + 999 })).resolves.toEqual(
          current(paymentEvent()),
        );
        await expectReason(verify({ payload: d.body, headers: d.headers, now: () => (T + 301) * 1000 }), 'timestamp_too_old');
      });

      test('leading zeros: the number decides the window, the digits are what was signed', async () => {
        const d = await delivery({ timestamp: `000${T}` });
        await expect(verifySignature({ payload: d.body, headers: d.headers })).resolves.toEqual(
          signatureResult(d.body, 'payment.completed', `000${T}`),
        );
      });
    });

    describe('a timestamp in milliseconds', () => {
      test.each([
        ['13 digits (now, in ms)', T * 1000],
        ['13 digits (an older delivery, in ms)', (T - 86_400) * 1000],
        ['12 digits (ms in 1973)', 100_000_000_000],
      ])('%s: timestamp_in_future, saying it looks like milliseconds', async (_label, timestamp) => {
        const d = await delivery({ timestamp });
        await expectReason(
          verify({ payload: d.body, headers: d.headers }),
          'timestamp_in_future',
          /^Timestamp \d+ s ahead \(tolerance 300 s\)\. Looks like milliseconds: the header must be unix seconds\.$/,
        );
        await expectReason(verifySignature({ payload: d.body, headers: d.headers }), 'timestamp_in_future', /milliseconds/);
      });

      test('seconds out of the window get no such hint', async () => {
        for (const timestamp of [T + 301, T + 86_400 * 365 * 100, 99_999_999_999]) {
          const d = await delivery({ timestamp });
          const error = await expectReason(verify({ payload: d.body, headers: d.headers }), 'timestamp_in_future');
          expect(error.message).not.toMatch(/milli/);
        }
      });
    });

    describe('invalid_timestamp', () => {
      test.each([
        '',
        '12a',
        '1.5',
        '-1',
        ' 123',
        '123 ',
        '1e9',
        '+1700000000',
        '0x6553f100',
        '１７００',
        'NaN',
        'Infinity',
        '1_700_000_000',
        '9'.repeat(16),
        `${T}.0`,
      ])('timestamp header %j (validly signed over it)', async (timestamp) => {
        const d = await delivery({ timestamp });
        await expectReason(verify({ payload: d.body, headers: d.headers }), 'invalid_timestamp', /digits/);
      });

      test('differing copies of the timestamp are refused, in a Node object and in Fetch Headers', async () => {
        const d = await delivery();
        const copies = [String(T), String(T + 1)];
        await expectReason(verify({ payload: d.body, headers: { ...d.headers, 'x-service-timestamp': copies } }), 'invalid_timestamp');
        const fetch = fetchHeaders(d.headers);
        fetch.append('x-service-timestamp', String(T + 1));
        await expectReason(verify({ payload: d.body, headers: fetch }), 'invalid_timestamp');
      });
    });

    describe('invalid_payload', () => {
      test.each([
        ['a parsed object', paymentEvent()],
        ['null', null],
        ['undefined', undefined],
        ['a number', 42],
        ['a boolean', true],
        ['an array of numbers', [123, 34]],
        ['a DataView', new DataView(new ArrayBuffer(4))],
        ['a Uint16Array', new Uint16Array(4)],
        ['a Blob', new Blob(['{}'])],
      ])('refuses %s as payload and explains the raw-body pitfall', async (_label, payload) => {
        const d = await delivery();
        const error = await expectReason(verify({ payload: payload as never, headers: d.headers }), 'invalid_payload');
        expect(error.message).toContain('express.raw');
        expect(error.message).toContain('request.text()');
        expect(error.message).not.toMatch(/\ba undefined\b|\ba object\b/);
        await expectReason(verifySignature({ payload: payload as never, headers: d.headers }), 'invalid_payload', /raw/);
      });

      test('the message for a parsed object says so', async () => {
        const d = await delivery();
        await expectReason(verify({ payload: paymentEvent() as never, headers: d.headers }), 'invalid_payload', /parsed object/);
      });

      test('a non-JSON body with a valid signature: verifyWebhook refuses it, verifyWebhookSignature does not parse', async () => {
        for (const body of ['ping', '', '{"id":', '{"id":"evt_1"} trailing']) {
          const d = await delivery({ body, type: 'payment.completed' });
          await expectReason(verify({ payload: d.body, headers: d.headers }), 'invalid_payload', /^Body is not a JSON object\.$/);
          await expect(verifySignature({ payload: d.body, headers: d.headers })).resolves.toEqual(signatureResult(d.body));
        }
      });

      test.each([
        ['a JSON array', '[{"id":"evt_1","type":"payment.completed"}]'],
        ['JSON null', 'null'],
        ['a JSON string', '"payment.completed"'],
        ['a JSON number', '42'],
      ])('a validly signed body that is %s, whatever the event type', async (_label, body) => {
        for (const type of ['payment.completed', 'invoice.paid', 'payout.settled']) {
          const d = await delivery({ body, type });
          await expectReason(verify({ payload: d.body, headers: d.headers }), 'invalid_payload', /not a JSON object/);
        }
      });

      // What a merchant acts on in a payment event: the id (de-duplication), the type and
      // data.trx_id (the payment to confirm with payments.verify).
      test.each(['id', 'type', 'data'])('a payment event without %s', async (field) => {
        for (const type of ['payment.completed', 'payment.failed']) {
          const event = paymentEvent({ type });
          delete event[field];
          const d = await delivery({ event, type });
          await expectReason(
            verify({ payload: d.body, headers: d.headers }),
            'invalid_payload',
            new RegExp(`^Body is not a ${type} event: ${field === 'data' ? 'data.trx_id' : field} must be a string\\.$`),
          );
        }
      });

      test.each([
        ['id', 42],
        ['id', null],
        ['type', null],
        ['data', null],
        ['data', []],
        ['data', 'completed'],
        ['data', {}],
        ['data', { ...(paymentEvent().data as object), trx_id: 123456 }],
        ['data', { ...(paymentEvent().data as object), trx_id: null }],
      ])('a payment event whose %s is %j', async (field, value) => {
        const d = await delivery({ event: paymentEvent({ [field]: value }), type: 'payment.completed' });
        await expectReason(verify({ payload: d.body, headers: d.headers }), 'invalid_payload', new RegExp(`: ${field}`));
      });

      test('a payment event takes its type from the signed body only: a typeless body relabelled by the event header is refused', async () => {
        // The event header is not signed: were a typeless body's type taken from it, anyone on
        // the way could relabel a signed invoice.paid carrying a trx_id as payment.completed.
        const { type: _type, ...typeless } = paymentEvent();
        for (const type of ['payment.completed', 'payment.failed']) {
          const d = await delivery({ event: typeless, type });
          await expectReason(verify({ payload: d.body, headers: d.headers }), 'invalid_payload', /: type must be a string/);
        }
        // The same body as an event whose payload the spec does not show: accepted, typed by the header.
        const d = await delivery({ event: typeless, type: 'invoice.paid' });
        await expect(verify({ payload: d.body, headers: d.headers })).resolves.toEqual(current({ ...typeless, type: 'invoice.paid' }));
      });

      test('options that are not an object', async () => {
        for (const input of [undefined, null, 'payload', 42]) {
          await expectReason(verifyWebhook(input as never), 'invalid_payload');
          await expectReason(verifyWebhookSignature(input as never), 'invalid_payload');
        }
      });
    });

    describe('environment_mismatch', () => {
      test('environment set: the header must equal it', async () => {
        const production = await delivery({ environment: 'production' });
        await expect(verify({ payload: production.body, headers: production.headers, environment: 'production' })).resolves.toEqual(
          current(paymentEvent()),
        );
        await expectReason(
          verify({ payload: production.body, headers: production.headers, environment: 'sandbox' }),
          'environment_mismatch',
          /"production".*"sandbox"/,
        );
        for (const environment of ['SANDBOX', 'sandbox ', '', 'sandbox, production']) {
          const d = await delivery({ environment });
          await expectReason(verify({ payload: d.body, headers: d.headers, environment: 'sandbox' }), 'environment_mismatch');
        }
      });

      test('environment set and the header missing', async () => {
        const d = await delivery({ environment: null });
        await expectReason(verify({ payload: d.body, headers: d.headers, environment: 'sandbox' }), 'environment_mismatch', /null/);
        await expectReason(
          verify({ payload: d.body, headers: fetchHeaders(d.headers), environment: 'production' }),
          'environment_mismatch',
        );
      });

      test('environment not set: the header is not checked', async () => {
        for (const environment of [null, 'production', 'anything']) {
          const d = await delivery({ environment });
          await expect(verify({ payload: d.body, headers: d.headers })).resolves.toEqual(current(paymentEvent()));
        }
      });

      test('differing copies of X-Environment do not match', async () => {
        const d = await delivery();
        await expectReason(
          verify({ payload: d.body, headers: { ...d.headers, 'x-environment': ['sandbox', 'production'] }, environment: 'sandbox' }),
          'environment_mismatch',
        );
      });
    });

    describe('what verifyWebhookSignature vouches for', () => {
      test('signed holds exactly the parts the HMAC covered; the event header is named unsigned', async () => {
        const d = await delivery();
        const result = await verifySignature({ payload: d.body, headers: d.headers });
        expect(Object.keys(result).sort()).toEqual(['format', 'signed', 'timestamp', 'unsignedEventHeader']);
        expect(Object.keys(result.signed).sort()).toEqual(['body', 'timestamp']);
        expect(result).not.toHaveProperty('eventType');
        // Re-signing `<signed.timestamp>.<signed.body>` gives the delivery's signature.
        expect(await sign(SECRET, `${result.signed.timestamp}.${result.signed.body as string}`)).toBe(d.signature);
      });

      test('a changed event header does not break the signature, and is reported as unsigned', async () => {
        // Signed as payment.completed; someone on the way relabels the event header.
        const d = await delivery();
        const headers = { ...d.headers, 'x-service-event': 'payment.failed' };
        const result = await verifySignature({ payload: d.body, headers });
        expect(result.unsignedEventHeader).toBe('payment.failed');
        expect(JSON.parse(result.signed.body as string).type).toBe('payment.completed');
        await expectReason(verify({ payload: d.body, headers }), 'event_mismatch');
      });

      test('signed.body is the payload as given: a string, the same bytes, or a view over an ArrayBuffer', async () => {
        const d = await delivery();
        const bytes = encoder.encode(d.body as string);
        expect((await verifySignature({ payload: d.body, headers: d.headers })).signed.body).toBe(d.body);
        expect((await verifySignature({ payload: bytes, headers: d.headers })).signed.body).toBe(bytes);
        const fromBuffer = (await verifySignature({ payload: bytes.buffer, headers: d.headers })).signed.body as Uint8Array;
        expect(fromBuffer.buffer).toBe(bytes.buffer);
        expect(fromBuffer).toEqual(bytes);
      });
    });

    describe('payloads: exact where the spec speaks, tolerant where it is silent', () => {
      // The spec shows no payload for subscription.* and invoice.* (nor for types this SDK
      // does not know): a signed JSON object is the event, with every field as sent. These
      // were refused as invalid_payload, so the handler answered 400 and the service
      // retried 5 times, then dropped the event.
      test.each([
        [
          'invoice.paid without api_version',
          'invoice.paid',
          { id: 'evt_1', type: 'invoice.paid', created_at: '2026-01-01T00:00:00Z', data: { invoice: 'inv_1' } },
        ],
        [
          'invoice.paid with a numeric created_at',
          'invoice.paid',
          { id: 'evt_1', type: 'invoice.paid', api_version: '2026-01-01', created_at: T, data: {} },
        ],
        [
          'invoice.paid with data: null',
          'invoice.paid',
          { id: 'evt_1', type: 'invoice.paid', api_version: '2026-01-01', created_at: 'x', data: null },
        ],
        ['subscription.created with a numeric id and no data', 'subscription.created', { id: 42, type: 'subscription.created' }],
        ['invoice.payment_failed with data an array', 'invoice.payment_failed', { type: 'invoice.payment_failed', data: [1, 'two'] }],
        ['a newer type with nothing but its type', 'payout.settled', { type: 'payout.settled' }],
        [
          'a newer payment.* type without trx_id',
          'payment.refunded',
          { id: 'evt_1', type: 'payment.refunded', data: { refund_id: 'rf_1' } },
        ],
      ])('%s: accepted, as sent', async (_label, type, event) => {
        const d = await delivery({ event, type });
        await expect(verify({ payload: d.body, headers: d.headers })).resolves.toStrictEqual(current(event));
      });

      test("a body without a type takes the event header's, so event.type is always there", async () => {
        for (const [body, type] of [
          ['{}', 'invoice.created'],
          ['{"id":"evt_1","data":{"invoice":"inv_1"}}', 'subscription.cancelled'],
          ['{"type":null,"data":{}}', 'invoice.paid'],
          ['{"note":"a type unknown to this SDK"}', 'payout.settled'],
        ] as const) {
          const d = await delivery({ body, type });
          const event = await verify({ payload: d.body, headers: d.headers });
          expect(event).toStrictEqual(current({ ...(JSON.parse(body) as object), type }));
          expect(event.type).toBe(type);
        }
      });

      test("a type in the body that is not the event header's is still event_mismatch, a non-string one too", async () => {
        for (const [event, type] of [
          [{ type: 'invoice.created' }, 'invoice.paid'],
          [{ type: 5 }, 'invoice.paid'],
          [{ type: ['invoice.paid'] }, 'invoice.paid'],
          [{ type: 'invoice.paid' }, 'payment.completed'],
        ] as const) {
          const d = await delivery({ event, type });
          await expectReason(
            verify({ payload: d.body, headers: d.headers }),
            'event_mismatch',
            /^Event header ".*" but payload type .*\.$/,
          );
        }
      });

      test('payment events: decimal strings where the spec says number are read as those numbers', async () => {
        const money = (value: unknown) => ({ value, currency: 'TZS' });
        const data = {
          ...(paymentEvent().data as object),
          amount: money('25.00'),
          settlement: { gross: money('1500'), fees: money('-0.5'), net: money('1499.50') },
        };
        const d = await delivery({ event: paymentEvent({ type: 'payment.failed', data }) });
        const event = await verify({ payload: d.body, headers: d.headers });
        expect(event.data).toStrictEqual({
          ...data,
          amount: money(25),
          settlement: { gross: money(1500), fees: money(-0.5), net: money(1499.5) },
        });
      });

      test('payment events: what nobody acts on is kept as sent (missing, null, or not a decimal)', async () => {
        const { api_version: _v, created_at: _c, ...envelope } = paymentEvent();
        const data = {
          trx_id: 'TRX1',
          merchant_ref: null,
          status: null,
          amount: { value: 'twenty', currency: null },
          settlement: { gross: { value: null }, fees: null, net: { value: '1e3' }, extra: { value: ' 25 ' } },
          customer: null,
          environment: null,
          extra: { value: '25.00' },
        };
        const event = { ...envelope, created_at: 1_700_000_000, data, more: [1, null] };
        const d = await delivery({ event });
        await expect(verify({ payload: d.body, headers: d.headers })).resolves.toStrictEqual(current(event));
        // The bare minimum: an id, the type, and data.trx_id.
        const minimal = { id: 'evt_1', type: 'payment.completed', data: { trx_id: 'TRX1' } };
        const m = await delivery({ event: minimal });
        await expect(verify({ payload: m.body, headers: m.headers })).resolves.toStrictEqual(current(minimal));
      });
    });

    describe('event_mismatch', () => {
      test('the event header differs from the payload type', async () => {
        const d = await delivery({ type: 'payment.failed' });
        await expectReason(verify({ payload: d.body, headers: d.headers }), 'event_mismatch', /"payment.failed".*"payment.completed"/);
        // verifyWebhookSignature does not parse, so it cannot compare: it reports the header, as unsigned.
        await expect(verifySignature({ payload: d.body, headers: d.headers })).resolves.toEqual(signatureResult(d.body, 'payment.failed'));
      });

      test('case matters, and differing copies of the event header do not match', async () => {
        const upper = await delivery({ type: 'PAYMENT.COMPLETED' });
        await expectReason(verify({ payload: upper.body, headers: upper.headers }), 'event_mismatch');
        const d = await delivery();
        await expectReason(
          verify({ payload: d.body, headers: { ...d.headers, 'x-service-event': ['payment.completed', 'payment.failed'] } }),
          'event_mismatch',
        );
      });
    });

    describe('secrets', () => {
      test('rotation: an array of secrets, any one may match', async () => {
        const d = await delivery();
        await expect(verify({ payload: d.body, headers: d.headers, secret: ['whsec_old_one', SECRET] })).resolves.toEqual(
          current(paymentEvent()),
        );
        await expect(verify({ payload: d.body, headers: d.headers, secret: [SECRET, 'whsec_new_one'] })).resolves.toEqual(
          current(paymentEvent()),
        );
        await expect(verify({ payload: d.body, headers: d.headers, secret: Object.freeze([SECRET]) })).resolves.toEqual(
          current(paymentEvent()),
        );
        await expectReason(verify({ payload: d.body, headers: d.headers, secret: ['whsec_a', 'whsec_b'] }), 'invalid_signature');
      });

      test.each([
        ['leading space', ` ${SECRET}`],
        ['trailing newline', `${SECRET}\n`],
        ['trailing tab', `${SECRET}\t`],
        ['a non-breaking space', `${SECRET}\u00a0`],
      ])('a secret with surrounding whitespace (%s) is a ConfigurationError that says so', async (_label, secret) => {
        const d = await delivery({ secret });
        await configurationError(verify({ payload: d.body, headers: d.headers, secret }), /whitespace/);
        await configurationError(verify({ payload: d.body, headers: d.headers, secret: [SECRET, secret] }), /whitespace/);
        await configurationError(verifySignature({ payload: d.body, headers: d.headers, secret }), /whitespace/);
      });

      test.each([
        ['empty', ''],
        ['an empty array', []],
        ['undefined', undefined],
        ['null', null],
        ['a number', 42],
        ['an array with a number', [SECRET, 42]],
        ['an array with an empty string', [SECRET, '']],
        ['an object', { secret: SECRET }],
      ])('an unusable secret (%s) is a ConfigurationError', async (_label, secret) => {
        const d = await delivery();
        await configurationError(verify({ payload: d.body, headers: d.headers, secret: secret as never }), /secret/i);
      });
    });

    describe('options', () => {
      test.each([
        ['toleranceSeconds negative', { toleranceSeconds: -1 }, /toleranceSeconds/],
        ['toleranceSeconds NaN', { toleranceSeconds: Number.NaN }, /toleranceSeconds/],
        ['toleranceSeconds a string', { toleranceSeconds: '300' }, /toleranceSeconds/],
        ['toleranceSeconds Infinity', { toleranceSeconds: Infinity }, /toleranceSeconds.*0.*3600/],
        ['toleranceSeconds -Infinity', { toleranceSeconds: -Infinity }, /toleranceSeconds.*0.*3600/],
        ['toleranceSeconds 0', { toleranceSeconds: 0 }, /toleranceSeconds.*0.*3600/],
        ['toleranceSeconds -0', { toleranceSeconds: -0 }, /toleranceSeconds.*0.*3600/],
        ['toleranceSeconds just over an hour', { toleranceSeconds: 3600.5 }, /toleranceSeconds.*0.*3600/],
        ['toleranceSeconds a day', { toleranceSeconds: 86_400 }, /toleranceSeconds.*0.*3600/],
        ['toleranceSeconds Number.MAX_VALUE', { toleranceSeconds: Number.MAX_VALUE }, /toleranceSeconds.*0.*3600/],
        ['toleranceSeconds null', { toleranceSeconds: null }, /toleranceSeconds.*0.*3600/],
        ['toleranceSeconds a bigint', { toleranceSeconds: 300n }, /toleranceSeconds.*0.*3600/],
        ['toleranceSeconds a boxed number', { toleranceSeconds: Object(300) }, /toleranceSeconds.*0.*3600/],
        ['now not a function', { now: 1_700_000_000_000 }, /now/],
        ['now returning NaN', { now: () => Number.NaN }, /now/],
        ['now returning a Date', { now: () => new Date(T * 1000) }, /now/],
        ['environment misspelt', { environment: 'prod' }, /environment/],
        ['brand not a string', { brand: 42 }, /brand/],
        ['brand with a space', { brand: 'My Brand' }, /brand/],
      ])('%s is a ConfigurationError', async (_label, options, message) => {
        const d = await delivery();
        await configurationError(verify({ payload: d.body, headers: d.headers, ...(options as object) }), message);
        await configurationError(verify({ payload: d.body, headers: fetchHeaders(d.headers), ...(options as object) }), message);
      });

      test('toleranceSeconds: Infinity never lets a year-old delivery through (it used to)', async () => {
        const old = await delivery({ timestamp: T - 86_400 * 365 });
        for (const toleranceSeconds of [Infinity, 1e12, 0]) {
          await configurationError(verify({ payload: old.body, headers: old.headers, toleranceSeconds }), /toleranceSeconds/);
          await configurationError(verifySignature({ payload: old.body, headers: old.headers, toleranceSeconds }), /toleranceSeconds/);
        }
      });

      test('toleranceSeconds at the edges of its range is accepted', async () => {
        const d = await delivery({ timestamp: T - 3600 });
        await expect(verify({ payload: d.body, headers: d.headers, toleranceSeconds: 3600 })).resolves.toEqual(current(paymentEvent()));
        await expectReason(verify({ payload: d.body, headers: d.headers, toleranceSeconds: Number.MIN_VALUE }), 'timestamp_too_old');
      });

      test('a clock returning NaN never lets a stale delivery through', async () => {
        // NaN fails every comparison, so a window check fed it would pass anything. A clock that
        // gives no finite number of ms (NaN, ±Infinity, nothing, a string) is a configuration
        // fault, refused as one before the delivery is looked at: stale or fresh, by both
        // verifiers, from a Node object or a Fetch Headers.
        const stale = await delivery({ timestamp: 1 });
        const fresh = await delivery();
        for (const now of [() => Number.NaN, () => Infinity, () => -Infinity, () => undefined, () => String(T * 1000)]) {
          for (const d of [stale, fresh]) {
            for (const headers of [d.headers, fetchHeaders(d.headers)]) {
              const options = { payload: d.body, headers, now: now as () => number };
              await configurationError(verify(options), /now\(\) must return ms/);
              await configurationError(verifySignature(options), /now\(\) must return ms/);
            }
          }
        }
      });

      test('configuration faults come first, whatever the delivery', async () => {
        await configurationError(verifyWebhook({ payload: {} as never, headers: {}, secret: ' x' }), /whitespace/);
        await configurationError(verifyWebhook({ payload: 'x', headers: {}, secret: SECRET, toleranceSeconds: -5 }), /toleranceSeconds/);
      });
    });

    describe('check order: cheap checks first, then the HMAC', () => {
      test.each([
        ['a stale timestamp', { timestamp: T - 301 }, {}, 'timestamp_too_old'],
        ['a future timestamp', { timestamp: T + 301 }, {}, 'timestamp_in_future'],
        ['a timestamp that is not digits', { timestamp: '12a' }, {}, 'invalid_timestamp'],
        ['a missing event header', {}, { drop: 'x-service-event' }, 'missing_header'],
        ['a missing timestamp header', {}, { drop: 'x-service-timestamp' }, 'missing_header'],
        ['the wrong environment', { environment: 'production' }, { environment: 'sandbox' }, 'environment_mismatch'],
        ['a malformed signature', {}, { signature: 'nothex' }, 'invalid_signature'],
      ] as const)('%s with a wrong signature: refused before any HMAC', async (_label, init, extra, reason) => {
        const d = await delivery({ ...init, secret: 'whsec_wrong' });
        let headers: Record<string, string> = d.headers;
        if ('drop' in extra) headers = without(headers, extra.drop);
        if ('signature' in extra) headers = { ...headers, 'x-service-signature': extra.signature };
        const environment = 'environment' in extra ? extra.environment : undefined;
        const hmac = runtime.spyHmac();
        await expectReason(verify({ payload: d.body, headers, environment }), reason);
        await expectReason(verifySignature({ payload: d.body, headers, environment }), reason);
        expect(hmac).not.toHaveBeenCalled();
      });

      test('a parsed payload is refused before the headers are looked at', async () => {
        const hmac = runtime.spyHmac();
        await expectReason(verify({ payload: paymentEvent() as never, headers: {} }), 'invalid_payload', /express\.raw/);
        expect(hmac).not.toHaveBeenCalled();
      });

      test('a bad secret is refused before any HMAC', async () => {
        const d = await delivery();
        const hmac = runtime.spyHmac();
        await configurationError(verify({ payload: d.body, headers: d.headers, secret: [SECRET, `${SECRET} `] }));
        expect(hmac).not.toHaveBeenCalled();
      });

      test(`a well-formed signature is checked with one HMAC per secret, on ${runtime.hmac}`, async () => {
        const d = await delivery();
        const hmac = runtime.spyHmac();
        await expectReason(verify({ payload: d.body, headers: d.headers, secret: ['whsec_a', 'whsec_b', 'whsec_c'] }), 'invalid_signature');
        expect(hmac).toHaveBeenCalledTimes(3 * runtime.callsPerHmac);
        hmac.mockClear();
        await expect(verify({ payload: d.body, headers: d.headers, secret: ['whsec_a', SECRET, 'whsec_c'] })).resolves.toEqual(
          current(paymentEvent()),
        );
        expect(hmac).toHaveBeenCalledTimes(2 * runtime.callsPerHmac);
        hmac.mockClear();
        await expect(verify({ payload: d.body, headers: d.headers })).resolves.toEqual(current(paymentEvent()));
        expect(hmac).toHaveBeenCalledTimes(1 * runtime.callsPerHmac);
      });
    });

    describe('verifyWebhook(request, secret, options) with a Fetch Request', () => {
      const request = (d: Delivery, init: RequestInit = {}) =>
        new Request('https://merchant.example/webhooks', {
          method: 'POST',
          body: d.body as RequestInit['body'],
          headers: fetchHeaders(d.headers),
          ...init,
        });

      test('verifies, and leaves the body readable', async () => {
        const d = await delivery();
        const req = request(d);
        await expect(verifyWebhook(req, SECRET, { now: NOW })).resolves.toEqual(current(paymentEvent()));
        expect(req.bodyUsed).toBe(false);
        await expect(req.text()).resolves.toBe(d.body);
      });

      test('verifyWebhookSignature on a Request', async () => {
        const d = await delivery();
        const req = request(d);
        // The body comes back as the bytes that were signed: no second read of the request needed.
        await expect(verifyWebhookSignature(req, [SECRET], { now: NOW })).resolves.toEqual(
          signatureResult(encoder.encode(d.body as string)),
        );
        await expect(req.json()).resolves.toEqual(paymentEvent());
      });

      test('options apply: environment, brand, toleranceSeconds; payload/headers/secret in options are ignored', async () => {
        const d = await delivery({ brand: 'Acme', environment: 'production', timestamp: T - 20 });
        await expect(
          verifyWebhook(request(d), SECRET, { now: NOW, environment: 'production', brand: 'Acme', toleranceSeconds: 30 }),
        ).resolves.toEqual(current(paymentEvent()));
        await expectReason(verifyWebhook(request(d), SECRET, { now: NOW, toleranceSeconds: 10 }), 'timestamp_too_old');
        await expectReason(verifyWebhook(request(d), SECRET, { now: NOW, environment: 'sandbox' }), 'environment_mismatch');
        const sneaky = { now: NOW, payload: 'other', headers: {}, secret: 'other' } as never;
        await expect(verifyWebhook(request(d), SECRET, sneaky)).resolves.toEqual(current(paymentEvent()));
      });

      test('refusals on a Request', async () => {
        const d = await delivery();
        await expectReason(verifyWebhook(request(d), 'whsec_wrong', { now: NOW }), 'invalid_signature');
        await expectReason(verifyWebhook(request(d), SECRET), 'timestamp_too_old');
        await configurationError(verifyWebhook(request(d), ` ${SECRET}`, { now: NOW }), /whitespace/);
        await configurationError(verifyWebhook(request(d), undefined as never, { now: NOW }), /secret/);
      });

      test('a Request whose body was already read is refused with a hint', async () => {
        const d = await delivery();
        const req = request(d);
        await req.text();
        await expectReason(verifyWebhook(req, SECRET, { now: NOW }), 'invalid_payload', /consumed/);
      });

      test('the body is verified byte for byte: a BOM and invalid UTF-8 stay as sent', async () => {
        // Bodies the service signed over their exact bytes; decoding them as text first
        // (BOM stripped, invalid sequences replaced) would change those bytes.
        for (const body of [concat(new Uint8Array([0xef, 0xbb, 0xbf]), '{"a":1}'), concat('{"a":"', new Uint8Array([0xff, 0xfe]), '"}')]) {
          const d = await delivery({ body, type: 'payment.completed' });
          await expect(verifyWebhookSignature(request(d), SECRET, { now: NOW })).resolves.toEqual(signatureResult(body));
          await expect(verifySignature({ payload: body, headers: d.headers })).resolves.toEqual(signatureResult(body));
        }
      });

      test('a Request without a body', async () => {
        const d = await delivery({ body: '', type: 'payment.completed' });
        const req = new Request('https://merchant.example/webhooks', { method: 'POST', headers: fetchHeaders(d.headers) });
        await expect(verifyWebhookSignature(req, SECRET, { now: NOW })).resolves.toEqual(signatureResult(new Uint8Array(0)));
        await expectReason(verifyWebhook(req, SECRET, { now: NOW }), 'invalid_payload');
      });
    });
  });
}
