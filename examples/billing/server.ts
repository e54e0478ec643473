// Fastify 5: a clinic-software subscription over the billing kit (docs/billing.md), so that a
// clinic is never subscribed twice, keeps access exactly while it has paid, and is refunded a
// renewal the service charged after it cancelled.
//
// Why a kit and not three API calls: the API creates plans and subscriptions and lists
// invoices, and has no route to list, retrieve, retry or cancel a subscription. A double click
// on "Subscribe" would make two subscriptions that both charge every month, and nothing could
// stop either. `billing.subscribe` records the subscription in your store before it is
// created (its key is the create's Idempotency-Key), so a second click, a retry or a crash
// finds the record and sends nothing.
//
// Routes:
//   POST /subscribe             { phone } from the clinic's signed-in admin: one live subscription
//   GET  /access                what the app gates its features on (billing.entitlement)
//   POST /cancel                local: access ends at paidThrough; what to tell the clinic
//   POST /webhooks/payments     every delivery, unread, to the fulfilment kit, which verifies it
//                               and hands subscription.* and invoice.* events to the billing kit
//   POST /admin/reconcile       the cron job's work (a lost invoice.paid still grants access):
//                               call it from your scheduler every few minutes, behind your auth
// The signed-in clinic is the `x-clinic-id` header here: USE YOUR SESSION.
//
// Run it against the local sandbox: npm run build; start `npx business-payments sandbox` and
// paste its export lines; then `node examples/billing/server.ts` (DATABASE_URL set: the
// records in Postgres; else in memory, which forgets them with the process).
import { fileURLToPath } from 'node:url';
import Fastify, { type FastifyInstance } from 'fastify';
import { PaymentsClient } from 'business-payments';
import { createBilling, memoryStore as billingMemory, type BillingKit, type BillingOptions } from 'business-payments/billing';
import { createFulfillment, memoryStore, type Fulfillment, type FulfillmentStore } from 'business-payments/fulfillment';

/** The exact terms the clinic sees beside the "Subscribe" button: sent to the service and kept with the record. */
export const TERMS = 'Clinic Pro: TZS 30,000 every month, charged by USSD push to this number until you cancel.';
/** Your version label of those terms, kept with each clinic's consent. */
export const TERMS_VERSION = '2026-11';

/** What the app is made of. */
export interface ClinicOptions {
  /** The PaymentsClient of your environment. */
  client: PaymentsClient;
  /** The webhook signing secret. */
  secret: string;
  /** The plan the clinics subscribe to (`billing.plans.create` once, at deploy). */
  plan_code: string;
  /**
   * Where the records live. `postgresStore(pool)` (from `business-payments/fulfillment/postgres`)
   * serves both kits and every process; without it, memory stores (one process, forgotten on restart).
   */
  store?: (FulfillmentStore & Pick<BillingOptions['store'], 'subscriptions'>) | undefined;
  /** A renewal charged after a cancel: refund it (default: logged). */
  refund?: ((customer: string, invoice: string) => unknown) | undefined;
  /**
   * The app's public origin (`https://clinic.example.com`): each subscription's events go to
   * `<origin>/webhooks/payments`. Default: the webhook URL set on your dashboard.
   */
  origin?: string | undefined;
  /** The kits' clock: a test clock's `now` in tests. */
  now?: (() => number) | undefined;
}

/** The two kits over one store: billing's records, and the fulfilment kit that verifies each delivery. */
export function createClinicKits(options: ClinicOptions): { billing: BillingKit; fulfillment: Fulfillment } {
  const { client, secret, now } = options;
  const refund = options.refund ?? ((customer, invoice) => console.log(`refund invoice ${invoice} of ${customer}`));
  const billing = createBilling({
    client,
    store: options.store ?? billingMemory(),
    now,
    onChange: (record, { previous, source }) => console.log(`${record.customer}: ${previous ?? 'new'} → ${record.state} (${source})`),
    // The API cannot stop the renewal pushes after a cancel; one the clinic approved anyway is
    // paid. It never extends access; refund it (once per invoice).
    onChargedAfterCancel: (record, invoice) => refund(record.customer, invoice.invoice),
  });
  const fulfillment = createFulfillment({
    environment: client.environment,
    client,
    secret,
    store: options.store ?? memoryStore(),
    now,
    // This app sells subscriptions only: a one-off payment is none of its business.
    onPaid: (tx) => console.log(`payment ${tx.trx_id}: not a subscription, nothing to do`),
    // subscription.* and invoice.* events, once each: the billing kit records what they tell. An
    // event that comes before its create's answer is recorded throws: 500, delivered again.
    onEvent: billing.handleEvent,
  });
  return { billing, fulfillment };
}

