// The payout-intent kit: each payout sent at most once and never lost. An intent is recorded
// in the merchant's store before anything is sent; every change to it is a compare-and-swap on
// its version, so whichever process wins a change is the only one that acts on it. It loads
// in serverless handlers and cron jobs, so it imports neither ky nor the client: the
// merchant's PaymentsClient is passed in.
import { ConfigurationError, PaymentsError } from '../core/base-error.js';
import { exactAmount } from '../core/money.js';
import { checkPhone, phoneCountryError, type PhoneCountry } from '../core/phone.js';
import { unsettledIn } from '../core/payout-outcome.js';
import type { Payout } from '../schemas/payouts.js';
import type { PayoutIntent, PayoutIntentState, PayoutIntentStore } from './store.js';

/** What the kit needs of a `PaymentsClient` (pass the client itself). */
export interface PayoutsClient {
  /** `client.payouts`: `create` sends, `retrieve` and `list` look payouts up. */
  readonly payouts: {
    /** `client.payouts.create`, always called with the intent's key as its Idempotency-Key. */
    create(
      params: { amount: number; destination?: string | undefined },
      options: { idempotencyKey: string; signal?: AbortSignal | undefined },
    ): PromiseLike<Payout>;
    /** `client.payouts.retrieve`: an intent whose payout id is known is looked up by it. */
    retrieve(id: string, options?: { signal?: AbortSignal | undefined }): PromiseLike<Payout>;
    /** `client.payouts.list`: read (newest first) to find an intent past the key window. */
    list(params?: { limit?: number | undefined }, options?: { signal?: AbortSignal | undefined }): AsyncIterable<Payout>;
  };
  /** The client's `phoneCountry`: the country a destination in local form is read in (default TZ). */
  readonly phoneCountry?: PhoneCountry | undefined;
  /** The client's polling budget: each call `resolve()` sends on its own waits for a slot (a client without it is not paced). */
  pollSlot?(signal?: AbortSignal): Promise<void>;
  /** Whether `error` is the client refusing the params before sending anything: the intent failed, nothing was sent. */
  refused?(error: unknown): boolean;
}

/** A state change of an intent, as `onChange` gets it (and `resolve()` reports it). */
export interface PayoutIntentChange {
  /** The intent's key. */
  key: string;
  /** Its state before (`undefined` when it was just recorded). */
  from: PayoutIntentState | undefined;
  /** Its state now. */
  to: PayoutIntentState;
  /** The intent as it is now. */
  intent: PayoutIntent;
}

/** Options of {@link createPayouts}. */
export interface PayoutsOptions {
  /** The `PaymentsClient` that sends and looks up the payouts. */
  client: PayoutsClient;
  /**
   * Where the intents live: `postgresStore(pool)` or `redisStore(redis)` (shared by every
   * process), or `memoryStore()` for tests (it forgets with its process). Its `payouts` part
   * is used.
   */
  store: { readonly payouts?: PayoutIntentStore | undefined; readonly durable?: boolean | undefined };
  /**
   * Called after each state change this process makes (recorded, sent, settled…), once the
   * store has it: post it to your ledger. A throw is logged (console.error) and changes
   * nothing. A process that dies between the change and the call does not call it: read
   * `intents()` to catch up.
   */
  onChange?: ((change: PayoutIntentChange) => unknown) | undefined;
  /** How long (ms) the service keeps an Idempotency-Key. Default 86,400,000 (24 h, the spec's). */
  keyRetention?: number | undefined;
  /**
   * How long after its first send (ms, on the service's clock: its `Date`) `resolve()` may send
   * an intent again with its key (the service replays, never pays twice). Default
   * `keyRetention` less an hour, for the clocks of this host and the service to differ: a
   * clock that disagrees by more, or went back, never re-sends (`needs_review`). At most
   * `keyRetention`.
   */
  resendWindow?: number | undefined;
  /** How long (ms) after a send `resolve()` leaves the intent to its sender (its answer may still come). Default 60,000. */
  settleAfter?: number | undefined;
  /** How far (ms) a payout's `created_at` may be from the intent's send and still match it in the list. Default 600,000. */
  matchTolerance?: number | undefined;
  /** This host's clock (ms since the epoch), corrected by the service's `Date` for the key window. Default `Date.now`. */
  now?: (() => number) | undefined;
}

