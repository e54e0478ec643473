// Where the hosted checkout sends the customer back (success_redirect and cancel_redirect).
// Reaching this page proves nothing (anyone can open the URL): it asks the service, and
// reports the outcome to the fulfillment kit, which fulfils the order once whether this page
// or the webhook gets there first.
import { notFound } from 'next/navigation';
import { confirmOrder } from '../../../../lib/fulfillment';

export default async function Thanks({ params }: { params: Promise<{ orderId: string }> }) {
  const { orderId } = await params;
  const confirmed = await confirmOrder(orderId);
  if (!confirmed) notFound();
  const { order, payment } = confirmed;
  return (
    <main style={{ fontFamily: 'system-ui, sans-serif', maxWidth: 480, margin: '3rem auto' }}>
      {order.status === 'paid' ? (
        <>
          <h1>Thank you</h1>
          <p>Order {order.id} is paid. It is on its way.</p>
        </>
      ) : payment === 'failed' ? (
        <>
          <h1>Payment failed</h1>
          <p>Order {order.id} was not paid. You have not been charged.</p>
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
