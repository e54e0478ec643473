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

export interface BrandHeaders {
  signature: string | readonly string[] | undefined;
  timestamp: string | readonly string[] | undefined;
  event: string | readonly string[] | undefined;
  environment: string | readonly string[] | undefined;
  /** Brands seen when more than one matched (ambiguous without `brand`). */
  ambiguous?: string[];
}

// The brand of the last delivery: almost every call sees the same one, so look it up
// directly first instead of scanning every header name.
let lastBrand: string | undefined;

export function readBrandHeaders(headers: WebhookHeaders, brand?: string): BrandHeaders {
  const isFetch = typeof (headers as { get?: unknown }).get === 'function';
  const get = isFetch
    ? (name: string) => (headers as { get(name: string): string | null }).get(name) ?? undefined
    : nodeGetter(headers as Record<string, string | readonly string[] | undefined>);
  const environment = get('x-environment');

  const pinned = brand?.toLowerCase() ?? lastBrand;
  if (pinned !== undefined) {
    const signature = get(`x-${pinned}-signature`);
    if (signature !== undefined || brand !== undefined) {
      return { signature, timestamp: get(`x-${pinned}-timestamp`), event: get(`x-${pinned}-event`), environment };
    }
  }

  const brands = new Set<string>();
  const names = isFetch ? fetchNames(headers as Headers) : Object.keys(headers);
  for (const raw of names) {
    const name = raw.toLowerCase();
    if (name.length > 12 && name.startsWith('x-') && name.endsWith('-signature')) {
      brands.add(name.slice(2, -'-signature'.length));
    }
  }
  if (brands.size > 1) return { signature: undefined, timestamp: undefined, event: undefined, environment, ambiguous: [...brands] };
  const found = brands.values().next().value;
  if (found === undefined) return { signature: undefined, timestamp: undefined, event: undefined, environment };
  lastBrand = found;
  return { signature: get(`x-${found}-signature`), timestamp: get(`x-${found}-timestamp`), event: get(`x-${found}-event`), environment };
}

function fetchNames(headers: Headers): string[] {
  const names: string[] = [];
  // Some Headers-like objects (undici's, a framework's) only offer forEach.
  if (typeof headers.forEach === 'function') headers.forEach((_value, name) => names.push(name));
  return names;
}

function nodeGetter(headers: Record<string, string | readonly string[] | undefined>) {
  return (name: string) => {
    // Node lower-cases incoming header names; a hand-built object may not.
    const direct = headers[name];
    if (direct !== undefined) return direct;
    for (const key of Object.keys(headers)) {
      if (key.length === name.length && key.toLowerCase() === name) return headers[key];
    }
    return undefined;
  };
}
