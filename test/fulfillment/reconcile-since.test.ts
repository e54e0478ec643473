// reconcile's `since` is a Date or ms since the epoch: anything else (none, a string, NaN, an
// invalid Date) would walk the whole history, so it is a ConfigurationError naming the fix,
// before any call to the service or the store.
import { describe, expect, test, vi } from 'vitest';
import type { PaymentRecord, VerifiedTransaction } from '../../src/index.js';
import { ConfigurationError } from '../../src/index.js';
import { createFulfillment, memoryStore } from '../../src/fulfillment.js';
import { fakeClient } from '../support/fulfillment-client.js';

const old = (i: number) => ({ trx_id: `H${i}`, merchant_ref: `order-${i}`, created_at: new Date(Date.UTC(2020, 0, 1) + i).toISOString() });

function kit() {
  const { client, verify } = fakeClient(
    (trxId) => ({ trx_id: trxId, status: 'success', amount: 1, currency: 'USD' }) as VerifiedTransaction,
  );
  const list = vi.fn(async function* (): AsyncGenerator<PaymentRecord> {
    for (let i = 0; i < 5; i++) yield old(i) as PaymentRecord;
  });
  client.payments.list = list;
  const store = memoryStore();
  const outcome = vi.spyOn(store, 'outcome');
  const onPaid = vi.fn();
  const fulfillment = createFulfillment({ environment: 'sandbox', secret: 'whsec_test_since', client, store, onPaid });
  return { fulfillment, list, verify, outcome, onPaid };
}

describe('reconcile({ since })', () => {
  test.each<[string, unknown]>([
    ['missing', undefined],
    ['null', null],
    ['a string (the CLI takes 24h, the kit does not)', '24h'],
    ['a date string', '2024-01-01'],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['an invalid Date', new Date('not a date')],
    ['an object', { hours: 24 }],
    ['an object without a prototype', Object.create(null)],
  ])('%s: a ConfigurationError naming the fix, before any call', async (_, since) => {
    const { fulfillment, list, verify, outcome, onPaid } = kit();
    const run = fulfillment.reconcile({ since } as never);
    await expect(run).rejects.toThrow(ConfigurationError);
    await expect(run).rejects.toThrow(/reconcile\(\{ since \}\): pass a Date or ms since the epoch/);
    expect(list).not.toHaveBeenCalled();
    expect(verify).not.toHaveBeenCalled();
    expect(outcome).not.toHaveBeenCalled();
    expect(onPaid).not.toHaveBeenCalled();
  });

  test('a Date and a number of ms are taken: the window starts there', async () => {
    for (const since of [new Date(Date.UTC(2020, 0, 1) + 3), Date.UTC(2020, 0, 1) + 3]) {
      const { fulfillment, verify } = kit();
      expect(await fulfillment.reconcile({ since })).toMatchObject({ seen: 5, checked: 2, paid: 2, errors: [] });
      expect(verify.mock.calls.map(([id]) => id)).toEqual(['H3', 'H4']);
    }
  });
});
