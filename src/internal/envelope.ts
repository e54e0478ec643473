// Reading a 2xx body whose wrapper the spec does not show. A faithful server may answer a
// resource bare, or inside a success envelope (`{ status: "success", data }`, `{ success:
// true, data }`, `{ data: { payout: {...} } }`), and may say "failed" in a 200. The
// envelope's status is never the resource's: it is dropped once the resource is found.

// Read here and in core/: it lives in core/values.ts.
import { isRecord } from '../core/values.js';
export { isRecord };

// Words an envelope uses for "the call went through" or "it did not"; a resource's own
// states (`pending`, `failed`, `SUCCESS`) sit next to its id or inside `data`.
const ENVELOPE_OK = /^(success|succeeded|ok)$/i;
const ENVELOPE_FAILED = /^(error|fail|failed|failure)$/i;
// Names a resource's id goes by: a body that has one is the resource, not an envelope.
const ID_KEYS = [
  'id',
  'trx_id',
  'transaction_id',
  'trxId',
  'payout_id',
  'subscription_id',
  'invoice_id',
  'plan_code',
  'plan_id',
  'uuid',
  'reference',
];

const hasId = (body: Record<string, unknown>) => ID_KEYS.some((key) => body[key] != null);

/**
 * The resource inside `body`: `data` (and a single wrapper named in `names`, e.g.
 * `{ data: { payout } }`) with the envelope's other fields kept beside it, and the
 * envelope's own status word dropped. Anything that is not an object comes back as it is.
 * `flat`: where a body without `data` may still be an envelope, its `status` word dropped:
 * `without-id` when the body names no id (a payout answer), `always` where the resource
 * cannot be `success` yet (a created payment, a push).
 */
export function unwrap(body: unknown, names: readonly string[] = [], flat?: 'always' | 'without-id'): unknown {
  if (!isRecord(body)) return body;
  let resource = body;
  for (let depth = 0; depth < 3; depth++) {
    const inner = innerOf(resource, names);
    if (inner === undefined) break;
    if (!isRecord(inner)) return inner;
    const { data: _data, ...siblings } = resource;
    for (const name of names) delete siblings[name];
    dropEnvelopeStatus(siblings, inner);
    resource = { ...siblings, ...inner };
  }
  if (resource === body && flat && (flat === 'always' || !hasId(body)) && isEnvelopeWord(body.status)) {
    // A flat envelope (`{ status: "success", payout_status: "AMBIGUOUS", amount }`): its
    // status says the call went through, not what became of the resource. Where a route's
    // resource cannot be `success` yet (a created payment, a push), even beside an id.
    const { status: _status, ...rest } = body;
    return rest;
  }
  return resource;
}

function innerOf(body: Record<string, unknown>, names: readonly string[]): unknown {
  if (typeof body.data === 'object' && body.data !== null) return body.data;
  if (hasId(body)) return undefined;
  const named = names.find((name) => isRecord(body[name]));
  return named === undefined ? undefined : body[named];
}

function dropEnvelopeStatus(siblings: Record<string, unknown>, inner: Record<string, unknown>): void {
  if (isEnvelopeWord(siblings.status) || 'status' in inner) delete siblings.status;
  if (typeof siblings.success === 'boolean') delete siblings.success;
}

const isEnvelopeWord = (status: unknown) =>
  typeof status === 'boolean' || (typeof status === 'string' && (ENVELOPE_OK.test(status) || ENVELOPE_FAILED.test(status)));

/**
 * What a 2xx body says when it reports that the call failed (`{ status: "error", message }`,
 * `{ success: false, error }`, `{ status: "FAILED", message }` with no resource): its
 * label and message. `undefined` when the body does not say so.
 */
export function failureOf(body: unknown): { label?: string; message: string } | undefined {
  if (!isRecord(body) || hasId(body) || isRecord(body.data) || Array.isArray(body.data)) return undefined;
  const { status, success } = body;
  const failed = success === false || status === false || (typeof status === 'string' && ENVELOPE_FAILED.test(status));
  if (!failed) return undefined;
  const text = (value: unknown) => (typeof value === 'string' && value ? value : undefined);
  const label = text(body.error) ?? text(body.code) ?? text(body.error_code);
  const message = text(body.message) ?? text(body.detail) ?? label ?? 'the body says the call failed';
  return label === undefined ? { message } : { label, message };
}
