// The billing kit against a scripted service: the guard (double subscribes in one process and
// from two, a create never answered replayed with its key, a refused create, the key window),
// the events read into facts and the states they give (grace, suspension, the local cancel and
// a renewal charged after it), reconcile over the invoice list, and the listing by state. The
// same kit against the sandbox over a real socket: sandbox.test.ts.
import { describe, expect, test, vi } from 'vitest';
import { bundleEntry } from '../support/bundle.js';
import { InvalidParamsError } from '../../src/core/error.js';
import { PaymentsClient } from '../../src/index.js';
import type { Invoice } from '../../src/resources/billing/invoices.js';
import type { Subscription } from '../../src/resources/billing/subscriptions.js';
import type { WebhookEvent } from '../../src/webhooks.js';
import {
  BillingError,
  createBilling,
  memoryStore,
  type BillingChangeContext,
  type BillingClient,
  type BillingOptions,
  type PaidPeriod,
  type SubscriptionRecord,
} from '../../src/billing.js';

const DAY = 86_400_000;
const MONTH = 30 * DAY;
const T0 = Date.parse('2026-01-01T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

/** An HTTP error as the client throws it (the kit reads `status`). */
const httpError = (status: number, message = `HTTP ${status}`) =>
  Object.assign(new Error(message), { name: 'APIError', status, attempts: 1 });
const lostError = () => Object.assign(new Error('connection reset'), { name: 'APIConnectionError', attempts: 1 });

/** What the n-th create (0-based) meets: made and answered, made and its answer lost, or refused (an Error, nothing made). */
type Script = (n: number) => 'ok' | 'lost' | Error;

/** A service with subscriptions, their invoices, and key replay (the key is kept for a day of `clock`). */
function service(clock: { now: number }, script: Script = () => 'ok') {
  const made: Array<{ id: string; key: string; params: Record<string, unknown> }> = [];
  const keys = new Map<string, { id: string; at: number }>();
  const invoices = new Map<string, Invoice[]>();
  let n = 0;
  const view = (id: string): Subscription => ({ id, plan_code: 'pro', status: 'pending' });
  const client = {
    billing: {
      subscriptions: {
        create: vi.fn(async (params: Record<string, unknown>, { idempotencyKey: key }: { idempotencyKey: string }) => {
          await new Promise((resolve) => setImmediate(resolve));
          const kept = keys.get(key);
          if (kept && clock.now - kept.at < DAY) return view(kept.id);
          const fate = script(n++);
          if (fate instanceof Error) throw fate;
          const id = `sub_${made.length + 1}`;
          made.push({ id, key, params });
          keys.set(key, { id, at: clock.now });
          if (fate === 'lost') throw lostError();
          return view(id);
        }),
      },
      invoices: {
        list: vi.fn(({ subscription }: { subscription: string }) =>
          (async function* () {
            await Promise.resolve();
            yield* [...(invoices.get(subscription) ?? [])].reverse().map((invoice) => structuredClone(invoice));
          })(),
        ),
      },
    },
    pollSlot: vi.fn(() => Promise.resolve()),
    // As PaymentsClient tells an error of its own that sent nothing (test/core/kit-client.test.ts).
    refused: (error: unknown) => error instanceof InvalidParamsError,
  } satisfies BillingClient;
  /** The i-th monthly invoice (0-based) of `subscription`, recorded at the service. */
  const invoice = (subscription: string, i: number, status: Invoice['status'] = 'paid'): Invoice => {
    const row: Invoice = {
      id: `inv_${subscription}_${i}`,
      subscription,
      status,
      amount: 10_000,
      currency: 'TZS',
      period_start: iso(T0 + i * MONTH),
      period_end: iso(T0 + (i + 1) * MONTH),
      ...(status === 'open' ? {} : { failure_reason: status === 'paid' ? null : 'INSUFFICIENT_FUNDS' }),
    };
    const list = invoices.get(subscription) ?? [];
    invoices.set(subscription, [...list.filter((known) => known.id !== row.id), row]);
    return row;
  };
  return { client, made, invoices, invoice };
}

/** An event as the sandbox sends it. */
const event = (type: string, data: Record<string, unknown>, id = `evt_${crypto.randomUUID()}`) => ({ id, type, data }) as WebhookEvent;

function kit(options: { script?: Script; store?: ReturnType<typeof memoryStore> } & Partial<BillingOptions> = {}) {
  const clock = { now: T0 };
  const { script, store = memoryStore(), ...rest } = options;
  const svc = service(clock, script);
  const changes: Array<[string | undefined, string]> = [];
  const billing = createBilling({
    client: svc.client,
    store,
    now: () => clock.now,
    onChange: (record, ctx) => void changes.push([ctx.previous, record.state]),
    ...rest,
  });
  const paid = (subscription: string, i: number) => billing.handleEvent(event('invoice.paid', { ...svc.invoice(subscription, i) }));
  return { billing, clock, store, changes, paid, ...svc };
}

const params = (customer = 'clinic-42') => ({
  customer,
  plan_code: 'pro',
  customer_phone: '0712 345 678',
  terms_shown: 'TZS 10,000 a month, charged by USSD push, until you cancel.',
});

describe('the guard: one live subscription per customer and plan', () => {
  test('subscribing twice, one after the other or at once, sends one create', async () => {
    const { billing, client, made, changes } = kit();
    const first = await billing.subscribe(params());
    expect(first).toMatchObject({
      created: true,
      state: 'pending',
      record: { key: 'sub:clinic-42:pro:1', subscriptionId: 'sub_1', sends: 1 },
    });
    expect(first.record).toMatchObject({ phone: '255712345678', termsShown: params().terms_shown, paid: [], chargedAfterCancel: [] });
    expect(client.billing.subscriptions.create).toHaveBeenCalledWith(
      { plan_code: 'pro', customer_phone: '255712345678', terms_shown: params().terms_shown },
      { idempotencyKey: 'sub:clinic-42:pro:1', signal: undefined },
    );
    expect(await billing.subscribe(params())).toMatchObject({ created: false, record: { key: 'sub:clinic-42:pro:1' } });
    // At once, for another customer: one records, the other finds its record.
    const both = await Promise.all([billing.subscribe(params('clinic-7')), billing.subscribe(params('clinic-7'))]);
    expect(both.map((result) => result.created).sort()).toEqual([false, true]);
    expect(both.map((result) => result.record.key)).toEqual(['sub:clinic-7:pro:1', 'sub:clinic-7:pro:1']);
    expect(client.billing.subscriptions.create).toHaveBeenCalledTimes(2);
    expect(made.map((sub) => sub.key)).toEqual(['sub:clinic-42:pro:1', 'sub:clinic-7:pro:1']);
    expect(changes).toEqual([
      [undefined, 'pending'],
      [undefined, 'pending'],
    ]);
  });

  test('two kits (two processes) on one store subscribing at once: one create', async () => {
    const store = memoryStore();
    const a = kit({ store });
    const b = kit({ store });
    const results = await Promise.all([a.billing.subscribe(params()), b.billing.subscribe(params())]);
    expect(results.map((result) => result.created).sort()).toEqual([false, true]);
    expect(a.made.length + b.made.length).toBe(1);
    expect((await a.billing.subscriptions()).map((record) => [record.key, record.sends])).toEqual([['sub:clinic-42:pro:1', 1]]);
  });

  test('a create whose answer was lost stays recorded without its id; the next subscribe replays its key and gets the same subscription', async () => {
    const { billing, client, made } = kit({ script: (n) => (n === 0 ? 'lost' : 'ok') });
    await expect(billing.subscribe(params())).rejects.toThrow('connection reset');
    const [kept] = await billing.subscriptions();
    expect(kept).toMatchObject({ key: 'sub:clinic-42:pro:1', state: 'pending', sends: 1 });
    expect(kept?.subscriptionId).toBeUndefined();
    const replay = await billing.subscribe(params());
    expect(replay).toMatchObject({ created: false, record: { subscriptionId: 'sub_1', sends: 2 } });
    const keys = client.billing.subscriptions.create.mock.calls.map(([, options]) => options.idempotencyKey);
    expect(keys).toEqual(['sub:clinic-42:pro:1', 'sub:clinic-42:pro:1']);
    expect(made).toHaveLength(1);
  });

  test('a record its process never sent (killed between record and create) is sent by the next subscribe, whatever its age', async () => {
    const { billing, store, made, clock } = kit();
    const at = T0 - 3 * DAY;
    const record = {
      ...{ key: 'sub:clinic-42:pro:1', customer: 'clinic-42', plan: 'pro', n: 1, version: 1, state: 'pending' as const },
      ...{
        createdAt: at,
        updatedAt: at,
        sends: 0,
        phone: '255712345678',
        termsShown: 'terms',
        paid: [],
        failed: [],
        chargedAfterCancel: [],
      },
    };
    await store.subscriptions.add(record);
    clock.now = T0;
    expect(await billing.subscribe(params())).toMatchObject({ created: false, record: { subscriptionId: 'sub_1', sends: 1 } });
    expect(made.map((sub) => sub.params.terms_shown)).toEqual(['terms']); // the record's own params, as first recorded
  });

  test('a create refused by the service (a 4xx) or by the client ends its record; the next subscribe makes the next one', async () => {
    const refusals = [
      httpError(422, 'The selected plan code is invalid.'),
      new InvalidParamsError('billing.subscriptions.create', { x: ['bad'] }),
    ];
    const { billing, made, changes } = kit({ script: (n) => refusals[n] ?? 'ok' });
    await expect(billing.subscribe(params())).rejects.toThrow('plan code is invalid');
    expect((await billing.entitlement('clinic-42', 'pro')).subscription).toMatchObject({
      state: 'ended',
      error: 'The selected plan code is invalid.',
    });
    await expect(billing.subscribe(params())).rejects.toBeInstanceOf(InvalidParamsError);
    const third = await billing.subscribe(params());
    expect(third).toMatchObject({ created: true, state: 'pending', record: { key: 'sub:clinic-42:pro:3', subscriptionId: 'sub_1' } });
    expect(made).toHaveLength(1);
    expect(changes.filter(([, to]) => to === 'ended')).toEqual([
      ['pending', 'ended'],
      ['pending', 'ended'],
    ]);
  });

  test('an unclear failure (a 5xx, a 409, a 429) keeps the record: the next subscribe replays it, one subscription', async () => {
    const { billing, made } = kit({ script: (n) => [httpError(503), httpError(409), httpError(429)][n] ?? 'ok' });
    for (const status of [503, 409, 429]) await expect(billing.subscribe(params())).rejects.toMatchObject({ status });
    expect(await billing.subscribe(params())).toMatchObject({ created: false, record: { key: 'sub:clinic-42:pro:1', sends: 4 } });
    expect(made).toHaveLength(1);
  });

  test('past the key window a create never answered is not sent again (needs_review); cancel ends it, and the next subscribe makes the next one', async () => {
    const { billing, clock, made } = kit({ script: (n) => (n === 0 ? 'lost' : 'ok') });
    await expect(billing.subscribe(params())).rejects.toThrow('connection reset');
    clock.now += DAY;
    await expect(billing.subscribe(params())).rejects.toMatchObject({ name: 'BillingError', code: 'needs_review' });
    expect(made).toHaveLength(1);
    expect(await billing.cancel('clinic-42', 'pro')).toMatchObject({ state: 'ended', cancel: { at: clock.now, paidThrough: 0 } });
    expect(await billing.subscribe(params())).toMatchObject({ created: true, record: { key: 'sub:clinic-42:pro:2' } });
  });

  test('params are checked before anything is recorded or sent', async () => {
    const { billing, client } = kit();
    const bad = [
      { ...params(), customer: 'a:b' },
      { ...params(), plan_code: 'has space' },
      { ...params(), customer_phone: '0222 123 456' },
      { ...params(), terms_shown: '  ' },
      { ...params(), customer: 'c'.repeat(60) },
      { ...params(), consent: { at: null } },
    ];
    for (const given of bad)
      await expect(billing.subscribe(given as never)).rejects.toMatchObject({ name: 'BillingError', code: 'invalid_params' });
    expect(await billing.subscriptions()).toEqual([]);
    expect(client.billing.subscriptions.create).not.toHaveBeenCalled();
    const consent = { at: '2026-01-01T00:00:00Z', ip: '198.51.100.7', termsVersion: 'v3' };
    expect((await billing.subscribe({ ...params(), consent })).record.consent).toEqual(consent);
    // Checked also when a live record is found: a bad call never passes for a good one.
    await expect(billing.subscribe({ ...params(), customer_phone: '12' })).rejects.toMatchObject({ code: 'invalid_params' });
    expect(() => createBilling({ client: {} as BillingClient, store: memoryStore() })).toThrow(/PaymentsClient/);
    expect(() => createBilling({ client, store: {} })).toThrow(/store/);
    expect(() => createBilling({ client, store: memoryStore(), grace: -1 })).toThrow(/grace/);
  });
});

describe('access from the facts: states, paidThrough and grace', () => {
  test('pending, active, past_due within the grace and past it; failed renewals; none', async () => {
    const { billing, clock, paid, invoice } = kit({ grace: 3 * DAY });
    expect(await billing.entitlement('clinic-42', 'pro')).toEqual({ active: false, state: 'none' });
    const { record } = await billing.subscribe(params());
    expect(await billing.entitlement('clinic-42', 'pro')).toMatchObject({ active: false, state: 'pending' });
    await paid(record.subscriptionId!, 0);
    clock.now = T0 + DAY;
    expect(await billing.entitlement('clinic-42', 'pro')).toMatchObject({ active: true, state: 'active', paidThrough: T0 + MONTH });
    await billing.handleEvent(event('invoice.payment_failed', { ...invoice(record.subscriptionId!, 1, 'open') }));
    clock.now = T0 + MONTH + DAY;
    expect(await billing.entitlement('clinic-42', 'pro')).toMatchObject({ active: true, state: 'past_due', paidThrough: T0 + MONTH });
    clock.now = T0 + MONTH + 3 * DAY;
    expect(await billing.entitlement('clinic-42', 'pro')).toMatchObject({ active: false, state: 'past_due' });
    // A renewal paid late: active again, to the end of its period.
    await paid(record.subscriptionId!, 1);
    expect(await billing.entitlement('clinic-42', 'pro')).toMatchObject({ active: true, state: 'active', paidThrough: T0 + 2 * MONTH });
    const [kept] = await billing.subscriptions();
    expect(kept?.failed.map((period) => period.invoice)).toEqual(['inv_sub_1_1']);
  });

  test('suspended by the service: no access while its period lasts (suspended), then ended; never back by itself', async () => {
    const { billing, clock, paid } = kit();
    const { record } = await billing.subscribe(params());
    await paid(record.subscriptionId!, 0);
    clock.now = T0 + 5 * DAY;
    await billing.handleEvent(
      event('subscription.suspended', { id: record.subscriptionId, status: 'suspended', updated_at: iso(clock.now) }),
    );
    expect(await billing.entitlement('clinic-42', 'pro')).toMatchObject({ active: false, state: 'suspended', paidThrough: T0 + MONTH });
    await paid(record.subscriptionId!, 1); // a late event of before the suspension
    expect(await billing.entitlement('clinic-42', 'pro')).toMatchObject({ active: false, state: 'suspended' });
    clock.now = T0 + 2 * MONTH;
    expect(await billing.entitlement('clinic-42', 'pro')).toMatchObject({ active: false, state: 'ended' });
    // Only after suspended or ended is the next one made.
    expect(await billing.subscribe(params())).toMatchObject({ created: true, record: { key: 'sub:clinic-42:pro:2' } });
    expect(await billing.entitlement('clinic-42', 'pro')).toMatchObject({ active: false, state: 'pending' });
  });

  test('subscriptions({ state }) lists by the state worked out now, by key', async () => {
    const { billing, clock, paid } = kit();
    const a = (await billing.subscribe(params('a'))).record;
    await billing.subscribe(params('b'));
    const c = (await billing.subscribe(params('c'))).record;
    await paid(a.subscriptionId!, 0);
    await paid(c.subscriptionId!, 0);
    await billing.cancel('c', 'pro');
    const keys = async (state?: SubscriptionRecord['state']) =>
      (await billing.subscriptions({ state })).map((r) => `${r.customer}:${r.state}`);
    expect(await keys()).toEqual(['a:active', 'b:pending', 'c:cancelled']);
    expect(await keys('active')).toEqual(['a:active']);
    clock.now = T0 + MONTH + DAY; // time alone moves them on
    expect(await keys()).toEqual(['a:past_due', 'b:pending', 'c:ended']);
    expect(await billing.subscriptions({ limit: 1 })).toHaveLength(1);
    await expect(billing.subscriptions({ state: 'paid' as never })).rejects.toMatchObject({ code: 'invalid_params' });
  });
});

describe('cancel: local, access to paidThrough, and a renewal paid after it', () => {
  test('a renewal paid after the cancel never extends access and goes to onChargedAfterCancel once (events twice, and reconcile)', async () => {
    const charged: Array<[string, PaidPeriod, BillingChangeContext['source']]> = [];
    const onChargedAfterCancel = (record: SubscriptionRecord, invoice: PaidPeriod, ctx: BillingChangeContext) =>
      void charged.push([record.key, invoice, ctx.source]);
    const { billing, clock, paid, invoice } = kit({ onChargedAfterCancel });
    const { record } = await billing.subscribe(params());
    await paid(record.subscriptionId!, 0);
    clock.now = T0 + 10 * DAY;
    expect(await billing.cancel('clinic-42', 'pro')).toMatchObject({
      state: 'cancelled',
      cancel: { at: clock.now, paidThrough: T0 + MONTH },
    });
    expect(await billing.entitlement('clinic-42', 'pro')).toMatchObject({ active: true, state: 'cancelled', paidThrough: T0 + MONTH });
    // The service pushes the renewal anyway, and the customer pays it.
    clock.now = T0 + MONTH + 60_000;
    const renewal = event('invoice.paid', { ...invoice(record.subscriptionId!, 1) });
    await billing.handleEvent(renewal);
    await billing.handleEvent(renewal);
    expect((await billing.reconcile()).changed).toEqual([]);
    expect(charged).toEqual([['sub:clinic-42:pro:1', { invoice: 'inv_sub_1_1', start: T0 + MONTH, end: T0 + 2 * MONTH }, 'event']]);
    expect(await billing.entitlement('clinic-42', 'pro')).toMatchObject({ active: false, state: 'ended', paidThrough: T0 + MONTH });
    expect((await billing.subscriptions({ state: 'ended' }))[0]?.chargedAfterCancel).toEqual(['inv_sub_1_1']);
  });

  test('without onChargedAfterCancel it waits on the review list; reconcile finds one no event brought', async () => {
    const { billing, clock, paid, invoice } = kit();
    const { record } = await billing.subscribe(params());
    await paid(record.subscriptionId!, 0);
    clock.now = T0 + 10 * DAY;
    await billing.cancel('clinic-42', 'pro');
    clock.now = T0 + 3 * MONTH;
    invoice(record.subscriptionId!, 1);
    invoice(record.subscriptionId!, 2);
    // Ended by the cancel, the service still charges it: reconcile reads it.
    expect(await billing.reconcile()).toEqual({
      checked: 1,
      changed: [{ key: 'sub:clinic-42:pro:1', from: 'ended', to: 'ended' }],
      errors: [],
    });
    const [review] = await billing.subscriptions({ state: 'ended' });
    expect(review?.chargedAfterCancel).toEqual(['inv_sub_1_1', 'inv_sub_1_2']);
    expect(review?.paid).toHaveLength(3);
    expect(await billing.entitlement('clinic-42', 'pro')).toMatchObject({ active: false, paidThrough: T0 + MONTH });
  });

  test('subscribe while cancelled takes the cancel back: nothing sent, and the next renewal counts', async () => {
    const { billing, clock, paid, client } = kit();
    const { record } = await billing.subscribe(params());
    await paid(record.subscriptionId!, 0);
    await billing.cancel('clinic-42', 'pro');
    clock.now = T0 + 10 * DAY;
    const back = await billing.subscribe(params());
    expect(back).toMatchObject({ created: false, state: 'active', record: { key: 'sub:clinic-42:pro:1' } });
    expect(back.record.cancel).toBeUndefined();
    expect(client.billing.subscriptions.create).toHaveBeenCalledTimes(1);
    await paid(record.subscriptionId!, 1);
    expect(await billing.entitlement('clinic-42', 'pro')).toMatchObject({ active: true, paidThrough: T0 + 2 * MONTH });
    expect(await billing.cancel('nobody', 'pro')).toBeUndefined();
  });
});

describe('handleEvent: payloads read defensively', () => {
  test('other types are ignored; ids and periods in other shapes are read; unknown or unreadable ones throw', async () => {
    const { billing, clock } = kit();
    const { record } = await billing.subscribe(params());
    const sub = record.subscriptionId!;
    await billing.handleEvent(event('payment.completed', { trx_id: 'trx_1' }));
    await billing.handleEvent(event('subscription.created', { id: 'sub_someone_else' }));
    await billing.handleEvent(event('invoice.created', { id: 'inv_0', subscription: 'sub_someone_else', status: 'open' }));
    // Epoch seconds, nested under `invoice`, the subscription as `subscription_id`.
    const seconds = { id: 'inv_a', subscription_id: sub, status: 'PAID', period_start: T0 / 1000, period_end: (T0 + MONTH) / 1000 };
    await billing.handleEvent(event('invoice.paid', { invoice: seconds }));
    // Epoch ms as digits, the subscription as an object.
    const ms = { invoice_id: 'inv_b', subscription: { id: sub }, period_start: String(T0 + MONTH), period_end: String(T0 + 2 * MONTH) };
    await billing.handleEvent(event('invoice.paid', ms));
    clock.now = T0 + MONTH + DAY;
    expect(await billing.entitlement('clinic-42', 'pro')).toMatchObject({ active: true, paidThrough: T0 + 2 * MONTH });
    const unknown = billing.handleEvent(event('invoice.paid', { ...seconds, id: 'inv_c', subscription_id: 'sub_nobody' }));
    await expect(unknown).rejects.toMatchObject({ name: 'BillingError', code: 'unknown_subscription' });
    const unreadable = billing.handleEvent(event('invoice.paid', { id: 'inv_d', subscription: sub, period_start: 'soon' }));
    await expect(unreadable).rejects.toBeInstanceOf(BillingError);
    await expect(billing.handleEvent(event('subscription.suspended', {}))).rejects.toMatchObject({ code: 'unreadable_event' });
  });

  test('an uncollectible invoice (dunning exhausted) suspends, as subscription.suspended would', async () => {
    const { billing, invoice, clock } = kit();
    const { record } = await billing.subscribe(params());
    await billing.handleEvent(event('invoice.payment_failed', { ...invoice(record.subscriptionId!, 0, 'uncollectible') }));
    clock.now = T0 + 3 * DAY;
    expect(await billing.entitlement('clinic-42', 'pro')).toMatchObject({ active: false, state: 'ended' });
    expect((await billing.subscriptions())[0]?.suspendedAt).toBeDefined();
  });

  test('onChange gets each change of a record’s state with the state before; a throw in it is logged and changes nothing', async () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    const seen: Array<[string | undefined, string, string]> = [];
    const { billing, paid } = kit({
      onChange: (record, ctx) => {
        seen.push([ctx.previous, record.state, ctx.source]);
        throw new Error('ledger down');
      },
    });
    const { record } = await billing.subscribe(params());
    await paid(record.subscriptionId!, 0);
    await paid(record.subscriptionId!, 0);
    await billing.cancel('clinic-42', 'pro');
    expect(seen).toEqual([
      [undefined, 'pending', 'subscribe'],
      ['pending', 'active', 'event'],
      ['active', 'cancelled', 'cancel'],
    ]);
    expect(error).toHaveBeenCalledTimes(3);
    error.mockRestore();
  });
});

