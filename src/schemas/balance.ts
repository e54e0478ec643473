// The result of the balance route: types and schema.
import { isRecord, unwrap } from '../internal/envelope.js';
import { provisional, readRecord, toNumber, type Schema } from '../internal/fields.js';

/**
 * One wallet of a merchant-supported currency. **Provisional**: the spec describes the
 * balance only in words; this is the sandbox's shape. Every field a server sends is kept
 * (`available`, `pending`…), and `balance` is filled from `available` /
 * `available_balance` / `amount` when the server names it so.
 */
export interface Wallet {
  /** 3-letter currency code. */
  currency: string;
  /** Available balance in currency units. */
  balance: number;
  /** Fields this SDK version does not name, as the server sent them. */
  [field: string]: unknown;
}

const readWallet = (value: unknown): Wallet =>
  readRecord<Wallet>(value, {
    aliases: { balance: ['available', 'available_balance', 'amount'] },
    numbers: ['balance', 'available', 'available_balance', 'amount', 'pending', 'pending_balance'],
  });

const LIST_KEYS = ['wallets', 'balances', 'balance', 'items', 'accounts'];
const CURRENCY = /^[A-Z]{3}$/;

// A list of wallets, bare or under a key, one wallet on its own, or a currency map
// (`{ USD: 100 }`, `{ USD: { available } }`).
function readBalance(body: unknown): BalanceResult {
  const value = unwrap(body, ['balance']);
  if (Array.isArray(value)) return value.map(readWallet);
  if (!isRecord(value)) return value as BalanceResult;
  const list = LIST_KEYS.map((key) => value[key]).find(Array.isArray);
  if (list) return list.map(readWallet);
  // One wallet on its own: a list of one.
  if (typeof value.currency === 'string') return [readWallet(value)];
  const currencies = Object.keys(value).filter((key) => CURRENCY.test(key));
  if (!currencies.length) return value as unknown as BalanceResult;
  return currencies.map((currency) => {
    const entry = value[currency];
    return isRecord(entry) ? readWallet({ currency, ...entry }) : { currency, balance: toNumber(entry) as number };
  });
}

/** Available wallet balances: one entry per currency with an active wallet (provisional, see {@link Wallet}). */
export type BalanceResult = Wallet[];
/**
 * Available wallet balances, read from a bare list, any envelope, a `wallets` / `balances`
 * list, or a currency map. A body in none of these shapes is returned as it came.
 */
export const BalanceResult: Schema<BalanceResult> = provisional(readBalance);
