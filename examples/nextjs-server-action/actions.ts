'use server';
// Next.js App Router server action: create a hosted checkout and hand the URL to the page.
// Results are plain JSON objects, so they cross the server/client boundary as they are.
import { PaymentsClient, UnprocessableEntityError } from 'business-payments';

// Reads BUSINESS_PAYMENTS_* from the deployment's environment; one client per server.
const client = new PaymentsClient();

export async function createCheckout(orderId: string, amount: number, currency: string) {
  try {
    const payment = await client.payments.create({
      payment_amount: amount,
      currency_code: currency,
      ref_trx: orderId,
      success_redirect: `https://shop.example.com/orders/${orderId}/thanks`,
      cancel_redirect: `https://shop.example.com/orders/${orderId}`,
      ipn_url: 'https://shop.example.com/api/webhooks/payments',
    });
    return { ok: true as const, checkoutUrl: payment.checkout_url, trxId: payment.trx_id };
  } catch (error) {
    if (error instanceof UnprocessableEntityError) return { ok: false as const, reason: error.label ?? error.message };
    throw error;
  }
}

export async function confirmOrder(trxId: string) {
  // Verify server-side before fulfilment; the webhook may arrive before or after this.
  const transaction = await client.payments.verify(trxId);
  return { paid: transaction.status === 'success', amount: transaction.net_amount, currency: transaction.currency };
}
