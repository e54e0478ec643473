// createFulfillment on the memory store with a fake client: the once-only semantics of
// DESIGN.md's Fulfillment section (verify first, onPaid once per trx_id across paths,
// onFailed never after onPaid, onEvent once per event id, leases, the webhook answers).
// The stores themselves: stores.test.ts (the conformance suite).
import { bundleEntry } from '../support/bundle.js';
import { describe, expect, test, vi } from 'vitest';
import type { PaymentRecord, VerifiedTransaction } from '../../src/index.js';
import { createFulfillment, memoryStore, type FulfillmentOptions, type FulfilledTransaction } from '../../src/fulfillment.js';
import { signWebhook } from '../../src/testing.js';
import { fakeClient as fakeVerifier } from '../support/fulfillment-client.js';

const SECRET = 'whsec_test_fulfil';

const tx = (trx_id: string, status: string, extra: Partial<VerifiedTransaction> = {}): VerifiedTransaction =>
  ({ trx_id, status, amount: 25, currency: 'USD', fee: 0.75, net_amount: 24.25, ...extra }) as VerifiedTransaction;

/** A client whose verify answers from `statuses` (trx_id → status) and whose list yields `payments`. */
const fakeClient = (statuses: Record<string, string>, payments: PaymentRecord[] = []) =>
  fakeVerifier((trxId) => tx(trxId, statuses[trxId] ?? 'pending'), payments);

function kit(overrides: Partial<FulfillmentOptions> & { statuses?: Record<string, string>; payments?: PaymentRecord[] } = {}) {
  const { client, verify } = fakeClient(overrides.statuses ?? { TRX1: 'success' }, overrides.payments);
  const paid: FulfilledTransaction[] = [];
  const failed: FulfilledTransaction[] = [];
  const fulfillment = createFulfillment({
    environment: 'sandbox',
    secret: SECRET,
    client,
    onPaid: (t) => void paid.push(t),
    onFailed: (t) => void failed.push(t),
    ...overrides,
  });
  return { fulfillment, verify, paid, failed };
}

const paymentEvent = (trx_id: string, type = 'payment.completed', id = `evt_${trx_id}`) => ({
  id,
  type,
  api_version: '2024-06-01',
  created_at: new Date().toISOString(),
  data: { trx_id, merchant_ref: `order-${trx_id}`, status: 'completed', amount: { value: 25, currency: 'USD' } },
});

async function delivery(payload: Record<string, unknown>, options: { secret?: string; environment?: 'sandbox' | 'production' } = {}) {
  const { body, headers } = await signWebhook({ secret: options.secret ?? SECRET, payload, environment: options.environment ?? 'sandbox' });
  return { payload: body, headers };
}

