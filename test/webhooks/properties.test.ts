// Property tests (fast-check, fixed seed): every valid signing is accepted, every single
// change is refused, and no input at all makes the verifier throw anything but
// WebhookVerificationError, or ConfigurationError exactly when the configuration
// (secret, toleranceSeconds, now, environment, brand) is unusable.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { ConfigurationError } from '../../src/core/base-error.js';
import { signWebhook } from '../../src/testing.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/index.js';
import { verifyWebhook, verifyWebhookSignature, WebhookVerificationError, type VerifyWebhookOptions } from '../../src/webhooks.js';
import { concat, delivery, expectReason, fetchHeaders, NOW, current, paymentEvent, SECRET, sign, T } from './suite.js';

const RUNS = { seed: 0x5eed_2024, numRuns: 200 };
const PAYMENT_TYPES: readonly string[] = ['payment.completed', 'payment.failed'];
const encoder = new TextEncoder();

// Strings that exercise UTF-8: all planes, lone surrogates (encoded as U+FFFD), NUL.
const anyString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.string({ unit: fc.constantFrom('\ud800', '\udfff', 'a', 'é', '東', '😀', '\u0000', '\n', '"', '\\'), maxLength: 30 }),
);
const secretArb = fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).filter((s) => s === s.trim());
const brandArb = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,11}$/);
const offsetArb = fc.integer({ min: -300, max: 300 });
const formArb = fc.constantFrom('string', 'bytes', 'arraybuffer', 'view');

type Form = 'string' | 'bytes' | 'arraybuffer' | 'view';
function asPayload(body: string | Uint8Array, form: Form): string | Uint8Array | ArrayBuffer {
  const bytes = typeof body === 'string' ? encoder.encode(body) : body;
  switch (form) {
    case 'string':
      return typeof body === 'string' ? body : bytes;
    case 'bytes':
      return new Uint8Array(bytes);
    case 'arraybuffer':
      return new Uint8Array(bytes).buffer;
    case 'view':
      return concat('[[', bytes, ']]').subarray(2, 2 + bytes.length);
  }
}

const outcomeOf = (promise: Promise<unknown>) =>
  promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

