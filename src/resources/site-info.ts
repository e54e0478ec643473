import * as z from 'zod';
import type { APIPromise } from '../core/api-promise.js';
import { APIResource } from '../core/resource.js';
import { unwrapEnvelope } from '../internal/fields.js';
import type { RequestOptions } from '../internal/options.js';

/** Gateway branding and environment labels. */
export class SiteInfoResource extends APIResource {
  /** Branding, feature labels and api_version (GET /api/v1/site-info). */
  retrieve(options?: RequestOptions): APIPromise<SiteInfo> {
    return this._client.request({ operation: 'siteInfo.retrieve', method: 'GET', path: '/api/v1/site-info', response: SiteInfo }, options);
  }
}

/** Site info, every documented field required. */
export const SiteInfo = z.preprocess(
  unwrapEnvelope,
  z.looseObject({
    site_name: z.string(),
    site_logo: z.string(),
    site_url: z.string(),
    gateway_name: z.string(),
    gateway_description: z.string(),
    features: z.looseObject({
      ssl_secured: z.string(),
      instant_processing: z.string(),
      global_support: z.string(),
      mobile_ready: z.string(),
    }),
    environments: z.looseObject({ production: z.string(), sandbox: z.string() }),
    api_version: z.string(),
    status: z.string(),
  }),
);
/** Site info. */
export type SiteInfo = z.infer<typeof SiteInfo>;
