// OpenTelemetry spans from the SDK's diagnostics_channel traces, subscribed the way
// docs/observability.md shows (examples/opentelemetry/tracing.ts, imported as is), against
// the sandbox on a real socket: one span per call, one event per retry, the attributes;
// and a sweep over every method, retries, errors and the fulfillment kit asserting that no
// published message and no exported span holds a secret, a signature or a phone number.
import diagnostics from 'node:diagnostics_channel';
import { SpanStatusCode } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { traceBusinessPayments } from '../../examples/opentelemetry/tracing.js';
import { PaymentsClient, type ClientOptions } from '../../src/index.js';
import { createFulfillment } from '../../src/fulfillment.js';
import { signWebhook, TEST_PHONE_NUMBERS } from '../../src/testing.js';
import { startSandbox, type Sandbox } from '../support/sandbox.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
let untrace: () => void;
let sandbox: Sandbox;

// Every message published on every channel, serialised at the moment it was published.
const published: string[] = [];
const CHANNELS = ['business-payments:request', 'business-payments:fulfillment'];
const EVENTS = ['start', 'end', 'asyncStart', 'asyncEnd', 'error'];
const keep = (message: unknown) => void published.push(JSON.stringify(message));

beforeAll(async () => {
  sandbox = await startSandbox({ timeScale: 0.001 });
  untrace = traceBusinessPayments(provider.getTracer('business-payments-test'));
  for (const name of CHANNELS) for (const event of EVENTS) diagnostics.subscribe(`tracing:${name}:${event}`, keep);
  diagnostics.subscribe('business-payments:request:retry', keep);
});
afterAll(async () => {
  untrace();
  for (const name of CHANNELS) for (const event of EVENTS) diagnostics.unsubscribe(`tracing:${name}:${event}`, keep);
  diagnostics.unsubscribe('business-payments:request:retry', keep);
  await sandbox.close();
});
afterEach(() => exporter.reset());

/** Signatures the client sent, recorded by a fetch that wraps the global one. */
const signatures = new Set<string>();
function recordingFetch(answer?: (request: Request, attempt: number) => Response | undefined): typeof fetch {
  const attempts = new Map<string, number>();
  return async (input, init) => {
    const request = input as Request;
    const signature = request.headers.get('x-signature');
    if (signature) signatures.add(signature);
    // Attempts of one call share their Idempotency-Key (creates) or their path (reads).
    const key = request.headers.get('idempotency-key') ?? `${request.method} ${request.url}`;
    const attempt = (attempts.get(key) ?? 0) + 1;
    attempts.set(key, attempt);
    return answer?.(request, attempt) ?? fetch(request, init);
  };
}

function client(options: ClientOptions = {}): PaymentsClient {
  return sandbox.clientWith({ fetch: recordingFetch(), ...options });
}

const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
let orders = 0;
const order = (name: string) => ({
  payment_amount: 25,
  currency_code: 'USD',
  ref_trx: `otel-${name}-${++orders}`,
  ipn_url: 'https://shop.example.com/webhooks',
});
const PHONE = TEST_PHONE_NUMBERS.success;
const SETTLEMENT = '255712345678';

