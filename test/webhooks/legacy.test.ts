// The earlier generation's webhook form (the IPN deployed servers send today): X-Signature =
// hex HMAC-SHA256 of the raw body alone, keyed with the merchant's API secret; X-Environment
// unsigned; the timestamp inside the body. Fixed vectors, signed here with node:crypto
// directly (never with the SDK's HMAC or signWebhook).
import { createHmac } from 'node:crypto';
import { describe, expect, expectTypeOf, test, vi } from 'vitest';
import {
  verifyWebhook,
  verifyWebhookSignature,
  WebhookVerificationError,
  type LegacyPaymentCompletedEvent,
  type LegacyPaymentEvent,
  type LegacyPaymentFailedEvent,
  type PaymentCompletedEvent,
  type VerifiedWebhookSignature,
  type VerifyWebhookOptions,
  type WebhookEvent,
  type WebhookFormat,
} from '../../src/webhooks.js';
import { signWebhook } from '../../src/testing.js';
import { configurationError, current, delivery, expectReason, fetchHeaders, paymentEvent, SECRET as WEBHOOK_SECRET, T } from './suite.js';

const API_SECRET = 'test_secret_3f9a6c1e8b2d4f70';
const NOW = () => T * 1000;
const hmac = (secret: string, body: string | Uint8Array) => createHmac('sha256', secret).update(body).digest('hex');

// The body as the earlier generation sends it: PHP's compact JSON, keys in insertion order,
// slashes and Unicode unescaped, `data` = the initiate-payment echo with trx_id last.
const BODY =
  '{"data":{"ref_trx":"order-42","description":"Order #42 – café","ipn_url":"https://shop.example/ipn",' +
  '"cancel_redirect":"https://shop.example/cancel","success_redirect":"https://shop.example/done",' +
  '"customer_name":"Asha Mwinyi","customer_email":"asha@example.com","merchant_name":"Duka","amount":"1500.00",' +
  '"currency_code":"TZS","environment":"sandbox","is_sandbox":true,"allow_payment_methods":[],' +
  '"trx_id":"TRXAB12CD34EF"},"message":"Payment Completed","status":"completed","timestamp":1700000000}';
// Pinned once, so a change to the vector above is a visible change.
// (The same as `openssl dgst -sha256 -hmac <API_SECRET>` of the body's UTF-8 bytes.)
const BODY_SIGNATURE = 'd760ae062fa5be293dfd6daebfe0c3aec5c5c7637b9ae7d7cbcd82e8ccaa5ae4';

interface Ipn {
  data: Record<string, unknown>;
  message?: string;
  status?: unknown;
  timestamp?: unknown;
  [key: string]: unknown;
}
const parsed = () => JSON.parse(BODY) as Ipn & { data: Record<string, unknown> };

/** An IPN body: BODY's, with `change` applied to a parsed copy, serialised compactly. */
function ipn(change: (body: Ipn) => void = () => {}): string {
  const body = parsed();
  change(body);
  return JSON.stringify(body);
}

/** A delivery of the earlier form: the body signed with `secret` (default the API secret), Node-style headers. */
function legacy(body = BODY, init: { secret?: string; environment?: string | null; signature?: string } = {}) {
  const headers: Record<string, string> = {
    'x-signature': init.signature ?? hmac(init.secret ?? API_SECRET, body),
    'content-type': 'application/json',
    'user-agent': 'GuzzleHttp/7',
  };
  if (init.environment !== null) headers['x-environment'] = init.environment ?? 'sandbox';
  return { body, headers };
}

type Options = Partial<VerifyWebhookOptions> & Pick<VerifyWebhookOptions, 'payload' | 'headers'>;
const verify = (options: Options) => verifyWebhook({ secret: API_SECRET, now: NOW, ...options });
const verifySignature = (options: Options) => verifyWebhookSignature({ secret: API_SECRET, now: NOW, ...options });

/** The event verifyWebhook makes of BODY (or of `body`, parsed). */
function expected(body: string = BODY) {
  const sent = JSON.parse(body) as Ipn & { data: Record<string, unknown> };
  const { data } = sent;
  const amount = typeof data.amount === 'string' && /^\d+(\.\d+)?$/.test(data.amount) ? Number(data.amount) : data.amount;
  return {
    type: `payment.${String(sent.status)}`,
    format: 'legacy',
    created_at: new Date(Number(sent.timestamp) * 1000).toISOString(),
    data: { ...data, merchant_ref: data.ref_trx, amount: { value: amount, currency: data.currency_code }, status: sent.status },
    legacy: sent,
  };
}

