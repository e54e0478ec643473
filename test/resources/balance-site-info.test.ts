// balance.retrieve and siteInfo.retrieve against the fake API.
import { describe, expect, test } from 'vitest';
import { InvalidParamsError, NotFoundError, ResponseValidationError } from '../../src/index.js';
import { expectPlainJson, expectSignedGet, rejection } from '../support/assertions.js';
import { fixtures } from '../support/fake-api.js';
import { useFakeApi } from '../support/harness.js';

const { api, setup } = useFakeApi();

const wallets = [
  { currency: 'USD', balance: 120.5 },
  { currency: 'TZS', balance: 250000 },
];

describe('balance.retrieve', () => {
  test('GETs /api/v1/balance, signed, no body, no Idempotency-Key; unwraps { status, data: [...] }', async () => {
    api.on('get', '/api/v1/balance', { body: { status: 'success', data: wallets } });
    const { client } = setup();
    const balance = await client.balance.retrieve();
    expectSignedGet(api.seen, '/api/v1/balance');
    expect(balance).toStrictEqual(wallets);
    expectPlainJson(balance);
  });

  // Provisional shape: the spec describes the balance only in words. Other
  // plausible answers are read as wallets; nothing a server sends makes the call throw.
  test.each([
    ['a currency map', { USD: 120.5, TZS: '250000.00' }, wallets],
    [
      'a currency map of objects',
      { USD: { available: 120.5, pending: 3 } },
      [{ currency: 'USD', balance: 120.5, available: 120.5, pending: 3 }],
    ],
    [
      'a wallets list',
      { wallets: [{ currency: 'USD', available: '120.50', pending: 0 }] },
      [{ currency: 'USD', balance: 120.5, available: 120.5, pending: 0 }],
    ],
    [
      'a list with available / pending',
      [{ currency: 'USD', available: 120.5, pending: 1 }],
      [{ currency: 'USD', balance: 120.5, available: 120.5, pending: 1 }],
    ],
    ['a wallet without a balance, kept', [{ currency: 'USD' }], [{ currency: 'USD' }]],
    ['one wallet on its own', { currency: 'USD', available: '120.50' }, [{ currency: 'USD', balance: 120.5, available: 120.5 }]],
    ['a balance list', { balance: [{ currency: 'TZS', amount: 250000 }] }, [{ currency: 'TZS', balance: 250000, amount: 250000 }]],
  ])('reads %s', async (_name, data, expected) => {
    api.on('get', '/api/v1/balance', { body: { status: 'success', data } });
    const { client } = setup();
    expect(await client.balance.retrieve()).toStrictEqual(expected);
  });

  test('fields a wallet has beyond currency and balance are kept', async () => {
    const body = [{ currency: 'USD', balance: 120.5, pending: 3 }];
    api.on('get', '/api/v1/balance', { body });
    const { client } = setup();
    const balance = await client.balance.retrieve();
    expect(balance).toStrictEqual(body);
    expectPlainJson(balance);
  });

  test('accepts a bare array of wallets', async () => {
    api.on('get', '/api/v1/balance', { body: wallets });
    const { client } = setup();
    expect(await client.balance.retrieve()).toStrictEqual(wallets);
  });

  test('.withResponse() gives { data, response }', async () => {
    api.on('get', '/api/v1/balance', { body: { status: 'success', data: wallets }, headers: { 'x-request-id': 'req_b' } });
    const { client } = setup();
    const { data, response } = await client.balance.retrieve().withResponse();
    expect(data).toStrictEqual(wallets);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('req_b');
  });

  test.each([
    ['a JSON boolean', 'true'],
    ['a JSON number', '42'],
    ['an array of non-objects', '[1,2]'],
  ])('%s is returned as it came (provisional: never a throw)', async (_name, raw) => {
    api.on('get', '/api/v1/balance', { body: JSON.parse(raw) as never });
    const { client } = setup();
    expect(await client.balance.retrieve()).toStrictEqual(JSON.parse(raw));
  });

  test('a non-JSON 200 body → ResponseValidationError with the text', async () => {
    api.on('get', '/api/v1/balance', { body: '<!doctype html><p>Login</p>' });
    const { client } = setup();
    const error = await rejection(client.balance.retrieve());
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as ResponseValidationError).body).toBe('<!doctype html><p>Login</p>');
    expect((error as ResponseValidationError).status).toBe(200);
  });

  test('per-call options are validated before sending', async () => {
    api.on('get', '/api/v1/balance', { body: wallets });
    const { client } = setup();
    const error = await rejection(client.balance.retrieve({ timeout: 0, maxRetries: -1, headers: { 'X-Signature': 'forged' } }));
    expect(error).toBeInstanceOf(InvalidParamsError);
    expect(Object.keys((error as InvalidParamsError).errors).sort()).toEqual(['headers.X-Signature', 'maxRetries', 'timeout']);
    expect(api.seen).toHaveLength(0);
  });

  test('extra per-call headers are sent and signing still verifies', async () => {
    api.on('get', '/api/v1/balance', { body: wallets });
    const { client } = setup();
    await client.balance.retrieve({ headers: { 'X-Request-Id': 'trace-7' } });
    expect(api.seen[0]!.headers['x-request-id']).toBe('trace-7');
    expect(api.seen[0]!.signatureValid).toBe(true);
  });
});