/** What `send` records and sends. */
export interface PayoutSendParams {
  /** Your key for this payout: 1–64 printable ASCII characters, no spaces. It is the Idempotency-Key too. */
  key: string;
  /**
   * Amount to pay out, in currency units (greater than 0): a number or a decimal string, at most
   * 2 decimal places (float noise removed). Refused before anything is recorded otherwise.
   */
  amount: number | string;
  /**
   * The settlement number, when you pass one (it must equal the approved one), as written
   * (`0712 345 678`): recorded and sent as international digits, read in the client's
   * `phoneCountry`. A number that is no mobile number is refused before anything is recorded.
   */
  destination?: string | undefined;
}

/** What `resolve()` did. */
export interface PayoutResolveReport {
  /** Intents looked at. */
  checked: number;
  /** The state changes it made. */
  changed: Array<{ key: string; from: PayoutIntentState; to: PayoutIntentState }>;
  /** Intents still not final after the run (`note` says why), at most 1,000. */
  open: PayoutIntent[];
  /** Every intent that needs a person (`note` says why), at most 1,000. */
  review: PayoutIntent[];
  /** Intents whose lookup failed this time (they stay as they were): key and message. */
  errors: Array<{ key: string; error: string }>;
}

/** The payout-intent kit returned by {@link createPayouts}. */
export interface Payouts {
  /** `false` on `memoryStore()`: it forgets with its process (the CLI refuses it). */
  readonly durable: boolean;
  /**
   * Records the intent, then sends it once with its key as the Idempotency-Key, and resolves
   * the intent as it stands (`state`, and `payout` when the service answered). The same key
   * again, from any process, resolves the recorded intent and never sends it again (one that
   * was recorded and never sent is sent); the same key with another amount or destination is
   * a `PayoutIntentError` (`key_conflict`). An answer that leaves the outcome open (a
   * timeout, a 5xx, a lost connection, INPROGRESS, AMBIGUOUS) is not an error: the intent
   * says so, and `resolve()` settles it.
   */
  send(params: PayoutSendParams, options?: { signal?: AbortSignal | undefined }): Promise<PayoutIntent>;
  /**
   * Settles what is not final (for a cron job): a `pending` intent is sent; one with a payout
   * id is looked up with `payouts.retrieve`; one without is sent again with its key while the
   * key window lasts (the service answers with the payout it made for the key, or makes it
   * if the first send never arrived), and past it looked for in the payout list by amount,
   * destination and time: the one match no other intent holds, and no other open intent of
   * the amount could be, is taken (and said to be a guess); none, several or a rival is
   * `needs_review`. Past the window an intent is never sent again. The window is judged on
   * the service's clock (the `Date` of its answers); inside it, a clock that went back or
   * disagrees with the service's is `needs_review`, never a re-send.
   */
  resolve(options?: { signal?: AbortSignal | undefined }): Promise<PayoutResolveReport>;
  /** Intents in `state` (every state when none), by state then key, at most `limit` (default 1,000). */
  intents(options?: { state?: PayoutIntentState | undefined; limit?: number | undefined }): Promise<PayoutIntent[]>;
  /** The intent with this key, or `undefined`. */
  get(key: string): Promise<PayoutIntent | undefined>;
  /**
   * Sends a `needs_review` intent again with its key, once a person is sure no payout was
   * made for it: the explicit way out. Any other state is a `PayoutIntentError` (`not_allowed`).
   */
  confirmResend(key: string, options?: { signal?: AbortSignal | undefined }): Promise<PayoutIntent>;
}

/**
 * A payout intent refused: `reason` says why (`invalid_params`: a bad key, amount or
 * destination; `key_conflict`: the key is recorded with other parameters; `not_found`: no
 * intent has the key; `not_allowed`: `confirmResend` on an intent that does not need review).
 */
export class PayoutIntentError extends PaymentsError {
  override name = 'PayoutIntentError';
  /** Why it was refused. */
  readonly reason: 'invalid_params' | 'key_conflict' | 'not_found' | 'not_allowed';
  constructor(reason: PayoutIntentError['reason'], message: string) {
    super(message);
    this.reason = reason;
  }
}