describe('handleWebhook({ payload, headers })', () => {
  test('a payment.completed: verified, onPaid once with the merchant_ref, 200; a duplicate is 200 and runs nothing', async () => {
    const { fulfillment, verify, paid } = kit();
    const first = await fulfillment.handleWebhook(await delivery(paymentEvent('TRX1')));
    expect(first.status).toBe(200);
    expect(JSON.parse(first.body)).toEqual({ received: true, result: 'ran' });
    expect(verify).toHaveBeenCalledWith('TRX1');
    expect(paid).toEqual([expect.objectContaining({ trx_id: 'TRX1', status: 'success', merchant_ref: 'order-TRX1' })]);
    const again = await fulfillment.handleWebhook(await delivery(paymentEvent('TRX1')));
    expect(again.status).toBe(200);
    expect(JSON.parse(again.body)).toEqual({ received: true, result: 'done' });
    expect(paid).toHaveLength(1);
  });

  test('the event says completed, verify says pending: 409 and nothing runs (the service delivers again)', async () => {
    const { fulfillment, paid } = kit({ statuses: { TRX1: 'pending' } });
    const answer = await fulfillment.handleWebhook(await delivery(paymentEvent('TRX1')));
    expect(answer.status).toBe(409);
    expect(paid).toEqual([]);
  });

  test('a bad signature is 401; a body that is not an event 400; the other environment 400; nothing is verified', async () => {
    const { fulfillment, verify } = kit();
    expect((await fulfillment.handleWebhook(await delivery(paymentEvent('TRX1'), { secret: 'whsec_other' }))).status).toBe(401);
    const notJson = await signWebhook({ secret: SECRET, payload: 'not json', type: 'payment.completed' });
    expect((await fulfillment.handleWebhook({ payload: notJson.body, headers: notJson.headers })).status).toBe(400);
    const production = await fulfillment.handleWebhook(await delivery(paymentEvent('TRX1'), { environment: 'production' }));
    expect(production.status).toBe(400);
    expect(JSON.parse(production.body).error).toBe('environment_mismatch');
    expect(verify).not.toHaveBeenCalled();
  });

  test('onPaid throws: 500 and the claim is released, so the redelivery runs it again; its words go to the log, not the caller', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    let attempts = 0;
    const { fulfillment } = kit({
      onPaid: () => {
        if (++attempts === 1) throw new Error('warehouse down');
      },
    });
    const first = await fulfillment.handleWebhook(await delivery(paymentEvent('TRX1')));
    expect(first.status).toBe(500);
    expect(JSON.parse(first.body)).toEqual({ error: 'handler_failed', message: 'A handler failed; deliver again later.' });
    expect(first.body).not.toContain('warehouse');
    expect(logged.mock.calls[0]![1]).toMatchObject({ message: 'warehouse down' });
    logged.mockRestore();
    expect((await fulfillment.handleWebhook(await delivery(paymentEvent('TRX1')))).status).toBe(200);
    expect(attempts).toBe(2);
  });

  test('a verify that throws is a 500 (the service retries), nothing recorded', async () => {
    const { fulfillment, paid, verify } = kit();
    verify.mockRejectedValueOnce(new Error('service unreachable'));
    expect((await fulfillment.handleWebhook(await delivery(paymentEvent('TRX1')))).status).toBe(500);
    expect((await fulfillment.handleWebhook(await delivery(paymentEvent('TRX1')))).status).toBe(200);
    expect(paid).toHaveLength(1);
  });

  test('onEvent once per event id; an event without an id runs each time', async () => {
    const events: string[] = [];
    const { fulfillment } = kit({ onEvent: (event) => void events.push(String(event.type)) });
    const invoice = { id: 'evt_inv1', type: 'invoice.paid', data: { invoice: 'inv_1' } };
    await fulfillment.handleWebhook(await delivery(invoice));
    await fulfillment.handleWebhook(await delivery(invoice));
    const { id: _id, ...idless } = invoice;
    await fulfillment.handleWebhook(await delivery(idless));
    await fulfillment.handleWebhook(await delivery(idless));
    expect(events).toEqual(['invoice.paid', 'invoice.paid', 'invoice.paid']);
  });
});

describe('handleWebhook(request): the Fetch API route', () => {
  test('answers a Response with the JSON body, and hands the work to waitUntil', async () => {
    const waitUntil = vi.fn();
    const { fulfillment, paid } = kit({ waitUntil });
    const { payload, headers } = await delivery(paymentEvent('TRX1'));
    const response = await fulfillment.handleWebhook(new Request('https://shop.example/hooks', { method: 'POST', body: payload, headers }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ received: true, result: 'ran' });
    expect(waitUntil).toHaveBeenCalledTimes(1);
    expect(paid).toHaveLength(1);
  });
});

