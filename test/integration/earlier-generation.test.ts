// The SDK against the earlier-generation sandbox (createMockService({ generation: 'earlier' }))
// over a real socket: every public method a merchant uses there, the IPN verified and
// refused, the fulfilment kit fulfilling exactly once across the IPN, replays, the return
// page and the sweep, and doctor naming the generation. The sandbox is written from the
// facts sheet (spec/deployed-generation.md), independently of the client.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { PGlite } from '@electric-sql/pglite';
import {
  APIError,
  paidAmount,
  PaymentsClient,
  RouteNotSupportedError,
  type PaymentInitiateParams,
  type VerifiedTransaction,
} from '../../src/index.js';
import { diagnose } from '../../src/doctor/diagnose.js';
import { createFulfillment, memoryStore, type FulfilledTransaction, type FulfillmentStore } from '../../src/fulfillment.js';
import { postgresStore } from '../../src/fulfillment/postgres.js';
import { createMockService, type MockServer, type MockService } from '../../src/testing.js';
import { verifyWebhook, WebhookVerificationError, type WebhookEvent } from '../../src/webhooks.js';
import { waitFor } from '../support/sandbox.js';

/** One POST the IPN receiver got: the raw bytes and headers, and what it answered. */
interface Ipn {
  body: Buffer;
  headers: IncomingHttpHeaders;
  status: number;
}