/** The states `resolve()` works on, in the order it walks them. */
const OPEN: readonly PayoutIntentState[] = ['pending', 'unknown', 'in_progress', 'ambiguous'];
/** Every state, as `intents()` lists them. */
const STATES: readonly PayoutIntentState[] = [...OPEN, 'sent', 'failed', 'needs_review'];
// The service's outcome words (as the client reads them: payoutOutcome) and what they make an
// intent; any other word names no outcome: in_progress, looked up again.
const OUTCOMES: Record<string, PayoutIntentState> = { SUCCESS: 'sent', FAILED: 'failed', AMBIGUOUS: 'ambiguous' };
const HOUR = 3_600_000;
// The most payouts one resolve() run reads from the list.
const LIST_CAP = 10_000;
const KEY = /^[\x21-\x7e]{1,64}$/;
const LOOKUP = 'Look it up on the dashboard; once you are sure no payout was made for it, confirmResend(key) sends it again.';

// What an error says of the intent: whether the service refused it (failed), never got it
// (pending), or may have acted (unknown, or the unsettled outcome its body names: unsettledIn).
function fromError(k: Kit, error: unknown): Partial<PayoutIntent> {
  const { status, body, attempts, message } = (error ?? {}) as {
    status?: number;
    body?: unknown;
    attempts?: number;
    message?: string;
  };
  const said = { error: String(message ?? error) };
  const named = status === undefined ? undefined : unsettledIn(body);
  if (named) return { ...said, state: named === 'AMBIGUOUS' ? 'ambiguous' : 'in_progress' };
  if (status === undefined) return { ...said, state: k.client.refused?.(error) ? 'failed' : attempts === 0 ? 'pending' : 'unknown' };
  if (status === 429) return { ...said, state: 'pending' };
  // A redirect (not followed), a timeout, the key in flight, a 5xx: the service may have acted.
  if (status < 400 || status === 408 || status === 409 || status >= 500) return { ...said, state: 'unknown' };
  // The same key with another body: a payout may exist under it.
  if (/idempotency/i.test(said.error))
    return { ...said, state: 'needs_review', note: `The service refused its key: ${said.error} ${LOOKUP}` };
  return { ...said, state: 'failed' };
}

const positive = (value: unknown, name: string, least = 1) => {
  if (value !== undefined && !(typeof value === 'number' && value >= least && value < Infinity))
    throw new ConfigurationError(`createPayouts: ${name} must be a number of milliseconds ≥ ${least}`);
  return value;
};
const digits = (value: unknown) => String(value).replace(/\D/g, '');
const time = (payout: Payout) => Date.parse(String(payout.created_at));

/** The kit's settings and parts, as every step below reads them. */
interface Kit {
  client: PayoutsClient;
  intents: PayoutIntentStore;
  now: () => number;
  onChange: PayoutsOptions['onChange'];
  keyRetention: number;
  resendWindow: number;
  settleAfter: number;
  tolerance: number;
  phoneCountry: PhoneCountry;
  /** How far (ms) two clocks may disagree: keyRetention - resendWindow, and the Date's second. */
  margin: number;
  /** The service's clock less ours (ms), from the last answer's Date this kit saw. */
  offset?: number | undefined;
  /** The latest local time this kit read with an answer or a window judged: a clock read earlier went back. */
  latest: number;
}

/** The options checked, with their defaults. */
function kitOf(options: PayoutsOptions): Kit {
  // Date.now read at each call: fake timers (vitest, sinon) move it.
  const { client, store, onChange, now = () => Date.now() } = options ?? ({} as PayoutsOptions);
  const intents = store?.payouts;
  if (!intents)
    throw new ConfigurationError('createPayouts: store must be memoryStore(), postgresStore(…) or redisStore(…) (one with payout intents)');
  if (typeof client?.payouts?.create !== 'function') throw new ConfigurationError('createPayouts: client must be a PaymentsClient');
  const keyRetention = positive(options.keyRetention, 'keyRetention') ?? 24 * HOUR;
  const resendWindow = positive(options.resendWindow, 'resendWindow', 0) ?? Math.max(0, keyRetention - HOUR);
  if (resendWindow > keyRetention) throw new ConfigurationError('createPayouts: resendWindow must be at most keyRetention');
  const settleAfter = positive(options.settleAfter, 'settleAfter', 0) ?? 60_000;
  const tolerance = positive(options.matchTolerance, 'matchTolerance', 0) ?? 600_000;
  const country = phoneCountryError(client.phoneCountry ?? 'TZ');
  if (country) throw new ConfigurationError(`createPayouts: the client's phoneCountry: ${country}`);
  return {
    client,
    intents,
    now,
    onChange,
    keyRetention,
    resendWindow,
    settleAfter,
    tolerance,
    phoneCountry: client.phoneCountry ?? 'TZ',
    margin: keyRetention - resendWindow + 1000,
    latest: -Infinity,
  };
}

