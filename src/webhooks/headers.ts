// Finds the three brand headers (X-<Brand>-Signature, -Timestamp, -Event) in a Fetch
// `Headers` or a Node headers object, case-insensitively, without knowing the brand.
import { WebhookVerificationError } from './errors.js';

/** A Fetch `Headers`, or a Node-style headers object (values may be arrays). */
export type WebhookHeaders =
  | Headers
  | {
      /** Header value by case-insensitive name. */
      get(name: string): string | null;
    }
  | Record<string, string | readonly string[] | undefined>;

type Value = string | readonly string[] | null | undefined;
type NodeHeaders = Record<string, Value>;

/** The delivery's brand headers, all there; or the earlier generation's `X-Signature`. */
export interface SignedHeaders {
  /** Every copy of the signature header: any one may match. */
  signature: NonNullable<Value>;
  /** The other headers as one value each (see `single`). Missing: the earlier form, whose timestamp is in the body. */
  timestamp?: string | undefined;
  event: string;
  environment: string | undefined;
}

// Runs on every delivery, and a request may carry any number of headers, so each step is
// linear in the names, without scratch objects in the common case: one pass to find the
// signature header(s) (no cache of an earlier delivery's brand: ambiguity must depend on
// this delivery alone), then direct lookups. Node gives lower-case names; other casings
// fall back to a scan.
/** The brand headers of a delivery; `missing_header` when one is missing, or the brand is ambiguous. */
export function readSignedHeaders(headers: WebhookHeaders, brand: string | undefined): SignedHeaders {
  if (typeof headers !== 'object' || headers === null) throw missingHeader('Pass the request headers.');
  const fetchLike = typeof (headers as { get?: unknown }).get === 'function';
  const found = brand?.toLowerCase() ?? brandOf(headers, fetchLike);
  if (found !== namesOf) names = [`x-${(namesOf = found)}-signature`, `x-${found}-timestamp`, `x-${found}-event`];
  const signed: { signature?: Value; timestamp?: string | undefined; event?: string | undefined; environment?: string | undefined } = found
    ? {
        signature: lookup(headers, fetchLike, names[0]!),
        timestamp: single(lookup(headers, fetchLike, names[1]!)),
        event: single(lookup(headers, fetchLike, names[2]!)),
        environment: single(lookup(headers, fetchLike, 'x-environment')),
      }
    : {};
  // No complete brand pair, but an X-Signature: the earlier generation's form (no timestamp
  // or event header; its timestamp is in the body).
  const legacy = signed.signature == null || signed.timestamp === undefined ? lookup(headers, fetchLike, 'x-signature') : null;
  if (legacy != null) return { signature: legacy, event: '', environment: single(lookup(headers, fetchLike, 'x-environment')) };
  const missing =
    signed.signature == null ? 'Signature' : signed.timestamp === undefined ? 'Timestamp' : signed.event === undefined ? 'Event' : '';
  if (missing) throw missingHeader(`Missing the X-<Brand>-${missing} header.`);
  return signed as SignedHeaders;
}

/**
 * The brand of a delivery whose caller named none. A brand is a signature header and a
 * timestamp header of the same brand: another service's stray x-…-signature beside the
 * delivery's does not count. The first pass looks at signature names only; only when it
 * finds two brands does a second pass pair them with timestamps, counting each name once in
 * a map. Two complete brands make the delivery ambiguous, so each pass stops collecting
 * there: no list that grows, and is searched, with every name.
 */
function brandOf(headers: WebhookHeaders, fetchLike: boolean): string | undefined {
  let first: string | undefined;
  let second: string | undefined;
  // Set for the second pass only (the common case makes no map); visit reads it before then.
  // eslint-disable-next-line prefer-const
  let seen: Map<string, number> | undefined;
  const visit = (key: unknown) => {
    // A Headers-like object's forEach may hand over names that are not strings.
    if (second || typeof key !== 'string' || key.length < 13 || (key.charCodeAt(0) | 32) !== 120 || key.charCodeAt(1) !== 45) return;
    const name = key.toLowerCase();
    // 1 signature, 2 timestamp (the same length: the brand is what lies between).
    let kind = name.endsWith('-signature') ? 1 : seen && name.endsWith('-timestamp') ? 2 : 0;
    if (!kind) return;
    const own = name.slice(2, -10);
    if (seen && (seen.set(own, (kind |= seen.get(own)!)), kind < 3)) return;
    if (own === first) return;
    if (first) second = own;
    else first = own;
  };
  eachName(headers, fetchLike, visit);
  const firstSigned = first;
  if (!second) return firstSigned;
  // Several signature brands: the second pass counts only complete ones.
  seen = new Map();
  first = second = undefined;
  eachName(headers, fetchLike, visit);
  // visit() has set them again: TypeScript cannot see that through the callback.
  // eslint-disable-next-line @typescript-eslint/restrict-template-expressions
  if (second) throw missingHeader(`Headers of more than one brand (x-${first}-signature, x-${second}-signature): pass brand.`);
  // None complete: the first signature's brand, so the error names what is missing.
  return first ?? firstSigned;
}

// A module-level function, not a closure per delivery: this runs on every one.
function eachName(headers: WebhookHeaders, fetchLike: boolean, visit: (key: unknown) => void): void {
  if (!fetchLike) for (const key in headers) visit(key);
  // Some Headers-like objects (undici's, a framework's) only offer get and forEach.
  else if (typeof (headers as Headers).forEach === 'function') (headers as Headers).forEach((_v, key) => visit(key));
}

const missingHeader = (message: string) => new WebhookVerificationError('missing_header', message);

function lookup(headers: WebhookHeaders, fetchLike: boolean, name: string): Value {
  if (fetchLike) return (headers as Headers).get(name);
  // Cast in place, not copied to a typed local: that local would ship as a variable.
  if ((headers as NodeHeaders)[name] !== undefined) return (headers as NodeHeaders)[name];
  for (const key in headers) if (key.length === name.length && key.toLowerCase() === name) return (headers as NodeHeaders)[key];
}

function single(value: unknown): string | undefined {
  // A repeated header: equal copies are one value; differing copies read as Fetch's
  // Headers.get() gives them ("a, b"), which no check accepts. (No copies: undefined.)
  return typeof value === 'string'
    ? value
    : Array.isArray(value) && value.every((v) => typeof v === 'string')
      ? value.every((v) => v === value[0])
        ? value[0]
        : value.join(', ')
      : undefined;
}

// Header names of the last brand seen: building and hashing them on every call costs more
// than the lookups. (Names only: which brand a delivery has is still read from the delivery.)
let namesOf: string | undefined;
let names: string[] = [];
