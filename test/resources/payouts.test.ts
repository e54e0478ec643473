// payouts.preview / create / retrieve against the fake API (payouts.list: pagination.test.ts).
// Time is virtual (fake timers from START, Math.random 0.5): waits pass inside settle()/rejection().
import { describe, expect, test } from 'vitest';
import { InternalServerError, ResponseValidationError, UnprocessableEntityError } from '../../src/index.js';
import { expectPlainJson, invalidParams, rejection, UUID } from '../support/assertions.js';
import { START } from '../support/fake-api.js';
import { useFakeApi } from '../support/harness.js';

const { api, setup } = useFakeApi();

const PAYOUT_ID = '3f2b8c1e-9a4d-4e6f-8b7a-1c2d3e4f5a6b';
const payout = { id: PAYOUT_ID, amount: 100, fee: 1.5, status: 'SUCCESS', destination: '255712345678' };
const preview = { amount: 100, fee: 1.5, payable_amount: 98.5 };

describe('payouts.preview', () => {
  test('POSTs { amount } to /api/v1/payouts/preview, signed, and returns the fee preview as plain JSON', async () => {
    api.on('post', '/api/v1/payouts/preview', { body: preview });
    const { client } = setup();
    const result = await client.payouts.preview({ amount: 100 });
    const req = api.seen[0]!;
    expect(api.seen).toHaveLength(1);
    expect(req.method).toBe('POST');
    expect(req.pathWithQuery).toBe('/api/v1/payouts/preview');
    expect(req.rawBody).toBe('{"amount":100}');
    expect(req.signatureValid).toBe(true);
    // A preview moves no money: no key is generated for it.
    expect(req.headers['idempotency-key']).toBeUndefined();
    expect(result).toStrictEqual(preview);
    expectPlainJson(result);
  });

  test('.withResponse() and unknown extra fields', async () => {
    const body = { ...preview, currency: 'TZS', note: 'fees may change' };
    api.on('post', '/api/v1/payouts/preview', { body });
    const { client } = setup();
    const { data, response } = await client.payouts.preview({ amount: 100 }).withResponse();
    expect(response.status).toBe(200);
    expect(data).toStrictEqual(body);
  });

  // Shown shape: fee and payable_amount are acted on; decimal strings read as numbers and
  // the echoed amount is kept as sent.
  test.each([
    ['fee as a decimal string', { ...preview, fee: '1.50' }, { fee: 1.5 }],
    ['amount missing', { fee: 1.5, payable_amount: 98.5 }, { fee: 1.5, payable_amount: 98.5 }],
  ])('%s → resolves', async (_name, body, expected) => {
    api.on('post', '/api/v1/payouts/preview', { body });
    const { client } = setup();
    expect(await client.payouts.preview({ amount: 100 })).toMatchObject(expected);
  });

  const broken: Array<[string, Record<string, unknown>, string]> = [
    ['payable_amount missing', { amount: 100, fee: 1.5 }, 'payable_amount'],
    ['fee not a number', { ...preview, fee: 'n/a' }, 'fee'],
  ];
  test.each(broken)('%s → ResponseValidationError keeping the raw body', async (_name, body, field) => {
    api.on('post', '/api/v1/payouts/preview', { body });
    const { client } = setup();
    const error = await rejection(client.payouts.preview({ amount: 100 }));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as ResponseValidationError).body).toBe(JSON.stringify(body));
    expect(Object.keys((error as ResponseValidationError).errors ?? {})).toEqual([field]);
  });

  test.each([
    ['0', { amount: 0 }, 'amount'],
    ['negative', { amount: -10 }, 'amount'],
    ['a string that is no decimal', { amount: '100 USD' }, 'amount'],
    ['with 3 decimal places', { amount: 10.005 }, 'amount'],
    ['NaN', { amount: Number.NaN }, 'amount'],
    ['missing', {}, 'amount'],
  ])('refuses amount %s before sending', async (_name, params, field) => {
    api.on('post', '/api/v1/payouts/preview', { body: preview });
    const { client } = setup();
    const error = await invalidParams(client.payouts.preview(params as never));
    expect(Object.keys(error.errors)).toEqual([field]);
    expect(api.seen).toHaveLength(0);
  });

  test('refuses unknown keys', async () => {
    api.on('post', '/api/v1/payouts/preview', { body: preview });
    const { client } = setup();
    const error = await invalidParams(client.payouts.preview({ amount: 100, destination: '255712345678' } as never));
    expect(JSON.stringify(error.errors)).toContain('destination');
    expect(api.seen).toHaveLength(0);
  });
});

