// The kits' seam (src/core/kit-client.ts), as PaymentsClient implements it: a slot of its
// polling budget, a warn line of its logger, and its own refusal of a call's params told by
// class, never by a name string. A kit's client interface takes the client itself.
import { describe, expect, test, vi } from 'vitest';
import type { KitClient } from '../../src/core/kit-client.js';
import { APIError, InvalidParamsError, PaymentsClient, type Logger } from '../../src/index.js';
import type { BillingClient } from '../../src/billing.js';
import type { FulfillmentClient } from '../../src/fulfillment.js';
import type { PayoutsClient } from '../../src/payouts.js';

const options = {
  environment: 'sandbox',
  merchantKey: 'm',
  apiKey: 'k',
  apiSecret: 's',
  baseUrl: 'https://payments.example.test',
} as const;

// Whether `promise` settles within a few turns of the event loop.
const settles = (promise: Promise<unknown>) =>
  Promise.race([promise.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 20))]);

describe('PaymentsClient implements the kits’ seam', () => {
  test('it is a FulfillmentClient, a PayoutsClient and a BillingClient as it is, its seam declared', () => {
    // The type checks (tsc over test/): the client has every member of the seam, and each kit
    // declares the members it uses as the seam does.
    const client = new PaymentsClient(options);
    const seam: Required<KitClient> = client;
    const fulfillmentSeam: Required<Pick<KitClient, 'pollSlot' | 'warn' | 'unsupported'>> = client as Required<
      Pick<FulfillmentClient, 'pollSlot' | 'warn' | 'unsupported'>
    >;
    const payoutsSeam: Required<Pick<KitClient, 'pollSlot' | 'refused'>> = client as Required<Pick<PayoutsClient, 'pollSlot' | 'refused'>>;
    expect(fulfillmentSeam.pollSlot).toBe(payoutsSeam.pollSlot);
    const fulfillment: FulfillmentClient = client;
    const payouts: PayoutsClient = client;
    const billingSeam: Required<Pick<KitClient, 'pollSlot' | 'refused'>> = client as Required<Pick<BillingClient, 'pollSlot' | 'refused'>>;
    expect(billingSeam.refused).toBe(payoutsSeam.refused);
    const billing: BillingClient = client;
    expect([typeof seam.pollSlot, typeof fulfillment.warn, typeof payouts.refused, typeof billing.billing.invoices.list]).toEqual([
      'function',
      'function',
      'function',
      'function',
    ]);
    // Methods, not own properties: nothing of it shows in JSON or in the client's keys.
    expect(Object.keys(client)).not.toContain('pollSlot');
    expect(JSON.stringify(client)).not.toMatch(/pollSlot|warn|refused/);
  });

  test('pollSlot takes a slot of the polling budget, shared with withOptions(); a signal ends its wait', async () => {
    // pollingBudget 4: the SDK's own sends get 3 a minute.
    const client = new PaymentsClient({ ...options, pollingBudget: 4 });
    const other = client.withOptions({ timeout: 5_000 });
    for (const c of [client, other, client]) expect(await settles(c.pollSlot())).toBe(true);
    const stop = new AbortController();
    const waiting = other.pollSlot(stop.signal);
    expect(await settles(waiting.catch(() => {}))).toBe(false);
    stop.abort(new Error('stopped'));
    await expect(waiting).rejects.toThrow('stopped');
    // A client with a budget of its own is not held by the first one's.
    expect(await settles(client.withOptions({ pollingBudget: 4 }).pollSlot())).toBe(true);
  });

  test('warn writes a line to the client’s logger at warn, and follows its logLevel', () => {
    const logger: Logger = { error: vi.fn(), warn: vi.fn(), info: vi.fn(), debug: vi.fn() };
    new PaymentsClient({ ...options, logger, logLevel: 'warn' }).warn('webhook refused, signature_mismatch: no match');
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(JSON.stringify(vi.mocked(logger.warn).mock.calls[0])).toContain('webhook refused, signature_mismatch: no match');
    new PaymentsClient({ ...options, logger, logLevel: 'off' }).warn('not logged');
    expect(logger.warn).toHaveBeenCalledTimes(1);
  });

  test('refused tells its own InvalidParamsError by class, never by a name string', () => {
    const client = new PaymentsClient(options);
    expect(client.refused(new InvalidParamsError('payouts.create', { destination: ['bad'] }))).toBe(true);
    expect(client.refused(Object.assign(new Error('destination: bad'), { name: 'InvalidParamsError' }))).toBe(false);
    expect(client.refused(new APIError({ status: 422, body: { message: 'Invalid' }, headers: new Headers() }))).toBe(false);
    expect(client.refused(undefined)).toBe(false);
  });

  test('unsupported tells its own RouteNotSupportedError by class, never by a name string', async () => {
    // The earlier generation's answer to a route it lacks, as the client itself makes it.
    const body = JSON.stringify({ message: 'The route api/v1/payments could not be found.' });
    const fetch = () => Promise.resolve(new Response(body, { status: 404, headers: { 'content-type': 'application/json' } }));
    const client = new PaymentsClient({ ...options, fetch, maxRetries: 0 });
    const error: unknown = await client.payments.list({ limit: 1 }).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(client.unsupported(error)).toBe(true);
    expect(client.unsupported(Object.assign(new Error('no route'), { name: 'RouteNotSupportedError' }))).toBe(false);
    expect(client.unsupported(new APIError({ status: 404, body: { message: 'Not found' }, headers: new Headers() }))).toBe(false);
  });
});