// What resolve() sends on its own waits for a slot in the client's polling budget.
const slot = (k: Kit) => k.client.pollSlot?.();

// The service's clock, as an answer's Date says it (whole seconds: their middle), against ours.
function heard(k: Kit, headers: { get?(name: string): string | null } | undefined) {
  const at = Date.parse(headers?.get?.('date') ?? '');
  const local = k.now();
  k.latest = Math.max(k.latest, local);
  if (at === at) k.offset = at + 500 - local;
}

// A call's data, the service's clock read from its answer (`withResponse()`, or an error's
// headers). A client without withResponse (a test's fake) is awaited as it is.
async function answer<T>(k: Kit, call: PromiseLike<T>): Promise<T> {
  const made = call as PromiseLike<T> & { withResponse?(): PromiseLike<{ data: T; response: { headers: Headers } }> };
  try {
    if (!made.withResponse) return await made;
    const { data, response } = await made.withResponse();
    heard(k, response.headers);
    return data;
  } catch (error) {
    heard(k, (error as { headers?: Headers } | undefined)?.headers);
    throw error;
  }
}

// The service's time of an intent's first send: on that send (taken, then answered), the local
// send time corrected by the last Date this process saw (its answer's, when it has one; none
// seen: unknown). Later sends keep it.
const stamped = (k: Kit, intent: PayoutIntent): PayoutIntent =>
  intent.sends === 1 && k.offset !== undefined ? { ...intent, serviceAt: intent.sentAt! + k.offset } : intent;

async function emit(k: Kit, from: PayoutIntentState | undefined, intent: PayoutIntent): Promise<void> {
  try {
    await k.onChange?.({ key: intent.key, from, to: intent.state, intent });
  } catch (error) {
    console.error(`[business-payments] payouts: onChange threw for '${intent.key}' (${from ?? 'new'} → ${intent.state}):`, error);
  }
}

// One change: the intent with `patch`, its version one more, if no other change came first
// (else undefined). Fields set to undefined are dropped, so the store keeps them absent.
async function change(k: Kit, from: PayoutIntent, patch: Partial<PayoutIntent>): Promise<PayoutIntent | undefined> {
  const next = JSON.parse(JSON.stringify({ ...from, ...patch, version: from.version + 1, updatedAt: k.now() })) as PayoutIntent;
  if (!(await k.intents.swap(next))) return;
  if (next.state !== from.state) await emit(k, from.state, next);
  return next;
}

// A change, or the intent as another change left it.
const settle = async (k: Kit, from: PayoutIntent, patch: Partial<PayoutIntent>) =>
  (await change(k, from, patch)) ?? (await k.intents.get(from.key))!;

// The payout the service described for this intent: bound to it (a payout is never two
// intents'), its outcome the intent's state.
async function found(k: Kit, intent: PayoutIntent, payout: Payout, matchedBy: PayoutIntent['matchedBy'], note?: string) {
  const id = typeof payout?.id === 'string' ? payout.id : undefined;
  const review = (why: string) => settle(k, intent, { state: 'needs_review', payout, note: `${why} ${LOOKUP}` });
  // An answer about another amount is not this intent's payout (a proxy's cache, a hostile
  // server): it is not bound, so the payout stays free for the intent it is.
  if (typeof payout?.amount === 'number' && payout.amount !== intent.amount)
    return review(`The service answered with a payout of ${payout.amount}, not ${intent.amount}.`);
  const holder = id === undefined ? intent.key : await k.intents.bind(id, intent.key);
  if (holder !== intent.key) return review(`The service named payout ${id} for it, which intent '${holder}' holds.`);
  const word = String(payout?.status);
  const state = OUTCOMES[word] ?? 'in_progress';
  if (state === 'in_progress' && word !== 'INPROGRESS')
    note ??= `The service's status '${word}' names no outcome: resolve() looks it up again.`;
  return settle(k, intent, { state, payoutId: id, payout, matchedBy, note, error: undefined });
}

