// The guard: one live subscription per customer and plan. The latest record of the pair is
// found by its key (`sub:<customer>:<plan>:<n>`); while it is live nothing is sent. A new one is
// recorded (insert-if-absent: of two processes racing, one records it) before its create is
// sent with the record's key as its Idempotency-Key, so a replay gets the same subscription.
import { checkPhone } from '../core/phone-check.js';
import { keyOf, KEY_WINDOW, LIVE, type BillingBase, type ChangeSource } from './base.js';
import { BillingError } from './errors.js';
import type { SubscriptionRecord } from './store.js';
import type { BillingSubscribeParams, BillingSubscribeResult } from './types.js';

const SOURCE: ChangeSource = { source: 'subscribe' };

/** `subscribe`: the live record of the pair, else a new one recorded, then its create sent. */
export async function subscribe(base: BillingBase, params: BillingSubscribeParams, signal?: AbortSignal): Promise<BillingSubscribeResult> {
  signal?.throwIfAborted();
  const { customer, plan_code: plan } = params ?? ({} as BillingSubscribeParams);
  const chain = await base.chain(customer, plan, 'subscribe');
  const phone = checked(params);
  const latest = chain.at(-1);
  if (latest && LIVE.includes(base.standing(latest).state)) return found(base, latest, signal);
  const n = chain.length + 1;
  const key = keyOf(customer, plan, n);
  if (key.length > 64) refuse(`customer and plan_code make the key '${key}' longer than 64 characters (it is the Idempotency-Key)`);
  const { consent, webhook_url: webhookUrl, terms_shown: termsShown } = params;
  const at = base.now();
  const fresh = { key, customer, plan, n, version: 1, state: 'pending', createdAt: at, updatedAt: at, sends: 0, phone, termsShown };
  const { record, created } = await base.records.add(
    // As JSON: absent fields stay absent.
    JSON.parse(JSON.stringify({ ...fresh, consent, webhookUrl, paid: [], failed: [], chargedAfterCancel: [] })) as SubscriptionRecord,
  );
  // Another process recorded it first: its subscribe sends it.
  if (!created) return result(base, record, false);
  await base.emit(record, { ...SOURCE, previous: undefined });
  return send(base, record, true, signal);
}

/** A record whose create was sent and never answered, sent again with its key (reconcile's replay). */
export function replay(base: BillingBase, record: SubscriptionRecord, signal?: AbortSignal): Promise<BillingSubscribeResult> {
  return send(base, record, false, signal, 'reconcile');
}

// A live record found: a cancelled one taken back (the service still charges it), one never
// answered sent again with its key (its process died, or the answer was lost).
async function found(base: BillingBase, latest: SubscriptionRecord, signal?: AbortSignal): Promise<BillingSubscribeResult> {
  let record = latest;
  if (record.cancel && base.standing(record).state === 'cancelled')
    ({ record } = await base.update(record.key, (now) => (now.cancel ? { cancel: undefined } : undefined), SOURCE));
  return record.subscriptionId === undefined && record.error === undefined
    ? send(base, record, false, signal)
    : result(base, record, false);
}

// Sends the record's create with its key (its send counted first), and records the answer. A
// refusal of its first send ends the record; anything else leaves it for the next subscribe
// (or reconcile) to replay. The error is thrown either way.
async function send(
  base: BillingBase,
  record: SubscriptionRecord,
  created: boolean,
  signal?: AbortSignal,
  by: ChangeSource['source'] = 'subscribe',
): Promise<BillingSubscribeResult> {
  const source = { source: by };
  if (record.sends > 0 && base.now() - record.createdAt >= KEY_WINDOW)
    throw new BillingError(
      'needs_review',
      `billing.subscribe: the create of '${record.key}' was sent ${new Date(record.createdAt).toISOString()} and never answered, and the service keeps a key 24 h: sending it again could make a second subscription. Look for it on the dashboard; once you know, billing.cancel() ends the record and the next subscribe makes a new one.`,
    );
  const open = (now: SubscriptionRecord) => now.subscriptionId === undefined && now.error === undefined;
  const taken = (await base.update(record.key, (now) => (open(now) ? { sends: now.sends + 1 } : undefined), source)).record;
  if (!open(taken)) return result(base, taken, created);
  const { key, plan, phone, termsShown, webhookUrl } = taken;
  let answer: unknown;
  try {
    const params = { plan_code: plan, customer_phone: phone, terms_shown: termsShown };
    answer = await base.client.billing.subscriptions.create(webhookUrl === undefined ? params : { ...params, webhook_url: webhookUrl }, {
      idempotencyKey: key,
      signal,
    });
  } catch (error) {
    if (taken.sends === 1 && refusal(base, error))
      await base.update(key, (now) => (open(now) ? { error: String((error as Error)?.message ?? error) } : undefined), source);
    throw error;
  }
  return result(base, await answered(base, key, answer, source), created);
}

// The answer to a create: its subscription id bound to the record (an id another record holds
// is not taken), then kept on it.
async function answered(base: BillingBase, key: string, answer: unknown, source: ChangeSource): Promise<SubscriptionRecord> {
  const { id, subscription_id } = (answer ?? {}) as { id?: unknown; subscription_id?: unknown };
  const subscriptionId = typeof id === 'string' && id ? id : subscription_id;
  if (typeof subscriptionId !== 'string' || !subscriptionId)
    throw new BillingError('bad_answer', `billing.subscribe: the service answered the create of '${key}' without a subscription id`);
  const holder = await base.records.bind(subscriptionId, key);
  if (holder !== key)
    throw new BillingError(
      'bad_answer',
      `billing.subscribe: the service answered '${key}' with ${subscriptionId}, which '${holder}' holds`,
    );
  return (await base.update(key, (now) => (now.subscriptionId === undefined ? { subscriptionId } : undefined), source)).record;
}

// Whether an error says nothing was made: the client refused the params before sending, or the
// service refused the request (a 4xx but a timeout, the key in flight, the rate limit, or a
// word about the key: a subscription may exist under it).
function refusal(base: BillingBase, error: unknown): boolean {
  const { status, message } = (error ?? {}) as { status?: unknown; message?: unknown };
  if (base.client.refused?.(error)) return true;
  return (
    typeof status === 'number' &&
    status >= 400 &&
    status < 500 &&
    ![408, 409, 429].includes(status) &&
    !/idempotency/i.test(String(message))
  );
}

// The params checked before anything is recorded or sent (also when a live record is found,
// so a bad call never passes for a good one); resolves the phone as international digits.
function checked({ customer_phone, terms_shown, consent, webhook_url }: BillingSubscribeParams): string {
  const phone = checkPhone(customer_phone, 'TZ');
  if (!('phone' in phone)) return refuse(`customer_phone ${phone.message}`);
  if (typeof terms_shown !== 'string' || !terms_shown.trim()) refuse('terms_shown must be the exact terms shown to the customer');
  if (webhook_url !== undefined && typeof webhook_url !== 'string') refuse('webhook_url must be a URL string');
  if (consent !== undefined && !(typeof consent?.at === 'number' || typeof consent?.at === 'string'))
    refuse('consent.at must be when the customer accepted (ms since the epoch, or an ISO 8601 string)');
  return phone.phone;
}

const refuse = (what: string): never => {
  throw new BillingError('invalid_params', `billing.subscribe: ${what}. Nothing was recorded or sent.`);
};

// What subscribe resolves: the record with its state worked out now.
function result(base: BillingBase, record: SubscriptionRecord, created: boolean): BillingSubscribeResult {
  const now = base.current(record);
  return { created, record: now, state: now.state };
}
