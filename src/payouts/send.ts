// The send step: the params checked, the intent recorded before anything is sent, then taken
// for a send (only one process wins it) and sent once with its key as the Idempotency-Key;
// what came back is recorded. confirmResend is the same send, asked for by a person.
import { exactAmount } from '../core/money.js';
import { checkPhone } from '../core/phone-check.js';
import type { PhoneCountry } from '../core/phone-plans.js';
import { unsettledIn } from '../core/payout-outcome.js';
import { LOOKUP, type PayoutBase } from './base.js';
import { PayoutIntentError } from './errors.js';
import type { PayoutIntent } from './store.js';
import type { PayoutSendParams } from './types.js';

const KEY = /^[\x21-\x7e]{1,64}$/;

/** `send`: records the intent (or finds it by its key), and sends it if it was never sent. */
export async function send(base: PayoutBase, params: PayoutSendParams, signal?: AbortSignal): Promise<PayoutIntent> {
  const { amount, destination } = checked(params ?? ({} as PayoutSendParams), base.phoneCountry);
  const { key } = params;
  const at = base.now();
  const fresh: PayoutIntent = {
    key,
    amount,
    ...(destination === undefined ? {} : { destination }),
    state: 'pending',
    version: 1,
    createdAt: at,
    updatedAt: at,
    sends: 0,
  };
  const { intent, created } = await base.intents.add(fresh);
  if (intent.amount !== amount || intent.destination !== destination)
    throw new PayoutIntentError(
      'key_conflict',
      `payouts.send: the key '${key}' is recorded for another payout (amount ${intent.amount}${intent.destination === undefined ? '' : ', a destination'}): use a new key for a new payout`,
    );
  if (created) await base.emit(undefined, intent);
  // A recorded intent never sent (its process died first) is sent now: still its first send.
  return intent.state === 'pending' ? take(base, intent, { state: 'unknown' }, signal) : intent;
}

/** `confirmResend`: a `needs_review` intent sent again with its key, once a person says so. */
export async function confirmResend(base: PayoutBase, key: string, signal?: AbortSignal): Promise<PayoutIntent> {
  const intent = await base.intents.get(key);
  if (!intent) throw new PayoutIntentError('not_found', `payouts.confirmResend: no intent has the key '${key}'`);
  if (intent.state !== 'needs_review')
    throw new PayoutIntentError(
      'not_allowed',
      `payouts.confirmResend: the intent '${key}' is ${intent.state}; only one that needs review is sent again this way`,
    );
  const taken = await base.change(intent, {
    state: 'unknown',
    sentAt: base.now(),
    sends: intent.sends + 1,
    error: undefined,
    note: 'Sent again by confirmResend.',
  });
  if (!taken) throw new PayoutIntentError('not_allowed', `payouts.confirmResend: the intent '${key}' changed meanwhile: look at it again`);
  return dispatch(base, taken, signal);
}

/** Takes the intent for a send (only one process wins it; the others get it as the winner left it), then sends it. */
export async function take(
  base: PayoutBase,
  intent: PayoutIntent,
  patch: Partial<PayoutIntent>,
  signal?: AbortSignal,
): Promise<PayoutIntent> {
  const taken = await base.change(
    intent,
    base.stamped({ ...intent, sentAt: base.now(), sends: intent.sends + 1, error: undefined, ...patch }),
  );
  return taken ? dispatch(base, taken, signal) : (await base.intents.get(intent.key))!;
}

// Sends a taken intent (its send recorded) with its key, and records what came back.
async function dispatch(base: PayoutBase, taken: PayoutIntent, signal?: AbortSignal): Promise<PayoutIntent> {
  const { key, amount, destination } = taken;
  try {
    const params = destination === undefined ? { amount } : { amount, destination };
    const payout = await base.answer(base.client.payouts.create(params, { idempotencyKey: key, signal }));
    return await base.found(base.stamped(taken), payout, 'answer');
  } catch (error) {
    return base.record(base.stamped(taken), fromError(base, error));
  }
}

// The params as the intent records them, checked before anything is recorded: the amount exact
// at 2 digits, the destination as its international digits. A typo never burns a key.
function checked({ key, amount, destination }: PayoutSendParams, country: PhoneCountry): { amount: number; destination?: string } {
  const refuse = (what: string): never => {
    throw new PayoutIntentError('invalid_params', `payouts.send: ${what}. Nothing was recorded or sent.`);
  };
  if (typeof key !== 'string' || !KEY.test(key))
    refuse('key must be 1–64 printable ASCII characters without spaces (it is the Idempotency-Key)');
  const exact = exactAmount(amount);
  if (!('amount' in exact) || !(exact.amount > 0)) refuse(`amount ${'error' in exact ? exact.error : 'must be greater than 0'}`);
  if (destination === undefined) return { amount: (exact as { amount: number }).amount };
  const phone = checkPhone(destination, country);
  if (!('phone' in phone)) return refuse(`destination ${phone.message}`);
  return { amount: (exact as { amount: number }).amount, destination: phone.phone };
}

// What an error says of the intent: whether the service refused it (failed), never got it
// (pending), or may have acted (unknown, or the unsettled outcome its body names: unsettledIn).
function fromError(base: PayoutBase, error: unknown): Partial<PayoutIntent> {
  const { status, body, attempts, message } = (error ?? {}) as {
    status?: number;
    body?: unknown;
    attempts?: number;
    message?: string;
  };
  const said = { error: String(message ?? error) };
  const named = status === undefined ? undefined : unsettledIn(body);
  if (named) return { ...said, state: named === 'AMBIGUOUS' ? 'ambiguous' : 'in_progress' };
  if (status === undefined) return { ...said, state: base.client.refused?.(error) ? 'failed' : attempts === 0 ? 'pending' : 'unknown' };
  if (status === 429) return { ...said, state: 'pending' };
  // A redirect (not followed), a timeout, the key in flight, a 5xx: the service may have acted.
  if (status < 400 || status === 408 || status === 409 || status >= 500) return { ...said, state: 'unknown' };
  // The same key with another body: a payout may exist under it.
  if (/idempotency/i.test(said.error))
    return { ...said, state: 'needs_review', note: `The service refused its key: ${said.error} ${LOOKUP}` };
  return { ...said, state: 'failed' };
}