// Sends a taken intent (its send recorded) with its key, and records what came back.
async function dispatch(k: Kit, taken: PayoutIntent, signal?: AbortSignal): Promise<PayoutIntent> {
  const { key, amount, destination } = taken;
  try {
    const params = destination === undefined ? { amount } : { amount, destination };
    const payout = await answer(k, k.client.payouts.create(params, { idempotencyKey: key, signal }));
    return await found(k, stamped(k, taken), payout, 'answer');
  } catch (error) {
    return settle(k, stamped(k, taken), fromError(k, error));
  }
}

// Takes the intent for a send (only one process wins it), then sends it.
async function take(k: Kit, intent: PayoutIntent, patch: Partial<PayoutIntent>, signal?: AbortSignal): Promise<PayoutIntent> {
  const taken = await change(k, intent, stamped(k, { ...intent, sentAt: k.now(), sends: intent.sends + 1, error: undefined, ...patch }));
  return taken ? dispatch(k, taken, signal) : (await k.intents.get(intent.key))!;
}

/**
 * The payout list, read once per resolve() run and only as far as it is needed; `open` the
 * intents the run read (not settled, or for a person); `clock()` reads the service's clock
 * from the Date of its first page, once a run.
 */
type Lister = ((from: number) => Promise<Payout[]>) & { open: readonly PayoutIntent[]; clock(): Promise<unknown> };
function lister(k: Kit, open: readonly PayoutIntent[], signal?: AbortSignal): Lister {
  const read: Payout[] = [];
  let source: AsyncIterable<Payout> | undefined;
  let pages: AsyncIterator<Payout> | undefined;
  let clock: Promise<unknown> | undefined;
  let done = false;
  const listed = () => (source ??= k.client.payouts.list({ limit: 100 }, { signal }));
  const list = async (from: number) => {
    pages ??= listed()[Symbol.asyncIterator]();
    // Newest first: once a payout is older than `from`, the rest are too.
    while (!done && read.length < LIST_CAP && !(read.length && time(read.at(-1)!) < from)) {
      if (read.length % 100 === 0) await slot(k);
      const next = await pages.next();
      if (next.done) done = true;
      else read.push(next.value);
    }
    return read;
  };
  const first = async () => {
    await slot(k);
    return answer(k, listed() as unknown as PromiseLike<unknown>);
  };
  return Object.assign(list, { open, clock: () => (clock ??= first()) });
}

// The intents that could be this payout's besides `intent`: sent, not settled (or for a
// person), without a payout id, of the same amount, sent around the payout's time. From the
// intents the resolve() run read, each checked again as it stands now.
async function rivals(k: Kit, list: Lister, intent: PayoutIntent, payout: Payout): Promise<string[]> {
  const at = time(payout);
  const keys: string[] = [];
  for (const other of list.open) {
    if (other.key === intent.key || other.amount !== intent.amount) continue;
    if (!(at >= other.createdAt - k.tolerance && at <= (other.sentAt ?? other.createdAt) + k.tolerance)) continue;
    const now = await k.intents.get(other.key);
    if (now && now.sends > 0 && now.payoutId === undefined && now.state !== 'sent' && now.state !== 'failed') keys.push(now.key);
  }
  return keys;
}