describe('once per trx_id across paths', () => {
  test('webhook and return page race: one runs onPaid, the other is busy (409), then done', async () => {
    // onPaid held open until released; `running` resolves once it has been entered, that is
    // while its path holds the payment's claim. A second onPaid meanwhile throws at once.
    const held = () => {
      let release!: () => void;
      let entered!: () => void;
      let inside = 0;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const running = new Promise<void>((resolve) => (entered = resolve));
      const onPaid = async (t: FulfilledTransaction) => {
        if (++inside > 1) throw new Error('onPaid ran twice at once');
        entered();
        await gate;
        inside--;
        paid.push(t);
      };
      const paid: FulfilledTransaction[] = [];
      return { onPaid, paid, running, release };
    };

    // The webhook first: the return page, reporting the same payment meanwhile, is busy.
    const first = held();
    const { fulfillment } = kit({ onPaid: first.onPaid });
    const webhook = fulfillment.handleWebhook(await delivery(paymentEvent('TRX1')));
    await first.running;
    expect(await fulfillment.handleVerified(tx('TRX1', 'success'), { merchantRef: 'order-TRX1' })).toBe('busy');
    first.release();
    const answered = await webhook;
    expect(answered.status).toBe(200);
    expect(JSON.parse(answered.body)).toEqual({ received: true, result: 'ran' });
    expect(await fulfillment.handleVerified(tx('TRX1', 'success'))).toBe('done');
    expect(first.paid.map((t) => t.trx_id)).toEqual(['TRX1']);

    // The return page first: the webhook meanwhile is answered 409 (the service delivers it
    // again later), and once the page's onPaid is done, a delivery is 200 and runs nothing.
    const second = held();
    const other = kit({ onPaid: second.onPaid, statuses: { TRX2: 'success' } });
    const page = other.fulfillment.handleVerified(tx('TRX2', 'success'), { merchantRef: 'order-TRX2' });
    await second.running;
    const busy = await other.fulfillment.handleWebhook(await delivery(paymentEvent('TRX2')));
    expect(busy.status).toBe(409);
    second.release();
    expect(await page).toBe('ran');
    const again = await other.fulfillment.handleWebhook(await delivery(paymentEvent('TRX2')));
    expect(again.status).toBe(200);
    expect(JSON.parse(again.body)).toEqual({ received: true, result: 'done' });
    expect(second.paid.map((t) => t.trx_id)).toEqual(['TRX2']);
  });

  test('onFailed never after onPaid, and at most once', async () => {
    const { fulfillment, paid, failed } = kit();
    expect(await fulfillment.handleVerified(tx('TRX1', 'success'))).toBe('ran');
    expect(await fulfillment.handleVerified(tx('TRX1', 'failed'))).toBe('done');
    expect(await fulfillment.handleVerified(tx('TRX2', 'failed'))).toBe('ran');
    expect(await fulfillment.handleVerified(tx('TRX2', 'failed'))).toBe('done');
    expect(paid.map((t) => t.trx_id)).toEqual(['TRX1']);
    expect(failed.map((t) => t.trx_id)).toEqual(['TRX2']);
  });

  test('a status other than success or failed runs nothing and records nothing', async () => {
    const { fulfillment, paid } = kit();
    expect(await fulfillment.handleVerified(tx('TRX1', 'processing'))).toBe('pending');
    expect(await fulfillment.handleVerified(tx('TRX1', 'success'))).toBe('ran');
    expect(paid).toHaveLength(1);
  });

  test('a crashed holder keeps others out for the lease, then the next claim runs', async () => {
    let now = 1_000_000;
    const store = memoryStore({ now: () => now });
    const { fulfillment, paid } = kit({ store, lease: 60_000 });
    const claim = await store.claim('payment:TRX1', 60_000); // a process that then dies
    expect('claimed' in claim).toBe(true);
    expect(await fulfillment.handleVerified(tx('TRX1', 'success'))).toBe('busy');
    now += 60_001;
    expect(await fulfillment.handleVerified(tx('TRX1', 'success'))).toBe('ran');
    expect(paid).toHaveLength(1);
  });

  test('the client must be of the kit’s environment', () => {
    const { client } = fakeClient({});
    expect(() => createFulfillment({ environment: 'production', secret: SECRET, client, onPaid: () => {} })).toThrow(
      /client is for sandbox, the kit for production/,
    );
  });
});

describe('reconcile', () => {
  const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString();
  const record = (trx_id: string, minutesAgo: number) =>
    ({ trx_id, amount: 25, currency: 'USD', status: 'pending', created_at: at(minutesAgo) }) as PaymentRecord;

  test('settles each payment in the window the store has no outcome for, and reports', async () => {
    const payments = [
      record('OLD', 60 * 30),
      record('PAID', 60),
      record('FAILED', 50),
      record('PENDING', 40),
      record('DONE', 30),
      record('YOUNG', 2),
    ];
    const statuses = { OLD: 'success', PAID: 'success', FAILED: 'failed', PENDING: 'pending', DONE: 'success', YOUNG: 'success' };
    const { fulfillment, paid, failed, verify } = kit({ statuses, payments });
    await fulfillment.handleVerified(tx('DONE', 'success'));
    const progress = vi.fn();
    const report = await fulfillment.reconcile({ since: Date.now() - 24 * 3_600_000, onProgress: progress });
    expect(report).toEqual({ unknown: [], review: [], seen: 6, checked: 3, paid: 1, failed: 1, pending: 1, busy: 0, errors: [] });
    expect(paid.map((t) => t.trx_id)).toEqual(['DONE', 'PAID']);
    expect(failed.map((t) => t.trx_id)).toEqual(['FAILED']);
    // Outside the window (older than since, younger than olderThan) or already settled: no verify.
    expect(verify.mock.calls.map(([id]) => id).sort()).toEqual(['FAILED', 'PAID', 'PENDING']);
    expect(progress).toHaveBeenCalledTimes(6);
  });

  test('a verify that throws is reported, and the walk goes on', async () => {
    const { fulfillment, verify } = kit({ statuses: { A: 'success', B: 'success' }, payments: [record('A', 60), record('B', 60)] });
    verify.mockRejectedValueOnce(new Error('timeout'));
    const report = await fulfillment.reconcile({ since: new Date(Date.now() - 3_600_000 * 2) });
    expect(report.errors).toEqual([{ trx_id: 'A', message: 'timeout' }]);
    expect(report.paid).toBe(1);
  });

  test('an aborted signal stops the walk', async () => {
    const { fulfillment } = kit({ payments: [record('A', 60)] });
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(fulfillment.reconcile({ since: 0, signal: controller.signal })).rejects.toThrow('stop');
  });
});

