// The reconcile step: the payments no report settled (a webhook lost, a return page never
// seen), found and settled. It walks the service's payment list, or where the server has none
// (the earlier generation) the store's unsettled list. Below it the settle step (passed in),
// the attempts it recognises, and the shared base.
import { ConfigurationError } from '../core/base-error.js';
import type { VerifiedTransaction } from '../schemas/payments.js';
import { made } from './attempts.js';
import { messageOf, text, verified } from './base.js';
import type { FulfillmentClient } from './options.js';
import type { ReconcileOptions, ReconcileReport, SettleResult } from './results.js';
import type { FulfillmentStore } from './store.js';
import { stopBefore } from '../core/stop-before.js';
import { sinceMs } from './window.js';

/** A verified transaction settled as `reconcile` found it. */
type SettleFound = (tx: VerifiedTransaction, merchantRef: string | undefined) => Promise<SettleResult>;

/** `fulfillment.reconcile`: each payment in the window not settled yet, verified and settled. */
// But one this app never made: an attempt reference neither counted nor recorded by
// `newAttempt` (listed as unknown), so a count the store lost still settles its order's payments
// (the order's one-payment rule with them). `since` is checked before any call. Any other
// reference is taken as an order id (the pattern before attempts), and none as unknown here (the
// list may not show references). A payment without a readable creation time (NaN, never less or
// more) is checked: better a verify than a miss.
export async function reconcile(
  options: ReconcileOptions,
  client: FulfillmentClient,
  store: FulfillmentStore,
  settle: SettleFound,
  now: () => number = Date.now,
): Promise<ReconcileReport> {
  const { since, olderThan = 600_000 /* 10 minutes */, signal, onProgress } = options;
  const from = sinceMs(since);
  // On the kit's clock (its `now`).
  const until = now() - olderThan;
  const report: ReconcileReport = { seen: 0, checked: 0, paid: 0, failed: 0, pending: 0, busy: 0, errors: [], unknown: [], review: [] };
  const check = checker(report, client, store, settle);
  const past = stopBefore(from);
  try {
    // Any status on the server: a paid payment whose webhook was lost reads `success` there.
    for await (const payment of client.payments.list({ limit: 100 })) {
      signal?.throwIfAborted();
      report.seen++;
      const created = Date.parse(payment.created_at!);
      const trxId = payment.trx_id;
      if (past(created)) break;
      if (typeof trxId === 'string' && !(created < from || created > until) && (await store.outcome(`payment:${trxId}`)) === undefined)
        await check(trxId, text(payment.merchant_ref));
      onProgress?.(report);
    }
  } catch (error) {
    // The earlier generation has no payment list (the client tells its RouteNotSupportedError
    // through the seam, so the kit need not load the client): walk what the store knows is open.
    if (!client.unsupported?.(error) || report.seen) throw error;
    if (!store.unsettled) {
      throw new ConfigurationError('fulfillment.reconcile: no payment list here, and the store has no unsettled()', { cause: error });
    }
    report.walked = 'store';
    // One run re-verifies at most 10,000 of them.
    for (const key of await store.unsettled(10_000)) {
      signal?.throwIfAborted();
      report.seen++;
      const trxId = key.slice('payment:'.length);
      await check(trxId, await store.outcome(`ref:${trxId}`));
      onProgress?.(report);
    }
  }
  return report;
}

// One payment of the walk checked: verified and settled, its result counted in `report`, unless
// this app never made its attempt. The lists are bounded (the counts are not): a run over a long
// history keeps little.
function checker(report: ReconcileReport, client: FulfillmentClient, store: FulfillmentStore, settle: SettleFound) {
  const note = <T>(list: T[], item: T) => list.length < 1_000 && list.push(item);
  return async (trxId: string, merchantRef: string | undefined) => {
    if (merchantRef && !(await made(store, merchantRef))) return note(report.unknown, trxId);
    report.checked++;
    try {
      const tx = await verified(client, trxId);
      const result = await settle(tx, merchantRef);
      if (result === 'ran') report[tx.status === 'success' ? 'paid' : 'failed']++;
      else if (result === 'review') note(report.review, trxId);
      else if (result !== 'done') report[result]++;
    } catch (error) {
      note(report.errors, { trx_id: trxId, message: messageOf(error) });
    }
  };
}
