// Where a walk of the service's payment list back to a date may stop: shared by the fulfilment
// kit's reconcile and the CLI's dry run (through the public entry), so both stop alike.

/**
 * A stop rule for walking `payments.list()` back to `since` (ms since the epoch): call the
 * function it returns with each payment's creation time, in list order; it returns `true` once
 * the walk may stop. The service's list is newest first, but not strictly: the rule stops only
 * after 100 payments in a row were created before `since`, each older than one already seen,
 * so nothing newer can follow. On a list in another order it never stops early.
 *
 * @example
 * ```ts
 * import { PaymentsClient, stopBefore } from 'business-payments';
 *
 * const client = new PaymentsClient();
 * const past = stopBefore(Date.now() - 86_400_000);
 * for await (const payment of client.payments.list({ limit: 100 })) {
 *   if (past(Date.parse(payment.created_at ?? ''))) break;
 *   console.log(payment.trx_id, payment.status);
 * }
 * ```
 */
export function stopBefore(since: number): (createdAt: number) => boolean {
  let newest = -Infinity;
  let before = 0;
  return (created) => {
    before = created < since ? (created < newest ? before + 1 : before) : 0;
    if (created > newest) newest = created;
    return before >= 100;
  };
}