describe('OpenTelemetry spans from the channel', () => {
  test('one span per call, with the attributes', async () => {
    await client().balance.retrieve();
    const payment = await client().payments.create(order('one'));
    expect(spans()).toHaveLength(2);
    const [balance, create] = spans();
    expect(balance!.name).toBe('business-payments balance.retrieve');
    expect(balance!.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/api/v1/balance',
      'http.response.status_code': 200,
      'business_payments.operation': 'balance.retrieve',
      'business_payments.environment': 'sandbox',
      'business_payments.attempts': 1,
      // The sandbox sends X-Request-Id.
      'business_payments.request_id': expect.stringMatching(/^req_/),
    });
    expect(balance!.status.code).not.toBe(SpanStatusCode.ERROR);
    expect(create!.attributes['http.route']).toBe('/api/v1/payments');
    expect(create!.attributes['business_payments.idempotency_key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(payment.trx_id).toBeTruthy();
  });

  test('one event per retry, with how the attempt failed; the span ends once, after the last attempt', async () => {
    // The first two attempts of the call are refused with 429 (Retry-After: 0), the third is the sandbox's.
    const flaky = recordingFetch((_request, attempt) =>
      attempt <= 2 ? new Response('{"error":"Too Many Requests"}', { status: 429, headers: { 'retry-after': '0' } }) : undefined,
    );
    await client({ fetch: flaky }).balance.retrieve();
    expect(spans()).toHaveLength(1);
    const [span] = spans();
    expect(span!.events.map((event) => [event.name, event.attributes])).toEqual([
      ['retry', { 'business_payments.attempt': 2, 'http.response.status_code': 429, 'error.type': 'RateLimitError' }],
      ['retry', { 'business_payments.attempt': 3, 'http.response.status_code': 429, 'error.type': 'RateLimitError' }],
    ]);
    expect(span!.attributes).toMatchObject({ 'business_payments.attempts': 3, 'http.response.status_code': 200 });
  });

  test('a failed call: status ERROR, the error class, status and request id', async () => {
    const failing = recordingFetch(() =>
      Response.json({ error: 'Not Found', message: 'No such payment' }, { status: 404, headers: { 'x-request-id': 'req_nf' } }),
    );
    await expect(client({ fetch: failing }).payments.retrieve('TRX_NOPE')).rejects.toThrow('404');
    const [span] = spans();
    expect(span!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'NotFoundError' });
    expect(span!.attributes).toMatchObject({
      'error.type': 'NotFoundError',
      'http.response.status_code': 404,
      'business_payments.request_id': 'req_nf',
      'http.route': '/api/v1/payments/{trx_id}',
    });
  });
});

