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

  test('a balance that is not a list of wallets is a ResponseValidationError with the raw body', async () => {
    for (const data of [{ USD: 120.5, TZS: 250000 }, [{ currency: 'USD' }]]) {
      api.on('get', '/api/v1/balance', { body: { status: 'success', data } });
      const { client } = setup();
      const error = await rejection(client.balance.retrieve());
      expect(error).toBeInstanceOf(ResponseValidationError);
      expect((error as ResponseValidationError).body).toBe(JSON.stringify({ status: 'success', data }));
    }
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
  ])('%s → ResponseValidationError keeping the raw body', async (_name, raw) => {
    api.on('get', '/api/v1/balance', { body: JSON.parse(raw) as never });
    const { client } = setup();
    const error = await rejection(client.balance.retrieve());
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as ResponseValidationError).body).toBe(raw);
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

  const { features, environments } = fixtures.siteInfo;
  const broken: Array<[string, Record<string, unknown>, string]> = [
    ['site_name missing', { ...fixtures.siteInfo, site_name: undefined }, 'site_name'],
    ['site_logo mistyped', { ...fixtures.siteInfo, site_logo: null }, 'site_logo'],
    ['site_url missing', { ...fixtures.siteInfo, site_url: undefined }, 'site_url'],
    ['gateway_name missing', { ...fixtures.siteInfo, gateway_name: undefined }, 'gateway_name'],
    ['gateway_description mistyped', { ...fixtures.siteInfo, gateway_description: ['x'] }, 'gateway_description'],
    ['api_version mistyped', { ...fixtures.siteInfo, api_version: 1 }, 'api_version'],
    ['status missing', { ...fixtures.siteInfo, status: undefined }, 'status'],
    ['features missing', { ...fixtures.siteInfo, features: undefined }, 'features'],
    [
      'features.mobile_ready missing',
      { ...fixtures.siteInfo, features: { ...features, mobile_ready: undefined } },
      'features.mobile_ready',
    ],
    ['features.ssl_secured mistyped', { ...fixtures.siteInfo, features: { ...features, ssl_secured: true } }, 'features.ssl_secured'],
    [
      'environments.sandbox missing',
      { ...fixtures.siteInfo, environments: { production: environments.production } },
      'environments.sandbox',
    ],
    [
      'environments.production mistyped',
      { ...fixtures.siteInfo, environments: { ...environments, production: 1 } },
      'environments.production',
    ],
  ];
  test.each(broken)('%s → ResponseValidationError keeping the raw body', async (_name, body, field) => {
    api.on('get', '/api/v1/site-info', { body });
    const { client } = setup();
    const error = await rejection(client.siteInfo.retrieve());
    expect(error).toBeInstanceOf(ResponseValidationError);
    const rve = error as ResponseValidationError;
    expect(rve.body).toBe(JSON.stringify(body));
    expect(Object.keys(rve.errors ?? {})).toEqual([field]);
    expect(rve.message).toContain(field);
    expect(api.seen).toHaveLength(1);
  });

  test('every missing field is listed at once', async () => {
    const body = { site_name: 'x' };
    api.on('get', '/api/v1/site-info', { body });
    const { client } = setup();
    const error = (await rejection(client.siteInfo.retrieve())) as ResponseValidationError;
    expect(Object.keys(error.errors ?? {}).sort()).toEqual(
      ['api_version', 'environments', 'features', 'gateway_description', 'gateway_name', 'site_logo', 'site_url', 'status'].sort(),
    );
  });

  test('an error status is an APIError, not a validation error', async () => {
    api.on('get', '/api/v1/site-info', { status: 404, body: { error: 'Not Found', message: 'No such route' } });
    const { client } = setup();
    const error = await rejection(client.siteInfo.retrieve());
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).status).toBe(404);
  });
});
