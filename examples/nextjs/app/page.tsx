// The shop's page: one form whose action is the `checkout` server action (a new order, and a
// first payment attempt for it: see app/actions.ts).
import { checkout } from './actions';
import { ITEM } from '../lib/orders';

export default async function Page({ searchParams }: { searchParams: Promise<{ error?: string }> }) {
  const { error } = await searchParams;
  const price = `${ITEM.amount.toFixed(2)} ${ITEM.currency}`;
  return (
    <main style={{ fontFamily: 'system-ui, sans-serif', maxWidth: 480, margin: '3rem auto' }}>
      <h1>Your order</h1>
      <p>
        {ITEM.item}: {price}
      </p>
      {error ? <p role="alert">Payment could not start: {error}</p> : null}
      <form action={checkout}>
        <button type="submit">Pay {price}</button>
      </form>
    </main>
  );
}

// Rendered per request (the error message), never at build time.
export const dynamic = 'force-dynamic';
