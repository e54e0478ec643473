import { ConfigurationError } from '../core/base-error.js';

/**
 * The one rule for every credential (API secret, API key, merchant key, webhook secret),
 * wherever it comes from (an option, an environment variable): unset (`undefined`, `null`,
 * `''`) throws `unset`; leading or trailing whitespace (a whitespace-only value included)
 * is refused, never trimmed, naming `source` (a padded secret signs with another key than
 * the service's, and trimming one source but not another hid that). Callers check at
 * construction, not at the first call or delivery. No message carries the value.
 *
 * @param source where the value came from, as the message names it: `apiSecret option`, `BUSINESS_PAYMENTS_API_SECRET`.
 * @param unset the whole message when it is not set: what is missing and how to set it.
 */
export function credential(value: unknown, source: string, unset: string): string {
  const fault = !value
    ? unset
    : typeof value != 'string'
      ? `${source} must be a string`
      : value != value.trim() && `${source} has leading or trailing whitespace (a copy-paste slip?): remove it`;
  if (fault) throw new ConfigurationError(`${fault}.`);
  return value as string;
}
