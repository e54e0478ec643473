// The billing kit against the sandbox over a real socket: a PaymentsClient subscribes, the
// sandbox charges each period by a simulated USSD push (outcome by test phone number), renews,
// dunns and suspends, and signs each webhook, which is verified and handed to handleEvent (or
// to createFulfillment's onEvent). One injected clock drives the service, the verification and
// the kit (`now`, `autoRun: false`, `runDue()`): a year runs without real waiting.
import { afterEach, describe, expect, test } from 'vitest';
import { createFulfillment, memoryStore as fulfillmentStore } from '../../src/fulfillment.js';
import { PaymentsClient } from '../../src/index.js';
import { createMockService, TEST_PHONE_NUMBERS, type MockServer, type MockService } from '../../src/testing.js';
import { verifyWebhook } from '../../src/webhooks.js';
import { createBilling, memoryStore, type BillingKit, type PaidPeriod } from '../../src/billing.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const MONTH = 30 * DAY; // the sandbox's month
const TERMS = 'TZS 10,000 every month, charged by USSD push to this number, until you cancel.';

let open: { mock: MockService; server: MockServer } | undefined;
afterEach(async () => {
  await open?.server.close();
  await open?.mock.close();
  open = undefined;
});

type Deliver = (body: string, headers: Record<string, string>) => Promise<number>;

/**
 * The sandbox on the clock `clock.t` (real time at first: the client signs with it, and the
 * service takes a year of skew), its webhooks handed to `deliver` (default: verified on the
 * same clock, then billing.handleEvent; a throw answers 500 and the sandbox retries).
 */
async function setup(options: { deliver?: (billing: BillingKit) => Deliver } = {}) {
  const clock = { t: Date.now() };
  const now = () => clock.t;
  const seen = { verified: 0, refused: 0 };
  const charged: Array<[string, PaidPeriod]> = [];
  let deliver: Deliver = () => Promise.resolve(500);
  const mock = createMockService({
    now,
    autoRun: false,
    toleranceSeconds: 400 * 86_400,
    fetch: async (_url, init) => new Response(null, { status: await deliver(String(init?.body), init?.headers as Record<string, string>) }),
  });
  const server = await mock.listen({ port: 0 });
  open = { mock, server };
  const client = new PaymentsClient({ environment: 'sandbox', ...mock.credentials.sandbox, baseUrl: server.url, maxRetries: 0 });
  const billing = createBilling({
    client,
    store: memoryStore(),
    now,
    onChargedAfterCancel: (record, invoice) => void charged.push([record.customer, invoice]),
  });
  const secret = mock.credentials.sandbox.webhookSecret!;
  deliver =
    options.deliver?.(billing) ??
    (async (payload, headers) => {
      const event = await verifyWebhook({ payload, headers, secret, now }).catch(() => undefined);
      if (!event) return (++seen.refused, 401);
      seen.verified++;
      return billing.handleEvent(event).then(
        () => 200,
        () => 500,
      );
    });
  const plan = await client.billing.plans.create({ name: 'Clinic Pro', amount: 10_000, currency: 'TZS', interval: 'month' });
  const subscribe = (customer: string, phone: string) =>
    billing.subscribe({
      customer,
      plan_code: plan.plan_code,
      customer_phone: phone,
      terms_shown: TERMS,
      webhook_url: 'http://127.0.0.1:9/hooks',
    });
  /** Moves the clock `ms` on in steps of at most `step`, running what falls due at each. */
  const advance = async (ms: number, step = 6 * HOUR) => {
    for (const end = clock.t + ms; clock.t < end;) {
      clock.t = Math.min(end, clock.t + step);
      await mock.runDue();
    }
  };
  const access = (customer: string) => billing.entitlement(customer, plan.plan_code);
  return { mock, client, billing, clock, seen, charged, plan, subscribe, advance, access };
}

