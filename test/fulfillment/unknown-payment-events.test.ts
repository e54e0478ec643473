// A `payment.*` type the SDK does not know (a refund, a reversal the service adds later) is not
// a payment outcome: it goes to onEvent, once per event id, and is never verified nor given to
// onPaid or onFailed. Only `payment.completed` and `payment.failed` are settled.
import { describe, expect, test, vi } from 'vitest';
import type { VerifiedTransaction } from '../../src/index.js';
import { createFulfillment, memoryStore } from '../../src/fulfillment.js';
import { signWebhook } from '../../src/testing.js';
import { fakeClient } from '../support/fulfillment-client.js';

const SECRET = 'whsec_test_unknown_payment_events';

const tx = (trx_id: string) => ({ trx_id, status: 'success', amount: 25, currency: 'USD' }) as VerifiedTransaction;

function kit() {
  const { client, verify } = fakeClient(tx);
  const onPaid = vi.fn();
  const onFailed = vi.fn();
  const onEvent = vi.fn();
  const fulfillment = createFulfillment({
    environment: 'sandbox',
    secret: SECRET,
    client,
    store: memoryStore(),
    onPaid,
    onFailed,
    onEvent,
  });
  const deliver = async (payload: Record<string, unknown>) => {
    const { body, headers } = await signWebhook({ secret: SECRET, payload, environment: 'sandbox' });
    return fulfillment.handleWebhook({ payload: body, headers });
  };
  return { deliver, verify, onPaid, onFailed, onEvent };
}

describe('payment.* types other than completed and failed', () => {
  test.each(['payment.refunded', 'payment.reversed', 'payment.pending', 'payment.review'])(
    '%s goes to onEvent once per event id, never to verify, onPaid or onFailed',
    async (type) => {
      const { deliver, verify, onPaid, onFailed, onEvent } = kit();
      const payload = { id: 'evt_new_1', type, data: { trx_id: 'TRX1', status: 'completed' } };
      expect(await deliver(payload)).toMatchObject({ status: 200 });
      expect(await deliver(payload)).toMatchObject({ status: 200 }); // the same delivery again
      expect(onEvent).toHaveBeenCalledTimes(1);
      expect(onEvent.mock.calls[0]![0]).toMatchObject({ id: 'evt_new_1', type });
      expect(verify).not.toHaveBeenCalled();
      expect(onPaid).not.toHaveBeenCalled();
      expect(onFailed).not.toHaveBeenCalled();
      // Another event id of the same type is another event.
      expect(await deliver({ ...payload, id: 'evt_new_2' })).toMatchObject({ status: 200 });
      expect(onEvent).toHaveBeenCalledTimes(2);
    },
  );

  test('payment.completed and payment.failed are still verified and settled, never given to onEvent', async () => {
    const { deliver, verify, onPaid, onEvent } = kit();
    expect(await deliver({ id: 'evt_paid', type: 'payment.completed', data: { trx_id: 'TRX2', status: 'completed' } })).toMatchObject({
      status: 200,
    });
    expect(verify).toHaveBeenCalledWith('TRX2');
    expect(onPaid).toHaveBeenCalledTimes(1);
    expect(onEvent).not.toHaveBeenCalled();
  });
});
