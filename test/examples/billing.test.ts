// Drives the billing example (examples/billing/server.ts) for real: the Fastify app on a real
// socket, the sandbox (createMockService on a real port) charging each period by a simulated
// USSD push, its webhooks delivered over HTTP to the app's webhook route, one test clock
// driving the sandbox, the client's signatures and both kits. A clinic that double-clicks
// "Subscribe" has one subscription at the service; paid, it has access; cancelled, it keeps
// access to the end of its paid period, and a renewal the service still charged never extends
// it and is refunded once; a lost invoice.paid is found by the reconcile route (behind its
// token). The plan is made once, whatever the restarts.
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { PaymentsClient } from '../../src/index.js';
import { createMockService, createTestClock, signWebhook, TEST_PHONE_NUMBERS } from '../../src/testing.js';
import { buildApp, createClinicKits, createPlan, PLAN, TERMS_VERSION, type ClinicOptions } from '../../examples/billing/server.js';

const DAY = 86_400_000;
const ADMIN = 'admin-token-for-the-test';
const CREATE = 'POST /api/v1/billing/subscriptions';
const cleanups: (() => unknown)[] = [];
beforeEach(() => void vi.spyOn(console, 'log').mockImplementation(() => {})); // the example's onChange lines
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The sandbox and the app on one test clock; `drop(body)` loses a delivery (answered 200, never handed to the app). */
async function clinic({ drop = () => false }: { drop?: (body: string) => boolean } = {}) {
  const clock = createTestClock(Date.UTC(2027, 2, 1));
  let appUrl = '';
  const mock = createMockService({
    clock,
    fetch: async (input, init) =>
      drop(String(init?.body)) ? new Response(null, { status: 200 }) : fetch(`${appUrl}/webhooks/payments`, init),
  });
  const server = await mock.listen({ port: 0 });
  cleanups.push(() => mock.close());
  const { webhookSecret, ...credentials } = mock.credentials.sandbox;
  const client = new PaymentsClient({ ...credentials, environment: 'sandbox', baseUrl: server.url, now: clock.now, maxRetries: 0 });
  const refunds: string[] = [];
  const options: ClinicOptions = {
    client,
    secret: webhookSecret!,
    plan_code: await createPlan(client),
    adminToken: ADMIN,
    now: clock.now,
    refund: (customer, invoice) => void refunds.push(`${customer} ${invoice}`),
    origin: 'http://clinic.example.test',
  };
  const kits = createClinicKits(options);
  const app = buildApp(options, kits);
  await app.listen({ port: 0, host: '127.0.0.1' });
  cleanups.push(() => app.close());
  appUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const call = async (method: string, path: string, clinicId: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${appUrl}${path}`, {
      method,
      headers: { 'x-clinic-id': clinicId, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  /** The cron job: the reconcile route with the admin token. */
  const reconcile = async () => (await call('POST', '/admin/reconcile', '', undefined, { authorization: `Bearer ${ADMIN}` })).body;
  /** Subscription creates the sandbox was sent (replays included). */
  const creates = () => mock.state.requests.filter((request) => `${request.method} ${request.path}` === CREATE).length;
  return { clock, mock, client, refunds, call, reconcile, creates, kits, appUrl, secret: webhookSecret! };
}

test('a double click makes one subscription; paid, the clinic has access; the deliveries all verified', async () => {
  const { clock, mock, call, creates, kits } = await clinic();
  const [first, again] = await Promise.all([
    call('POST', '/subscribe', 'clinic-1', { phone: '0712 345 678' }),
    call('POST', '/subscribe', 'clinic-1', { phone: '0712 345 678' }),
  ]);
  expect([first.status, again.status]).toEqual([200, 200]);
  expect([first.body.created, again.body.created].sort()).toEqual([false, true]);
  expect(first.body.key).toBe(again.body.key);
  expect(first.body.message).toMatch(/Approve the payment prompt/);
  expect(mock.state.subscriptions.size).toBe(1);
  // The consent the kit keeps, on the app's clock.
  const [record] = await kits.billing.subscriptions();
  expect(record?.consent).toMatchObject({ at: clock.now(), termsVersion: TERMS_VERSION, ip: '127.0.0.1' });
  expect((await call('GET', '/access', 'clinic-1')).body).toMatchObject({ active: false, state: 'pending' });
  await clock.advance(60_000); // the first push answered, its invoice.paid delivered
  expect((await call('GET', '/access', 'clinic-1')).body).toMatchObject({ active: true, state: 'active' });
  expect(mock.state.deliveries.length).toBeGreaterThan(0);
  expect(mock.state.deliveries.every((delivery) => delivery.status === 200)).toBe(true);
  // A later click sends nothing at all.
  const sent = creates();
  expect((await call('POST', '/subscribe', 'clinic-1', { phone: '0712 345 678' })).body).toMatchObject({ created: false, state: 'active' });
  expect(creates()).toBe(sent);
  expect(mock.state.subscriptions.size).toBe(1);
  // A phone that is no mobile number: 400, nothing recorded or sent.
  expect((await call('POST', '/subscribe', 'clinic-2', { phone: '12' })).status).toBe(400);
  expect(mock.state.subscriptions.size).toBe(1);
  expect((await call('GET', '/access', '')).status).toBe(401);
});

test('cancelled: access to the end of the paid period; a renewal charged after it never extends access and is refunded once', async () => {
  const { clock, mock, refunds, call, reconcile, appUrl, secret } = await clinic();
  await call('POST', '/subscribe', 'clinic-1', { phone: TEST_PHONE_NUMBERS.success });
  await clock.advance(10 * DAY);
  const cancelled = await call('POST', '/cancel', 'clinic-1');
  expect(cancelled.body.state).toBe('cancelled');
  expect(cancelled.body.message).toMatch(/^Clinic Pro ends on \d{4}-\d\d-\d\d\. .*decline it/);
  expect((await call('GET', '/access', 'clinic-1')).body).toMatchObject({ active: true, state: 'cancelled' });
  const { paidThrough } = (await call('GET', '/access', 'clinic-1')).body;
  await clock.advance(55 * DAY); // two renewals (days 30 and 60) pushed by the service and paid by the customer's phone
  expect((await call('GET', '/access', 'clinic-1')).body).toMatchObject({ active: false, state: 'ended', paidThrough });
  expect(refunds).toHaveLength(2);
  expect(new Set(refunds).size).toBe(2);
  // The same paid renewal delivered again (signed afresh), then the cron job: no second refund.
  const renewal = mock.state.events.filter((event) => event.type === 'invoice.paid').at(-1)!;
  const again = await signWebhook({ payload: renewal.body, secret, now: clock.now });
  expect((await fetch(`${appUrl}/webhooks/payments`, { method: 'POST', body: again.body, headers: again.headers })).status).toBe(200);
  expect(await reconcile()).toMatchObject({ changed: [], errors: [] });
  expect(refunds).toHaveLength(2);
  expect((await call('GET', '/access', 'clinic-1')).body).toMatchObject({ active: false, state: 'ended', paidThrough });
});

test('a cancel before the first charge is paid names no date; a clinic with no subscription is 404', async () => {
  const { call } = await clinic();
  await call('POST', '/subscribe', 'clinic-1', { phone: TEST_PHONE_NUMBERS.timeout });
  const cancelled = await call('POST', '/cancel', 'clinic-1');
  expect(cancelled.body).toMatchObject({ state: 'ended', message: expect.stringMatching(/^Clinic Pro is cancelled\. .*decline it/) });
  expect(String(cancelled.body.message)).not.toMatch(/1970/);
  expect((await call('POST', '/cancel', 'clinic-2')).status).toBe(404);
});

test('a lost invoice.paid: no access until the reconcile route finds it', async () => {
  let lost = 0;
  const { clock, call, reconcile } = await clinic({ drop: (body) => body.includes('"invoice.paid"') && lost++ === 0 });
  const { body } = await call('POST', '/subscribe', 'clinic-1', { phone: TEST_PHONE_NUMBERS.success });
  await clock.advance(60_000);
  expect(lost).toBe(1);
  expect((await call('GET', '/access', 'clinic-1')).body).toMatchObject({ active: false, state: 'pending' });
  // The cron route is the admin's only: no token, or another one, is 401.
  expect((await call('POST', '/admin/reconcile', 'clinic-1')).status).toBe(401);
  expect((await call('POST', '/admin/reconcile', '', undefined, { authorization: 'Bearer guess' })).status).toBe(401);
  const report = await reconcile();
  expect(report).toMatchObject({ checked: 1, changed: [{ key: body.key, from: 'pending', to: 'active' }], errors: [] });
  expect((await call('GET', '/access', 'clinic-1')).body).toMatchObject({ active: true, state: 'active' });
});

test('the plan is made once: a restart (the same key replayed) and one a day later (its code taken) find the same plan', async () => {
  const { clock, mock, client } = await clinic(); // its start made the plan
  expect(await createPlan(client)).toBe(PLAN.plan_code);
  await clock.advance(25 * 3_600_000); // past the 24 h the service keeps a key
  expect(await createPlan(client)).toBe(PLAN.plan_code);
  const plans = mock.state.requests.filter((request) => request.path === '/api/v1/billing/plans').map((request) => request.status);
  expect(plans).toEqual([200, 200, 422]);
  expect([...mock.state.plans.keys()]).toEqual([PLAN.plan_code]);
});