// Past the key window: the list, by amount, destination and time. Ambiguous by nature, so a
// match is taken only when it is the single one no other intent holds and no other open
// intent could be its (then it is said to be a guess); anything else is for a person.
async function matchInList(k: Kit, intent: PayoutIntent, list: Lister): Promise<PayoutIntent> {
  const from = intent.createdAt - k.tolerance;
  const to = (intent.sentAt ?? intent.createdAt) + k.tolerance;
  const free: Payout[] = [];
  const held: string[] = [];
  for (const payout of await list(from)) {
    // A payout without a readable created_at is at no time: never a match.
    const at = time(payout);
    if (payout.amount !== intent.amount || !(at >= from && at <= to)) continue;
    if (intent.destination !== undefined && payout.destination != null && digits(payout.destination) !== digits(intent.destination))
      continue;
    const owner = await k.intents.owner(payout.id);
    if (owner === undefined || owner === intent.key) free.push(payout);
    // Held by another intent's list guess: that guess may have been wrong.
    else if ((await k.intents.get(owner))?.matchedBy === 'list') held.push(owner);
  }
  const others = free.length === 1 ? await rivals(k, list, intent, free[0]!) : [];
  if (free.length === 1 && !others.length)
    return found(
      k,
      intent,
      free[0]!,
      'list',
      'Matched in the payout list by amount, destination and time, not by id (the list cannot say whose a payout is): check it.',
    );
  const window = `its key is past the service's ${k.keyRetention / HOUR} h window, so sending it again could pay twice`;
  const quoted = (keys: string[]) => keys.map((key) => `'${key}'`).join(', ');
  const note = others.length
    ? `One payout in the list matches its amount, destination and time, and intents ${quoted(others)} could be its too: whose it is cannot be told; ${window}. ${LOOKUP}`
    : free.length
      ? `${free.length} payouts in the list match its amount, destination and time, and which is its cannot be told; ${window}. ${LOOKUP}`
      : held.length
        ? `The only payouts in the list that match it were matched by a list guess to intents ${quoted(held)}: check them together (one may be this one's); ${window}. ${LOOKUP}`
        : `No payout for it in the list, and ${window}. ${LOOKUP}`;
  return settle(k, intent, { state: 'needs_review', note });
}

// One open intent, one step on.
async function step(k: Kit, intent: PayoutIntent, list: Lister, signal?: AbortSignal): Promise<PayoutIntent> {
  const now = k.now();
  // Left to its sender while its answer may still come (a clock far behind its send went back);
  // a `pending` one was never sent.
  const since = now - (intent.sentAt ?? -Infinity);
  if (intent.state !== 'pending' && since < k.settleAfter && since > -k.margin) return intent;
  if (intent.payoutId !== undefined) {
    await slot(k);
    try {
      return await found(k, intent, await answer(k, k.client.payouts.retrieve(intent.payoutId, { signal })), 'retrieve', intent.note);
    } catch (error) {
      if ((error as { status?: number }).status !== 404) throw error;
      return settle(k, intent, {
        state: 'needs_review',
        note: `payouts.retrieve(${intent.payoutId}) says there is no such payout. ${LOOKUP}`,
      });
    }
  }
  // Never sent (its first send, whatever its age), or inside the key window (the service
  // replays what it made for the key, or makes it if the first send never arrived).
  const inside = intent.state === 'pending' || (await inWindow(k, intent, list));
  if (inside === true) {
    // A first send stamps the service's time of it (serviceAt), whatever happens to its answer:
    // the service's clock is read first (once a run), or a lost answer would leave it unknown.
    if (intent.state === 'pending') await list.clock().catch(() => {});
    await slot(k);
    return take(k, intent, { state: intent.state === 'pending' ? 'unknown' : intent.state }, signal);
  }
  return inside
    ? settle(k, intent, { state: 'needs_review', note: `${inside}, and sending it again could pay twice. ${LOOKUP}` })
    : matchInList(k, intent, list);
}

// Whether the key window lasts, judged on the service's clock: its time now (ours corrected by
// the Date of the list's first page this run; none: the last Date seen, or ours) against its time of the first send
// (unknown: when the intent was recorded). Inside it, a clock that went back (now earlier than
// a time recorded) or disagrees with the service's by more than the window's margin is a
// note, never a re-send. Past it, the list: no clock can make a send of it.
async function inWindow(k: Kit, intent: PayoutIntent, list: Lister): Promise<boolean | string> {
  await list.clock();
  const local = k.now();
  const { offset = 0, latest } = k;
  k.latest = Math.max(latest, local);
  const age = local + offset - (intent.serviceAt ?? intent.createdAt);
  if (age >= k.resendWindow) return false;
  const { margin } = k;
  const back = `A clock went back (this host's reads ${new Date(local).toISOString()}, earlier than a time already recorded)`;
  if (local < latest - 1000) return back;
  if (Math.abs(offset) > margin)
    return `This host's clock is ${Math.round(Math.abs(offset) / 36e4) / 10} h ${offset > 0 ? 'behind' : 'ahead of'} the service's (its Date)`;
  return (local > intent.updatedAt - margin && age > -margin) || back;
}

