// The shop's order page: one form whose action is the `checkout` server action.
import { checkout } from './actions';

export default async function Page({ searchParams }: { searchParams: Promise<{ error?: string }> }) {
  const { error } = await searchParams;
  return (
    <main style={{ fontFamily: 'system-ui, sans-serif', maxWidth: 480, margin: '3rem auto' }}>
      <h1>Order #1001</h1>
      <p>One annual subscription: 25.00 USD</p>
      {error ? <p role="alert">Payment could not start: {error}</p> : null}
      <form action={checkout}>
        <input type="hidden" name="orderId" value={`order-${Date.now()}`} />
        <input type="hidden" name="amount" value="25" />
        <input type="hidden" name="currency" value="USD" />
        <button type="submit">Pay 25.00 USD</button>
      </form>
    </main>
  );
}

// Rendered per request (a fresh order id each time), never at build time.
export const dynamic = 'force-dynamic';
