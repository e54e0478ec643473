import { PHONE_FIELDS, redactPersonalData } from '../core/personal-data.js';

// What the logger may print. Signatures and API keys are credentials in all but name, and
// customer phone numbers and e-mail addresses are personal data: none belongs in a log line.
const SECRET_HEADERS = new Set(['x-signature', 'x-api-key', 'authorization', 'proxy-authorization', 'cookie']);
const PHONE_KEYS = new Set(PHONE_FIELDS);

export function redactHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = SECRET_HEADERS.has(name.toLowerCase()) ? '[redacted]' : value;
  }
  return out;
}

/** A request body for a log line: phone fields whole, and any e-mail or number in any other text. */
export function redactBody(value: unknown): unknown {
  if (typeof value === 'string') return redactPersonalData(value);
  if (Array.isArray(value)) return value.map(redactBody);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    out[key] = PHONE_KEYS.has(key) && typeof field === 'string' ? '[redacted]' : redactBody(field);
  }
  return out;
}
