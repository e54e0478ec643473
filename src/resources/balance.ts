import type { APIPromise } from '../core/api-promise.js';
import type { RequestOptions } from '../internal/options.js';
import type { BalanceResult } from '../schemas/balance.js';
import { APIResource } from './resource.js';

/** Wallet balances of the merchant-supported currencies. */
export class Balance extends APIResource {
  /** Available wallet balances (GET /api/v1/balance). */
  retrieve(options?: RequestOptions): APIPromise<BalanceResult> {
    return this._client.get('balance.retrieve', options);
  }
}

export * from '../schemas/balance.js';