describe('every valid signing is accepted', () => {
  test('any body (string, any form), timestamp within tolerance, secret, brand, header style', async () => {
    await fc.assert(
      fc.asyncProperty(
        anyString,
        offsetArb,
        secretArb,
        fc.option(brandArb, { nil: undefined }),
        formArb,
        fc.boolean(),
        async (body, offset, secret, brand, form, useFetch) => {
          const signed = await signWebhook({ payload: body, secret, timestamp: T + offset, type: 'payment.completed', brand });
          const headers = useFetch ? fetchHeaders(signed.headers) : signed.headers;
          const payload = asPayload(body, form as Form);
          const result = await verifyWebhookSignature({ payload, headers, secret, now: NOW });
          // The signed body is the payload given (an ArrayBuffer as a Uint8Array over it).
          const signedBody = payload instanceof ArrayBuffer ? new Uint8Array(payload) : payload;
          expect(result).toEqual({
            format: 'current',
            timestamp: T + offset,
            signed: { timestamp: String(T + offset), body: signedBody },
            unsignedEventHeader: 'payment.completed',
          });
        },
      ),
      RUNS,
    );
  });

  test('any bytes, including invalid UTF-8, signed over the exact bytes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 80 }),
        offsetArb,
        formArb.filter((f) => f !== 'string'),
        async (body, offset, form) => {
          const d = await delivery({ body, timestamp: T + offset, type: 'payment.completed' });
          const result = await verifyWebhookSignature({
            payload: asPayload(body, form as Form),
            headers: d.headers,
            secret: 'whsec_bytes',
            now: NOW,
          }).catch((e: unknown) => e);
          // Signed with the suite's SECRET, checked with another: refused; with SECRET: accepted.
          expect(result).toBeInstanceOf(WebhookVerificationError);
          const accepted = await verifyWebhookSignature({
            payload: asPayload(body, form as Form),
            headers: d.headers,
            secret: ['whsec_bytes', SECRET],
            now: NOW,
          });
          expect(accepted.timestamp).toBe(T + offset);
        },
      ),
      RUNS,
    );
  });

  test('any signed JSON object is accepted for a non-payment event type, as sent, its type from the header when it has none', async () => {
    // The spec shows no payload for subscription.* and invoice.*, nor for types this SDK
    // does not know: nothing in the object is checked, and nothing is changed but `type`.
    const headerType = fc.oneof(
      fc.constantFrom(...WEBHOOK_EVENT_TYPES.filter((t) => !PAYMENT_TYPES.includes(t))),
      anyString.filter((t) => !PAYMENT_TYPES.includes(t)),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(anyString, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 6 }),
        headerType,
        fc.constantFrom('header', 'absent', 'null'),
        fc.integer({ min: 1, max: 3600 }),
        fc.array(secretArb, { minLength: 1, maxLength: 4 }),
        fc.nat(),
        async (object, type, typeField, tolerance, secrets, pick) => {
          const secret = secrets[pick % secrets.length]!;
          const offset = (pick % (2 * tolerance + 1)) - tolerance;
          const payload: Record<string, unknown> = { ...object };
          if (typeField === 'absent') delete payload.type;
          else payload.type = typeField === 'header' ? type : null;
          const { body, headers } = await signWebhook({ payload, secret, timestamp: T + offset, type });
          const result = await verifyWebhook({ payload: body, headers, secret: secrets, now: NOW, toleranceSeconds: tolerance });
          expect(result).toStrictEqual(current({ ...(JSON.parse(body) as object), type }));
        },
      ),
      RUNS,
    );
  });

  test('any payment event with a string id and data.trx_id is accepted; amounts sent as decimal strings come back as numbers', async () => {
    const value = fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.integer().map(String),
      fc.tuple(fc.integer(), fc.nat({ max: 99 })).map(([units, cents]) => `${units}.${String(cents).padStart(2, '0')}`),
      fc.constantFrom(null, '', ' 25 ', '1e3', '0x10', '25.', '.5', 'Infinity', '25,00'),
      anyString,
      fc.jsonValue({ maxDepth: 1 }),
    );
    const money = fc.oneof(
      fc.record({ value, currency: fc.oneof(fc.constant('TZS'), fc.constant(null)) }, { requiredKeys: [] }),
      fc.jsonValue({ maxDepth: 1 }),
    );
    const data = fc
      .tuple(
        fc.dictionary(anyString, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
        anyString,
        fc.option(money, { nil: undefined }),
        fc.option(fc.oneof(fc.dictionary(fc.constantFrom('gross', 'fees', 'net', 'tax'), money), fc.jsonValue({ maxDepth: 1 })), {
          nil: undefined,
        }),
      )
      .map(([rest, trx_id, amount, settlement]) => ({
        ...rest,
        trx_id,
        ...(amount !== undefined && { amount }),
        ...(settlement !== undefined && { settlement }),
      }));
    const event = fc.record(
      {
        id: anyString,
        type: fc.constantFrom(...PAYMENT_TYPES),
        api_version: fc.oneof(anyString, fc.jsonValue({ maxDepth: 0 })),
        created_at: fc.oneof(anyString, fc.jsonValue({ maxDepth: 0 })),
        data,
      },
      { requiredKeys: ['id', 'type', 'data'] },
    );
    const asNumber = (v: unknown) => (typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v);
    const read = (m: unknown) =>
      m !== null && typeof m === 'object' && !Array.isArray(m) && 'value' in m ? { ...m, value: asNumber(m.value) } : m;
    await fc.assert(
      fc.asyncProperty(event, async (e) => {
        const { body, headers } = await signWebhook({ payload: e, secret: SECRET, timestamp: T });
        const sent = JSON.parse(body) as { data: Record<string, unknown> };
        const { amount, settlement } = sent.data;
        const expected = {
          ...sent,
          format: 'current',
          data: {
            ...sent.data,
            ...('amount' in sent.data && { amount: read(amount) }),
            ...(settlement !== null &&
              typeof settlement === 'object' && {
                settlement: Array.isArray(settlement)
                  ? settlement.map(read)
                  : Object.fromEntries(Object.entries(settlement).map(([k, m]) => [k, read(m)])),
              }),
          },
        };
        await expect(verifyWebhook({ payload: body, headers, secret: SECRET, now: NOW })).resolves.toStrictEqual(expected);
      }),
      RUNS,
    );
  });

  test('a stray x-…-signature or x-…-timestamp of another brand never counts; a second complete brand is ambiguous', async () => {
    const d = await delivery();
    const other = fc.tuple(
      fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/).filter((b) => b !== 'service'),
      fc.constantFrom('signature', 'timestamp'),
      fc.boolean(),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(other, { maxLength: 6 }), fc.boolean(), fc.boolean(), async (extra, before, useFetch) => {
        const strays: Record<string, string> = {};
        for (const [brand, kind, upper] of extra)
          strays[upper ? `X-${brand.toUpperCase()}-${kind === 'signature' ? 'Signature' : 'Timestamp'}` : `x-${brand}-${kind}`] = 'v';
        const kinds = new Map<string, Set<string>>();
        for (const [brand, kind] of extra) kinds.set(brand, (kinds.get(brand) ?? new Set()).add(kind));
        const complete = [...kinds.values()].some((k) => k.size === 2);
        const node = before ? { ...strays, ...d.headers } : { ...d.headers, ...strays };
        const call = verifyWebhook({ payload: d.body, headers: useFetch ? fetchHeaders(node) : node, secret: SECRET, now: NOW });
        if (complete)
          await expectReason(
            call,
            'missing_header',
            /^Headers of more than one brand \(x-[a-z0-9-]+-signature, x-[a-z0-9-]+-signature\): pass brand\.$/,
          );
        else await expect(call).resolves.toEqual(current(paymentEvent()));
      }),
      RUNS,
    );
  });
});

