'use server';
// Next.js App Router server actions: create a hosted checkout and send the customer to it;
// confirm an order server-side before fulfilment.
import { redirect } from 'next/navigation';
import { PaymentsClient, UnprocessableEntityError } from 'business-payments';

// Made on first use, not at module level: `next build` imports this module to collect page
// data, where BUSINESS_PAYMENTS_* are usually absent (the client would throw
// ConfigurationError and fail the build). One client per server after that.
let client: PaymentsClient | undefined;
const payments = () => (client ??= new PaymentsClient()).payments;

/** The form action of the checkout button: creates the payment, then redirects to its hosted page. */
export async function checkout(form: FormData): Promise<void> {
  const orderId = String(form.get('orderId') ?? '');
  const origin = process.env.SHOP_ORIGIN ?? 'http://localhost:3000';
  let checkoutUrl: string | null | undefined;
  try {
    const payment = await payments().create({
      payment_amount: Number(form.get('amount')),
      currency_code: String(form.get('currency') ?? 'USD'),
      ref_trx: orderId,
      success_redirect: `${origin}/orders/${encodeURIComponent(orderId)}/thanks`,
      cancel_redirect: `${origin}/`,
      ipn_url: `${origin}/api/webhooks/payments`,
    });
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

/** Verifies a transaction server-side before fulfilment; the webhook may arrive before or after. */
export async function confirmOrder(trxId: string) {
  const transaction = await payments().verify(trxId);
  return { paid: transaction.status === 'success', amount: transaction.net_amount, currency: transaction.currency };
}