describe('reconcile over the invoice list', () => {
  test('a lost invoice.paid is found and grants access; each page waits for a slot; a failing list is an error of its record', async () => {
    const { billing, client, invoice } = kit();
    const a = (await billing.subscribe(params('a'))).record;
    const b = (await billing.subscribe(params('b'))).record;
    await billing.subscribe(params('c')); // never paid: looked up, nothing found
    invoice(a.subscriptionId!, 0); // paid; its event lost
    invoice(b.subscriptionId!, 0);
    const list = client.billing.invoices.list.getMockImplementation()!;
    client.billing.invoices.list.mockImplementation((params) => {
      if (params.subscription === b.subscriptionId) throw httpError(503);
      return list(params);
    });
    const report = await billing.reconcile();
    expect(report).toEqual({
      checked: 3,
      changed: [{ key: 'sub:a:pro:1', from: 'pending', to: 'active' }],
      errors: [{ key: 'sub:b:pro:1', message: 'HTTP 503' }],
    });
    expect(client.pollSlot).toHaveBeenCalledTimes(3);
    expect(client.billing.invoices.list).toHaveBeenCalledWith({ subscription: a.subscriptionId, limit: 100 }, { signal: undefined });
    expect(await billing.entitlement('a', 'pro')).toMatchObject({ active: true, state: 'active' });
    client.billing.invoices.list.mockImplementation(list);
    expect((await billing.reconcile()).changed).toEqual([{ key: 'sub:b:pro:1', from: 'pending', to: 'active' }]);
    expect((await billing.reconcile()).changed).toEqual([]);
    const stop = new AbortController();
    stop.abort(new Error('stopped'));
    await expect(billing.reconcile({ signal: stop.signal })).rejects.toThrow('stopped');
  });
});