/** A node:http endpoint on 127.0.0.1 that hands each raw body to `handle`. */
async function endpoint(handle: (body: Buffer, headers: IncomingHttpHeaders) => Promise<{ status: number; body: string }>) {
  const received: Ipn[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      void handle(body, req.headers).then(
        (answer) => {
          received.push({ body, headers: req.headers, status: answer.status });
          res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
        },
        (error: unknown) => {
          received.push({ body, headers: req.headers, status: 500 });
          res.writeHead(500).end(String(error));
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/ipn`, received, close: () => new Promise((resolve) => server.close(resolve)) };
}

let mock: MockService;
let server: MockServer;
let client: PaymentsClient;
let receiver: Awaited<ReturnType<typeof endpoint>>;
// What the receiver does with a delivery; each test sets its own.
const acknowledge = async () => ({ status: 200, body: '{}' });
let handler: (body: Buffer, headers: IncomingHttpHeaders) => Promise<{ status: number; body: string }> = acknowledge;

beforeAll(async () => {
  mock = createMockService({ generation: 'earlier', timeScale: 0.001 });
  server = await mock.listen({ port: 0 });
  client = new PaymentsClient({ environment: 'sandbox', ...mock.credentials.sandbox, baseUrl: server.url });
  receiver = await endpoint((body, headers) => handler(body, headers));
});
afterEach(() => {
  receiver.received.length = 0;
  handler = acknowledge;
});
afterAll(async () => {
  await receiver.close();
  await server.close();
  await mock.close();
});

let orders = 0;
const params = (extra: Partial<PaymentInitiateParams> = {}): PaymentInitiateParams => ({
  payment_amount: 100,
  currency_code: 'USD',
  ref_trx: `order-${++orders}`,
  description: 'Two books',
  customer_name: 'Asha Mwinyi',
  customer_email: 'asha@example.com',
  ipn_url: receiver.url,
  success_redirect: 'https://shop.example.com/thanks',
  cancel_redirect: 'https://shop.example.com/cart',
  ...extra,
});

/** initiate, and the trx_id the service gave it (neither the answer nor its link has it: the sandbox's state does). */
async function initiate(extra: Partial<PaymentInitiateParams> = {}): Promise<{ trxId: string; ref: string }> {
  const p = params(extra);
  const session = await client.payments.initiate(p);
  // The real product's link, which hides the trx_id as production does.
  expect(session.payment_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/payment\/checkout\?expires=\d+&token=[^&]+&signature=[0-9a-f]{64}$/);
  expect(JSON.stringify(session)).not.toContain('trx_id');
  const row = [...mock.state.payments.values()].find((payment) => payment.merchant_ref === p.ref_trx);
  const trxId = String(row!.trx_id);
  expect(decodeURIComponent(session.payment_url).toUpperCase()).not.toContain(trxId.toUpperCase());
  return { trxId, ref: p.ref_trx };
}

const verifyWith = (
  body: Buffer | string,
  headers: IncomingHttpHeaders,
  options: { secret?: string | string[]; now?: () => number; environment?: 'sandbox' | 'production' } = {},
) =>
  verifyWebhook({
    payload: body,
    headers: headers as Record<string, string>,
    secret: options.secret ?? mock.credentials.sandbox.apiSecret,
    ...(options.now && { now: options.now }),
    ...(options.environment && { environment: options.environment }),
  });

describe('the client on the earlier generation', () => {
  test('initiate answers a session without trx_id; verify reads it pending, then paid: the net amount, and paidAmount the gross', async () => {
    const { trxId } = await initiate();
    expect(await client.payments.verify(trxId)).toStrictEqual({ status: 'pending', trx_id: trxId, message: 'Payment is still pending.' });
    await mock.completeCheckout(trxId, 'success');
    const tx = await client.payments.verify(trxId);
    expect(tx.status).toBe('success');
    if (tx.status !== 'success') return;
    expect(tx.currency).toBe('USD');
    expect(tx.amount).toBe(tx.net_amount);
    expect(tx.amount).toBeLessThan(100);
    expect(paidAmount(tx)).toBe(100);
  });

  test('verify after a failure: { status: failed, trx_id, message }', async () => {
    const { trxId } = await initiate();
    await mock.completeCheckout(trxId, 'failed');
    expect(await client.payments.verify(trxId)).toStrictEqual({ status: 'failed', trx_id: trxId, message: 'Payment failed or canceled.' });
  });

  test('waitForOutcome follows it to success, and to failure with the service words', async () => {
    const paid = await initiate();
    const waiting = client.payments.waitForOutcome(paid.trxId, { interval: 20, timeout: 5_000 });
    setTimeout(() => void mock.completeCheckout(paid.trxId, 'success'), 60);
    expect((await waiting).status).toBe('success');

    const lost = await initiate();
    const failing = client.payments.waitForOutcome(lost.trxId, { interval: 20, timeout: 5_000 });
    setTimeout(() => void mock.completeCheckout(lost.trxId, 'failed'), 60);
    expect(await failing).toMatchObject({ status: 'failed', failure_message: 'Payment failed or canceled.' });
  });

  test('siteInfo.retrieve, and generation() tells the earlier generation', async () => {
    const site = await client.siteInfo.retrieve();
    expect(site.api_version).toBe('1.0');
    const fresh = new PaymentsClient({ environment: 'sandbox', ...mock.credentials.sandbox, baseUrl: server.url });
    expect(await fresh.generation()).toBe('earlier');
  });

  test('payments.create and every route the server lacks: RouteNotSupportedError naming payments.initiate; nothing created', async () => {
    const before = mock.state.payments.size;
    const calls: Array<[string, () => PromiseLike<unknown>]> = [
      [
        'payments.create',
        () => client.payments.create({ payment_amount: 10, currency_code: 'USD', ref_trx: 'x-1', ipn_url: receiver.url }),
      ],
      ['payments.list', () => client.payments.list()],
      ['payments.retrieve', () => client.payments.retrieve('TRX1')],
      ['payments.push', () => client.payments.push('TRX1', { customer_phone: '255712345678' })],
      ['balance.retrieve', () => client.balance.retrieve()],
      ['payouts.preview', () => client.payouts.preview({ amount: 10 })],
      ['payouts.create', () => client.payouts.create({ amount: 10 })],
      ['payouts.list', () => client.payouts.list()],
      ['payouts.retrieve', () => client.payouts.retrieve('123e4567-e89b-12d3-a456-426614174000')],
      ['billing.plans.create', () => client.billing.plans.create({ name: 'Gold', amount: 10, currency: 'TZS', interval: 'month' })],
      [
        'billing.subscriptions.create',
        () => client.billing.subscriptions.create({ plan_code: 'p', customer_phone: '255712345678', terms_shown: 'TZS 10 a month' }),
      ],
      ['billing.invoices.list', () => client.billing.invoices.list()],
      ['openapi', () => client.openapi()],
    ];
    for (const [operation, call] of calls) {
      const error = await Promise.resolve(call()).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, operation).toBeInstanceOf(RouteNotSupportedError);
      expect((error as RouteNotSupportedError).operation).toBe(operation);
      expect((error as Error).message).toContain('payments.initiate');
    }
    expect(mock.state.payments.size).toBe(before);
  });

  test('its error bodies: validation field map, the business sentence', async () => {
    const invalid = await client.payments.initiate(params({ currency_code: 'XYZ' })).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(APIError);
    expect((invalid as APIError).status).toBe(422);
    expect((invalid as APIError).message).toMatch(/^422 (Invalid currency code\.|Currency is not enabled for this merchant\.)/);
  });

  test('doctor names the generation, and skips the routes it cannot have', async () => {
    const d = await diagnose({ environment: 'sandbox', ...mock.credentials.sandbox, baseUrl: server.url });
    expect(d.generation).toBe('earlier');
    const by = Object.fromEntries(d.checks.map((c) => [c.name, c]));
    expect(by.generation!.detail).toMatch(/^earlier .*payments\.initiate, payments\.verify and siteInfo\.retrieve only/);
    expect(by.wallets).toMatchObject({ status: 'skip', detail: 'the earlier generation has no balance route' });
    expect(by.contract).toMatchObject({ status: 'skip', detail: 'the earlier generation has no openapi.json route' });
    expect(d.checks.filter((c) => c.status === 'fail')).toEqual([]);
  });

  test("doctor's test delivery to an earlier-generation endpoint is the IPN form, signed with the API secret", async () => {
    const seen: WebhookEvent[] = [];
    handler = async (body, headers) => {
      seen.push(await verifyWith(body, headers, { environment: 'sandbox' }));
      return { status: 200, body: '{}' };
    };
    const d = await diagnose({
      environment: 'sandbox',
      ...mock.credentials.sandbox,
      baseUrl: server.url,
      webhookUrl: receiver.url,
      webhookSecret: mock.credentials.sandbox.apiSecret,
    });
    expect(d.checks.find((c) => c.name === 'webhook endpoint')).toMatchObject({ status: 'pass' });
    expect(receiver.received[0]!.headers['x-signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(seen[0]).toMatchObject({ type: 'payment.completed', format: 'legacy', data: { merchant_ref: 'doctor-test' } });
    expect(seen[0]!.data!.trx_id).toMatch(/^TRX_DOCTOR_TEST_[0-9A-F]{12}$/);
  });
});

describe("the IPN, verified with the SDK's verifier", () => {
  /** A delivery the sandbox really sent, for a payment completed (or failed) now. */
  async function delivery(outcome: 'success' | 'failed', extra: Partial<PaymentInitiateParams> = {}) {
    const { trxId, ref } = await initiate(extra);
    await mock.completeCheckout(trxId, outcome);
    const ipn = await waitFor('the IPN', () => receiver.received.find((r) => r.body.includes(trxId)));
    return { ...ipn, trxId, ref };
  }

  test('completed: payment.completed, format legacy, trx_id, merchant_ref, the gross amount', async () => {
    const { body, headers, trxId, ref } = await delivery('success');
    expect(headers['x-signature']).toMatch(/^[0-9a-f]{64}$/);
    const event = await verifyWith(body, headers, { environment: 'sandbox' });
    expect(event).toMatchObject({
      type: 'payment.completed',
      format: 'legacy',
      data: { trx_id: trxId, merchant_ref: ref, amount: { value: 100, currency: 'USD' }, status: 'completed', environment: 'sandbox' },
    });
    expect(event.id).toBeUndefined();
  });

  test('failed: payment.failed', async () => {
    const { body, headers, trxId } = await delivery('failed');
    expect(await verifyWith(body, headers)).toMatchObject({ type: 'payment.failed', format: 'legacy', data: { trx_id: trxId } });
  });

  test('refused: a changed byte, stale or future, the other environment pinned, the other secret, a re-serialised body', async () => {
    const { body, headers } = await delivery('success', { description: 'Two books\u2028gift-wrapped' });
    const reason = (promise: Promise<WebhookEvent>) =>
      promise.then(
        () => 'accepted',
        (e: unknown) => (e instanceof WebhookVerificationError ? e.reason : String(e)),
      );
    const changed = Buffer.from(body);
    changed[changed.indexOf('100')] = '9'.charCodeAt(0);
    expect(await reason(verifyWith(changed, headers))).toBe('invalid_signature');
    expect(await reason(verifyWith(body, headers, { now: () => Date.now() + 600_000 }))).toBe('timestamp_too_old');
    expect(await reason(verifyWith(body, headers, { now: () => Date.now() - 600_000 }))).toBe('timestamp_in_future');
    expect(await reason(verifyWith(body, headers, { environment: 'production' }))).toBe('environment_mismatch');
    expect(await reason(verifyWith(body, { ...headers, 'x-environment': 'production' }))).toBe('environment_mismatch');
    expect(await reason(verifyWith(body, headers, { secret: mock.credentials.production.apiSecret }))).toBe('invalid_signature');
    expect(await reason(verifyWith(body, headers, { secret: 'whsec_some_webhook_secret' }))).toBe('invalid_signature');
    // A handler that parses and re-serialises before verifying: PHP escaped the U+2028.
    expect(await reason(verifyWith(JSON.stringify(JSON.parse(body.toString('utf8'))), headers))).toBe('invalid_signature');
    expect(await reason(verifyWith(body, headers))).toBe('accepted');
  });
});

describe('the fulfilment kit on the earlier generation', () => {
  let db: PGlite;
  beforeAll(async () => {
    db = await PGlite.create();
  }, 60_000);
  afterAll(() => db.close());

  /** A kit on `store` behind the receiver, counting what each handler saw. */
  function kit(store: FulfillmentStore) {
    const paid: FulfilledTransaction[] = [];
    const failed: FulfilledTransaction[] = [];
    const fulfillment = createFulfillment({
      environment: 'sandbox',
      secret: mock.credentials.sandbox.apiSecret, // this generation signs its IPN with the API secret
      client,
      store,
      onPaid: (tx) => void paid.push(tx),
      onFailed: (tx) => void failed.push(tx),
    });
    handler = (body, headers) => fulfillment.handleWebhook({ payload: body, headers: headers as Record<string, string> });
    return { fulfillment, paid, failed };
  }
  /** A kit behind the receiver whose onPaid throws until `recover()` (an ERP that is down). */
  function erpDown() {
    const store = memoryStore();
    let fail = true;
    const paid: string[] = [];
    const fulfillment = createFulfillment({
      environment: 'sandbox',
      secret: mock.credentials.sandbox.apiSecret,
      client,
      store,
      onPaid: (tx) => {
        if (fail) throw new Error('ERP down');
        paid.push(tx.trx_id);
      },
    });
    handler = (body, headers) => fulfillment.handleWebhook({ payload: body, headers: headers as Record<string, string> });
    return { store, fulfillment, paid, recover: () => (fail = false) };
  }
  const replay = (ipn: Ipn) =>
    fetch(receiver.url, { method: 'POST', body: new Uint8Array(ipn.body), headers: ipn.headers as Record<string, string> }).then(
      (r) => r.status,
    );

  test.each([
    ['memoryStore', () => memoryStore()],
    ['postgresStore (PGlite)', () => postgresStore(db, { table: `kit_earlier_${orders}` })],
  ])('%s: a paid payment fulfilled exactly once across the IPN, three replays, the return page and a sweep', async (_name, makeStore) => {
    const { fulfillment, paid, failed } = kit(makeStore());
    const { trxId, ref } = await initiate();
    await mock.completeCheckout(trxId, 'success');
    const ipn = await waitFor('the IPN', () => receiver.received[0]);
    expect(ipn.status).toBe(200);
    expect(await Promise.all([replay(ipn), replay(ipn), replay(ipn)])).toEqual([200, 200, 200]);
    expect(await fulfillment.handleVerified(await client.payments.verify(trxId))).toBe('done');
    const report = await fulfillment.reconcile({ since: 0 });
    expect(report).toMatchObject({ walked: 'store', paid: 0, errors: [] });
    expect(paid).toHaveLength(1);
    expect(paid[0]).toMatchObject({ status: 'success', trx_id: trxId, merchant_ref: ref });
    expect(paidAmount(paid[0]!)).toBe(100);
    expect(failed).toHaveLength(0);
  });

  test('a failed payment: onFailed once, onPaid never, whatever path reports it', async () => {
    const { fulfillment, paid, failed } = kit(memoryStore());
    const { trxId } = await initiate();
    await mock.completeCheckout(trxId, 'failed');
    const ipn = await waitFor('the IPN', () => receiver.received[0]);
    expect(ipn.status).toBe(200);
    await replay(ipn);
    expect(await fulfillment.handleVerified(await client.payments.verify(trxId))).toBe('done');
    await fulfillment.reconcile({ since: 0 });
    expect(paid).toHaveLength(0);
    expect(failed.map((tx) => tx.trx_id)).toEqual([trxId]);
  });

  test('an IPN whose handler throws is still acknowledged (202: never re-sent), and the sweep fulfils it from the store', async () => {
    const { store, fulfillment, paid, recover } = erpDown();
    const { trxId } = await initiate();
    await mock.completeCheckout(trxId, 'success');
    const ipn = await waitFor('the IPN', () => receiver.received[0]);
    expect(ipn.status).toBe(202);
    expect(await store.unsettled!(10)).toEqual([`payment:${trxId}`]);
    recover();
    const report = await fulfillment.reconcile({ since: Date.now() });
    expect(report).toMatchObject({ walked: 'store', seen: 1, checked: 1, paid: 1, errors: [] });
    expect(paid).toEqual([trxId]);
    expect(await store.unsettled!(10)).toEqual([]);
  });

  test('an IPN lost on the way and a return page whose onPaid throws: the trx_id stays in the store, and the sweep fulfils it', async () => {
    const { store, fulfillment, paid, recover } = erpDown();
    // Nothing listens at this ipn_url: the IPN is refused, and never sent again.
    const { trxId } = await initiate({ ipn_url: 'http://127.0.0.1:9/ipn' });
    await mock.completeCheckout(trxId, 'success');
    await expect(fulfillment.handleVerified(await client.payments.verify(trxId))).rejects.toThrow('ERP down');
    expect(await store.unsettled!(10)).toEqual([`payment:${trxId}`]);
    recover();
    expect(await fulfillment.reconcile({ since: Date.now() })).toMatchObject({ walked: 'store', paid: 1, errors: [] });
    expect(paid).toEqual([trxId]);
  });

  test('the webhook secret alone refuses the IPN (401): this generation signs with the API secret', async () => {
    const fulfillment = createFulfillment({
      environment: 'sandbox',
      secret: 'whsec_not_the_api_secret',
      client,
      onPaid: () => {},
    });
    handler = (body, headers) => fulfillment.handleWebhook({ payload: body, headers: headers as Record<string, string> });
    const { trxId } = await initiate();
    await mock.completeCheckout(trxId, 'success');
    const ipn = await waitFor('the IPN', () => receiver.received[0]);
    expect(ipn.status).toBe(401);
  });
});

describe('both generations: a handler that re-serialises the body before verifying is refused', () => {
  test('current: the webhook body as PHP writes it (a customer named Zoë: \\u00eb), refused once re-serialised', async () => {
    const current = createMockService({ timeScale: 0.001 });
    const at = await current.listen({ port: 0 });
    try {
      const spec = new PaymentsClient({ environment: 'sandbox', ...current.credentials.sandbox, baseUrl: at.url, maxRetries: 0 });
      const payment = await spec.payments.create({
        payment_amount: 25,
        currency_code: 'USD',
        ref_trx: 'order-zoe-1',
        customer_name: 'Zoë Mwinyi',
        ipn_url: receiver.url,
      });
      await current.completeCheckout(payment.trx_id, 'success');
      const { body, headers } = await waitFor('the webhook', () => receiver.received[0]);
      const secret = current.credentials.sandbox.webhookSecret!;
      const verify = (payload: string | Buffer) => verifyWebhook({ payload, headers: headers as Record<string, string>, secret });
      expect(body.toString('utf8')).toContain('Zo\\u00eb');
      expect(await verify(body)).toMatchObject({ type: 'payment.completed', format: 'current' });
      const error = await verify(JSON.stringify(JSON.parse(body.toString('utf8')))).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WebhookVerificationError);
      expect((error as WebhookVerificationError).reason).toBe('invalid_signature');
    } finally {
      await at.close();
      await current.close();
    }
  });
  // The earlier generation's case (a U+2028 PHP escapes) is in "the IPN, verified with the SDK's verifier" above.
});

// The type a merchant narrows: `amount` is a number only once the payment succeeded.
const _narrows = (tx: VerifiedTransaction): number | undefined => (tx.status === 'success' ? tx.amount + 0 : tx.amount);
void _narrows;