describe('the fixed vector', () => {
  test('its signature is node:crypto’s HMAC of the body alone, keyed with the API secret', () => {
    // Recomputed, and pinned: the vector's body and its HMAC.
    expect(hmac(API_SECRET, BODY)).toBe(BODY_SIGNATURE);
    expect(hmac(API_SECRET, Buffer.from(BODY, 'utf8'))).toBe(BODY_SIGNATURE);
    expect(legacy().headers['x-signature']).toBe(BODY_SIGNATURE);
    expect(BODY).not.toContain('\\/');
    expect(JSON.stringify(JSON.parse(BODY))).toBe(BODY);
  });
});

describe('a delivery of the earlier form', () => {
  test('verifyWebhook: the same payment.completed event, format legacy, no id, data normalised, the body kept as legacy', async () => {
    const d = legacy();
    const event = await verify({ payload: d.body, headers: d.headers });
    expect(event).toEqual({
      type: 'payment.completed',
      format: 'legacy',
      created_at: '2023-11-14T22:13:20.000Z',
      data: {
        ref_trx: 'order-42',
        description: 'Order #42 – café',
        ipn_url: 'https://shop.example/ipn',
        cancel_redirect: 'https://shop.example/cancel',
        success_redirect: 'https://shop.example/done',
        customer_name: 'Asha Mwinyi',
        customer_email: 'asha@example.com',
        merchant_name: 'Duka',
        amount: { value: 1500, currency: 'TZS' },
        currency_code: 'TZS',
        environment: 'sandbox',
        is_sandbox: true,
        allow_payment_methods: [],
        trx_id: 'TRXAB12CD34EF',
        merchant_ref: 'order-42',
        status: 'completed',
      },
      legacy: parsed(),
    });
    expect(event).not.toHaveProperty('id');
    expect(event).not.toHaveProperty('api_version');
    // The body as sent stays reachable, untouched: the amount as a string, the message.
    expect(event.legacy).toMatchObject({ message: 'Payment Completed', status: 'completed', timestamp: T, data: { amount: '1500.00' } });
  });

  test('status failed is payment.failed', async () => {
    const body = ipn((b) => {
      b.status = 'failed';
      b.message = 'Payment Failed';
    });
    const d = legacy(body);
    const event = await verify({ payload: d.body, headers: d.headers });
    expect(event).toEqual(expected(body));
    expect(event).toMatchObject({ type: 'payment.failed', format: 'legacy', data: { status: 'failed', trx_id: 'TRXAB12CD34EF' } });
  });

  test('verifyWebhookSignature: format legacy, the body’s timestamp, the raw body, no event header', async () => {
    const d = legacy();
    const result = await verifySignature({ payload: d.body, headers: d.headers });
    expect(result).toEqual({ format: 'legacy', timestamp: T, signed: { timestamp: String(T), body: BODY }, unsignedEventHeader: '' });
    // What the HMAC covered: the body alone, no "<timestamp>." in front.
    expect(hmac(API_SECRET, result.signed.body as string)).toBe(d.headers['x-signature']);
  });

  test('the amount as the merchant sent it: a number stays, a numeric string is read as its number, anything else is kept', async () => {
    for (const [sent, value] of [
      [1500, 1500],
      [99.5, 99.5],
      ['25', 25],
      ['1500.00', 1500],
      ['1e3', '1e3'],
      [null, null],
    ] as const) {
      const body = ipn((b) => (b.data.amount = sent));
      const d = legacy(body);
      const event = await verify({ payload: d.body, headers: d.headers });
      expect(event.data, String(sent)).toMatchObject({ amount: { value, currency: 'TZS' } });
      expect((event.legacy as Ipn).data.amount).toBe(sent);
    }
  });

  test('gateways’ extra keys are kept, in data and at the top level (under legacy)', async () => {
    const body = ipn((b) => {
      b.data.gateway = { code: 'mpesa', reference: 'QWE123' };
      b.extra = true;
    });
    const d = legacy(body);
    const event = await verify({ payload: d.body, headers: d.headers });
    expect(event.data).toMatchObject({ gateway: { code: 'mpesa', reference: 'QWE123' } });
    expect(event.legacy).toMatchObject({ extra: true });
  });

  test('payload as string, Buffer, Uint8Array, ArrayBuffer and a Fetch Request; headers as a Node object, mixed case or Fetch Headers', async () => {
    const d = legacy();
    const bytes = new TextEncoder().encode(BODY);
    const event = expected();
    for (const payload of [BODY, Buffer.from(BODY), bytes, bytes.buffer])
      await expect(verify({ payload, headers: d.headers })).resolves.toEqual(event);
    const mixed = { 'X-Signature': d.headers['x-signature']!, 'X-Environment': 'sandbox', 'Content-Type': 'application/json' };
    for (const headers of [mixed, fetchHeaders(d.headers)]) await expect(verify({ payload: BODY, headers })).resolves.toEqual(event);
    const request = new Request('https://shop.example/ipn', { method: 'POST', body: BODY, headers: d.headers });
    await expect(verifyWebhook(request, API_SECRET, { now: NOW })).resolves.toEqual(event);
    await expect(request.text()).resolves.toBe(BODY);
  });

  test('an upper-case hex signature and a sha256= prefix are tolerated, as in the current form', async () => {
    const signature = hmac(API_SECRET, BODY);
    for (const variant of [signature.toUpperCase(), `sha256=${signature}`]) {
      const d = legacy(BODY, { signature: variant });
      await expect(verify({ payload: d.body, headers: d.headers })).resolves.toEqual(expected());
    }
  });

  test('secret: the API secret, or [webhookSecret, apiSecret] during a migration, in either order', async () => {
    const d = legacy();
    for (const secret of [API_SECRET, [WEBHOOK_SECRET, API_SECRET], [API_SECRET, WEBHOOK_SECRET]])
      await expect(verify({ payload: d.body, headers: d.headers, secret })).resolves.toEqual(expected());
    // The same list verifies a delivery of the current form, signed with the webhook secret.
    const c = await delivery();
    await expect(verify({ payload: c.body, headers: c.headers, secret: [WEBHOOK_SECRET, API_SECRET] })).resolves.toEqual(
      current(paymentEvent()),
    );
  });

  test('a secret with surrounding whitespace is a ConfigurationError here too, whatever arrives', async () => {
    const d = legacy();
    await configurationError(verify({ payload: d.body, headers: d.headers, secret: `${API_SECRET}\n` }), /whitespace/);
  });
});

