// The result of the site-info route: type and schema.
import { unwrap } from '../internal/envelope.js';
import { shown, type Schema } from '../internal/fields.js';

/**
 * Gateway branding and environment labels. Nothing here is acted on, so every field is
 * kept as the server sent it (a `site_logo` of null included); the body must be an object.
 */
export interface SiteInfo {
  /** Name of the site. */
  site_name?: string | null | undefined;
  /** Logo URL. */
  site_logo?: string | null | undefined;
  /** Site URL. */
  site_url?: string | null | undefined;
  /** Name of the gateway. */
  gateway_name?: string | null | undefined;
  /** One-line description of the gateway. */
  gateway_description?: string | null | undefined;
  /** Feature labels for a checkout page. */
  features?:
    | {
        /** e.g. "SSL Secured". */
        ssl_secured?: string | null | undefined;
        /** e.g. "Instant Processing". */
        instant_processing?: string | null | undefined;
        /** e.g. "Global Support". */
        global_support?: string | null | undefined;
        /** e.g. "Mobile Ready". */
        mobile_ready?: string | null | undefined;
      }
    | null
    | undefined;
  /** A description of each environment. */
  environments?:
    | {
        /** What production means. */
        production?: string | null | undefined;
        /** What sandbox means. */
        sandbox?: string | null | undefined;
      }
    | null
    | undefined;
  /** API version string. */
  api_version?: string | null | undefined;
  /** Service status, e.g. `operational`. */
  status?: string | null | undefined;
}

/** Site info (bare or in a `{ status, data }` envelope): any JSON object, kept as sent. */
export const SiteInfo: Schema<SiteInfo> = shown({}, (body) => unwrap(body));
