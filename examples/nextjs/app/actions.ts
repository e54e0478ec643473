'use server';
// Next.js App Router server action: create the order and its hosted checkout, and send the
// customer to it.
import { redirect } from 'next/navigation';
import { UnprocessableEntityError } from 'business-payments';
import { paymentsClient } from '../lib/fulfillment';
import { createOrder, savePayment } from '../lib/orders';

/** The form action of the checkout button: creates the order and its payment, then redirects to the hosted page. */
export async function checkout(): Promise<void> {
  const origin = process.env.SHOP_ORIGIN ?? 'http://localhost:3000';
  // The amount comes from the order made here, on the server, never from the form.
  const order = createOrder();
  let checkoutUrl: string | null | undefined;
  try {
    const payment = await paymentsClient().payments.create(
      {
        payment_amount: order.amount,
        currency_code: order.currency,
        ref_trx: order.id,
        description: order.item,
        success_redirect: `${origin}/orders/${encodeURIComponent(order.id)}/thanks`,
        cancel_redirect: `${origin}/orders/${encodeURIComponent(order.id)}/thanks`,
        ipn_url: `${origin}/api/webhooks/payments`,
      },
      // The order id as the key: a double-submitted form replays this payment, never a second.
      { idempotencyKey: order.id },
    );
    savePayment(order, payment.trx_id);
    checkoutUrl = payment.checkout_url;
  } catch (error) {
    // A rule the service enforces (a currency without a wallet…): show it, don't crash.
    if (error instanceof UnprocessableEntityError) redirect(`/?error=${encodeURIComponent(error.message)}`);
    throw error;
  }
  // redirect() throws on purpose (Next's control flow): keep it outside the try.
  if (!checkoutUrl) redirect('/?error=no%20checkout%20URL');
  redirect(checkoutUrl);
}