/** Up to `limit` intents of each of `states` in turn (a page of the store at a time), at most `limit` in all. */
async function readIntents(k: Kit, states: readonly PayoutIntentState[], limit: number): Promise<PayoutIntent[]> {
  const out: PayoutIntent[] = [];
  for (const state of states) {
    for (let after: string | undefined; out.length < limit;) {
      const batch = await k.intents.list(state, Math.min(100, limit - out.length), after);
      if (!batch.length) break;
      out.push(...batch);
      after = batch.at(-1)!.key;
    }
  }
  return out;
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

async function send(k: Kit, params: PayoutSendParams, signal?: AbortSignal): Promise<PayoutIntent> {
  const { amount, destination } = checked(params ?? ({} as PayoutSendParams), k.phoneCountry);
  const { key } = params;
  const at = k.now();
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
  const { intent, created } = await k.intents.add(fresh);
  if (intent.amount !== amount || intent.destination !== destination)
    throw new PayoutIntentError(
      'key_conflict',
      `payouts.send: the key '${key}' is recorded for another payout (amount ${intent.amount}${intent.destination === undefined ? '' : ', a destination'}): use a new key for a new payout`,
    );
  if (created) await emit(k, undefined, intent);
  // A recorded intent never sent (its process died first) is sent now: still its first send.
  return intent.state === 'pending' ? take(k, intent, { state: 'unknown' }, signal) : intent;
}

async function resolve(k: Kit, signal?: AbortSignal): Promise<PayoutResolveReport> {
  const report: PayoutResolveReport = { checked: 0, changed: [], open: [], review: [], errors: [] };
  // The store's open intents (and those for a person) are read once: walked, checked as a list
  // match's rivals, and reported as each stands after its step.
  const read = [...(await readIntents(k, OPEN, Infinity)), ...(await readIntents(k, ['needs_review'], LIST_CAP))];
  const now = new Map(read.map((intent) => [intent.key, intent]));
  const list = lister(k, read, signal);
  for (const intent of read.filter(({ state }) => OPEN.includes(state))) {
    signal?.throwIfAborted();
    report.checked++;
    try {
      const next = await step(k, intent, list, signal);
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

async function confirmResend(k: Kit, key: string, signal?: AbortSignal): Promise<PayoutIntent> {
  const intent = await k.intents.get(key);
  if (!intent) throw new PayoutIntentError('not_found', `payouts.confirmResend: no intent has the key '${key}'`);
  if (intent.state !== 'needs_review')
    throw new PayoutIntentError(
      'not_allowed',
      `payouts.confirmResend: the intent '${key}' is ${intent.state}; only one that needs review is sent again this way`,
    );
  const taken = await change(k, intent, {
    state: 'unknown',
    sentAt: k.now(),
    sends: intent.sends + 1,
    error: undefined,
    note: 'Sent again by confirmResend.',
  });
  if (!taken) throw new PayoutIntentError('not_allowed', `payouts.confirmResend: the intent '${key}' changed meanwhile: look at it again`);
  return dispatch(k, taken, signal);
}

/**
 * The payout-intent kit: each payout sent at most once and never lost, on your store.
 *
 * @example
 * ```ts
 * import { createPayouts } from 'business-payments/payouts';
 * import { postgresStore } from 'business-payments/fulfillment/postgres';
 *
 * const payouts = createPayouts({ client, store: postgresStore(pool) });
 * const intent = await payouts.send({ key: 'settle-2026-11-25', amount: 500 });
 * if (intent.state !== 'sent') console.log(intent.state, intent.note); // resolve() settles it
 * const report = await payouts.resolve(); // cron
 * ```
 */
export function createPayouts(options: PayoutsOptions): Payouts {
  const k = kitOf(options);
  return {
    durable: options.store.durable !== false,
    send: (params, options) => send(k, params, options?.signal),
    resolve: (options) => resolve(k, options?.signal),
    async intents({ state, limit = 1000 } = {}) {
      if (state !== undefined && !STATES.includes(state))
        throw new PayoutIntentError('invalid_params', `payouts.intents: state must be one of ${STATES.join(', ')}`);
      return readIntents(k, state === undefined ? STATES : [state], limit);
    },
    get: (key) => k.intents.get(key),
    confirmResend: (key, options) => confirmResend(k, key, options?.signal),
  };
}
