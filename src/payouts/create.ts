// The payout-intent kit: each payout sent at most once and never lost. An intent is recorded
// in the merchant's store before anything is sent; every change to it is a compare-and-swap on
// its version, so whichever process wins a change is the only one that acts on it. It loads
// in serverless handlers and cron jobs, so it imports neither ky nor the client: the
// merchant's PaymentsClient is passed in.
// This file only wires the steps (send.ts, resolve.ts, match.ts) over their base (base.ts).
import { PayoutBase } from './base.js';
import { listIntents, resolve } from './resolve.js';
import { confirmResend, send } from './send.js';
import type { PayoutKit, PayoutsOptions } from './types.js';

/**
 * The payout-intent kit: each payout sent at most once and never lost, on your store.
 *
 * @example
 * ```ts
 * import { createPayouts } from 'business-payments/payouts';
 * import { postgresStore } from 'business-payments/fulfillment/postgres';
 *
 * const payouts = createPayouts({ client, store: postgresStore(pool) });
 * const intent = await payouts.send({ key: 'settle-2026-11-25', amount: 500 });
 * if (intent.state !== 'sent') console.log(intent.state, intent.note); // resolve() settles it
 * const report = await payouts.resolve(); // cron
 * ```
 */
export function createPayouts(options: PayoutsOptions): PayoutKit {
  const base = new PayoutBase(options);
  return {
    durable: base.durable,
    send: (params, options) => send(base, params, options?.signal),
    resolve: (options) => resolve(base, options?.signal),
    intents: (options) => listIntents(base, options),
    get: (key) => base.intents.get(key),
    confirmResend: (key, options) => confirmResend(base, key, options?.signal),
  };
}
