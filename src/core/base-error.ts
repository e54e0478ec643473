// The two error classes the webhooks entry needs, apart from the rest so that a cold
// `business-payments/webhooks` import loads only these.

/**
 * Every error the SDK throws extends this class, so one `instanceof PaymentsError`
 * check catches them all.
 */
export class PaymentsError extends Error {
  override name = 'PaymentsError';
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
