// How values a server sends are read, wherever they are read: the client's engine
// (internal/) and what users hold (core/) both use these, so they live here, below both.

/** A plain object (not null, not an array). */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

// Where the spec says number, a server may send the decimal string of one ("25.00").
const DECIMAL = /^\s*-?\d+(\.\d+)?\s*$/;

/** A decimal string read as the number it writes; anything else as it came. */
export const toNumber = (value: unknown): unknown => (typeof value === 'string' && DECIMAL.test(value) ? Number(value) : value);

/** A whole number from `min` to `max` (at most 2^53 - 1 unless told); false for anything but a number. */
export const isCount = (value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): value is number =>
  Number.isInteger(value) && (value as number) >= min && (value as number) <= max;

// PHP and form-encoded servers write booleans as 1/0 or "1"/"0"/"true"/"false".
const FLAGS: Record<string, boolean> = { 1: true, 0: false, true: true, false: false };

/** A boolean, or 1/0 and their strings read as one; anything else as it came. */
export const toFlag = (value: unknown): unknown =>
  (typeof value === 'number' || typeof value === 'string' ? FLAGS[value] : undefined) ?? value;
