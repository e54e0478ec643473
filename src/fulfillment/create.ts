// The fulfillment kit: every paid order fulfilled exactly once, whichever path reports the
// payment first (webhook, return page, reconcile sweep) and however many processes share
// the store. It loads in serverless handlers, so it imports neither ky nor the client: the
// merchant's PaymentsClient is passed in. This file only checks the options and wires the
// steps: delivery (the webhook), settle, reconcile, the inbox worker and the attempts.
import { ConfigurationError } from '../core/base-error.js';
import type { VerifiedTransaction } from '../schemas/payments.js';
import { checkSecrets } from '../webhooks/verify.js';
import { newAttempt } from './attempts.js';
import { trace } from './base.js';
import { eventHandler, webhookHandler } from './delivery.js';
import { inboxWorker } from './inbox.js';
import type { FulfillmentOptions } from './options.js';
import { pages } from './outcome.js';
import { reconcile } from './reconcile.js';
import type { Fulfillment } from './results.js';
import { settler } from './settle.js';
import { memoryStore } from './store.js';

/**
 * Creates the fulfillment kit: each paid order fulfilled exactly once.
 *
 * @example
 * ```ts
 * const fulfillment = createFulfillment({
 *   environment: 'production',
 *   secret: process.env.BUSINESS_PAYMENTS_WEBHOOK_SECRET!,
 *   client,
 *   store: postgresStore(pool),
 *   expect: async (tx, { db }) => priceOf(db, tx.order_ref),
 *   onPaid: async (tx, { db }) => shipOrder(db, tx.order_ref),
 * });
 * export const POST = (request: Request) => fulfillment.handleWebhook(request);
 * ```
 * @throws {ConfigurationError} when the secret is not set or has leading or trailing whitespace,
 * the client is for the other environment, `inbox: true` with a store that has no inbox,
 * `maxBodyBytes` is not a whole number more than 0, `now` is not a function, or a `trigger` with
 * a store that has no inbox or `inbox: false`.
 */
// With the inbox (on by default where the store is durable), a delivery is recorded, then
// answered: the service waits for nothing else; it is processed right after, here or by drain()
// / work().
export function createFulfillment<Db = undefined>(kitOptions: FulfillmentOptions<Db>): Fulfillment {
  const { options, store, lease, maxBodyBytes, queue } = configure(kitOptions);
  const { environment, client } = options;
  const settle = settler(options, store, lease);
  const handleEvent = eventHandler(options, store, lease, settle);
  const { soon, ...inbox } = inboxWorker(options, store, lease, handleEvent);
  const traced = (tx: VerifiedTransaction, ref: string | undefined) =>
    trace('reconcile', environment, (info) => settle.payment(tx, ref, { source: 'reconcile' }, info));
  return {
    ...inbox,
    handleWebhook: webhookHandler(options, maxBodyBytes, queue, handleEvent, soon),
    store,
    ...pages(options, store, lease, settle),
    reconcile: (opts) => reconcile(opts, client, store, traced, options.now),
    newAttempt: (orderRef) => newAttempt(store, orderRef, lease),
  };
}

// The options checked once and defaulted. The secret is checked by the rule of every secret
// (`checkSecrets`) here rather than at the first delivery, where it could only be a 500 to the
// service. The inbox is on by default where the store is durable (a memory inbox dies with its
// process).
function configure<Db>(kitOptions: FulfillmentOptions<Db>) {
  // The store's Db only types what the handlers see; inside, a claim's db is passed through.
  const options = kitOptions as unknown as FulfillmentOptions;
  const { environment, secret, client } = options;
  const store = options.store ?? memoryStore();
  try {
    checkSecrets(secret);
  } catch (error) {
    const { message } = error as Error;
    throw new ConfigurationError(
      `createFulfillment({ secret }): ${message}${/not set/.test(message) ? ' Pass the webhook signing secret, e.g. process.env.BUSINESS_PAYMENTS_WEBHOOK_SECRET.' : ''}`,
    );
  }
  if (client?.environment !== environment) {
    throw new ConfigurationError(
      `createFulfillment: the client is for ${String(client?.environment)}, the kit for ${environment}: pass a ${environment} client.`,
    );
  }
  const { inbox } = store;
  if (options.inbox && !inbox) throw new ConfigurationError('createFulfillment({ inbox: true }): this store has no inbox');
  const maxBodyBytes = options.maxBodyBytes ?? 1 << 20; // 1 MiB
  if (!(Number.isSafeInteger(maxBodyBytes) && maxBodyBytes > 0))
    throw new ConfigurationError(`createFulfillment({ maxBodyBytes }): ${maxBodyBytes} is not a whole number more than 0`);
  if (options.now !== undefined && typeof options.now !== 'function')
    throw new ConfigurationError('createFulfillment({ now }): pass a function returning ms since the epoch, like Date.now');
  const { trigger } = options;
  const queue = (options.inbox ?? (store.durable !== false || !!trigger)) ? inbox : undefined;
  if (trigger && !queue) throw new ConfigurationError('createFulfillment({ trigger }): needs the inbox');
  return { options, store, lease: options.lease ?? 300_000 /* 5 minutes */, maxBodyBytes, queue };
}
