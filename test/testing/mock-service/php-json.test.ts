// The sandbox's JSON is PHP's json_encode (php-json.ts): the encoder against outputs of PHP 8
// written here by hand, the API answers of both generations, and the current generation's
// webhook body, whose bytes a re-serialising handler no longer verifies.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { phpJson, phpNumber } from '../../../src/testing/mock-service/php-json.js';
import { hostedBody, setup, T0 } from '../../support/mock-service.js';

describe('phpJson: default flags', () => {
  it.each([
    ['https://shop.example.com/ipn', '"https:\\/\\/shop.example.com\\/ipn"'],
    ['Zoë', '"Zo\\u00eb"'],
    ['日本', '"\\u65e5\\u672c"'],
    ['😀', '"\\ud83d\\ude00"'], // astral: a surrogate pair
    ['a\u2028b\u2029', '"a\\u2028b\\u2029"'],
    ['"\\\b\f\n\r\t', '"\\"\\\\\\b\\f\\n\\r\\t"'],
    ['\u0001\u001f\u007f', '"\\u0001\\u001f\u007f"'], // DEL is not escaped
    ["<a href='x'>&</a>", '"<a href=\'x\'>&<\\/a>"'], // no JSON_HEX_* by default
  ])('%j → %s', (value, expected) => {
    expect(phpJson(value)).toBe(expected);
  });

  it.each([
    [100, '100'],
    [100.0, '100'], // no JSON_PRESERVE_ZERO_FRACTION
    [97.5, '97.5'],
    [0.1, '0.1'],
    [0.0001, '0.0001'],
    [0.00001, '1.0e-5'],
    [1.5e-7, '1.5e-7'],
    [1e16, '10000000000000000'],
    [1e17, '1.0e+17'],
    [1e25, '1.0e+25'],
    [1.2345678901234568e20, '1.2345678901234568e+20'],
    [-2.5, '-2.5'],
    [-0, '-0'],
    [Number.NaN, '0'],
  ])('number %d → %s', (value, expected) => {
    expect(phpNumber(value)).toBe(expected);
  });

  it('compact objects and arrays; a Map keeps insertion order (integer-like keys too)', () => {
    expect(phpJson({ a: [1, 'x', null, true], b: {}, c: [] })).toBe('{"a":[1,"x",null,true],"b":{},"c":[]}');
    expect(
      phpJson(
        new Map<string, unknown>([
          ['10', 'a'],
          ['2', 'b'],
          ['x', 'c'],
        ]),
      ),
    ).toBe('{"10":"a","2":"b","x":"c"}');
    expect(JSON.stringify({ 10: 'a', 2: 'b', x: 'c' })).toBe('{"2":"b","10":"a","x":"c"}'); // what JS does instead
    expect(phpJson({ skip: undefined, keep: 1 })).toBe('{"keep":1}');
  });

  it('JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE still escape U+2028 and U+2029', () => {
    const flags = { unescapedSlashes: true, unescapedUnicode: true };
    expect(phpJson({ url: 'https://x.test/a', name: 'Zoë 😀', odd: 'a\u2028b\u2029' }, flags)).toBe(
      '{"url":"https://x.test/a","name":"Zoë 😀","odd":"a\\u2028b\\u2029"}',
    );
  });

  it('JSON_PRETTY_PRINT: four spaces, "key": value, empty containers inline', () => {
    expect(phpJson({ message: 'm', trace: [{ line: 1 }], none: [] }, { pretty: true })).toBe(
      '{\n    "message": "m",\n    "trace": [\n        {\n            "line": 1\n        }\n    ],\n    "none": []\n}',
    );
  });
});

describe('API answers are PHP-encoded on both generations', () => {
  it('current: checkout_url written with \\/ and a non-ASCII echo as \\uXXXX', async () => {
    const { call } = setup();
    const reply = await call('POST', '/api/v1/initiate-payment', {
      ...hostedBody({ customer_name: 'Zoë' }),
      success_redirect: 'https://shop.example.com/ok',
      cancel_redirect: 'https://shop.example.com/no',
    });
    expect(reply.status).toBe(200);
    expect(reply.text).toContain('"payment_url":"https:\\/\\/sandbox.business-payments.test\\/checkout\\/');
    expect(reply.text).toContain('"customer_name":"Zo\\u00eb"');
    expect(reply.text).not.toContain('https://');
    expect(reply.body.info.customer_name).toBe('Zoë');
  });

  it('earlier: the same encoding for its own answers', async () => {
    const { call } = setup({ generation: 'earlier' });
    const reply = await call('POST', '/api/v1/initiate-payment', {
      ...hostedBody({ customer_name: 'Zoë' }),
      success_redirect: 'https://shop.example.com/ok',
      cancel_redirect: 'https://shop.example.com/no',
    });
    expect(reply.status).toBe(200);
    // The real product's link (no trx_id in it): its slashes escaped too.
    expect(reply.text).toMatch(
      /^\{"payment_url":"https:\\\/\\\/sandbox\.business-payments\.test\\\/payment\\\/checkout\?expires=\d+&token=/,
    );
    expect(reply.text).toContain('"ipn_url":"https:\\/\\/shop.example.com\\/ipn"');
    expect(reply.text).toContain('"customer_name":"Zo\\u00eb"');
  });
});

describe('current generation: the webhook body is PHP-encoded', () => {
  const hmac = (secret: string, timestamp: string, body: string) =>
    createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');

  it('a body carrying / or non-ASCII is not what JSON.stringify(JSON.parse(body)) gives: re-serialised, it no longer verifies', async () => {
    const { mock, call, received, creds } = setup();
    const { body } = await call('POST', '/api/v1/payments', hostedBody({ ref_trx: 'order/2025/7', customer_name: 'Zoë Müller' }));
    await mock.completeCheckout(body.trx_id, 'success');
    await mock.runDue();
    const delivery = received[0]!;
    expect(delivery.body).toContain('"merchant_ref":"order\\/2025\\/7"');
    expect(delivery.body).toContain('"name":"Zo\\u00eb M\\u00fcller"');
    const ts = String(Math.floor(T0 / 1000));
    expect(delivery.headers['x-service-signature']).toBe(hmac(creds.webhookSecret, ts, delivery.body));
    const reserialised = JSON.stringify(JSON.parse(delivery.body));
    expect(reserialised).not.toBe(delivery.body);
    expect(hmac(creds.webhookSecret, ts, reserialised)).not.toBe(delivery.headers['x-service-signature']);
    expect(JSON.parse(reserialised)).toEqual(JSON.parse(delivery.body)); // same meaning, other bytes
  });
});
