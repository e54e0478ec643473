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

type Value = string | readonly string[] | null | undefined;

export interface BrandHeaders {
  /** Every copy of the signature header: any one may match. */
  signature?: Value | undefined;
  /** The other headers as one value each (see `single`). */
  timestamp?: string | undefined;
  event?: string | undefined;
  environment?: string | undefined;
  /** The first two signature header names seen, of different brands (ambiguous without `brand`). */
  ambiguous?: string[] | undefined;
}

// Runs on every delivery, and a request may carry any number of headers, so each step is
// linear in the names: one pass to find the signature header(s) (no cache of an earlier
// delivery's brand: ambiguity must depend on this delivery alone), then direct lookups,
// without scratch objects. Node gives lower-case names; other casings fall back to a scan.
export function readBrandHeaders(headers: WebhookHeaders, brand: string | undefined): BrandHeaders {
  const fetchLike = typeof (headers as { get?: unknown }).get === 'function';
  let found = brand?.toLowerCase();
  if (found === undefined) {
    // Two names of different brands already make the delivery ambiguous, so the scan stops
    // collecting there: no list that grows, and is searched, with every name.
    let first: string | undefined;
    let second: string | undefined;
    const visit = (key: unknown) => {
      // A Headers-like object's forEach may hand over names that are not strings.
      if (second || typeof key !== 'string' || key.length < 13 || (key.charCodeAt(0) | 32) !== 120 || key.charCodeAt(1) !== 45) return;
      const name = key.toLowerCase();
      // A conditional expression, not an if/else: this entry is size-budgeted.
      // eslint-disable-next-line @typescript-eslint/no-unused-expressions
      if (name.endsWith('-signature') && name !== first) first === undefined ? (first = name) : (second = name);
    };
    if (!fetchLike) for (const key in headers) visit(key);
    // Some Headers-like objects (undici's, a framework's) only offer get and forEach.
    else if (typeof (headers as Headers).forEach === 'function') (headers as Headers).forEach((_v, key) => visit(key));
    if (second) return { ambiguous: [first!, second] };
    if (!first) return {};
    found = first.slice(2, -10);
  }
  if (found !== namesOf) names = [`x-${(namesOf = found)}-signature`, `x-${found}-timestamp`, `x-${found}-event`];
  return {
    signature: lookup(headers, fetchLike, names[0]!),
    timestamp: single(lookup(headers, fetchLike, names[1]!)),
    event: single(lookup(headers, fetchLike, names[2]!)),
    environment: single(lookup(headers, fetchLike, 'x-environment')),
  };
}

function lookup(headers: WebhookHeaders, fetchLike: boolean, name: string): Value {
  if (fetchLike) return (headers as Headers).get(name);
  const record = headers as Record<string, Value>;
  const value = record[name];
  if (value !== undefined) return value;
  for (const key in record) if (key.length === name.length && key.toLowerCase() === name) return record[key];
  return undefined;
}

function single(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  // A repeated header: equal copies are one value; differing copies read as Fetch's
  // Headers.get() gives them ("a, b"), which no check accepts.
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string')) {
    return value.every((v) => v === value[0]) ? value[0] : value.join(', ');
  }
  return undefined;
}

// Header names of the last brand seen: building and hashing them on every call costs more
// than the lookups. (Names only: which brand a delivery has is still read from the delivery.)
let namesOf: string | undefined;
let names: string[] = [];
