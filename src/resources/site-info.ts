import type { APIPromise } from '../core/api-promise.js';
import type { RequestOptions } from '../internal/options.js';
import type { SiteInfo } from '../schemas/site-info.js';
import { APIResource } from './resource.js';

/** Gateway branding and environment labels. */
export class SiteInfoResource extends APIResource {
  /** Branding, feature labels and api_version (GET /api/v1/site-info). */
  retrieve(options?: RequestOptions): APIPromise<SiteInfo> {
    return this._client.get('siteInfo.retrieve', options);
  }
}

export * from '../schemas/site-info.js';
