import { expect, test } from 'vitest';
import { fixtures } from './support/fake-api.js';
import { useFakeApi } from './support/harness.js';

const { api, setup } = useFakeApi();

test('create + verify', async () => {
  api.on('post', '/api/v1/payments', {
    body: { status: 'success', data: fixtures.payment, payment_url: fixtures.payment.checkout_url, trx_id: 'TRX123456' },
  });
  api.on('get', '/api/v1/verify-payment/:id', { body: fixtures.verified });
  const { client } = setup();
  const p = await client.payments.create({ payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1001' });
  expect(p.trx_id).toBe('TRX123456');
  const v = await client.payments.verify(p.trx_id);
  expect(v.status).toBe('success');
  expect(api.seen.every((r) => r.signatureValid)).toBe(true);
});
