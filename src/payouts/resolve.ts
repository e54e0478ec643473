// The resolve step (a cron job's): each intent that is not final taken one step on. A pending
// one is sent; one with a payout id is looked up by it; one without is sent again with its key
// inside the service's key window (judged on the service's clock), and past it matched in the
// payout list (match.ts). The kit's listing of intents (`intents()`) reads the store as it does.
import { LIST_CAP, LOOKUP, OPEN, STATES, type PayoutBase } from './base.js';
import { PayoutIntentError } from './errors.js';
import { lister, matchInList, type Lister } from './match.js';
import { take } from './send.js';
import type { PayoutIntent, PayoutIntentState } from './store.js';
import type { PayoutResolveReport } from './types.js';

/** `resolve()`: one step on for every intent that is not final, and what it did. */
export async function resolve(base: PayoutBase, signal?: AbortSignal): Promise<PayoutResolveReport> {
  const report: PayoutResolveReport = { checked: 0, changed: [], open: [], review: [], errors: [] };
  // The store's open intents (and those for a person) are read once: walked, checked as a list
  // match's rivals, and reported as each stands after its step.
  const read = [...(await readIntents(base, OPEN, Infinity)), ...(await readIntents(base, ['needs_review'], LIST_CAP))];
  const now = new Map(read.map((intent) => [intent.key, intent]));
  const list = lister(base, read, signal);
  for (const intent of read.filter(({ state }) => OPEN.includes(state))) {
    signal?.throwIfAborted();
    report.checked++;
    try {
      const next = await step(base, intent, list, signal);
      now.set(intent.key, next);
      if (next.state !== intent.state) report.changed.push({ key: intent.key, from: intent.state, to: next.state });
    } catch (error) {
      signal?.throwIfAborted();
      report.errors.push({ key: intent.key, error: String((error as Error)?.message ?? error) });
    }
  }
  // As the store lists them: by state, then by key.
  const byKey = [...now.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  report.open = OPEN.flatMap((state) => byKey.filter((intent) => intent.state === state)).slice(0, 1000);
  report.review = byKey.filter(({ state }) => state === 'needs_review').slice(0, 1000);
  return report;
}

/** `intents()`: the intents in `state` (every state when none), by state then key, at most `limit`. */
export async function listIntents(
  base: PayoutBase,
  { state, limit = 1000 }: { state?: PayoutIntentState | undefined; limit?: number | undefined } = {},
): Promise<PayoutIntent[]> {
  if (state !== undefined && !STATES.includes(state))
    throw new PayoutIntentError('invalid_params', `payouts.intents: state must be one of ${STATES.join(', ')}`);
  return readIntents(base, state === undefined ? STATES : [state], limit);
}

// One open intent, one step on.
async function step(base: PayoutBase, intent: PayoutIntent, list: Lister, signal?: AbortSignal): Promise<PayoutIntent> {
  const now = base.now();
  // Left to its sender while its answer may still come (a clock far behind its send went back);
  // a `pending` one was never sent.
  const since = now - (intent.sentAt ?? -Infinity);
  if (intent.state !== 'pending' && since < base.senderGrace && since > -base.margin) return intent;
  if (intent.payoutId !== undefined) {
    await base.slot();
    try {
      return await base.found(
        intent,
        await base.answer(base.client.payouts.retrieve(intent.payoutId, { signal })),
        'retrieve',
        intent.note,
      );
    } catch (error) {
      if ((error as { status?: number }).status !== 404) throw error;
      return base.record(intent, {
        state: 'needs_review',
        note: `payouts.retrieve(${intent.payoutId}) says there is no such payout. ${LOOKUP}`,
      });
    }
  }
  // Never sent (its first send, whatever its age), or inside the key window (the service
  // replays what it made for the key, or makes it if the first send never arrived).
  const inside = intent.state === 'pending' || (await inWindow(base, intent, list));
  if (inside === true) {
    // A first send stamps the service's time of it (serviceAt), whatever happens to its answer:
    // the service's clock is read first (once a run), or a lost answer would leave it unknown.
    if (intent.state === 'pending') await list.clock().catch(() => {});
    await base.slot();
    return take(base, intent, { state: intent.state === 'pending' ? 'unknown' : intent.state }, signal);
  }
  return inside
    ? base.record(intent, { state: 'needs_review', note: `${inside}, and sending it again could pay twice. ${LOOKUP}` })
    : matchInList(base, intent, list);
}

// Whether the key window lasts, judged on the service's clock: its time now (ours corrected by
// the Date of the list's first page this run; none: the last Date seen, or ours) against its
// time of the first send (unknown: when the intent was recorded). Inside it, a clock that went
// back (now earlier than a time recorded) or disagrees with the service's by more than the
// window's margin is a note, never a re-send. Past it, the list: no clock can make a send of it.
async function inWindow(base: PayoutBase, intent: PayoutIntent, list: Lister): Promise<boolean | string> {
  await list.clock();
  const { offset = 0, margin, latest } = base;
  const local = base.tick();
  const age = local + offset - (intent.serviceAt ?? intent.createdAt);
  if (age >= base.resendWindow) return false;
  const back = `A clock went back (this host's reads ${new Date(local).toISOString()}, earlier than a time already recorded)`;
  if (local < latest - 1000) return back;
  if (Math.abs(offset) > margin)
    return `This host's clock is ${Math.round(Math.abs(offset) / 36e4) / 10} h ${offset > 0 ? 'behind' : 'ahead of'} the service's (its Date)`;
  return (local > intent.updatedAt - margin && age > -margin) || back;
}

// Up to `limit` intents of each of `states` in turn (a page of the store at a time), at most `limit` in all.
async function readIntents(base: PayoutBase, states: readonly PayoutIntentState[], limit: number): Promise<PayoutIntent[]> {
  const out: PayoutIntent[] = [];
  for (const state of states) {
    for (let after: string | undefined; out.length < limit;) {
      const batch = await base.intents.list(state, Math.min(100, limit - out.length), after);
      if (!batch.length) break;
      out.push(...batch);
      after = batch.at(-1)!.key;
    }
  }
  return out;
}