describe('detection: no complete X-<Brand>-Signature/-Timestamp pair, and an X-Signature', () => {
  test('a stray x-…-signature of another service (no timestamp of its brand) does not stop it', async () => {
    const d = legacy();
    const headers = { ...d.headers, 'x-amz-signature': 'abc', 'x-other-timestamp': '1' };
    await expect(verify({ payload: d.body, headers })).resolves.toEqual(expected());
  });

  test('a complete brand pair wins: the delivery is of the current form, the X-Signature beside it is not used', async () => {
    const c = await delivery();
    const headers = { ...c.headers, 'x-signature': hmac(WEBHOOK_SECRET, c.body as string) };
    await expect(verify({ payload: c.body, headers, secret: WEBHOOK_SECRET })).resolves.toEqual(current(paymentEvent()));
    await expect(verifySignature({ payload: c.body, headers, secret: WEBHOOK_SECRET })).resolves.toMatchObject({ format: 'current' });
  });

  test('headers of two complete brands are still refused as ambiguous, X-Signature or not', async () => {
    const d = legacy();
    const headers = { ...d.headers, 'x-acme-signature': 'a', 'x-acme-timestamp': '1', 'x-pay-signature': 'b', 'x-pay-timestamp': '2' };
    await expectReason(verify({ payload: d.body, headers }), 'missing_header', /more than one brand/);
  });

  test('a pinned brand whose headers are absent: the X-Signature delivery is still the earlier form', async () => {
    const d = legacy();
    await expect(verify({ payload: d.body, headers: d.headers, brand: 'Acme' })).resolves.toEqual(expected());
  });

  test('neither form: missing_header, as before', async () => {
    await expectReason(verify({ payload: BODY, headers: { 'x-environment': 'sandbox' } }), 'missing_header', /Signature/);
    await expectReason(verify({ payload: BODY, headers: { 'x-service-signature': 'a'.repeat(64) } }), 'missing_header', /Timestamp/);
  });
});

