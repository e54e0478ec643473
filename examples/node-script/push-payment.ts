// A USSD push payment from a Node script: create, then wait for the customer's PIN.
import { PaymentsClient, APITimeoutError } from 'business-payments';

const client = new PaymentsClient({ environment: 'sandbox' });

// One reference per payment attempt, `<order>~a<n>`: a push that fails or times out cannot be
// sent again under its ref_trx (409 DUPLICATE_REFERENCE), so a retry of the order is `~a2`.
// (The fulfillment kit's newAttempt(orderId) makes and counts them.)
const order = `order-${Date.now()}`;
const payment = await client.payments.create({
  payment_amount: 5000,
  currency_code: 'TZS',
  ref_trx: `${order}~a1`,
  payment_mode: 'push',
  customer_phone: '255712345678',
  // Where the outcome is delivered: your webhook route (the express-webhook or node-http-webhook example's).
  ipn_url: process.env.IPN_URL ?? 'http://localhost:3000/webhooks/payments',
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