describe('reconcile replays a create never answered', () => {
  test('killed after the service made it: replayed with its key once left by its sender, inside the key window; then its events find it', async () => {
    const { billing, clock, client, made, invoice } = kit({ script: (n) => (n === 0 || n === 1 ? 'lost' : 'ok') });
    await expect(billing.subscribe(params('a'))).rejects.toThrow('connection reset');
    const early = event('invoice.paid', { ...invoice('sub_1', 0) });
    await expect(billing.handleEvent(early)).rejects.toMatchObject({ code: 'unknown_subscription' });
    expect(await billing.reconcile()).toEqual({ checked: 0, changed: [], errors: [] }); // its sender may still hear
    clock.now += 2 * 60_000;
    expect(await billing.reconcile()).toEqual({ checked: 1, changed: [{ key: 'sub:a:pro:1', from: 'pending', to: 'active' }], errors: [] });
    expect(made).toHaveLength(1);
    expect(client.billing.subscriptions.create.mock.calls.map(([, options]) => options.idempotencyKey)).toEqual([
      'sub:a:pro:1',
      'sub:a:pro:1',
    ]);
    await billing.handleEvent(early); // the inbox's retry
    // Past the key window a replay could make a second subscription: reconcile leaves it.
    await expect(billing.subscribe(params('b'))).rejects.toThrow('connection reset');
    clock.now += DAY;
    expect((await billing.reconcile()).checked).toBe(1);
    expect(made).toHaveLength(2);
  });
});

test('PaymentsClient is a BillingClient as it is', () => {
  const client: BillingClient = new PaymentsClient({
    environment: 'sandbox',
    merchantKey: 'm',
    apiKey: 'k',
    apiSecret: 's',
    baseUrl: 'https://payments.example.test',
  });
  expect(typeof client.pollSlot).toBe('function');
});

test('business-payments/billing ships no ky, no client, no zod and no engine, within its budget', async () => {
  const { inputs, gzipBytes } = await bundleEntry('src/billing.ts');
  expect(inputs.filter((path) => /node_modules\/ky\/|src\/client\.ts|node_modules\/zod\/|src\/internal\//.test(path))).toEqual([]);
  expect(gzipBytes).toBeLessThanOrEqual(6_144);
});
