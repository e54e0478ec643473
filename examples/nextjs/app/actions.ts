'use server';
// Next.js App Router server actions: create the order and a payment attempt for it (or a new
// attempt, after one failed), and send the customer to its hosted checkout. On either
// generation of the service (docs/generations.md): `payments.create` where the server has it,
// else `payments.initiate`, the earlier generation's hosted checkout.
import { redirect } from 'next/navigation';
import { UnprocessableEntityError } from 'business-payments';
import { fulfillment, paymentsClient } from '../lib/fulfillment';
import { createOrder, findOrder, saveAttempt, savePayment, type Order } from '../lib/orders';

/** The form action of the checkout button: creates the order and its payment, then redirects to the hosted page. */
export async function checkout(): Promise<void> {
  // The amount comes from the order made here, on the server, never from the form.
  await pay(createOrder());
}

/** The return page's "Pay again" button, after an attempt failed or was cancelled: a new attempt. */
export async function payAgain(form: FormData): Promise<void> {
  const order = findOrder(String(form.get('orderId')));
  if (!order || order.status === 'paid') redirect('/');
  await pay(order);
}

async function pay(order: Order): Promise<void> {
  const origin = process.env.SHOP_ORIGIN ?? 'http://localhost:3000';
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

/** A new attempt at paying the order on the hosted checkout: its link. */
async function startPayment(order: Order, origin: string): Promise<string | null | undefined> {
  const client = paymentsClient();
  // One reference and one Idempotency-Key per attempt ('order-…~a1', then '~a2'…): a payment
  // that failed, was cancelled or expired cannot be paid again, and its reference cannot be
  // used again (409 DUPLICATE_REFERENCE), so paying the order again is a new attempt. The kit
  // counts them, and pays the order once across them.
  const attempt = await fulfillment().newAttempt(order.id);
  // Kept before the customer leaves: the return page finds the payment through it.
  saveAttempt(order, attempt.ref_trx);
  const back = `${origin}/orders/${encodeURIComponent(order.id)}/thanks?ref=${encodeURIComponent(attempt.ref_trx)}`;
  const params = {
    payment_amount: order.amount,
    currency_code: order.currency,
    ref_trx: attempt.ref_trx,
    description: order.item,
    success_redirect: back,
    cancel_redirect: back,
    ipn_url: `${origin}/api/webhooks/payments`,
  };
  // The attempt's key: a retry of this call (a timeout, a reset) replays this payment, never a second
  // one. (A second click is a second attempt: the kit pays the order once, whichever is paid.)
  const options = { idempotencyKey: attempt.idempotencyKey };
  // Asked once per client and cached. The earlier generation has no payments.create: its
  // hosted checkout is initiate, whose answer has no trx_id (and which keeps no idempotency
  // key); the IPN brings the trx_id, and onPaid / onFailed keep it with the attempt.
  if ((await client.generation()) === 'earlier') return (await client.payments.initiate(params, options)).payment_url;
  const payment = await client.payments.create(params, options);
  savePayment(order, payment.trx_id, attempt.ref_trx);
  return payment.checkout_url;
}
