// The test clock (business-payments/testing): one clock drives the sandbox, the client's request
// signatures, the webhook verifier and signWebhook. A year of monthly renewals and a dunning
// run in well under a second of real time, every delivery verified on the same clock, each at
// its own due time (follow-ups count from when their task ran).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { AuthenticationError, ConfigurationError, PaymentsClient } from '../../src/index.js';
import {
  createMockService,
  createTestClock,
  signWebhook,
  TEST_PHONE_NUMBERS,
  type MockService,
  type TestClock,
} from '../../src/testing.js';
import { verifyWebhook, WebhookVerificationError, type WebhookEvent } from '../../src/webhooks.js';

const MINUTE = 60_000;
const DAY = 86_400_000;
/** The sandbox's month. */
const MONTH = 30 * DAY;
/** The USSD push answer time (TIMING.pushAnswerMs). */
const PUSH_MS = 5_000;

const closing: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** A webhook receiver on a real port: verifies every delivery on `clock`, records it with the clock's time. */
async function receiver(clock: TestClock, secret: () => string) {
  const received: Array<{ at: number; event: WebhookEvent }> = [];
  const refused: string[] = [];
  const server: Server = createServer((req, res) => {
    void readBody(req).then(async (payload) => {
      try {
        const event = await verifyWebhook({ payload, headers: req.headers, secret: secret(), now: clock.now });
        received.push({ at: clock.now(), event });
        res.writeHead(200).end();
      } catch (error) {
        refused.push(error instanceof WebhookVerificationError ? error.reason : String(error));
        res.writeHead(401).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closing.push(() => new Promise((resolve) => server.close(resolve)));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  return { url, received, refused };
}

async function readBody(req: IncomingMessage): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A sandbox on `clock`, listening, and a client signing on the same clock. */
async function sandboxOn(clock: TestClock) {
  const mock = createMockService({ clock });
  closing.push(() => mock.close());
  const server = await mock.listen({ port: 0 });
  const client = new PaymentsClient({ environment: 'sandbox', ...mock.credentials.sandbox, baseUrl: server.url, now: clock.now });
  return { mock, server, client };
}

const invoicesOf = (mock: MockService, subscription: string) =>
  [...mock.state.invoices.values()].filter((invoice) => invoice.subscription === subscription);

describe('createTestClock', () => {
  test('starts at `start` (default: the real time), moves only when told; now is a plain function', async () => {
    const before = Date.now();
    const real = createTestClock();
    expect(real.now()).toBeGreaterThanOrEqual(before);
    expect(real.now()).toBeLessThanOrEqual(Date.now());
    const clock = createTestClock(new Date('2030-01-01T00:00:00Z'));
    const { now } = clock;
    expect(now()).toBe(Date.UTC(2030, 0, 1));
    await clock.advance(1_500);
    expect(now()).toBe(Date.UTC(2030, 0, 1) + 1_500);
    await clock.set(Date.UTC(2029, 0, 1)); // back, in one jump
    expect(now()).toBe(Date.UTC(2029, 0, 1));
  });

  test('refuses a bad start, ms or time, and a second move while one runs', async () => {
    expect(() => createTestClock(Number.NaN)).toThrow(RangeError);
    expect(() => createTestClock(new Date('no'))).toThrow(/start must be a Date or ms since the epoch/);
    const clock = createTestClock(0);
    for (const ms of [-1, Number.NaN, Infinity, '5' as never]) await expect(clock.advance(ms)).rejects.toThrow(RangeError);
    await expect(clock.set(Number.NaN)).rejects.toThrow(RangeError);
    let release: (() => void) | undefined;
    clock.join({ nextDueAt: () => (release ? undefined : 10), runDue: () => new Promise<void>((resolve) => (release = resolve)) });
    const first = clock.advance(20);
    await expect(clock.advance(5)).rejects.toThrow(/already moving/);
    await vi.waitFor(() => expect(release).toBeTypeOf('function'));
    release!();
    await first;
    expect(clock.now()).toBe(20);
  });

  test('advance stops at each due time, earliest first across what joined; follow-ups count from when their task ran', async () => {
    const clock = createTestClock(0);
    const ran: string[] = [];
    // A task every 10 ms, each scheduled by the one before; another work at 15 and 25.
    let tick = 10;
    const ticking = {
      nextDueAt: () => tick,
      runDue: async () => {
        while (tick <= clock.now()) {
          ran.push(`tick@${clock.now()}`);
          tick = clock.now() + 10;
        }
      },
    };
    const once = [15, 25];
    const other = {
      nextDueAt: () => once[0],
      runDue: async () => {
        while (once.length && once[0]! <= clock.now()) ran.push(`other${once.shift()}@${clock.now()}`);
      },
    };
    clock.join(ticking);
    const leave = clock.join(other);
    await clock.advance(20);
    expect(ran).toEqual(['tick@10', 'other15@15', 'tick@20']);
    leave();
    await clock.advance(15);
    expect(ran.slice(3)).toEqual(['tick@30']); // other25 left with its work
    // set() jumps: what is due runs once, at the new time (not stepped through).
    await clock.set(100);
    expect(ran.slice(4)).toEqual(['tick@100']);
    expect(clock.now()).toBe(100);
  });
});

describe('one test clock for the sandbox, the client and the verifier', () => {
  test('a year of monthly renewals: 12 invoices paid, each at its time; a failing number is dunned 3 times, then suspended', async () => {
    const clock = createTestClock();
    const t0 = clock.now();
    const { mock, client } = await sandboxOn(clock);
    const hook = await receiver(clock, () => mock.credentials.sandbox.webhookSecret);
    const plan = await client.billing.plans.create({ name: 'Clinic monthly', amount: 30_000, currency: 'TZS', interval: 'month' });
    const subscribe = (customer_phone: string) =>
      client.billing.subscriptions.create({
        plan_code: plan.plan_code,
        customer_phone,
        terms_shown: 'TZS 30,000 a month until you cancel.',
        webhook_url: hook.url,
      });
    const paying = await subscribe(TEST_PHONE_NUMBERS.success);
    const failing = await subscribe(TEST_PHONE_NUMBERS.insufficientFunds);

    const started = performance.now();
    await clock.advance(12 * MONTH);
    const realMs = performance.now() - started;
    console.log(
      `test clock: 12 months of renewals, dunning and ${hook.received.length} deliveries in ${realMs.toFixed(0)} ms of real time`,
    );
    expect(realMs).toBeLessThan(5_000);
    expect(clock.now()).toBe(t0 + 12 * MONTH);

    // Every delivery verified on the clock: none refused.
    expect(hook.refused).toEqual([]);
    expect(mock.state.deliveries.every((d) => d.status === 200)).toBe(true);
    expect(hook.received).toHaveLength(mock.state.deliveries.length);

    // The paying one: periods 0..11 paid, each 5 s after its period opened; the 13th opened at
    // 360 days, its charge still out.
    const invoices = invoicesOf(mock, paying.id);
    expect(invoices.filter((i) => i.status === 'paid')).toHaveLength(12);
    expect(invoices.filter((i) => i.status === 'open')).toHaveLength(1);
    const of = (id: string, type: string) =>
      hook.received.filter(({ event }) => event.type === type && (event.data as { subscription?: string }).subscription === id);
    const paid = of(paying.id, 'invoice.paid');
    expect(paid.map(({ at }) => at - t0)).toEqual(Array.from({ length: 12 }, (_, k) => k * MONTH + PUSH_MS));
    expect(of(paying.id, 'invoice.created')).toHaveLength(13);

    // The failing one: a charge at 5 s, retried 1 day and 2 more days after each failure,
    // then uncollectible and the subscription suspended (no renewal after).
    const mine = hook.received.filter(({ event }) =>
      [(event.data as { id?: string }).id, (event.data as { subscription?: string }).subscription].includes(failing.id),
    );
    expect(mine.map(({ event }) => event.type)).toEqual([
      'subscription.created',
      'invoice.created',
      'invoice.payment_failed',
      'invoice.payment_failed',
      'invoice.payment_failed',
      'subscription.suspended',
    ]);
    expect(mine.slice(2).map(({ at }) => at - t0)).toEqual([PUSH_MS, DAY + 2 * PUSH_MS, 3 * DAY + 3 * PUSH_MS, 3 * DAY + 3 * PUSH_MS]);
    expect(mock.state.subscriptions.get(failing.id)).toMatchObject({ status: 'suspended' });
    expect(invoicesOf(mock, failing.id)).toHaveLength(1);
  });

  test('a request signed far ahead on the clock is accepted by a sandbox on it, refused (401) by one on real time', async () => {
    const clock = createTestClock();
    await clock.advance(10 * DAY);
    const { client } = await sandboxOn(clock);
    await expect(client.balance.retrieve()).resolves.toBeDefined();
    const realTime = createMockService();
    closing.push(() => realTime.close());
    const server = await realTime.listen({ port: 0 });
    const ahead = new PaymentsClient({ environment: 'sandbox', ...realTime.credentials.sandbox, baseUrl: server.url, now: clock.now });
    const error = await ahead.balance.retrieve().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ status: 401 });
    // withOptions keeps the clock; a client without one signs on the real time.
    await expect(ahead.withOptions({ maxRetries: 0 }).balance.retrieve()).rejects.toMatchObject({ status: 401 });
    const onRealTime = new PaymentsClient({ environment: 'sandbox', ...realTime.credentials.sandbox, baseUrl: server.url });
    await expect(onRealTime.balance.retrieve()).resolves.toBeDefined();
  });

  test('the client refuses a `now` that is not a function', () => {
    const options = { environment: 'sandbox' as const, merchantKey: 'm', apiKey: 'k', apiSecret: 's', baseUrl: 'http://127.0.0.1:1' };
    expect(() => new PaymentsClient({ ...options, now: 5 as never })).toThrow(ConfigurationError);
    expect(() => new PaymentsClient({ ...options, now: 5 as never })).toThrow('now must be a function, like Date.now.');
  });

  test('a sandbox takes a clock or a now, not both; never real timers with a clock; close() unties it', async () => {
    const clock = createTestClock();
    expect(() => createMockService({ clock, now: clock.now })).toThrow(/clock or now, not both/);
    expect(() => createMockService({ clock, autoRun: true })).toThrow(/autoRun cannot be true with a clock/);
    expect(() => createMockService({ clock: { now: () => 0 } as never })).toThrow(/clock must be a test clock/);
    const leave = vi.fn();
    const join = vi.fn(() => leave);
    const mock = createMockService({ clock: { ...clock, join } });
    expect(join).toHaveBeenCalledTimes(1);
    await mock.close();
    expect(leave).toHaveBeenCalledTimes(1);
  });

  test('checkout settled on the clock: its webhook goes on the next advance, signed at that time', async () => {
    const clock = createTestClock();
    const { mock, client } = await sandboxOn(clock);
    const hook = await receiver(clock, () => mock.credentials.sandbox.webhookSecret);
    await clock.advance(DAY); // a day ahead of the real time
    const payment = await client.payments.create({
      payment_amount: 25,
      currency_code: 'USD',
      ref_trx: 'order-clock~a1',
      ipn_url: hook.url,
    });
    await mock.completeCheckout(payment.trx_id, 'success');
    expect(hook.received).toEqual([]); // nothing runs by itself
    await clock.advance(0);
    expect(hook.received.map(({ event }) => event.type)).toEqual(['payment.completed']);
    expect(hook.refused).toEqual([]);
  });
});

describe('signWebhook({ now })', () => {
  test('signs at the clock time, verified on the same clock, stale for the real time', async () => {
    const clock = createTestClock();
    await clock.advance(DAY);
    const secret = 'whsec_test_clock';
    const payload = { id: 'evt_1', type: 'invoice.paid', api_version: '2024-06-01', created_at: '2030-01-01T00:00:00+00:00', data: {} };
    const { body, headers } = await signWebhook({ payload, secret, now: clock.now });
    expect(headers['X-Service-Timestamp']).toBe(String(Math.floor(clock.now() / 1000)));
    await expect(verifyWebhook({ payload: body, headers, secret, now: clock.now })).resolves.toMatchObject({ type: 'invoice.paid' });
    await expect(verifyWebhook({ payload: body, headers, secret })).rejects.toMatchObject({ reason: 'timestamp_in_future' });
    // The Request form reads the same clock.
    const request = new Request('https://shop.example.com/webhooks', { method: 'POST', body, headers });
    await expect(verifyWebhook(request, secret, { now: clock.now })).resolves.toMatchObject({ id: 'evt_1' });
    // 5 minutes and a second later on the clock it is stale.
    await clock.advance(5 * MINUTE + 1_000);
    await expect(verifyWebhook({ payload: body, headers, secret, now: clock.now })).rejects.toMatchObject({ reason: 'timestamp_too_old' });
  });

  test('the legacy form puts the clock time in the body; a timestamp given wins; a bad now is refused', async () => {
    const clock = createTestClock(Date.UTC(2031, 0, 1));
    const legacy = await signWebhook({
      format: 'legacy',
      secret: 's',
      payload: { data: { trx_id: 'T1' }, status: 'completed' },
      now: clock.now,
    });
    expect(JSON.parse(legacy.body)).toMatchObject({ timestamp: Date.UTC(2031, 0, 1) / 1000 });
    const given = await signWebhook({ payload: '{}', secret: 's', timestamp: 42, now: clock.now });
    expect(given.headers['X-Service-Timestamp']).toBe('42');
    await expect(signWebhook({ payload: '{}', secret: 's', now: () => Number.NaN })).rejects.toThrow(RangeError);
  });
});