describe('payouts.create', () => {
  test('POSTs { amount, destination } with a generated Idempotency-Key; unwraps a { status, data } envelope', async () => {
    api.on('post', '/api/v1/payouts', { body: { status: 'success', data: payout } });
    const { client } = setup();
    const result = await client.payouts.create({ amount: 100, destination: '255712345678' });
    const req = api.seen[0]!;
    expect(api.seen).toHaveLength(1);
    expect(req.method).toBe('POST');
    expect(req.pathWithQuery).toBe('/api/v1/payouts');
    expect(req.rawBody).toBe('{"amount":100,"destination":"255712345678"}');
    expect(req.signatureValid).toBe(true);
    expect(req.headers['idempotency-key']).toMatch(UUID);
    expect(result).toStrictEqual(payout);
    expectPlainJson(result);
  });

  test('a bare payout object is accepted as it is, extra fields kept', async () => {
    const body = { ...payout, reference: 'PO-1', settled_at: null };
    api.on('post', '/api/v1/payouts', { status: 201, body });
    const { client } = setup();
    const { data, response } = await client.payouts.create({ amount: 100 }).withResponse();
    expect(response.status).toBe(201);
    expect(data).toStrictEqual(body);
    expect(api.seen[0]!.rawBody).toBe('{"amount":100}');
  });

  test("sends the caller's idempotencyKey; 64 characters accepted, 65 refused", async () => {
    api.on('post', '/api/v1/payouts', { body: payout });
    const { client } = setup();
    await client.payouts.create({ amount: 100 }, { idempotencyKey: 'p'.repeat(64) });
    expect(api.seen[0]!.headers['idempotency-key']).toBe('p'.repeat(64));
    const error = await invalidParams(client.payouts.create({ amount: 100 }, { idempotencyKey: 'p'.repeat(65) }));
    expect(Object.keys(error.errors)).toEqual(['idempotencyKey']);
    expect(api.seen).toHaveLength(1);
  });

  test('an INPROGRESS payout is returned as it is', async () => {
    api.on('post', '/api/v1/payouts', { body: { status: 'success', data: { ...payout, status: 'INPROGRESS' } } });
    const { client } = setup();
    expect((await client.payouts.create({ amount: 100 })).status).toBe('INPROGRESS');
    expect(api.seen).toHaveLength(1);
  });

  test.each([
    ['502 AMBIGUOUS (top level)', { status: 502, body: { status: 'AMBIGUOUS', message: 'upstream did not answer' } }],
    ['500 INPROGRESS (in data)', { status: 500, body: { error: 'Payout pending', data: { id: PAYOUT_ID, status: 'INPROGRESS' } } }],
    ['503 outcome ambiguous (lower case)', { status: 503, body: { outcome: 'ambiguous' } }],
  ])('%s is never retried as a new payout', async (_name, reply) => {
    api.on('post', '/api/v1/payouts', reply);
    const { client } = setup();
    const error = await rejection(client.payouts.create({ amount: 100 }));
    expect(error).toBeInstanceOf(InternalServerError);
    expect(api.seen).toHaveLength(1);
    expect(error.attempts).toBe(1);
    expect(error.idempotencyKey).toBe(api.seen[0]!.headers['idempotency-key']);
    // No backoff wait was started: virtual time never moved.
    expect(Date.now()).toBe(START);
  });

  // Money out is not retried on a 5xx (it once was), whose meaning may be "ambiguous".
  test('a plain 503 is not retried: thrown with the key and how to look the payout up', async () => {
    api.sequence('post', '/api/v1/payouts', [{ status: 503, body: { error: 'Service Unavailable' } }, { body: payout }]);
    const { client } = setup();
    const error = await rejection(client.payouts.create({ amount: 100 }));
    expect(api.seen).toHaveLength(1);
    expect(error.idempotencyKey).toBe(api.seen[0]!.headers['idempotency-key']);
    expect(error.message).toContain('client.payouts.list()');
    // Retrying with the key the error carries sends the same body under the same key.
    expect(await client.payouts.create({ amount: 100 }, { idempotencyKey: error.idempotencyKey })).toStrictEqual(payout);
    expect(api.seen[1]!.headers['idempotency-key']).toBe(api.seen[0]!.headers['idempotency-key']);
    expect(api.seen[1]!.rawBody).toBe(api.seen[0]!.rawBody);
  });

  test('Payout Rejected (gate) surfaces with its label', async () => {
    api.on('post', '/api/v1/payouts', { status: 422, body: { error: 'Payout Rejected', message: 'KYB approval is required.' } });
    const { client } = setup();
    const error = await rejection(client.payouts.create({ amount: 100 }));
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect((error as UnprocessableEntityError).label).toBe('Payout Rejected');
    expect(api.seen).toHaveLength(1);
  });

  // Provisional shape: a payout the server made must never become an error no
  // retry can clear (the merchant would pay out again under a new key).
  test('an integer id reads as its digits', async () => {
    api.on('post', '/api/v1/payouts', { body: { id: 12345, amount: 100, status: 'SUCCESS' } });
    const { client } = setup();
    expect(await client.payouts.create({ amount: 100 })).toStrictEqual({ id: '12345', amount: 100, status: 'SUCCESS' });
  });

  test('{ status, data: { payout_id, amount, status: SUCCESSFUL } } reads as a payout', async () => {
    const data = { payout_id: PAYOUT_ID, amount: 100, status: 'SUCCESSFUL' };
    api.on('post', '/api/v1/payouts', { body: { status: 'success', data } });
    const { client } = setup();
    expect(await client.payouts.create({ amount: 100 })).toStrictEqual({
      ...data,
      id: PAYOUT_ID,
      status: 'SUCCESS',
      server_status: 'SUCCESSFUL',
    });
  });

  test('a decimal string and float noise are sent as the exact amount, a local destination as international digits', async () => {
    api.on('post', '/api/v1/payouts', { body: payout });
    const { client } = setup();
    await client.payouts.create({ amount: '100.50', destination: '0712 345 678' });
    await client.payouts.create({ amount: 0.1 + 0.2 });
    expect(api.seen.map((call) => call.json)).toStrictEqual([{ amount: 100.5, destination: '255712345678' }, { amount: 0.3 }]);
  });

  test('amount 0.01 is accepted (> 0)', async () => {
    api.on('post', '/api/v1/payouts', { body: payout });
    const { client } = setup();
    await client.payouts.create({ amount: 0.01 });
    expect(api.seen[0]!.json).toStrictEqual({ amount: 0.01 });
  });

  test.each([
    ['amount 0', { amount: 0 }, ['amount']],
    ['amount negative', { amount: -1 }, ['amount']],
    ['amount a string that is no decimal', { amount: '1,000' }, ['amount']],
    ['amount with 3 decimal places', { amount: 1000.123 }, ['amount']],
    ['amount Infinity', { amount: Number.POSITIVE_INFINITY }, ['amount']],
    ['amount missing', { destination: '255712345678' }, ['amount']],
    ['destination not a mobile number', { amount: 100, destination: 'my phone' }, ['destination']],
    ['destination too short', { amount: 100, destination: '12345' }, ['destination']],
    ['amount and destination both bad', { amount: 0, destination: 'x' }, ['amount', 'destination']],
  ])('refuses %s before sending', async (_name, params, fields) => {
    api.on('post', '/api/v1/payouts', { body: payout });
    const { client } = setup();
    const error = await invalidParams(client.payouts.create(params as never));
    expect(Object.keys(error.errors).sort()).toEqual(fields);
    expect(api.seen).toHaveLength(0);
  });

  test('refuses unknown keys', async () => {
    api.on('post', '/api/v1/payouts', { body: payout });
    const { client } = setup();
    const error = await invalidParams(client.payouts.create({ amount: 100, currency: 'TZS' } as never));
    expect(JSON.stringify(error.errors)).toContain('currency');
    expect(api.seen).toHaveLength(0);
  });
});

