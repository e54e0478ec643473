// APIPromise, the promise every method returns: `.asResponse()` is the raw Response, unread and
// unvalidated (the escape hatch when a shape surprises you), and a body read through it cannot
// be read again as data. `.withResponse()` is exercised per route in test/resources/.
import { describe, expect, test } from 'vitest';
import { APIConnectionError, PaymentsError, ResponseValidationError } from '../../src/index.js';
import { rejection } from '../support/assertions.js';
import { fixtures } from '../support/fake-api.js';
import { useFakeApi } from '../support/harness.js';

const { api, setup } = useFakeApi();

describe('asResponse()', () => {
  test('verify(...).asResponse() gives the raw Response, status 200, body unread', async () => {
    api.on('get', '/api/v1/verify-payment/:id', { body: fixtures.verified, headers: { 'x-request-id': 'req_7' } });
    const { client } = setup();
    const res = await client.payments.verify('TRX123456').asResponse();
    expect(res).toBeInstanceOf(Response);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('req_7');
    expect(res.bodyUsed).toBe(false);
    expect(await res.json()).toStrictEqual(fixtures.verified);
    expect(api.seen).toHaveLength(1);
  });

  test('asResponse() on a body that would fail validation still resolves (nothing is validated)', async () => {
    const body = { status: 'success', trx_id: 123456, amount: '25.00' };
    api.on('get', '/api/v1/verify-payment/:id', { body });
    const { client } = setup();
    const res = await client.payments.verify('TRX123456').asResponse();
    expect(res.status).toBe(200);
    expect(res.bodyUsed).toBe(false);
    expect(await res.text()).toBe(JSON.stringify(body));
    // Awaited for data, the same answer is refused.
    expect(await rejection(client.payments.verify('TRX123456'))).toBeInstanceOf(ResponseValidationError);
  });

  test('a body read through asResponse() and then asked for as data: a clear error, not a connection failure', async () => {
    api.on('get', '/api/v1/verify-payment/:id', { body: fixtures.verified });
    const { client } = setup();
    const call = client.payments.verify('TRX123456');
    await (await call.asResponse()).json();
    const error = await rejection(call);
    expect(error).toBeInstanceOf(PaymentsError);
    expect(error).not.toBeInstanceOf(APIConnectionError);
    expect(error.message).toMatch(/asResponse\(\)/);
  });
});