describe('no secret, signature or phone number in any published message or span', () => {
  test('every method, with retries and errors, and the fulfillment kit', async () => {
    const calls: Array<(c: PaymentsClient) => PromiseLike<unknown>> = [
      (c) => c.payments.create({ ...order('push'), payment_mode: 'push', customer_phone: PHONE }),
      (c) => c.payments.create(order('hosted')),
      (c) => c.payments.list({ limit: 2 }),
      (c) => c.payments.retrieve('TRX_UNKNOWN'),
      (c) => c.payments.verify('TRX_UNKNOWN'),
      (c) => c.payments.push('TRX_UNKNOWN', { customer_phone: PHONE }),
      (c) =>
        c.payments.initiate({
          payment_amount: 25,
          currency_code: 'USD',
          ref_trx: `otel-init-${Math.random()}`,
          customer_phone: PHONE,
          success_redirect: 'https://shop.example.com/ok',
          cancel_redirect: 'https://shop.example.com/cancel',
          ipn_url: 'https://shop.example.com/ipn',
        }),
      (c) => c.balance.retrieve(),
      (c) => c.siteInfo.retrieve(),
      (c) => c.payouts.preview({ amount: 10 }),
      (c) => c.payouts.create({ amount: 10, destination: SETTLEMENT }),
      (c) => c.payouts.create({ amount: 10, destination: '255799999999' }),
      (c) => c.payouts.list(),
      (c) => c.payouts.retrieve('123e4567-e89b-12d3-a456-426614174000'),
      (c) => c.billing.plans.create({ name: 'Gold', amount: 1000 }),
      (c) => c.billing.subscriptions.create({ plan_code: 'PLAN_NOPE', customer_phone: SETTLEMENT, terms_shown: 'TZS 1000 a month' }),
      (c) => c.billing.invoices.list(),
      (c) => c.openapi(),
      (c) => c.payments.waitForOutcome('TRX_WAITED', { timeout: 50, interval: 10 }),
    ];
    // A server that echoes the phone number back in every error, with a request id.
    const echo = recordingFetch((request) =>
      Response.json(
        {
          error: 'Validation failed',
          message: `The number ${PHONE} (or ${SETTLEMENT}) was refused`,
          errors: { customer_phone: [`${PHONE} is not valid`], destination: [`${SETTLEMENT} is not on file`] },
        },
        { status: 422, headers: { 'x-request-id': `req_${request.method}` } },
      ),
    );
    // Every attempt refused once with a 429 first: each call retries (push and payouts too).
    const flaky = recordingFetch((_request, attempt) =>
      attempt === 1 ? new Response('{"error":"Too Many Requests"}', { status: 429, headers: { 'retry-after': '0' } }) : undefined,
    );
    const clients = [client(), client({ fetch: echo }), client({ fetch: flaky })];
    let made = 0;
    for (const c of clients) {
      for (const call of calls) {
        made++;
        await Promise.resolve(call(c)).then(
          () => undefined,
          () => undefined,
        );
      }
    }
    // waitForOutcome polls verify: its calls are traced one span each, so count at least one per call.
    expect(spans().length).toBeGreaterThanOrEqual(made);
    // Every call but waitForOutcome retries its 429 (one event); a poll is sent once per slot, so
    // its 429 waits for the next poll instead of a retry.
    expect(spans().filter((span) => span.events.some((event) => event.name === 'retry')).length).toBeGreaterThanOrEqual(calls.length - 1);
    expect(spans().some((span) => span.status.code === SpanStatusCode.ERROR)).toBe(true);

    // The fulfillment kit: a signed delivery of a real paid payment, a forged one, handleVerified, reconcile.
    const webhookSecret = sandbox.mock.credentials.sandbox.webhookSecret;
    const kitClient = client();
    const kit = createFulfillment({ environment: 'sandbox', secret: webhookSecret, client: kitClient, onPaid: () => {} });
    const payment = await kitClient.payments.create({ ...order('kit'), payment_mode: 'push', customer_phone: PHONE });
    await sandbox.mock.completeCheckout(payment.trx_id, 'success');
    const event = {
      id: `evt_${payment.trx_id}`,
      type: 'payment.completed',
      created_at: new Date().toISOString(),
      data: { trx_id: payment.trx_id, status: 'completed', customer: { phone: PHONE } },
    };
    const signed = await signWebhook({ secret: webhookSecret, payload: event, environment: 'sandbox' });
    for (const value of Object.values(signed.headers)) if (String(value).length >= 32) signatures.add(String(value));
    const answered = await kit.handleWebhook({ payload: signed.body, headers: signed.headers });
    expect(answered.status).toBe(200);
    const forged = await kit.handleWebhook({ payload: signed.body.replace('completed', 'failed'), headers: signed.headers });
    expect(forged.status).toBe(401);
    await kit.handleVerified(await kitClient.payments.verify(payment.trx_id));
    await kit.reconcile({ since: 0, olderThan: 0 });
    const kitSpans = spans().filter((span) => span.name.startsWith('business-payments fulfillment.'));
    expect(kitSpans.map((span) => span.name)).toEqual(
      expect.arrayContaining([
        'business-payments fulfillment.handleWebhook',
        'business-payments fulfillment.handleVerified',
        'business-payments fulfillment.reconcile',
      ]),
    );
    expect(kitSpans.find((span) => span.attributes['http.response.status_code'] === 401)).toBeDefined();

    // What must never appear: credentials, every signature sent, every phone number used.
    const credentials = sandbox.mock.credentials.sandbox;
    const forbidden = [
      credentials.apiSecret,
      credentials.apiKey,
      webhookSecret,
      ...signatures,
      ...[...signatures].map((s) => s.replace(/^sha256=/, '').replace(/^t=\d+,v1=/, '')),
      PHONE,
      PHONE.slice(3),
      SETTLEMENT,
      SETTLEMENT.slice(3),
      '255799999999',
    ];
    expect(signatures.size).toBeGreaterThan(calls.length);
    const exported = spans().map((span) =>
      JSON.stringify({
        name: span.name,
        attributes: span.attributes,
        events: span.events.map((e) => [e.name, e.attributes]),
        status: span.status,
      }),
    );
    expect(published.length).toBeGreaterThan(100);
    for (const text of [...published, ...exported]) {
      for (const secret of forbidden) expect(text, `a published message or span holds ${secret.slice(0, 6)}…`).not.toContain(secret);
    }
  }, 30_000);
});
