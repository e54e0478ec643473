import * as z from 'zod/mini';
import type { APIPromise } from '../core/api-promise.js';
import { APIResource } from '../core/resource.js';
import { enveloped, open, type Assert, type Schema, type Ties } from '../internal/fields.js';
import type { RequestOptions } from '../internal/options.js';

/** Gateway branding and environment labels. */
export class SiteInfoResource extends APIResource {
  /** Branding, feature labels and api_version (GET /api/v1/site-info). */
  retrieve(options?: RequestOptions): APIPromise<SiteInfo> {
    return this._client.request({ operation: 'siteInfo.retrieve', method: 'GET', path: '/api/v1/site-info', response: SiteInfo }, options);
  }
}

/** Gateway branding and environment labels, every documented field required. */
export interface SiteInfo {
  /** Name of the site. */
  site_name: string;
  /** Logo URL. */
  site_logo: string;
  /** Site URL. */
  site_url: string;
  /** Name of the gateway. */
  gateway_name: string;
  /** One-line description of the gateway. */
  gateway_description: string;
  /** Feature labels for a checkout page. */
  features: {
    /** e.g. "SSL Secured". */
    ssl_secured: string;
    /** e.g. "Instant Processing". */
    instant_processing: string;
    /** e.g. "Global Support". */
    global_support: string;
    /** e.g. "Mobile Ready". */
    mobile_ready: string;
  };
  /** A description of each environment. */
  environments: {
    /** What production means. */
    production: string;
    /** What sandbox means. */
    sandbox: string;
  };
  /** API version string. */
  api_version: string;
  /** Service status, e.g. `operational`. */
  status: string;
}

const str = z.string();
const siteInfoSchema = open({
  site_name: str,
  site_logo: str,
  site_url: str,
  gateway_name: str,
  gateway_description: str,
  features: open({ ssl_secured: str, instant_processing: str, global_support: str, mobile_ready: str }),
  environments: open({ production: str, sandbox: str }),
  api_version: str,
  status: str,
});
type _SiteInfo = Assert<Ties<typeof siteInfoSchema, SiteInfo>>;
/** Site info (bare or in a `{ status, data }` envelope). */
export const SiteInfo: Schema<SiteInfo> = enveloped(siteInfoSchema);