describe('every single change is refused', () => {
  const baseArb = fc.record({ body: anyString, offset: offsetArb, secret: secretArb });

  test('one byte of the body changed: invalid_signature', async () => {
    await fc.assert(
      fc.asyncProperty(
        baseArb,
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        formArb.filter((f) => f !== 'string'),
        async ({ body, offset, secret }, at, mask, form) => {
          const signedBody = `${body}.`; // at least one byte
          const signed = await signWebhook({ payload: signedBody, secret, timestamp: T + offset, type: 'payment.completed' });
          const changed = encoder.encode(signedBody);
          changed[at % changed.length]! ^= mask;
          await expectReason(
            verifyWebhookSignature({ payload: asPayload(changed, form as Form), headers: signed.headers, secret, now: NOW }),
            'invalid_signature',
          );
        },
      ),
      RUNS,
    );
  });

  test('the timestamp header changed (another second, or the same second spelt with leading zeros): invalid_signature', async () => {
    await fc.assert(
      fc.asyncProperty(baseArb, offsetArb, fc.integer({ min: 0, max: 3 }), async ({ body, offset, secret }, otherOffset, zeros) => {
        const signed = await signWebhook({ payload: body, secret, timestamp: T + offset, type: 'payment.completed' });
        const other = `${'0'.repeat(zeros)}${T + otherOffset}`;
        fc.pre(other !== String(T + offset));
        const headers = { ...signed.headers, 'X-Service-Timestamp': other };
        await expectReason(verifyWebhookSignature({ payload: body, headers, secret, now: NOW }), 'invalid_signature');
      }),
      RUNS,
    );
  });

  test('one hex digit of the signature changed: invalid_signature; only its letter case changed: accepted', async () => {
    await fc.assert(
      fc.asyncProperty(
        baseArb,
        fc.integer({ min: 0, max: 63 }),
        fc.integer({ min: 1, max: 15 }),
        fc.boolean(),
        async ({ body, offset, secret }, index, delta, upper) => {
          const signed = await signWebhook({ payload: body, secret, timestamp: T + offset, type: 'payment.completed' });
          const signature = signed.headers['X-Service-Signature']!;
          const digit = ((parseInt(signature[index]!, 16) + delta) % 16).toString(16);
          const changed = signature.slice(0, index) + (upper ? digit.toUpperCase() : digit) + signature.slice(index + 1);
          await expectReason(
            verifyWebhookSignature({ payload: body, headers: { ...signed.headers, 'X-Service-Signature': changed }, secret, now: NOW }),
            'invalid_signature',
          );
          const recased = upper ? signature.toUpperCase() : `sha256=${signature}`;
          await expect(
            verifyWebhookSignature({ payload: body, headers: { ...signed.headers, 'X-Service-Signature': recased }, secret, now: NOW }),
          ).resolves.toMatchObject({ timestamp: T + offset });
        },
      ),
      RUNS,
    );
  });

  test('another secret: invalid_signature', async () => {
    await fc.assert(
      fc.asyncProperty(baseArb, secretArb, async ({ body, offset, secret }, other) => {
        fc.pre(other !== secret);
        const signed = await signWebhook({ payload: body, secret, timestamp: T + offset, type: 'payment.completed' });
        await expectReason(
          verifyWebhookSignature({ payload: body, headers: signed.headers, secret: other, now: NOW }),
          'invalid_signature',
        );
      }),
      RUNS,
    );
  });

  test('outside the window: timestamp_too_old / timestamp_in_future, whatever the signature', async () => {
    await fc.assert(
      fc.asyncProperty(
        anyString,
        fc.integer({ min: 1, max: 3600 }),
        fc.integer({ min: 1, max: 10 ** 9 }),
        fc.boolean(),
        async (body, tolerance, beyond, past) => {
          const timestamp = past ? T - tolerance - beyond : T + tolerance + beyond;
          fc.pre(timestamp >= 0);
          const signed = await signWebhook({ payload: body, secret: 'whsec_window', timestamp, type: 'payment.completed' });
          for (const secret of ['whsec_window', 'whsec_not_it']) {
            await expectReason(
              verifyWebhookSignature({ payload: body, headers: signed.headers, secret, now: NOW, toleranceSeconds: tolerance }),
              past ? 'timestamp_too_old' : 'timestamp_in_future',
            );
          }
        },
      ),
      RUNS,
    );
  });
});