describe('billing against the sandbox over a real socket', () => {
  test('a year of monthly renewals on the injected clock: paid, failed by test phone, and cancelled; every signature checked', async () => {
    const { billing, clock, seen, charged, subscribe, advance, access, mock } = await setup();
    const start = clock.t;
    const paying = await subscribe('clinic-paying', TEST_PHONE_NUMBERS.success);
    const failing = await subscribe('clinic-failing', TEST_PHONE_NUMBERS.insufficientFunds);
    await subscribe('clinic-leaving', TEST_PHONE_NUMBERS.success);
    expect([paying.created, failing.created, paying.state]).toEqual([true, true, 'pending']);
    const began = performance.now();
    const granted: Record<string, boolean[]> = { 'clinic-paying': [], 'clinic-failing': [], 'clinic-leaving': [] };
    for (let day = 1; day <= 365; day++) {
      await advance(DAY);
      if (day === 75) expect(await billing.cancel('clinic-leaving', paying.record.plan)).toMatchObject({ state: 'cancelled' });
      for (const customer of Object.keys(granted)) granted[customer]!.push((await access(customer)).active);
    }
    const ms = performance.now() - began;
    // Paid each month from the first push (5 s after subscribing) on: 13 periods of 30 days in a year.
    expect(granted['clinic-paying']!.every(Boolean)).toBe(true);
    expect(await access('clinic-paying')).toMatchObject({ active: true, state: 'active', paidThrough: start + 13 * MONTH });
    const [fails, leaving, pays] = await billing.subscriptions(); // by key
    expect(pays?.paid).toHaveLength(13);
    // Three failed charges (the first and two dunning retries), then suspended: never access.
    expect(granted['clinic-failing']!.some(Boolean)).toBe(false);
    expect(fails).toMatchObject({ state: 'ended', paid: [] });
    expect(fails?.failed).toHaveLength(1);
    expect(fails?.suspendedAt).toBeGreaterThan(start);
    // Cancelled on day 75: access to the end of its paid period (day 90), never after; each renewal
    // the service pushed and the customer paid after it went to onChargedAfterCancel, once.
    expect(granted['clinic-leaving']!.slice(0, 89).every(Boolean)).toBe(true);
    expect(granted['clinic-leaving']!.slice(90).some(Boolean)).toBe(false);
    expect(leaving).toMatchObject({ state: 'ended', cancel: { paidThrough: start + 3 * MONTH } });
    expect(charged.map(([customer]) => customer)).toEqual(Array(10).fill('clinic-leaving'));
    expect(new Set(charged.map(([, invoice]) => invoice.invoice)).size).toBe(10);
    expect(leaving?.chargedAfterCancel).toHaveLength(10);
    // Every delivery signed on the service's clock and verified on the same clock, each delivered once.
    expect(seen).toEqual({ verified: mock.state.deliveries.length, refused: 0 });
    expect(mock.state.deliveries.every((delivery) => delivery.status === 200)).toBe(true);
    expect(ms).toBeLessThan(10_000);
  });

  test('a lost invoice.paid is found by reconcile and grants access', async () => {
    let lost = 0;
    const { billing, subscribe, advance, access, clock } = await setup({
      deliver: (billing) => {
        const secret = open!.mock.credentials.sandbox.webhookSecret!;
        return async (payload, headers) => {
          const event = await verifyWebhook({ payload, headers, secret, now: () => clock.t });
          // The endpoint answered, then lost the paid event (a crash before it was recorded).
          if (event.type === 'invoice.paid' && !lost++) return 200;
          await billing.handleEvent(event);
          return 200;
        };
      },
    });
    const { record } = await subscribe('clinic-42', TEST_PHONE_NUMBERS.success);
    await advance(HOUR, 60_000);
    expect(lost).toBe(1);
    expect(await access('clinic-42')).toMatchObject({ active: false, state: 'pending' });
    const report = await billing.reconcile();
    expect(report).toEqual({ checked: 1, changed: [{ key: record.key, from: 'pending', to: 'active' }], errors: [] });
    expect(await access('clinic-42')).toMatchObject({ active: true, state: 'active', paidThrough: clock.t - HOUR + MONTH });
    expect((await billing.reconcile()).changed).toEqual([]);
  });

  test('a cancel reads the invoices first: a renewal paid before it whose invoice.paid was lost still counts', async () => {
    let renewals = 0;
    const { billing, subscribe, advance, access, clock, charged } = await setup({
      deliver: (billing) => {
        const secret = open!.mock.credentials.sandbox.webhookSecret!;
        return async (payload, headers) => {
          const event = await verifyWebhook({ payload, headers, secret, now: () => clock.t });
          // The second period's invoice.paid is answered and lost (a crash before it was recorded).
          if (event.type === 'invoice.paid' && ++renewals === 2) return 200;
          await billing.handleEvent(event);
          return 200;
        };
      },
    });
    const start = clock.t;
    const { record } = await subscribe('clinic-7', TEST_PHONE_NUMBERS.success);
    await advance(MONTH + DAY);
    expect(renewals).toBe(2);
    expect(await access('clinic-7')).toMatchObject({ state: 'past_due' });
    // Cancelled before the renewal's payment was heard of: the cancel's list finds it paid.
    const cancelled = await billing.cancel('clinic-7', record.plan);
    expect(cancelled).toMatchObject({ state: 'cancelled', cancel: { paidThrough: start + 2 * MONTH } });
    expect(cancelled?.paid).toHaveLength(2);
    await advance(2 * MONTH);
    expect(charged).toHaveLength(2); // the renewals after the cancel, never the one paid before it
    expect(await access('clinic-7')).toMatchObject({ active: false, state: 'ended', paidThrough: start + 2 * MONTH });
  });

  test('as createFulfillment’s onEvent, behind its webhook handler; a second subscribe sends nothing', async () => {
    const { subscribe, advance, access, mock } = await setup({
      deliver: (billing) => {
        const client = new PaymentsClient({ environment: 'sandbox', ...open!.mock.credentials.sandbox, baseUrl: open!.server.url });
        const fulfillment = createFulfillment({
          environment: 'sandbox',
          client,
          store: fulfillmentStore(),
          secret: open!.mock.credentials.sandbox.webhookSecret!,
          onPaid: () => {},
          onEvent: billing.handleEvent,
        });
        return async (payload, headers) => (await fulfillment.handleWebhook({ payload, headers })).status;
      },
    });
    // The fulfilment kit verifies on the real clock: a few minutes of the service's are within its tolerance.
    expect((await subscribe('clinic-42', TEST_PHONE_NUMBERS.success)).created).toBe(true);
    expect((await subscribe('clinic-42', TEST_PHONE_NUMBERS.success)).created).toBe(false);
    await advance(10_000, 1_000);
    expect(await access('clinic-42')).toMatchObject({ active: true, state: 'active' });
    expect(mock.state.subscriptions.size).toBe(1);
    expect(mock.state.deliveries.map((delivery) => delivery.status)).toEqual([200, 200, 200]);
  });
});
