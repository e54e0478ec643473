// The two error classes the webhooks entry needs, apart from the rest so that a cold
// `business-payments/webhooks` import loads only these.

/**
 * Every error the SDK throws extends this class, so one `instanceof PaymentsError`
 * check catches them all.
 */
export class PaymentsError extends Error {
  override name = 'PaymentsError';
  // Declared, not initialised: the client sets them on errors from a call, and the webhooks
  // entry (which shares this class) ships no code for them.
  /**
   * On errors from a create call (`payments.create`, `payouts.create`, …): the
   * Idempotency-Key that was sent, or would have been. Retrying with it never charges twice.
   */
  declare readonly idempotencyKey?: string;
  /** On errors from a call: how many HTTP attempts were made (0 when nothing was sent). */
  declare readonly attempts?: number;
}

/**
 * Thrown by `new PaymentsClient()` when configuration is missing or contradictory:
 * no credentials, a bad `baseUrl`, a non-HTTPS production `baseUrl`, `test_`/`live_`
 * credentials in the other environment, or use in a browser without
 * `dangerouslyAllowBrowser`. The message names what to fix.
 */
export class ConfigurationError extends PaymentsError {
  override name = 'ConfigurationError';
}