// ---------------------------------------------------------------------------------------
// Junk in, only the documented errors out.

const junk = fc.anything({
  maxDepth: 2,
  withBigInt: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withNullPrototype: true,
  withObjectString: true,
  withTypedArray: true,
  stringUnit: 'binary',
});
const headerName = fc.oneof(
  fc.constantFrom(
    'x-service-signature',
    'X-Service-Timestamp',
    'x-service-event',
    'X-SERVICE-SIGNATURE',
    'x-environment',
    'x-acme-signature',
    'x--signature',
    'x-signature',
    '-signature',
    'x-a-signature',
  ),
  fc.string({ maxLength: 20 }),
);
const headerValue = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 70 }),
  fc.stringMatching(/^[0-9a-fA-F]{64}$/),
  fc.integer({ min: T - 400, max: T + 400 }).map(String),
  fc.array(fc.oneof(fc.string(), fc.stringMatching(/^\d{1,12}$/)), { maxLength: 3 }),
  fc.constantFrom('sandbox', 'production', 'payment.completed', '', ' ', '\r\n', 'sha256=', undefined, null),
  junk,
);
const headersArb = fc.oneof(
  junk,
  fc.dictionary(headerName, headerValue, { maxKeys: 6 }),
  fc
    .dictionary(fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/), fc.stringMatching(/^[ -~]{0,70}$/), { maxKeys: 6 })
    .map((h) => fetchHeaders(h)),
  fc.record({ get: fc.func(headerValue) }),
  fc
    .tuple(fc.func(headerValue), fc.array(fc.oneof(fc.string(), junk), { maxLength: 4 }))
    .map(([get, names]) => ({ get, forEach: (cb: (value: unknown, name: unknown) => void) => names.forEach((n) => cb('v', n)) })),
  fc.constant(
    new Map<unknown, unknown>([
      [1, 'x'],
      [Symbol('s'), 'y'],
      ['x-service-signature', 'z'],
    ]),
  ),
);
const payloadArb = fc.oneof(
  junk,
  anyString,
  fc.uint8Array({ maxLength: 40 }),
  fc.uint8Array({ maxLength: 40 }).map((u) => u.buffer),
  fc.constant(new DataView(new ArrayBuffer(8))),
);
const secretJunk = fc.oneof(
  junk,
  secretArb,
  fc.array(fc.oneof(secretArb, junk), { maxLength: 3 }),
  fc.constantFrom(' s', 's ', '', [], ['a', ' b']),
);
const optionsArb = fc.record(
  {
    payload: payloadArb,
    headers: headersArb,
    secret: secretJunk,
    toleranceSeconds: fc.oneof(
      junk,
      fc.integer({ min: -10, max: 4000 }),
      fc.double(),
      fc.constantFrom(Number.NaN, Infinity, -Infinity, -0, 0, 0.5, 3600, 3600.001),
    ),
    now: fc.oneof(junk, fc.constant(NOW), fc.func(fc.oneof(junk, fc.integer(), fc.double()))),
    environment: fc.oneof(junk, fc.constantFrom('sandbox', 'production', 'Sandbox', '')),
    brand: fc.oneof(junk, brandArb, fc.constantFrom('Service', 'service', '', 'a b', 'x\n', 'é')),
  },
  { requiredKeys: [] },
);