describe('siteInfo.retrieve', () => {
  test('GETs /api/v1/site-info, signed, and returns every documented field as plain JSON', async () => {
    api.on('get', '/api/v1/site-info', { body: fixtures.siteInfo });
    const { client } = setup();
    const info = await client.siteInfo.retrieve();
    expectSignedGet(api.seen, '/api/v1/site-info');
    expect(info).toStrictEqual(fixtures.siteInfo);
    expectPlainJson(info);
  });

  test('.withResponse() and unknown extra fields (top level and nested) kept', async () => {
    const body = {
      ...fixtures.siteInfo,
      support_email: 'help@payments.test',
      features: { ...fixtures.siteInfo.features, recurring_billing: 'Recurring billing' },
      environments: { ...fixtures.siteInfo.environments, staging: 'Internal' },
    };
    api.on('get', '/api/v1/site-info', { body });
    const { client } = setup();
    const { data, response } = await client.siteInfo.retrieve().withResponse();
    expect(response.status).toBe(200);
    expect(data).toStrictEqual(body);
  });

  // Nothing in site info is acted on (site_logo null used to throw): every field
  // is kept as the server sent it.
  const { features, environments } = fixtures.siteInfo;
  test.each([
    ['site_name missing', { ...fixtures.siteInfo, site_name: undefined }],
    ['site_logo null', { ...fixtures.siteInfo, site_logo: null }],
    ['gateway_description a list', { ...fixtures.siteInfo, gateway_description: ['x'] }],
    ['api_version a number', { ...fixtures.siteInfo, api_version: 1 }],
    ['features missing', { ...fixtures.siteInfo, features: undefined }],
    ['features.ssl_secured a boolean', { ...fixtures.siteInfo, features: { ...features, ssl_secured: true } }],
    ['environments.sandbox missing', { ...fixtures.siteInfo, environments: { production: environments.production } }],
    ['only a name', { site_name: 'x' }],
  ])('%s → resolves, kept as sent', async (_name, body) => {
    api.on('get', '/api/v1/site-info', { body });
    const { client } = setup();
    expect(await client.siteInfo.retrieve()).toStrictEqual(JSON.parse(JSON.stringify(body)));
  });

  test.each([
    ['a JSON number', 42],
    ['a list', [1]],
  ])('%s → ResponseValidationError (the spec shows an object)', async (_name, body) => {
    api.on('get', '/api/v1/site-info', { body: body as never });
    const { client } = setup();
    const error = await rejection(client.siteInfo.retrieve());
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as ResponseValidationError).body).toBe(JSON.stringify(body));
  });

  test('an error status is an APIError, not a validation error', async () => {
    api.on('get', '/api/v1/site-info', { status: 404, body: { error: 'Not Found', message: 'No such route' } });
    const { client } = setup();
    const error = await rejection(client.siteInfo.retrieve());
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).status).toBe(404);
  });
});

describe('documented shapes in a success envelope', () => {
  test('verify, siteInfo and payouts.preview unwrap { status, data }', async () => {
    api.on('get', '/api/v1/verify-payment/:id', { body: { status: 'success', data: fixtures.verified } });
    api.on('get', '/api/v1/site-info', { body: { status: 'success', data: fixtures.siteInfo } });
    api.on('post', '/api/v1/payouts/preview', { body: { status: 'success', data: { amount: 100, fee: 2, payable_amount: 98 } } });
    const { client } = setup();
    await expect(client.payments.verify('TRX123456')).resolves.toEqual(fixtures.verified);
    await expect(client.siteInfo.retrieve()).resolves.toEqual(fixtures.siteInfo);
    await expect(client.payouts.preview({ amount: 100 })).resolves.toEqual({ amount: 100, fee: 2, payable_amount: 98 });
  });
});