describe('formats', () => {
  test('default: both forms', async () => {
    const d = legacy();
    const c = await delivery();
    await expect(verify({ payload: d.body, headers: d.headers })).resolves.toMatchObject({ format: 'legacy' });
    await expect(verify({ payload: c.body, headers: c.headers, secret: WEBHOOK_SECRET })).resolves.toMatchObject({ format: 'current' });
    await expect(verify({ payload: d.body, headers: d.headers, formats: ['current', 'legacy'] })).resolves.toMatchObject({
      format: 'legacy',
    });
  });

  test("['current'] refuses the earlier form with missing_header, naming it and what to add; ['legacy'] the current form", async () => {
    const d = legacy();
    const c = await delivery();
    for (const call of [
      verify({ payload: d.body, headers: d.headers, formats: ['current'] }),
      verifySignature({ payload: d.body, headers: d.headers, formats: ['current'] }),
    ])
      await expectReason(call, 'missing_header', /^Form 'legacy' refused: add it to formats\.$/);
    await expectReason(
      verify({ payload: c.body, headers: c.headers, secret: WEBHOOK_SECRET, formats: ['legacy'] }),
      'missing_header',
      /^Form 'current' refused: add it to formats\.$/,
    );
    await expect(verify({ payload: d.body, headers: d.headers, formats: ['legacy'] })).resolves.toEqual(expected());
    await expect(verify({ payload: c.body, headers: c.headers, secret: WEBHOOK_SECRET, formats: ['current'] })).resolves.toEqual(
      current(paymentEvent()),
    );
  });

  test('the refusal comes before any work on the body: no parse, no HMAC', async () => {
    const d = legacy();
    const parse = vi.spyOn(JSON, 'parse');
    await expectReason(verify({ payload: d.body, headers: d.headers, formats: ['current'] }), 'missing_header');
    expect(parse).not.toHaveBeenCalled();
    parse.mockRestore();
  });

  test('an empty list, or anything but a list, accepts nothing (and throws nothing but WebhookVerificationError)', async () => {
    const d = legacy();
    for (const formats of [[], 42, {}] as unknown as WebhookFormat[][])
      await expectReason(verify({ payload: d.body, headers: d.headers, formats }), 'missing_header', /refused/);
  });
});