/** Whether the configuration part of `options` is unusable (the ConfigurationError cases: check 1 in docs/webhooks.md). */
function configurationFault(options: unknown, secretOverride?: { value: unknown }): string | undefined {
  const o = (typeof options === 'object' && options !== null ? options : {}) as Record<string, unknown>;
  const secret = secretOverride ? secretOverride.value : o.secret;
  const secrets = typeof secret === 'string' ? [secret] : secret;
  if (!Array.isArray(secrets) || secrets.length === 0 || secrets.some((s) => typeof s !== 'string' || s === '' || s !== s.trim()))
    return 'secret';
  const tolerance = o.toleranceSeconds;
  if (tolerance !== undefined && !(typeof tolerance === 'number' && Number.isFinite(tolerance) && tolerance > 0 && tolerance <= 3600))
    return 'toleranceSeconds';
  if (o.now !== undefined && !(typeof o.now === 'function' && Number.isFinite((o.now as () => unknown)()))) return 'now';
  if (o.environment !== undefined && o.environment !== 'sandbox' && o.environment !== 'production') return 'environment';
  if (o.brand !== undefined && !(typeof o.brand === 'string' && /^[\w-]+$/.test(o.brand))) return 'brand';
  return undefined;
}

function expectOnlyDocumentedErrors(outcome: { ok: true; value: unknown } | { ok: false; error: unknown }, fault: string | undefined) {
  if (outcome.ok) {
    expect(fault).toBeUndefined();
    return;
  }
  const { error } = outcome;
  if (fault !== undefined) {
    expect(error, `expected a ConfigurationError for ${fault}, got ${String(error)}`).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toContain(fault === 'secret' ? 'ecret' : fault);
  } else {
    expect(error, `expected a WebhookVerificationError, got ${String(error)}`).toBeInstanceOf(WebhookVerificationError);
  }
}

