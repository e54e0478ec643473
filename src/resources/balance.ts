import * as z from 'zod/mini';
import type { APIPromise } from '../core/api-promise.js';
import { APIResource } from '../core/resource.js';
import { enveloped, open, type Assert, type Schema, type Ties } from '../internal/fields.js';
import type { RequestOptions } from '../internal/options.js';

/** Wallet balances of the merchant-supported currencies. */
export class Balance extends APIResource {
  /** Available wallet balances (GET /api/v1/balance). */
  retrieve(options?: RequestOptions): APIPromise<BalanceResult> {
    return this._client.request(
      { operation: 'balance.retrieve', method: 'GET', path: '/api/v1/balance', response: BalanceResult },
      options,
    );
  }
}

/** One wallet of a merchant-supported currency. */
export interface Wallet {
  /** 3-letter currency code. */
  currency: string;
  /** Available balance in currency units. */
  balance: number;
}

// The spec describes the balance only in words; this is the sandbox's shape: a list of
// wallets, bare or in a `{ status, environment, data }` envelope.
const walletSchema = open({ currency: z.string(), balance: z.number() });
type _Wallet = Assert<Ties<typeof walletSchema, Wallet>>;

/** Available wallet balances: one entry per currency with an active wallet. */
export type BalanceResult = Wallet[];
/** Available wallet balances (bare or in a `{ status, data }` envelope). */
export const BalanceResult: Schema<BalanceResult> = enveloped(z.array(walletSchema));
