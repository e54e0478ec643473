// A USSD push payment from a Node script: create, then wait for the customer's PIN.
import { PaymentsClient, APITimeoutError } from 'business-payments';

const client = new PaymentsClient({ environment: 'sandbox' });

const payment = await client.payments.create({
  payment_amount: 5000,
  currency_code: 'TZS',
  ref_trx: `order-${Date.now()}`,
  payment_mode: 'push',
  customer_phone: '255712345678',
});
console.log('push sent for', payment.trx_id);

try {
  const outcome = await client.payments.waitForOutcome(payment.trx_id, { timeout: 90_000, interval: 3_000 });
  console.log('outcome:', outcome.status, outcome.net_amount, outcome.currency);
} catch (error) {
  if (error instanceof APITimeoutError) console.log('still pending: the webhook will tell us');
  else throw error;
}

for await (const item of client.payments.list({ status: 'success', limit: 50 })) {
  console.log(item.trx_id, item.amount, item.currency);
}
