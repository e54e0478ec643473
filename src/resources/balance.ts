import * as z from 'zod';
import type { APIPromise } from '../core/api-promise.js';
import { APIResource } from '../core/resource.js';
import { unwrapEnvelope } from '../internal/fields.js';
import type { RequestOptions } from '../internal/options.js';

/** Wallet balances of the merchant-supported currencies. */
export class Balance extends APIResource {
  /** Available wallet balances (GET /api/v1/balance). */
  retrieve(options?: RequestOptions): APIPromise<BalanceResult> {
    return this._client.request({ operation: 'balance.retrieve', method: 'GET', path: '/api/v1/balance', response: BalanceResult }, options);
  }
}

// The spec describes the balance only in words, so any JSON object or array of wallet
// objects is accepted (a `{ status, data }` envelope is unwrapped).
/** Wallet balances, as the server sends them. */
export const BalanceResult = z.preprocess(
  unwrapEnvelope,
  z.union([z.array(z.looseObject({})), z.looseObject({})]),
);
/** Wallet balances, as the server sends them. */
export type BalanceResult = z.infer<typeof BalanceResult>;
