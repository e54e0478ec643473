// Finds the three brand headers (X-<Brand>-Signature, -Timestamp, -Event) in a Fetch
// `Headers` or a Node headers object, case-insensitively, without knowing the brand.

/** A Fetch `Headers`, or a Node-style headers object (values may be arrays). */
export type WebhookHeaders =
  | Headers
  | {
      /** Header value by case-insensitive name. */
      get(name: string): string | null;
    }
  | Record<string, string | readonly string[] | undefined>;

type Value = string | readonly string[] | undefined;

export interface BrandHeaders {
  signature?: Value;
  timestamp?: Value;
  event?: Value;
  environment?: Value;
  /** Brands seen when more than one matched (ambiguous without `brand`). */
  ambiguous?: string[];
}

// Runs on every delivery, so: one pass over the names only to find the signature header(s)
// (no cache of an earlier delivery's brand: ambiguity must depend on this delivery alone),
// then direct lookups, without closures or scratch objects. Node gives lower-case names;
// other casings fall back to a scan.
export function readBrandHeaders(headers: WebhookHeaders, brand: string | undefined): BrandHeaders {
  const fetchLike = typeof (headers as { get?: unknown }).get === 'function';
  let found = brand?.toLowerCase();
  if (found === undefined) {
    let first: string | undefined;
    let brands: string[] | undefined;
    const visit = (key: unknown) => {
      // A Headers-like object's forEach may hand over names that are not strings.
      if (typeof key !== 'string' || key.length < 13 || (key.charCodeAt(0) | 32) !== 120 || key.charCodeAt(1) !== 45) return;
      const name = key.toLowerCase();
      if (!name.endsWith('-signature')) return;
      const b = name.slice(2, -10);
      if (first === undefined) first = b;
      else if (b !== first && !brands?.includes(b)) (brands ??= [first]).push(b);
    };
    if (!fetchLike) for (const key in headers) visit(key);
    // Some Headers-like objects (undici's, a framework's) only offer get and forEach.
    else if (typeof (headers as Headers).forEach === 'function') (headers as Headers).forEach((_v, key) => visit(key));
    if (brands) return { ambiguous: brands };
    if (first === undefined) return {};
    found = first;
  }
  if (found !== namesOf) names = [`x-${(namesOf = found)}-signature`, `x-${found}-timestamp`, `x-${found}-event`];
  return {
    signature: lookup(headers, fetchLike, names[0]!),
    timestamp: lookup(headers, fetchLike, names[1]!),
    event: lookup(headers, fetchLike, names[2]!),
    environment: lookup(headers, fetchLike, 'x-environment'),
  };
}

function lookup(headers: WebhookHeaders, fetchLike: boolean, name: string): Value {
  if (fetchLike) return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, Value>;
  const value = record[name];
  if (value !== undefined) return value;
  for (const key of Object.keys(record)) if (key.length === name.length && key.toLowerCase() === name) return record[key];
  return undefined;
}

// Header names of the last brand seen: building and hashing them on every call costs more
// than the lookups. (Names only: which brand a delivery has is still read from the delivery.)
let namesOf: string | undefined;
let names: string[] = [];