describe('checks, cheap first', () => {
  test('a signature that is not 64 hex digits is refused before the body is parsed', async () => {
    const parse = vi.spyOn(JSON, 'parse');
    for (const signature of ['', 'abc', 'z'.repeat(64), `${'a'.repeat(64)}0`, 'sha1=' + 'a'.repeat(64)]) {
      const d = legacy(BODY, { signature });
      await expectReason(verify({ payload: d.body, headers: d.headers }), 'invalid_signature');
    }
    expect(parse).not.toHaveBeenCalled();
    parse.mockRestore();
  });

  test('a body over 1 MiB is refused unparsed', async () => {
    const big = ipn((b) => (b.data.padding = 'x'.repeat(1 << 20)));
    const d = legacy(big);
    const parse = vi.spyOn(JSON, 'parse');
    await expectReason(verify({ payload: d.body, headers: d.headers }), 'invalid_payload');
    expect(parse).not.toHaveBeenCalled();
    parse.mockRestore();
    // An IPN of a few hundred KB (extra gateway keys) is parsed and accepted.
    const large = ipn((b) => (b.data.padding = 'x'.repeat(300_000)));
    const l = legacy(large);
    await expect(verify({ payload: l.body, headers: l.headers })).resolves.toMatchObject({ format: 'legacy' });
  });

  test('a body that is not JSON, or not an object: invalid_payload, never a SyntaxError, even with a valid signature', async () => {
    for (const body of ['', 'not json', '{"data":', '[1,2]', 'null', '42', '"text"', '\u2028']) {
      const d = legacy(body);
      const error = await expectReason(verify({ payload: d.body, headers: d.headers }), 'invalid_payload');
      expect(error).toBeInstanceOf(WebhookVerificationError);
      await expectReason(verifySignature({ payload: d.body, headers: d.headers }), 'invalid_payload');
    }
  });

  test('status must be completed or failed, data.trx_id a string (data an object)', async () => {
    const changes: ((b: Ipn) => void)[] = [
      (b) => (b.status = 'pending'),
      (b) => (b.status = 'COMPLETED'),
      (b) => delete b.status,
      (b) => (b.data.trx_id = 12345),
      (b) => delete b.data.trx_id,
      (b) => (b.data = null as never),
      (b) => (b.data = ['TRX1'] as never),
    ];
    for (const change of changes) {
      const d = legacy(ipn(change));
      await expectReason(verify({ payload: d.body, headers: d.headers }), 'invalid_payload', /IPN/);
    }
  });

  test('the timestamp: unix seconds as a JSON number, within toleranceSeconds both ways', async () => {
    const at = (timestamp: unknown) => legacy(ipn((b) => (b.timestamp = timestamp)));
    for (const [timestamp, reason] of [
      [undefined, 'invalid_timestamp'],
      [null, 'invalid_timestamp'],
      ['1700000000', 'invalid_timestamp'],
      [T + 0.5, 'invalid_timestamp'],
      [-1, 'invalid_timestamp'],
      [T - 301, 'timestamp_too_old'],
      [T + 301, 'timestamp_in_future'],
      [T * 1000, 'timestamp_in_future'],
    ] as const) {
      const d = at(timestamp);
      await expectReason(verify({ payload: d.body, headers: d.headers }), reason);
      await expectReason(verifySignature({ payload: d.body, headers: d.headers }), reason);
    }
    const ms = at(T * 1000);
    await expectReason(verify({ payload: ms.body, headers: ms.headers }), 'timestamp_in_future', /milliseconds/);
    for (const offset of [-300, 0, 300]) {
      const d = at(T + offset);
      await expect(verifySignature({ payload: d.body, headers: d.headers })).resolves.toMatchObject({ timestamp: T + offset });
    }
    const stale = at(T - 600);
    await expect(verify({ payload: stale.body, headers: stale.headers, toleranceSeconds: 600 })).resolves.toMatchObject({
      created_at: new Date((T - 600) * 1000).toISOString(),
    });
    await expectReason(verify({ payload: stale.body, headers: stale.headers, toleranceSeconds: 599 }), 'timestamp_too_old');
  });

  test('a stale body is refused even when everything else is right: a replay', async () => {
    const d = legacy();
    await expectReason(verifyWebhook({ payload: d.body, headers: d.headers, secret: API_SECRET }), 'timestamp_too_old');
  });
});

describe('invalid_signature', () => {
  test('one changed byte anywhere in the body', async () => {
    const d = legacy();
    const bytes = new TextEncoder().encode(BODY);
    // Inside string values, so the body still parses and every other check passes.
    const byteAt = (text: string) => new TextEncoder().encode(BODY.slice(0, BODY.indexOf(text))).length;
    for (const at of [byteAt('Asha'), byteAt('TRXAB') + 4, byteAt('Duka')]) {
      const changed = new Uint8Array(bytes);
      changed[at]! ^= 0x01;
      await expectReason(verify({ payload: changed, headers: d.headers }), 'invalid_signature');
    }
    // An added trailing newline changes the bytes too.
    await expectReason(verify({ payload: `${BODY}\n`, headers: d.headers }), 'invalid_signature');
  });

  test('the wrong secret: a webhook secret where the API secret signed, with a hint; the other environment’s API secret', async () => {
    const d = legacy();
    const error = await expectReason(verify({ payload: d.body, headers: d.headers, secret: WEBHOOK_SECRET }), 'invalid_signature');
    expect(error.message).toBe('Signature does not match: wrong secret, or a changed body. Legacy form: pass the API secret.');
    expect(error.message).not.toContain(WEBHOOK_SECRET);
    await expectReason(verify({ payload: d.body, headers: d.headers, secret: 'prod_secret_other' }), 'invalid_signature');
  });

  test('a signature over "<timestamp>.<body>" (the current form’s message) does not pass for this form', async () => {
    const d = legacy(BODY, { signature: hmac(API_SECRET, `${T}.${BODY}`) });
    await expectReason(verify({ payload: d.body, headers: d.headers }), 'invalid_signature');
  });

  test('a re-serialised body fails: escaped slashes and an escaped U+2028 are bytes the HMAC covered', async () => {
    // A copy whose PHP escapes slashes, and a customer name with a line separator (PHP
    // escapes U+2028 even with JSON_UNESCAPED_UNICODE).
    const escaped = BODY.replaceAll('/', '\\/').replace('Asha Mwinyi', 'Asha\\u2028Mwinyi');
    const d = legacy(escaped);
    await expect(verify({ payload: d.body, headers: d.headers })).resolves.toMatchObject({
      data: { ipn_url: 'https://shop.example/ipn', customer_name: 'Asha\u2028Mwinyi' },
    });
    const reserialised = JSON.stringify(JSON.parse(escaped));
    expect(reserialised).not.toBe(escaped);
    await expectReason(verify({ payload: reserialised, headers: d.headers }), 'invalid_signature');
    // Parsed objects are refused outright, as in the current form.
    await expectReason(verify({ payload: JSON.parse(escaped) as never, headers: d.headers }), 'invalid_payload', /raw body/);
  });
});

