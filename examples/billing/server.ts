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
//                               your scheduler posts here every few minutes to an hour, with
//                               the admin token (this route is the example's cron stand-in)
// The signed-in clinic is the `x-clinic-id` header here: USE YOUR SESSION.
//
// Run it against the local sandbox: npm run build; start `npx business-payments sandbox` and
// paste its export lines; then `node examples/billing/server.ts` (DATABASE_URL set: the
// records in Postgres; else in memory, which forgets them with the process).
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import Fastify, { type FastifyInstance } from 'fastify';
import { PaymentsClient, UnprocessableEntityError } from 'business-payments';
import { createBilling, memoryStore as billingMemory, type BillingKit, type BillingOptions } from 'business-payments/billing';
import { createFulfillment, memoryStore, type Fulfillment, type FulfillmentStore } from 'business-payments/fulfillment';

/** The exact terms the clinic sees beside the "Subscribe" button: sent to the service and kept with the record. */
export const TERMS = 'Clinic Pro: TZS 30,000 every month, charged by USSD push to this number until you cancel.';
/** Your version label of those terms, kept with each clinic's consent. */
export const TERMS_VERSION = '2026-11';

/**
 * The plan, with a code of your own. The records are kept per plan_code, and the API has no
 * route to read a plan back: a plan made afresh at each start, with a code the service picks,
 * would leave every paying clinic without access after a restart, and its next "Subscribe"
 * would make a second subscription. A new price is a new code.
 */
export const PLAN = { plan_code: 'clinic-pro-monthly', name: 'Clinic Pro', amount: 30_000, currency: 'TZS', interval: 'month' } as const;

/** Creates the plan at start, once: the same code again (a restart, a second server) is the plan made before. */
export async function createPlan(client: PaymentsClient): Promise<string> {
  try {
    // Its own key: a retry of this call (a timeout) replays the plan instead of failing on its code.
    return (await client.billing.plans.create(PLAN, { idempotencyKey: `plan:${PLAN.plan_code}` })).plan_code;
  } catch (error) {
    // The code is taken: the plan an earlier start made.
    if (error instanceof UnprocessableEntityError && error.errors?.plan_code) return PLAN.plan_code;
    throw error;
  }
}

/** What the app is made of. */
export interface ClinicOptions {
  /** The PaymentsClient of your environment. */
  client: PaymentsClient;
  /** The webhook signing secret. */
  secret: string;
  /** The plan the clinics subscribe to (see {@link createPlan}). */
  plan_code: string;
  /** The bearer token `POST /admin/reconcile` requires: your scheduler sends it. */
  adminToken: string;
  /**
   * Where the records live. `postgresStore(pool)` (from `business-payments/fulfillment/postgres`)
   * serves both kits and every process; without it, memory stores (one process, forgotten on restart).
   * A pg Pool, not one connection (a pg Client, PGlite): the billing kit reads and writes its
   * records while the fulfilment kit's claim holds a transaction, and one connection would make
   * it wait for that claim, which waits for it.
   */
  store?: (FulfillmentStore & Pick<BillingOptions['store'], 'subscriptions'>) | undefined;
  /** A renewal charged after a cancel: refund it (default: logged). */
  refund?: ((customer: string, invoice: string) => unknown) | undefined;
  /**
   * The app's public origin (`https://clinic.example.com`): each subscription's events go to
   * `<origin>/webhooks/payments`. Default: the webhook URL set on your dashboard.
   */
  origin?: string | undefined;
  /** The kits' clock, also when each consent was given: a test clock's `now` in tests. Default `Date.now`. */
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
  const { plan_code, now = Date.now } = options;
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
        consent: { at: now(), ip: req.ip, userAgent: String(req.headers['user-agent'] ?? ''), termsVersion: TERMS_VERSION },
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
      // A timeout or a 5xx: the record is kept, and the next click replays its create (same key).
      console.error(`subscribe ${customer}:`, error);
      return reply.code(502).send({ error: 'Try again in a moment: you will not be charged twice.' });
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
    // No cancel on it: it had ended already (suspended, or cancelled and past its paid period).
    if (!record.cancel) return { state: record.state, message: 'Clinic Pro had already ended.' };
    // A record never paid (paidThrough 0) ends now; the service may still push its first charge.
    const { paidThrough } = record.cancel;
    const ends = paidThrough > 0 ? `Clinic Pro ends on ${new Date(paidThrough).toISOString().slice(0, 10)}.` : 'Clinic Pro is cancelled.';
    // What the clinic must be told: the service goes on sending the monthly payment prompt.
    const message = `${ends} You may still get a payment prompt on your phone after that: decline it (do not enter your PIN). If one is paid, we refund it.`;
    return { state: record.state, message };
  });

  // The cron job's work, behind the admin token (each call reads every live subscription's
  // invoices). First the fulfilment kit's inbox (a durable store records each delivery before
  // processing it: one left pending by a restart is processed here), then reconcile.
  app.post('/admin/reconcile', async (req, reply) => {
    if (!sameToken(req.headers.authorization, `Bearer ${options.adminToken}`)) return reply.code(401).send({ error: 'unauthorized' });
    const inbox = await fulfillment.drain();
    return { inbox, ...(await billing.reconcile()) };
  });

  return app;
}

// Compared as digests, in constant time: a plain === tells by its timing how much of a guess matched.
function sameToken(given: string | undefined, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return given !== undefined && timingSafeEqual(digest(given), digest(expected));
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
  } else {
    console.warn(
      [
        '!!! No DATABASE_URL: the subscriptions are kept IN MEMORY, in this process only. A restart forgets',
        '!!! every clinic while the service goes on charging each one every month, and a clinic that',
        '!!! subscribes again can get a SECOND subscription. Set DATABASE_URL before a real clinic subscribes.',
      ].join('\n'),
    );
  }
  const plan_code = await createPlan(client);
  const port = Number(process.env.PORT ?? 3000);
  const adminToken = process.env.ADMIN_TOKEN ?? randomUUID();
  const app = buildApp({ client, secret, plan_code, adminToken, store, origin: `http://localhost:${port}` });
  await app.listen({ port });
  console.log(`POST http://localhost:${port}/webhooks/payments (point your webhook URL here)`);
  console.log(
    `try: curl -X POST localhost:${port}/subscribe -H 'x-clinic-id: clinic-42' -H 'content-type: application/json' -d '{"phone":"0712 345 678"}'`,
  );
  // The token printed only when made up here; one of yours stays out of the log.
  const bearer = process.env.ADMIN_TOKEN ? '$ADMIN_TOKEN' : adminToken;
  console.log(`cron: curl -X POST localhost:${port}/admin/reconcile -H "authorization: Bearer ${bearer}"`);
}
