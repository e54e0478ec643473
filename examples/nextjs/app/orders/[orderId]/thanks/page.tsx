// Where the hosted checkout sends the customer after paying. Fulfil from the webhook (or
// confirmOrder), never from reaching this page: anyone can open this URL.
export default async function Thanks({ params }: { params: Promise<{ orderId: string }> }) {
  const { orderId } = await params;
  return (
    <main style={{ fontFamily: 'system-ui, sans-serif', maxWidth: 480, margin: '3rem auto' }}>
      <h1>Thank you</h1>
      <p>We are confirming the payment for {orderId}; you will get an e-mail once it is settled.</p>
    </main>
  );
}