describe('environment: the signed body’s, never the unsigned header’s', () => {
  test('pinned: the body must state it (data.environment)', async () => {
    const d = legacy();
    await expect(verify({ payload: d.body, headers: d.headers, environment: 'sandbox' })).resolves.toEqual(expected());
    await expectReason(
      verify({ payload: d.body, headers: d.headers, environment: 'production' }),
      'environment_mismatch',
      /^The body says "sandbox", expected "production"\.$/,
    );
  });

  test('data.is_sandbox when data.environment is absent: true or 1 is sandbox, false or 0 production', async () => {
    for (const [flag, env] of [
      [true, 'sandbox'],
      [1, 'sandbox'],
      [false, 'production'],
      [0, 'production'],
    ] as const) {
      const body = ipn((b) => {
        delete b.data.environment;
        b.data.is_sandbox = flag;
      });
      const d = legacy(body, { environment: env });
      await expect(verify({ payload: d.body, headers: d.headers, environment: env })).resolves.toMatchObject({
        data: { environment: env },
      });
      const other = env === 'sandbox' ? 'production' : 'sandbox';
      await expectReason(verify({ payload: d.body, headers: d.headers, environment: other }), 'environment_mismatch');
    }
  });

  test('data.environment decides when both are there', async () => {
    const body = ipn((b) => {
      b.data.environment = 'production';
      b.data.is_sandbox = true;
    });
    const d = legacy(body, { environment: 'production' });
    await expect(verify({ payload: d.body, headers: d.headers, environment: 'production' })).resolves.toMatchObject({
      data: { environment: 'production', is_sandbox: true },
    });
  });

  test('X-Environment disagreeing with the body is refused, pinned or not, before the HMAC', async () => {
    const d = legacy(BODY, { environment: 'production' });
    for (const environment of [undefined, 'sandbox', 'production'] as const)
      await expectReason(
        verify({ payload: d.body, headers: d.headers, environment }),
        'environment_mismatch',
        /^The body says "sandbox", X-Environment "production"\.$/,
      );
    // Checked before the signature: a wrong secret still gets environment_mismatch.
    await expectReason(verify({ payload: d.body, headers: d.headers, secret: 'other_secret' }), 'environment_mismatch');
    for (const header of ['SANDBOX', 'sandbox ', '']) {
      const odd = legacy(BODY, { environment: header });
      await expectReason(verify({ payload: odd.body, headers: odd.headers }), 'environment_mismatch');
    }
  });

  test('no X-Environment: the body says it', async () => {
    const d = legacy(BODY, { environment: null });
    await expect(verify({ payload: d.body, headers: d.headers, environment: 'sandbox' })).resolves.toEqual(expected());
  });

  test('a body that does not say its environment: refused when one is pinned; else accepted with environment null, whatever the header says', async () => {
    for (const change of [
      (b: Ipn) => {
        delete b.data.environment;
        delete b.data.is_sandbox;
      },
      (b: Ipn) => {
        b.data.environment = 'Sandbox';
        b.data.is_sandbox = 'yes';
      },
    ]) {
      const body = ipn(change);
      for (const header of ['production', null] as const) {
        const d = legacy(body, { environment: header });
        await expectReason(
          verify({ payload: d.body, headers: d.headers, environment: 'production' }),
          'environment_mismatch',
          /^The body says no environment, expected "production"\.$/,
        );
        // The unsigned header is never taken for the body's word.
        await expect(verify({ payload: d.body, headers: d.headers })).resolves.toMatchObject({ data: { environment: null } });
      }
    }
  });
});