/** The app: its routes over the two kits. */
export function buildApp(options: ClinicOptions, kits = createClinicKits(options)): FastifyInstance {
  const { billing, fulfillment } = kits;
  const { plan_code } = options;
  const app = Fastify();
  const clinicOf = (headers: Record<string, unknown>) => (typeof headers['x-clinic-id'] === 'string' ? headers['x-clinic-id'] : '');

  // The webhook, in a plugin of its own whose body parser leaves the body unread: the kit checks
  // the signature headers first and reads the bytes as they came (see examples/fastify).
  void app.register(async (webhooks) => {
    webhooks.removeAllContentTypeParsers();
    webhooks.addContentTypeParser('*', (_req, _body, done) => done(null));
    webhooks.post('/webhooks/payments', async (req, reply) => {
      const { status, body } = await fulfillment.handleWebhook(req.raw);
      return reply.code(status).type('application/json').send(body);
    });
  });

  app.post<{ Body: { phone?: unknown } }>('/subscribe', async (req, reply) => {
    const customer = clinicOf(req.headers);
    if (!customer) return reply.code(401).send({ error: 'sign_in' });
    try {
      const { created, state, record } = await billing.subscribe({
        customer,
        plan_code,
        customer_phone: String(req.body?.phone ?? ''), // as the clinic typed it: 0712 345 678
        terms_shown: TERMS,
        webhook_url: options.origin === undefined ? undefined : `${options.origin}/webhooks/payments`,
        consent: { at: Date.now(), ip: req.ip, userAgent: String(req.headers['user-agent'] ?? ''), termsVersion: TERMS_VERSION },
      });
      // A double click, a "try again": the same record (created: false), nothing sent.
      const message =
        state === 'pending'
          ? 'Approve the payment prompt on your phone with your PIN to start Clinic Pro.'
          : `You are subscribed (${state}).`;
      return { created, state, key: record.key, message };
    } catch (error) {
      // A phone that is not a Tanzanian mobile number, say: nothing recorded or sent.
      if ((error as { code?: unknown }).code === 'invalid_params') return reply.code(400).send({ error: (error as Error).message });
      throw error; // a timeout or a 5xx: the record is kept, and the next click replays its create
    }
  });

  app.get('/access', async (req, reply) => {
    const customer = clinicOf(req.headers);
    if (!customer) return reply.code(401).send({ error: 'sign_in' });
    const { active, state, paidThrough } = await billing.entitlement(customer, plan_code);
    return { active, state, paidThrough: paidThrough === undefined ? null : new Date(paidThrough).toISOString() };
  });

  app.post('/cancel', async (req, reply) => {
    const customer = clinicOf(req.headers);
    if (!customer) return reply.code(401).send({ error: 'sign_in' });
    const record = await billing.cancel(customer, plan_code);
    if (!record) return reply.code(404).send({ error: 'not_subscribed' });
    const until = new Date(record.cancel?.paidThrough ?? Date.now()).toISOString().slice(0, 10);
    // What the clinic must be told: the service goes on sending the monthly payment prompt.
    const message = `Clinic Pro ends on ${until}. You may still get a payment prompt on your phone after that: decline it (do not enter your PIN). If one is paid, we refund it.`;
    return { state: record.state, message };
  });

  // The cron job's work. Protect it (your admin auth, or a scheduler's secret header).
  app.post('/admin/reconcile', async () => billing.reconcile());

  return app;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const secret = process.env.BUSINESS_PAYMENTS_WEBHOOK_SECRET;
  if (!secret) throw new Error('Set BUSINESS_PAYMENTS_WEBHOOK_SECRET');
  const client = new PaymentsClient(); // BUSINESS_PAYMENTS_* from the environment
  let store: ClinicOptions['store'];
  if (process.env.DATABASE_URL) {
    const { default: pg } = await import('pg');
    const { postgresStore } = await import('business-payments/fulfillment/postgres');
    store = postgresStore(new pg.Pool({ connectionString: process.env.DATABASE_URL }));
  } else console.warn('No DATABASE_URL: the records are in memory and forgotten when this process ends (USE YOUR DATABASE).');
  // Once, at deploy: keep the plan_code in your configuration.
  const plan = await client.billing.plans.create({ name: 'Clinic Pro', amount: 30_000, currency: 'TZS', interval: 'month' });
  const port = Number(process.env.PORT ?? 3000);
  const app = buildApp({ client, secret, plan_code: plan.plan_code, store, origin: `http://localhost:${port}` });
  await app.listen({ port });
  console.log(`POST http://localhost:${port}/webhooks/payments (point your webhook URL here)`);
  console.log(
    `try: curl -X POST localhost:${port}/subscribe -H 'x-clinic-id: clinic-42' -H 'content-type: application/json' -d '{"phone":"0712 345 678"}'`,
  );
}
