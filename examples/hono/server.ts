// The Hono shop (app.ts) on Node, through @hono/node-server: `serve` turns each Node request
// into the Fetch Request the app's routes see (`c.req.raw`), its body still unread, and the
// kit reads it from there (headers first, at most 1 MiB).
//
// Run it against the local sandbox: npm run build; start `npx business-payments sandbox` and
// paste its export lines; then `node examples/hono/server.ts`. It creates a demo order, prints
// its checkout link, and fulfils the order once you pay.
import { serve } from '@hono/node-server';
import { PaymentsClient } from 'business-payments';
import { memoryStore } from 'business-payments/fulfillment';

// app.ts by its URL: `node server.ts` loads it as it is, without a build step (a plain
// `import … from './app.ts'` would need a compiler option this repository does not set).
const { createApp, memoryOrders } = (await import(new URL('./app.ts', import.meta.url).href)) as typeof import('./app.js');

const client = new PaymentsClient(); // BUSINESS_PAYMENTS_* from the environment
const secret = process.env.BUSINESS_PAYMENTS_WEBHOOK_SECRET;
if (!secret) throw new Error('Set BUSINESS_PAYMENTS_WEBHOOK_SECRET');
const port = Number(process.env.PORT ?? 3000);
const origin = `http://localhost:${port}`;
const orders = memoryOrders();
// One process: memoryStore() is enough here. Several: postgresStore(pool) or redisStore(redis).
const app = createApp({ orders, client, secret, store: memoryStore(), origin });

serve({ fetch: app.fetch, port }, async () => {
  console.log(`POST ${origin}/webhooks/payments`);
  // A demo order, and a first attempt at paying it through the app's checkout route (as the
  // cart's "Pay" button would post it), saved with the order (USE YOUR DATABASE).
  const order = orders.add({ id: `order-${Date.now()}`, amount: 25, currency: 'USD', status: 'open' });
  const checkout = await app.request(`${origin}/orders/${order.id}/checkout`, { method: 'POST' });
  console.log(`pay order ${order.id} (attempt ${order.ref_trx}) at ${checkout.headers.get('location')}`);
});