test('the fulfillment entry loads neither ky nor the client', async () => {
  const { inputs } = await bundleEntry('src/fulfillment.ts');
  expect(inputs.filter((path) => /node_modules\/ky\/|src\/client\.ts|node_modules\/zod\//.test(path))).toEqual([]);
  expect(inputs).toContain('src/webhooks/verify.ts');
});

test('memoryStore says once, under NODE_ENV=production, that it holds claims in one process only', async () => {
  vi.resetModules();
  vi.stubEnv('NODE_ENV', 'production');
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
  const { memoryStore: fresh } = await import('../../src/fulfillment/store.js');
  fresh();
  fresh();
  expect(warn).toHaveBeenCalledTimes(1);
  expect(String(warn.mock.calls[0]![0])).toMatch(/memoryStore\(\) is for one process: use postgresStore or redisStore in production/);
});

describe('trust nothing unverified', () => {
  test('a verify answer for another trx_id is refused: nothing runs, nothing is recorded (webhook 500, handleVerified throws)', async () => {
    const { client } = fakeClient({});
    client.payments.verify = async () => tx('TRX_OTHER', 'success');
    const { fulfillment, paid } = kit({ client });
    const answer = await fulfillment.handleWebhook(await delivery(paymentEvent('TRX1')));
    expect(answer.status).toBe(500);
    expect(answer.body).toContain('answered for TRX_OTHER');
    await expect(fulfillment.handleVerified(tx('TRX1', 'success'))).resolves.toBe('ran');
    expect(paid.map((t) => t.trx_id)).toEqual(['TRX1']);
    expect(await fulfillment.store.outcome('payment:TRX_OTHER')).toBeUndefined();
    const report = await kit({ client, payments: [] }).fulfillment.reconcile({ since: 0 });
    expect(report.errors).toEqual([]);
  });

  test('ids the service matches case-insensitively pass (the earlier generation answers in its own case)', async () => {
    const { client } = fakeClient({});
    client.payments.verify = async (trxId) => tx(trxId.toUpperCase(), 'success');
    const { fulfillment, paid } = kit({ client });
    expect((await fulfillment.handleWebhook(await delivery(paymentEvent('trx1')))).status).toBe(200);
    expect(paid.map((t) => t.trx_id)).toEqual(['TRX1']);
  });

  test("a caller's merchantRef never overrides the service's; it fills in only where the service sent none", async () => {
    const { fulfillment, paid } = kit({ statuses: { TRX1: 'success', TRX2: 'success' } });
    await fulfillment.handleVerified({ ...tx('TRX1', 'success'), merchant_ref: 'order-A' } as unknown as VerifiedTransaction, {
      merchantRef: 'order-B',
    });
    await fulfillment.handleVerified(tx('TRX2', 'success'), { merchantRef: 'order-C' });
    expect(paid.map((t) => [t.trx_id, t.merchant_ref])).toEqual([
      ['TRX1', 'order-A'],
      ['TRX2', 'order-C'],
    ]);
  });

  test('handleVerified without a trx_id is refused, and claims nothing (no `payment:undefined` key)', async () => {
    const { fulfillment, paid } = kit();
    for (const bad of [{ status: 'success' }, { status: 'success', trx_id: '' }, undefined]) {
      await expect(fulfillment.handleVerified(bad as unknown as VerifiedTransaction)).rejects.toThrow(/without trx_id cannot be settled/);
    }
    expect(await fulfillment.store.outcome('payment:undefined')).toBeUndefined();
    await expect(fulfillment.handleVerified(tx('TRX1', 'success'))).resolves.toBe('ran');
    expect(paid).toHaveLength(1);
  });
});

describe('memoryStore leases', () => {
  test('are timed on a monotonic clock: a wall-clock step during onPaid neither frees the claim nor runs it twice', async () => {
    const store = memoryStore();
    const first = await store.claim('payment:TRX1', 60_000);
    expect('claimed' in first).toBe(true);
    const wall = vi.spyOn(Date, 'now').mockReturnValue(Date.now() + 6 * 60_000); // the wall clock jumps 6 minutes
    try {
      expect(await store.claim('payment:TRX1', 60_000)).toEqual({ busy: true });
    } finally {
      wall.mockRestore();
    }
    expect(store.durable).toBe(false);
  });
});