describe('payouts.retrieve', () => {
  test('GETs /api/v1/payouts/{id}, signed, without body or Idempotency-Key', async () => {
    api.on('get', '/api/v1/payouts/:id', { body: payout });
    const { client } = setup();
    const result = await client.payouts.retrieve(PAYOUT_ID);
    const req = api.seen[0]!;
    expect(api.seen).toHaveLength(1);
    expect(req.method).toBe('GET');
    expect(req.pathWithQuery).toBe(`/api/v1/payouts/${PAYOUT_ID}`);
    expect(req.rawBody).toBe('');
    expect(req.signatureValid).toBe(true);
    expect(req.headers['idempotency-key']).toBeUndefined();
    expect(result).toStrictEqual(payout);
    expectPlainJson(result);
  });

  test('unwraps a { status, data } envelope; AMBIGUOUS returned as it is', async () => {
    const record = { ...payout, status: 'AMBIGUOUS', upstream_ref: 'X1' };
    api.on('get', '/api/v1/payouts/:id', { body: { status: 'success', data: record } });
    const { client } = setup();
    const { data, response } = await client.payouts.retrieve(PAYOUT_ID).withResponse();
    expect(response.status).toBe(200);
    expect(data).toStrictEqual(record);
  });

  test('accepts an upper-case UUID', async () => {
    api.on('get', '/api/v1/payouts/:id', { body: payout });
    const { client } = setup();
    await client.payouts.retrieve(PAYOUT_ID.toUpperCase());
    expect(api.seen[0]!.pathWithQuery).toBe(`/api/v1/payouts/${PAYOUT_ID.toUpperCase()}`);
  });

  test.each([
    ['not a UUID', 'payout-1'],
    ['empty', ''],
    ['a UUID with an extra character', `${PAYOUT_ID}0`],
    ['a UUID without dashes', PAYOUT_ID.replaceAll('-', '')],
    ['a path traversal', '../balance'],
  ])('refuses an id that is %s before sending', async (_name, id) => {
    api.on('get', '/api/v1/payouts/:id', { body: payout });
    const { client } = setup();
    const error = await invalidParams(client.payouts.retrieve(id));
    expect(Object.keys(error.errors)).toEqual(['id']);
    expect(error.errors.id!.join(' ')).toMatch(/UUID/);
    expect(api.seen).toHaveLength(0);
  });

  test('a decimal-string amount and no status are read as they can be, nothing thrown', async () => {
    const body = { status: 'success', data: { id: PAYOUT_ID, amount: '100' } };
    api.on('get', '/api/v1/payouts/:id', { body });
    const { client } = setup();
    expect(await client.payouts.retrieve(PAYOUT_ID)).toStrictEqual({ id: PAYOUT_ID, amount: 100 });
  });
});
