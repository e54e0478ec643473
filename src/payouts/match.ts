// The match step: past the key window, an intent whose payout id is unknown is looked for in
// the payout list by amount, destination and time. Ambiguous by nature, so a match is taken
// only when it is the single one no other intent holds and no other open intent could be its
// (then it is said to be a guess); anything else is for a person.
import { HOUR, LIST_CAP, LOOKUP, time, type PayoutBase } from './base.js';
import type { Payout } from '../schemas/payouts.js';
import type { PayoutIntent } from './store.js';

/**
 * The payout list, read once per resolve() run and only as far as it is needed; `open` the
 * intents the run read (not final, or for a person); `clock()` reads the service's clock
 * from the Date of its first page, once a run.
 */
export type Lister = ((from: number) => Promise<Payout[]>) & { open: readonly PayoutIntent[]; clock(): Promise<unknown> };

/** Finds the intent's payout in the list, or sends the intent to review (`needs_review`) with a note saying why not. */
export async function matchInList(base: PayoutBase, intent: PayoutIntent, list: Lister): Promise<PayoutIntent> {
  const from = intent.createdAt - base.tolerance;
  const to = (intent.sentAt ?? intent.createdAt) + base.tolerance;
  const free: Payout[] = [];
  const held: string[] = [];
  for (const payout of await list(from)) {
    // A payout without a readable created_at is at no time: never a match.
    const at = time(payout);
    if (payout.amount !== intent.amount || !(at >= from && at <= to)) continue;
    if (intent.destination !== undefined && payout.destination != null && digits(payout.destination) !== digits(intent.destination))
      continue;
    const owner = await base.intents.owner(payout.id);
    if (owner === undefined || owner === intent.key) free.push(payout);
    // Held by another intent's list guess: that guess may have been wrong.
    else if ((await base.intents.get(owner))?.matchedBy === 'list') held.push(owner);
  }
  const others = free.length === 1 ? await rivals(base, list, intent, free[0]!) : [];
  if (free.length === 1 && !others.length)
    return base.found(
      intent,
      free[0]!,
      'list',
      'Matched in the payout list by amount, destination and time, not by id (the list cannot say whose a payout is): check it.',
    );
  const window = `its key is past the service's ${base.keyRetention / HOUR} h window, so sending it again could pay twice`;
  const quoted = (keys: string[]) => keys.map((key) => `'${key}'`).join(', ');
  const note = others.length
    ? `One payout in the list matches its amount, destination and time, and intents ${quoted(others)} could be its too: whose it is cannot be told; ${window}. ${LOOKUP}`
    : free.length
      ? `${free.length} payouts in the list match its amount, destination and time, and which is its cannot be told; ${window}. ${LOOKUP}`
      : held.length
        ? `The only payouts in the list that match it were matched by a list guess to intents ${quoted(held)}: check them together (one may be this one's); ${window}. ${LOOKUP}`
        : `No payout for it in the list, and ${window}. ${LOOKUP}`;
  return base.record(intent, { state: 'needs_review', note });
}

/** The payout list for one resolve() run (see {@link Lister}), over the intents it read (`open`). */
export function lister(base: PayoutBase, open: readonly PayoutIntent[], signal?: AbortSignal): Lister {
  const read: Payout[] = [];
  let source: AsyncIterable<Payout> | undefined;
  let pages: AsyncIterator<Payout> | undefined;
  let clock: Promise<unknown> | undefined;
  let done = false;
  const listed = () => (source ??= base.client.payouts.list({ limit: 100 }, { signal }));
  const list = async (from: number) => {
    pages ??= listed()[Symbol.asyncIterator]();
    // Newest first: once a payout is older than `from`, the rest are too.
    while (!done && read.length < LIST_CAP && !(read.length && time(read.at(-1)!) < from)) {
      if (read.length % 100 === 0) await base.slot();
      const next = await pages.next();
      if (next.done) done = true;
      else read.push(next.value);
    }
    return read;
  };
  const first = async () => {
    await base.slot();
    // The client's list is a PagePromise: a promise of its first page too, whose answer has the
    // Date; a list that is not (a test's fake) is awaited as it is and tells no time.
    return base.answer(listed() as AsyncIterable<Payout> & PromiseLike<unknown>);
  };
  return Object.assign(list, { open, clock: () => (clock ??= first()) });
}

// The intents that could be this payout's besides `intent`: sent, not final (or for a person),
// without a payout id, of the same amount, sent around the payout's time. From the intents the
// resolve() run read, each checked again as it stands now.
async function rivals(base: PayoutBase, list: Lister, intent: PayoutIntent, payout: Payout): Promise<string[]> {
  const at = time(payout);
  const keys: string[] = [];
  for (const other of list.open) {
    if (other.key === intent.key || other.amount !== intent.amount) continue;
    if (!(at >= other.createdAt - base.tolerance && at <= (other.sentAt ?? other.createdAt) + base.tolerance)) continue;
    const now = await base.intents.get(other.key);
    if (now && now.sends > 0 && now.payoutId === undefined && now.state !== 'sent' && now.state !== 'failed') keys.push(now.key);
  }
  return keys;
}

// A phone number's digits, to compare a listed destination with the intent's.
function digits(value: unknown): string {
  return String(value).replace(/\D/g, '');
}
