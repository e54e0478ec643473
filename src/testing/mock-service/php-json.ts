// JSON as PHP's json_encode writes it, for the sandbox's answers and webhook bodies: the
// server is a Laravel app, and a body that differs from JSON.stringify's is what makes a
// merchant handler that re-serialises a parsed body (instead of verifying the raw bytes)
// fail locally as it would in production.
//
// Default flags (API answers, current-generation webhooks): `/` written `\/`, every non-ASCII
// UTF-16 unit as `\uXXXX` (lower-case hex; astral characters as a surrogate pair), compact,
// floats without a trailing `.0` (no JSON_PRESERVE_ZERO_FRACTION). With `unescapedUnicode`
// (JSON_UNESCAPED_UNICODE) U+2028 and U+2029 are still escaped, as PHP does unless
// JSON_UNESCAPED_LINE_TERMINATORS is also given. A `Map` is an object whose keys keep their
// insertion order (PHP arrays do; a JS object puts integer-like keys first, ascending).

/** json_encode flags the sandbox uses. */
export interface PhpJsonFlags {
  /** JSON_UNESCAPED_SLASHES: `/` as is. */
  unescapedSlashes?: boolean;
  /** JSON_UNESCAPED_UNICODE: non-ASCII as is (but U+2028 and U+2029 escaped). */
  unescapedUnicode?: boolean;
  /** JSON_PRETTY_PRINT: four spaces, `"key": value`, one member per line. */
  pretty?: boolean;
}

/**
 * `value` encoded as PHP's json_encode does with `flags` (default: none): the bytes the
 * service (a Laravel app) and the sandbox write. Use it in your own tests to send a webhook
 * body exactly as the service would, so a handler that re-serialises a parsed body instead of
 * verifying the raw bytes fails there as it would in production.
 *
 * @example
 * ```ts
 * import { phpJson } from 'business-payments/testing';
 *
 * phpJson({ url: 'https://shop.example/é' }); // → '{"url":"https:\\/\\/shop.example\\/\\u00e9"}'
 * ```
 */
export function phpJson(value: unknown, flags: PhpJsonFlags = {}): string {
  return encode(value, flags, '');
}

const SHORT: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const u = (code: number) => `\\u${code.toString(16).padStart(4, '0')}`;

/** A string literal with PHP's escapes. */
function phpString(text: string, flags: PhpJsonFlags = {}): string {
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    const code = text.charCodeAt(i);
    if (SHORT[ch] !== undefined) out += SHORT[ch];
    else if (code < 0x20) out += u(code);
    else if (ch === '/') out += flags.unescapedSlashes ? '/' : '\\/';
    else if (code < 0x80) out += ch;
    else if (!flags.unescapedUnicode || code === 0x2028 || code === 0x2029 || isLoneSurrogate(text, i)) out += u(code);
    else out += ch;
  }
  return `${out}"`;
}

// A lone surrogate is not UTF-8 PHP could write as is: escaped (PHP would refuse the string).
function isLoneSurrogate(text: string, i: number): boolean {
  const code = text.charCodeAt(i);
  if (code >= 0xd800 && code <= 0xdbff) return !(text.charCodeAt(i + 1) >= 0xdc00 && text.charCodeAt(i + 1) <= 0xdfff);
  if (code >= 0xdc00 && code <= 0xdfff) return !(text.charCodeAt(i - 1) >= 0xd800 && text.charCodeAt(i - 1) <= 0xdbff);
  return false;
}

/**
 * A number as PHP writes it with serialize_precision -1: integers as digits; other values with
 * the shortest round-trip digits, in exponent form (`1.0e+25`, `1.0e-5`) below 1e-4 and at
 * 1e17 and above, where JS switches only at 1e-7 and 1e21 and writes `1e+25`. -0.0 is `-0`.
 * NaN and infinities, which json_encode refuses, are written `0` (PHP's partial output).
 */
export function phpNumber(n: number): string {
  if (!Number.isFinite(n)) return '0';
  if (Object.is(n, -0)) return '-0';
  if (Number.isSafeInteger(n)) return String(n);
  const [mantissa, exponent] = Math.abs(n).toExponential().split('e') as [string, string];
  const digits = mantissa.replace('.', '');
  const decpt = Number(exponent) + 1; // the decimal point's place after the first digit
  const sign = n < 0 ? '-' : '';
  if (decpt < -3 || decpt > 17) {
    const exp = decpt - 1;
    return `${sign}${digits[0]}.${digits.slice(1) || '0'}e${exp < 0 ? '-' : '+'}${Math.abs(exp)}`;
  }
  if (decpt <= 0) return `${sign}0.${'0'.repeat(-decpt)}${digits}`;
  if (digits.length <= decpt) return sign + digits + '0'.repeat(decpt - digits.length);
  return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
}

function encode(value: unknown, flags: PhpJsonFlags, indent: string): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return phpNumber(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string') return phpString(value, flags);
  const inner = flags.pretty ? `${indent}    ` : '';
  if (Array.isArray(value)) {
    return wrap(
      '[',
      ']',
      value.map((item: unknown) => encode(item, flags, inner)),
      flags,
      indent,
    );
  }
  const record = value as { toJSON?: () => unknown };
  if (typeof record.toJSON === 'function') return encode(record.toJSON(), flags, indent);
  const entries = value instanceof Map ? [...(value as Map<unknown, unknown>)] : Object.entries(value);
  const members = entries
    .filter(([, item]) => item !== undefined && typeof item !== 'function')
    .map(([key, item]) => `${phpString(String(key), flags)}${flags.pretty ? ': ' : ':'}${encode(item, flags, inner)}`);
  return wrap('{', '}', members, flags, indent);
}

function wrap(open: string, close: string, members: string[], flags: PhpJsonFlags, indent: string): string {
  if (members.length === 0) return open + close;
  if (!flags.pretty) return open + members.join(',') + close;
  const inner = `${indent}    `;
  return `${open}\n${inner}${members.join(`,\n${inner}`)}\n${indent}${close}`;
}
