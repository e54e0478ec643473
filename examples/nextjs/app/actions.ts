'use server';
// Next.js App Router server action: create the order and its hosted checkout, and send the
// customer to it. On either generation of the service (docs/generations.md): `payments.create`
// where the server has it, else `payments.initiate`, the earlier generation's hosted checkout.
import { redirect } from 'next/navigation';
import { UnprocessableEntityError } from 'business-payments';
import { paymentsClient } from '../lib/fulfillment';
import { createOrder, savePayment, type Order } from '../lib/orders';

/** The form action of the checkout button: creates the order and its payment, then redirects to the hosted page. */
export async function checkout(): Promise<void> {
  const origin = process.env.SHOP_ORIGIN ?? 'http://localhost:3000';
  // The amount comes from the order made here, on the server, never from the form.
  const order = createOrder();
  let checkoutUrl: string | null | undefined;
  try {
    checkoutUrl = await startPayment(order, origin);
  } catch (error) {
    // A rule the service enforces (a currency without a wallet…): show it, don't crash.
    if (error instanceof UnprocessableEntityError) redirect(`/?error=${encodeURIComponent(error.message)}`);
    throw error;
  }
  // redirect() throws on purpose (Next's control flow): keep it outside the try.
  if (!checkoutUrl) redirect('/?error=no%20checkout%20URL');
  redirect(checkoutUrl);
}

/** The order's payment on the hosted checkout: its link. */
async function startPayment(order: Order, origin: string): Promise<string | null | undefined> {
  const client = paymentsClient();
  const params = {
    payment_amount: order.amount,
    currency_code: order.currency,
    ref_trx: order.id,
    description: order.item,
    success_redirect: `${origin}/orders/${encodeURIComponent(order.id)}/thanks`,
    cancel_redirect: `${origin}/orders/${encodeURIComponent(order.id)}/thanks`,
    ipn_url: `${origin}/api/webhooks/payments`,
  };
  // The order id as the key: a double-submitted form replays this payment, never a second.
  const options = { idempotencyKey: order.id };
  // Asked once per client and cached. The earlier generation has no payments.create: its
  // hosted checkout is initiate, whose answer has no trx_id (and which keeps no idempotency
  // key); the IPN brings the trx_id, and onPaid / onFailed record it on the order.
  if ((await client.generation()) === 'earlier') return (await client.payments.initiate(params, options)).payment_url;
  const payment = await client.payments.create(params, options);
  savePayment(order, payment.trx_id);
  return payment.checkout_url;
}
