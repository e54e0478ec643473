// Random ids of the simulated service (crypto.getRandomValues, web-standard).

const ALNUM = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const LOWER = 'abcdefghijklmnopqrstuvwxyz0123456789';

function randomString(alphabet: string, length: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  return Array.from(bytes, (b) => alphabet[b % alphabet.length]).join('');
}

/** Service transaction id, e.g. `TRX7KQ2M9XW4HPA`. */
export const trxId = (): string => `TRX${randomString(ALNUM, 12)}`;
/** Prefixed random id, e.g. `evt_…`, `sub_…`, `inv_…`. */
export const prefixedId = (prefix: string, length = 24): string => `${prefix}_${randomString(LOWER, length)}`;
/** Random hex string of `bytes` bytes. */
export const randomHex = (bytes: number): string =>
  Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('');