describe('junk never escapes as anything but the documented errors', () => {
  test('verifyWebhook / verifyWebhookSignature with arbitrary options', async () => {
    await fc.assert(
      fc.asyncProperty(optionsArb, async (options) => {
        const fault = configurationFault(options);
        expectOnlyDocumentedErrors(await outcomeOf(verifyWebhook(options as VerifyWebhookOptions)), fault);
        expectOnlyDocumentedErrors(await outcomeOf(verifyWebhookSignature(options as VerifyWebhookOptions)), fault);
      }),
      { ...RUNS, numRuns: 400 },
    );
  });

  test('anything at all as the first argument (and junk after it)', async () => {
    await fc.assert(
      fc.asyncProperty(junk, junk, junk, async (input, secret, options) => {
        const isObject = typeof input === 'object' && input !== null;
        const fault = isObject ? configurationFault(input) : undefined;
        for (const call of [
          verifyWebhook(input as never),
          verifyWebhookSignature(input as never),
          verifyWebhook(input as never, secret as never, options as never),
        ]) {
          const outcome = await outcomeOf(call);
          expect(outcome.ok).toBe(false);
          expectOnlyDocumentedErrors(outcome, fault);
        }
      }),
      RUNS,
    );
  });

  test('a Fetch Request with junk secret and options', async () => {
    await fc.assert(
      fc.asyncProperty(secretJunk, fc.oneof(junk, optionsArb), fc.uint8Array({ maxLength: 30 }), async (secret, options, body) => {
        const fault = configurationFault(options, { value: secret });
        const request = new Request('https://merchant.example/hook', {
          method: 'POST',
          body,
          headers: { 'x-service-signature': '0'.repeat(64), 'x-service-timestamp': String(T), 'x-service-event': 'x' },
        });
        expectOnlyDocumentedErrors(await outcomeOf(verifyWebhook(request, secret as never, options as never)), fault);
      }),
      RUNS,
    );
  });

  test('a valid delivery with one header replaced by junk', async () => {
    const d = await delivery();
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...Object.keys(d.headers)), headerValue, fc.boolean(), async (name, value, environment) => {
        const headers = { ...d.headers, [name]: value };
        const options = { payload: d.body, headers, secret: SECRET, now: NOW, ...(environment ? { environment: 'sandbox' as const } : {}) };
        const outcome = await outcomeOf(verifyWebhook(options as VerifyWebhookOptions));
        expectOnlyDocumentedErrors(outcome, undefined);
      }),
      RUNS,
    );
  });

  test('a validly signed body of any shape, under any event header: an event or a WebhookVerificationError, nothing else', async () => {
    // Past the signature, toEvent reads whatever was signed: the payment checks and the
    // amount reading must not trip over odd shapes (data, amount or settlement of any JSON type).
    const odd = fc.jsonValue({ maxDepth: 2 });
    const paymentish = fc.record(
      {
        id: fc.oneof(anyString, odd),
        type: fc.oneof(fc.constantFrom(...PAYMENT_TYPES, 'invoice.paid'), odd),
        data: fc.oneof(
          odd,
          fc.record(
            { trx_id: fc.oneof(anyString, odd), amount: odd, settlement: fc.oneof(odd, fc.dictionary(anyString, odd, { maxKeys: 3 })) },
            { requiredKeys: [] },
          ),
        ),
      },
      { requiredKeys: [] },
    );
    const body = fc.oneof(
      anyString,
      odd.map((v) => JSON.stringify(v)),
      paymentish.map((v) => JSON.stringify(v)),
    );
    const header = fc.oneof(fc.constantFrom(...WEBHOOK_EVENT_TYPES), anyString);
    await fc.assert(
      fc.asyncProperty(body, header, async (raw, type) => {
        const { headers } = await signWebhook({ payload: raw, secret: SECRET, timestamp: T, type });
        for (const payload of [raw, encoder.encode(raw)]) {
          const outcome = await outcomeOf(verifyWebhook({ payload, headers, secret: SECRET, now: NOW }));
          if (outcome.ok) {
            expect((outcome.value as { type: unknown }).type).toBe(type);
          } else {
            expect(outcome.error, String(outcome.error)).toBeInstanceOf(WebhookVerificationError);
            expect(['invalid_payload', 'event_mismatch']).toContain((outcome.error as WebhookVerificationError).reason);
          }
        }
      }),
      { ...RUNS, numRuns: 400 },
    );
  });

  test('a timestamp in milliseconds is refused as timestamp_in_future with a hint; seconds never get it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1e11, max: 1e13 - 1 }), fc.integer({ min: T - 300, max: T + 300 }), async (ms, seconds) => {
        const stamped = await delivery({ timestamp: ms });
        await expectReason(
          verifyWebhookSignature({ payload: stamped.body, headers: stamped.headers, secret: SECRET, now: NOW }),
          'timestamp_in_future',
          /Looks like milliseconds: the header must be unix seconds\.$/,
        );
        const fine = await delivery({ timestamp: seconds });
        await expect(
          verifyWebhookSignature({ payload: fine.body, headers: fine.headers, secret: SECRET, now: NOW }),
        ).resolves.toMatchObject({
          timestamp: seconds,
        });
      }),
      RUNS,
    );
  });

  test('every WebhookVerificationError carries one of the 8 reasons and a message', async () => {
    const reasons = new Set([
      'missing_header',
      'invalid_signature',
      'timestamp_too_old',
      'timestamp_in_future',
      'invalid_timestamp',
      'invalid_payload',
      'environment_mismatch',
      'event_mismatch',
    ]);
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(optionsArb, async (options) => {
        const outcome = await outcomeOf(verifyWebhook({ secret: 'whsec_x', ...(options as object), now: NOW } as VerifyWebhookOptions));
        if (!outcome.ok && outcome.error instanceof WebhookVerificationError) {
          expect(reasons.has(outcome.error.reason)).toBe(true);
          expect(outcome.error.message.length).toBeGreaterThan(10);
          seen.add(outcome.error.reason);
        }
      }),
      RUNS,
    );
    // The generators reach the cheap refusals, not just one of them.
    expect(seen.size).toBeGreaterThanOrEqual(3);
  });
});

// A check that the property harness itself can fail: a valid signing over other bytes.
test('sanity: the suite signer and signWebhook agree', async () => {
  const signed = await signWebhook({ payload: 'abc', secret: 'k', timestamp: T });
  expect(signed.headers['X-Service-Signature']).toBe(await sign('k', `${T}.abc`));
});
