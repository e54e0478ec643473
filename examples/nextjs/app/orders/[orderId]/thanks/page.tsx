// Where the hosted checkout sends the customer back (success_redirect and cancel_redirect),
// with the attempt in the URL (`?ref=order-…~a1`). Reaching this page proves nothing (anyone
// can open the URL): confirmOrder looks the attempt up in the shop's records and asks the
// fulfillment kit about the payment kept there; the kit fulfils the order once whether this page
// or the webhook gets there first.
import { notFound } from 'next/navigation';
import { payAgain } from '../../../actions';
import { confirmOrder } from '../../../../lib/fulfillment';

export default async function Thanks({
  params,
  searchParams,
}: {
  params: Promise<{ orderId: string }>;
  searchParams: Promise<{ ref?: string | string[] }>;
}) {
  const { orderId } = await params;
  const { ref } = await searchParams;
  const confirmed = await confirmOrder(orderId, typeof ref === 'string' ? ref : undefined);
  if (!confirmed) notFound();
  const { order, payment } = confirmed;
  return (
    <main style={{ fontFamily: 'system-ui, sans-serif', maxWidth: 480, margin: '3rem auto' }}>
      {order.status === 'paid' ? (
        <>
          <h1>Thank you</h1>
          <p>Order {order.id} is paid. It is on its way.</p>
        </>
      ) : payment === 'failed' || order.status === 'failed' ? (
        <>
          <h1>Payment failed</h1>
          <p>Order {order.id} was not paid. You have not been charged.</p>
          {/* A new attempt: a new reference and key (the failed payment cannot be paid again). */}
          <form action={payAgain}>
            <input type="hidden" name="orderId" value={order.id} />
            <button type="submit">Pay again</button>
          </form>
        </>
      ) : (
        <>
          <h1>Thank you</h1>
          <p>We are confirming the payment for order {order.id}; you will get an e-mail once it is settled.</p>
        </>
      )}
    </main>
  );
}

export const dynamic = 'force-dynamic';
