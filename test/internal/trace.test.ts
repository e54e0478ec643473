// What an operator sees of the SDK in production: tracing on the diagnostics_channel
// TracingChannel `business-payments:request` (and the retry channel). User-Agent, request
// ids, fetchOptions, withOptions and timeouts are in test/internal/transport.test.ts.
import diagnostics from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { APIUserAbortError, NotFoundError, PaymentsClient, ResponseValidationError, type ClientOptions } from '../../src/index.js';
import { rejection, settle, UUID } from '../support/assertions.js';
import { fixtures } from '../support/fake-api.js';
import { useFakeApi } from '../support/harness.js';

const { api, setup } = useFakeApi();
beforeEach(() => vi.stubEnv('BUSINESS_PAYMENTS_LOG', ''));

function client(options: ClientOptions = {}): PaymentsClient {
  return setup(options).client;
}

const createParams = { payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1001', customer_phone: '255712345678' };
const createBody = { status: 'success', data: fixtures.payment, payment_url: fixtures.payment.checkout_url, trx_id: 'TRX123456' };

/** Every event on the request TracingChannel and the retry channel, as [event, snapshot of the context]. */
function listen() {
  const events: [string, Record<string, unknown>][] = [];
  const contexts = new Set<object>();
  const record = (name: string) => (message: unknown) => {
    contexts.add(message as object);
    events.push([name, { ...(message as Record<string, unknown>) }]);
  };
  const handlers = {
    start: record('start'),
    end: record('end'),
    asyncStart: record('asyncStart'),
    asyncEnd: record('asyncEnd'),
    error: record('error'),
  };
  const retry = record('retry');
  const tracing = diagnostics.tracingChannel('business-payments:request');
  tracing.subscribe(handlers);
  diagnostics.subscribe('business-payments:request:retry', retry);
  const stop = () => {
    tracing.unsubscribe(handlers);
    diagnostics.unsubscribe('business-payments:request:retry', retry);
  };
  return { events, contexts, stop, names: () => events.map(([name]) => name) };
}

let listener: ReturnType<typeof listen> | undefined;
afterEach(() => listener?.stop());

describe('tracing: business-payments:request', () => {
  test('a call publishes start, end, asyncStart, asyncEnd with what an operator needs', async () => {
    listener = listen();
    api.on('get', '/api/v1/payments/:trx', { body: fixtures.payment, headers: { 'x-request-id': 'req_abc' } });
    await settle(client().payments.retrieve('TRX123456'));
    expect(listener.names()).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
    expect(listener.contexts.size).toBe(1);
    expect(listener.events[0]![1]).toEqual({
      operation: 'payments.retrieve',
      method: 'GET',
      route: '/api/v1/payments/{trx_id}',
      environment: 'sandbox',
      idempotencyKey: undefined,
      attempt: 0,
    });
    expect(listener.events.at(-1)![1]).toEqual({
      operation: 'payments.retrieve',
      method: 'GET',
      route: '/api/v1/payments/{trx_id}',
      environment: 'sandbox',
      idempotencyKey: undefined,
      attempt: 1,
      status: 200,
      requestId: 'req_abc',
    });
  });

  test('a create retried twice: one trace, one retry event per retry, the key of every attempt', async () => {
    listener = listen();
    api.sequence('post', '/api/v1/payments', [
      { status: 503, body: { error: 'Service Unavailable' }, headers: { 'x-request-id': 'req_1' } },
      { status: 500, body: { error: 'Server Error' }, headers: { 'x-request-id': 'req_2' } },
      { body: createBody, headers: { 'x-request-id': 'req_3' } },
    ]);
    await settle(client().payments.create(createParams));
    expect(listener.names()).toEqual(['start', 'end', 'retry', 'retry', 'asyncStart', 'asyncEnd']);
    const retries = listener.events.filter(([name]) => name === 'retry').map(([, c]) => c);
    expect(retries.map((c) => [c.attempt, c.status, c.errorClass, c.requestId])).toEqual([
      [2, 503, 'InternalServerError', 'req_1'],
      [3, 500, 'InternalServerError', 'req_2'],
    ]);
    const last = listener.events.at(-1)![1];
    expect(last).toMatchObject({ operation: 'payments.create', method: 'POST', route: '/api/v1/payments', attempt: 3, status: 200 });
    expect(last.requestId).toBe('req_3');
    expect(last.idempotencyKey).toMatch(UUID);
    expect(api.seen.map((r) => r.headers['idempotency-key'])).toEqual([last.idempotencyKey, last.idempotencyKey, last.idempotencyKey]);
  });

  test('a failed call publishes error with the error class, status and request id', async () => {
    listener = listen();
    api.on('get', '/api/v1/payments/:trx', { status: 404, body: { error: 'Not Found' }, headers: { 'request-id': 'req_404' } });
    const error = await rejection(client().payments.retrieve('TRX404'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(listener.names()).toEqual(['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
    expect(listener.events.at(-1)![1]).toMatchObject({ errorClass: 'NotFoundError', status: 404, requestId: 'req_404', attempt: 1 });
  });

  test('a 2xx the SDK cannot use is traced as a ResponseValidationError when the data is awaited', async () => {
    listener = listen();
    api.on('get', '/api/v1/payments/:trx', { body: 'not json' });
    const error = await rejection(client().payments.retrieve('TRX123456'));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(listener.names()).toEqual(['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
    expect(listener.events.at(-1)![1]).toMatchObject({ errorClass: 'ResponseValidationError', status: 200 });
  });

  test('asResponse(): the trace ends with the response, whose body stays unread for the caller', async () => {
    listener = listen();
    api.on('get', '/api/v1/balance', { body: { ok: true } });
    const response = await settle(client().balance.retrieve().asResponse());
    expect(listener.names()).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
    expect(await response.json()).toEqual({ ok: true });
  });

  test('input errors and aborts are traced too, before anything is sent', async () => {
    listener = listen();
    const controller = new AbortController();
    controller.abort();
    const aborted = await rejection(client().balance.retrieve({ signal: controller.signal }));
    expect(aborted).toBeInstanceOf(APIUserAbortError);
    expect(listener.events.at(-1)![1]).toMatchObject({ errorClass: 'APIUserAbortError', attempt: 0 });
    expect(api.seen).toHaveLength(0);
  });

  test('list pages are traced one trace per page', async () => {
    listener = listen();
    api.on('get', '/api/v1/payments', { body: { data: [fixtures.payment], total: 1, per_page: 1, current_page: 1 } });
    await settle(client().payments.list());
    expect(listener.names().filter((n) => n === 'start')).toHaveLength(1);
    expect(listener.events.at(-1)![1]).toMatchObject({ operation: 'payments.list', route: '/api/v1/payments', status: 200 });
  });

  test('with no subscriber nothing is published (and a subscriber added later is seen)', async () => {
    const seen: unknown[] = [];
    const spy = (message: unknown) => seen.push(message);
    api.on('get', '/api/v1/balance', { body: { ok: true } });
    await settle(client().balance.retrieve());
    diagnostics.subscribe('tracing:business-payments:request:start', spy);
    try {
      await settle(client().balance.retrieve());
    } finally {
      diagnostics.unsubscribe('tracing:business-payments:request:start', spy);
    }
    await settle(client().balance.retrieve());
    expect(seen).toHaveLength(1);
  });
});