describe('on WebCrypto (no node:crypto): the same answers', () => {
  test('a fresh copy of the module that finds no node:crypto verifies with crypto.subtle', async () => {
    const proc = process as { getBuiltinModule?: unknown };
    const saved = proc.getBuiltinModule;
    proc.getBuiltinModule = undefined;
    let fresh: typeof import('../../src/webhooks.js');
    try {
      vi.resetModules();
      fresh = await import('../../src/webhooks.js');
      const subtle = vi.spyOn(crypto.subtle, 'verify');
      const d = legacy();
      await expect(
        fresh.verifyWebhook({ payload: d.body, headers: d.headers, secret: [WEBHOOK_SECRET, API_SECRET], now: NOW }),
      ).resolves.toEqual(expected());
      expect(subtle).toHaveBeenCalledTimes(2);
      const error = await fresh
        .verifyWebhook({ payload: `${BODY} `, headers: d.headers, secret: API_SECRET, now: NOW })
        .catch((e: unknown) => e as { reason?: string });
      expect(error).toMatchObject({ reason: 'invalid_signature' });
      const bad = await fresh
        .verifyWebhook({ payload: d.body, headers: d.headers, secret: WEBHOOK_SECRET, now: NOW })
        .catch((e: unknown) => e as { message?: string });
      expect(bad).toMatchObject({ message: expect.stringContaining('API secret') });
      subtle.mockRestore();
    } finally {
      proc.getBuiltinModule = saved;
      vi.resetModules();
    }
  });
});

describe('signWebhook (testing kit) with format legacy round-trips', () => {
  test('an IPN object, signed with the API secret, verifies as the same event', async () => {
    const payload = parsed();
    const signed = await signWebhook({ format: 'legacy', payload, secret: API_SECRET });
    expect(signed.body).toBe(BODY);
    expect(signed.headers['X-Signature']).toBe(hmac(API_SECRET, BODY));
    await expect(verify({ payload: signed.body, headers: signed.headers, environment: 'sandbox' })).resolves.toEqual(expected());
  });
});

describe('types', () => {
  test('a payment event is of either form; format tells them apart, and id is a string only in the current form', async () => {
    const d = legacy();
    const event = await verify({ payload: d.body, headers: d.headers });
    if (event.type === 'payment.completed') {
      expectTypeOf(event).toEqualTypeOf<PaymentCompletedEvent | LegacyPaymentCompletedEvent>();
      expectTypeOf(event.id).toEqualTypeOf<string | undefined>();
      expectTypeOf(event.data.trx_id).toEqualTypeOf<string>();
      expectTypeOf(event.data.amount?.value).toEqualTypeOf<number | null | undefined>();
      if (event.format === 'legacy') {
        expectTypeOf(event).toEqualTypeOf<LegacyPaymentCompletedEvent>();
        expectTypeOf(event.id).toEqualTypeOf<undefined>();
        expectTypeOf(event.data.status).toEqualTypeOf<'completed' | 'failed'>();
        expectTypeOf(event.data.environment).toEqualTypeOf<'sandbox' | 'production' | null>();
        expectTypeOf(event.legacy.timestamp).toEqualTypeOf<number>();
        expect(event.legacy.timestamp).toBe(T);
      } else {
        expectTypeOf(event.id).toEqualTypeOf<string>();
        expect.unreachable('a legacy delivery');
      }
    } else {
      expect.unreachable(`narrowed to ${String(event.type)}`);
    }
    expectTypeOf<LegacyPaymentFailedEvent>().toEqualTypeOf<LegacyPaymentEvent<'payment.failed'>>();
    expectTypeOf<Extract<WebhookEvent, { format: 'legacy' }>>().toEqualTypeOf<LegacyPaymentCompletedEvent | LegacyPaymentFailedEvent>();
    expectTypeOf<VerifiedWebhookSignature['format']>().toEqualTypeOf<WebhookFormat>();
    expectTypeOf<VerifyWebhookOptions['formats']>().toEqualTypeOf<readonly WebhookFormat[] | undefined>();
  });
});
