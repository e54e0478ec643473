// client.openapi() against the fake API.
import { expect, test } from 'vitest';
import { InternalServerError, InvalidParamsError, ResponseValidationError } from '../../src/index.js';
import { expectSignedGet, gaps, rejection } from '../support/assertions.js';
import { useFakeApi } from '../support/harness.js';

const { api, setup } = useFakeApi();

const document = {
  openapi: '3.1.0',
  info: { title: 'Business Payments API', version: '1.0' },
  paths: {
    '/api/v1/payments': { post: { operationId: 'createPayment' }, get: { operationId: 'listPayments' } },
    '/api/v1/verify-payment/{trxId}': { get: { operationId: 'verifyPayment', parameters: [{ name: 'trxId', in: 'path' }] } },
  },
  components: { securitySchemes: { signature: { type: 'apiKey', in: 'header', name: 'X-Signature' } } },
};

test('GETs /api/v1/openapi.json, signed, no body or Idempotency-Key, and returns the document as plain JSON', async () => {
  api.on('get', '/api/v1/openapi.json', { body: document });
  const { client } = setup();
  const doc = await client.openapi();
  expectSignedGet(api.seen, '/api/v1/openapi.json');
  expect(doc).toStrictEqual(document);
  expect(Object.getPrototypeOf(doc)).toBe(Object.prototype);
  expect(structuredClone(doc)).toStrictEqual(document);
});

test('.withResponse() gives { data, response }', async () => {
  api.on('get', '/api/v1/openapi.json', { body: document, headers: { etag: '"v1"' } });
  const { client } = setup();
  const { data, response } = await client.openapi().withResponse();
  expect(data).toStrictEqual(document);
  expect(response.status).toBe(200);
  expect(response.headers.get('etag')).toBe('"v1"');
});

test('any JSON object is accepted (the server describes itself)', async () => {
  api.on('get', '/api/v1/openapi.json', { body: { swagger: '2.0', 'x-vendor': { a: [1, 2] } } });
  const { client } = setup();
  expect(await client.openapi()).toStrictEqual({ swagger: '2.0', 'x-vendor': { a: [1, 2] } });
});

test('a JSON array is not a document → ResponseValidationError keeping the raw body', async () => {
  api.on('get', '/api/v1/openapi.json', { body: [document] });
  const { client } = setup();
  const error = await rejection(client.openapi());
  expect(error).toBeInstanceOf(ResponseValidationError);
  expect((error as ResponseValidationError).body).toBe(JSON.stringify([document]));
});

test('YAML or HTML instead of JSON → ResponseValidationError with the text', async () => {
  const yaml = 'openapi: 3.1.0\ninfo:\n  title: Business Payments API\n';
  api.on('get', '/api/v1/openapi.json', { body: yaml });
  const { client } = setup();
  const error = await rejection(client.openapi());
  expect(error).toBeInstanceOf(ResponseValidationError);
  expect((error as ResponseValidationError).body).toBe(yaml);
  expect((error as ResponseValidationError).message).toMatch(/not JSON/);
});

test('a 500 is retried (GET is safe), then surfaces as InternalServerError', async () => {
  api.on('get', '/api/v1/openapi.json', { status: 500, body: { error: 'Server Error' } });
  const { client } = setup({ maxRetries: 2 });
  const error = await rejection(client.openapi());
  expect(error).toBeInstanceOf(InternalServerError);
  expect(api.seen).toHaveLength(3);
  expect(error.attempts).toBe(3);
  // Two backoff waits (Math.random() = 0.5): 437.5 and 875 ms, waited as whole ms.
  expect(gaps(api.seen)).toEqual([437, 875]);
});

test('per-call options are validated before sending', async () => {
  api.on('get', '/api/v1/openapi.json', { body: document });
  const { client } = setup();
  const error = await rejection(client.openapi({ timeout: 1.5, headers: { Accept: 'application/yaml' } }));
  expect(error).toBeInstanceOf(InvalidParamsError);
  expect(Object.keys((error as InvalidParamsError).errors).sort()).toEqual(['headers.Accept', 'timeout']);
  expect(api.seen).toHaveLength(0);
});
