// The kit says why it refused a delivery (issue 29): a warn line through the client's own
// logger, with the reason and, for a timestamp, its seconds: a clock that is off refuses every
// delivery with a 401, and the log is where that shows. Never the secret, the signature, the
// body or the customer's details: the line is checked for each kind of refusal.
import { describe, expect, test, vi } from 'vitest';
import { createFulfillment } from '../../src/fulfillment.js';
import { PaymentsClient, type Logger, type LogLevel } from '../../src/index.js';
import { signWebhook } from '../../src/testing.js';

const SECRET = 'whsec_test_refusal_log_secret';
const PHONE = '255712345678';
const EMAIL = 'amina@example.com';

const event = (extra: Record<string, unknown> = {}) => ({
  id: 'evt_refusal_1',
  type: 'payment.completed',
  api_version: '2024-06-01',
  created_at: new Date().toISOString(),
  data: {
    trx_id: 'TRX_REFUSAL_1',
    merchant_ref: 'order-1',
    status: 'completed',
    amount: { value: 25, currency: 'USD' },
    customer: { name: 'Amina Juma', email: EMAIL, phone: PHONE },
  },
  ...extra,
});

/** A kit on a real client (nothing is sent: each delivery is refused first) whose logger is captured. */
function kit(logLevel: LogLevel = 'warn') {
  const logger: Logger = { error: vi.fn(), warn: vi.fn(), info: vi.fn(), debug: vi.fn() };
  const client = new PaymentsClient({
    environment: 'sandbox',
    baseUrl: 'http://127.0.0.1:9',
    merchantKey: 'test_merchant',
    apiKey: 'test_key',
    apiSecret: 'test_api_secret_never_logged',
    logger,
    logLevel,
  });
  const onPaid = vi.fn();
  const fulfillment = createFulfillment({ environment: 'sandbox', secret: SECRET, client, onPaid });
  return { fulfillment, logger, onPaid };
}

const now = () => Math.floor(Date.now() / 1000);
type Delivery = { payload: string; headers: Record<string, string> };
const signed = async (options: Partial<Parameters<typeof signWebhook>[0]> = {}): Promise<Delivery> => {
  const { body, headers } = await signWebhook({ secret: SECRET, payload: event(), ...options });
  return { payload: body, headers };
};

/** Every kind of refusal, the delivery that earns it, its status, and what the line must say. */
const REFUSALS: Array<[reason: string, make: () => Promise<Delivery>, status: number, says?: RegExp]> = [
  ['missing_header', async () => ({ payload: JSON.stringify(event()), headers: { 'content-type': 'application/json' } }), 401],
  ['invalid_signature', () => signed({ secret: 'whsec_someone_elses' }), 401],
  ['timestamp_too_old', () => signed({ timestamp: now() - 3_600 }), 401, /Timestamp 36\d\d s old \(tolerance 300 s\)/],
  ['timestamp_in_future', () => signed({ timestamp: now() + 3_600 }), 401, /Timestamp 3[56]\d\d s ahead \(tolerance 300 s\)/],
  [
    'invalid_timestamp',
    async () => {
      const delivery = await signed();
      return { ...delivery, headers: { ...delivery.headers, 'X-Service-Timestamp': 'yesterday' } };
    },
    401,
  ],
  ['invalid_payload', () => signed({ payload: `not an event: ${PHONE} ${EMAIL}`, type: 'payment.completed' }), 400],
  ['environment_mismatch', () => signed({ environment: 'production' }), 400],
  ['event_mismatch', () => signed({ type: 'payment.failed' }), 400],
  // The earlier generation's IPN carries its timestamp in its body.
  [
    'timestamp_too_old',
    () =>
      signed({
        format: 'legacy',
        timestamp: now() - 3_600,
        payload: {
          data: { ref_trx: 'order-1', amount: 25, currency_code: 'USD', environment: 'sandbox', trx_id: 'TRX1', customer_email: EMAIL },
          message: 'Payment Completed',
          status: 'completed',
        },
      }),
    401,
    /Timestamp 36\d\d s old/,
  ],
];

describe('handleWebhook: a refused delivery is logged at warn through the client logger', () => {
  test.each(REFUSALS)('%s: one warn line naming it, without secret, signature or body', async (reason, make, status, says) => {
    const { fulfillment, logger, onPaid } = kit();
    const delivery = await make();
    const answer = await fulfillment.handleWebhook(delivery);
    expect(answer.status).toBe(status);
    expect(JSON.parse(answer.body).error).toBe(reason);
    expect(onPaid).not.toHaveBeenCalled();

    expect(logger.warn).toHaveBeenCalledTimes(1);
    const call = vi.mocked(logger.warn).mock.calls[0]!;
    expect(call).toHaveLength(1); // the line alone: no details object beside it
    const line = call[0];
    expect(line).toMatch(new RegExp(`^\\[business-payments\\] webhook refused, ${reason}: \\S`));
    if (says) expect(line).toMatch(says);
    const signature = Object.entries(delivery.headers).find(([name]) => /signature/i.test(name))?.[1];
    for (const kept of [SECRET, 'test_api_secret_never_logged', signature, delivery.payload, PHONE, EMAIL, 'Amina', 'TRX_REFUSAL_1']) {
      if (kept) expect(line).not.toContain(kept);
    }
    for (const other of [logger.error, logger.info, logger.debug]) expect(other).not.toHaveBeenCalled();
  });

  test('a clock an hour off: every delivery refused 401 timestamp_too_old, and each refusal logged with the seconds', async () => {
    const { fulfillment, logger } = kit();
    // What a receiving server whose clock is an hour ahead sees: fresh deliveries an hour old.
    for (const id of ['evt_a', 'evt_b']) {
      const answer = await fulfillment.handleWebhook(await signed({ payload: event({ id }), timestamp: now() - 3_600 }));
      expect(answer.status).toBe(401);
    }
    expect(vi.mocked(logger.warn).mock.calls.map(([line]) => line)).toEqual([
      expect.stringMatching(/webhook refused, timestamp_too_old: Timestamp 36\d\d s old/),
      expect.stringMatching(/webhook refused, timestamp_too_old: Timestamp 36\d\d s old/),
    ]);
  });

  test("the client's logLevel rules: at off (its default) the refusal is not logged", async () => {
    const quiet = kit('off');
    expect((await quiet.fulfillment.handleWebhook(await signed({ secret: 'whsec_wrong' }))).status).toBe(401);
    expect(quiet.logger.warn).not.toHaveBeenCalled();
  });

  test('a fake client without the logger (FulfillmentClient is structural): refused as before, nothing thrown', async () => {
    const fulfillment = createFulfillment({
      environment: 'sandbox',
      secret: SECRET,
      client: { environment: 'sandbox', payments: { verify: vi.fn(), list: async function* () {} } },
      onPaid: vi.fn(),
    });
    const answer = await fulfillment.handleWebhook(await signed({ secret: 'whsec_wrong' }));
    expect(answer.status).toBe(401);
  });
});
