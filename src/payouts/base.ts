// The payout kit's shared base, below its steps (send.ts, resolve.ts, match.ts), which all
// read it: the options checked once, each change to an intent (a compare-and-swap on its
// version, then onChange), a payout the service described bound to its intent, and the
// service's clock as the Date of its answers says it. It imports no step.
import { ConfigurationError } from '../core/base-error.js';
import { phoneCountryError } from '../core/phone-check.js';
import type { PhoneCountry } from '../core/phone-plans.js';
import type { Payout } from '../schemas/payouts.js';
import type { PayoutIntent, PayoutIntentState, PayoutIntentStore } from './store.js';
import type { PayoutsClient, PayoutsOptions } from './types.js';

/** The states `resolve()` works on, in the order it walks them. */
export const OPEN: readonly PayoutIntentState[] = ['pending', 'unknown', 'in_progress', 'ambiguous'];
/** Every state, as `intents()` lists them. */
export const STATES: readonly PayoutIntentState[] = [...OPEN, 'sent', 'failed', 'needs_review'];
/** An hour in ms. */
export const HOUR = 3_600_000;
/** The most payouts one resolve() run reads from the list. */
export const LIST_CAP = 10_000;
/** How a note for a person ends: the way out of `needs_review`. */
export const LOOKUP = 'Look it up on the dashboard; once you are sure no payout was made for it, confirmResend(key) sends it again.';
// The service's outcome words (as the client reads them: payoutOutcome) and what they make an
// intent; any other word names no outcome: in_progress, looked up again.
const OUTCOMES: Record<string, PayoutIntentState> = { SUCCESS: 'sent', FAILED: 'failed', AMBIGUOUS: 'ambiguous' };

/** When the service says it made `payout` (NaN when its `created_at` is unreadable: at no time). */
export const time = (payout: Payout) => Date.parse(String(payout.created_at));

// A call as the client's calls are: `withResponse()` gives its answer's headers (a test's fake may lack it).
type Answered<T> = { withResponse?(): PromiseLike<{ data: T; response: { headers: Headers } }> };

/**
 * What every step of the kit reads and changes, built once by createPayouts from its options:
 * the settings (checked, with their defaults), the store's intents, and the service's clock.
 */
export class PayoutBase {
  /** The merchant's client: it sends and looks the payouts up. */
  readonly client: PayoutsClient;
  /** The store's intents. */
  readonly intents: PayoutIntentStore;
  /** `false` on memoryStore(): it forgets with its process. */
  readonly durable: boolean;
  /** This host's clock (ms since the epoch). */
  readonly now: () => number;
  /** How long (ms) the service keeps a key. */
  readonly keyRetention: number;
  /** How long (ms, on the service's clock) after its first send an intent may be sent again with its key. */
  readonly resendWindow: number;
  /** How long (ms) after a send resolve() leaves the intent to its sender: the option `settleAfter`. */
  readonly senderGrace: number;
  /** How far (ms) a listed payout's `created_at` may be from an intent's send: the option `matchTolerance`. */
  readonly tolerance: number;
  /** The country a destination in local form is read in. */
  readonly phoneCountry: PhoneCountry;
  /** How far (ms) two clocks may disagree: keyRetention - resendWindow, and the Date's second. */
  readonly margin: number;
  /** The service's clock less ours (ms), from the last answer's Date this kit saw (none yet: undefined). */
  offset: number | undefined;
  /** The latest local time read (`tick()`) with an answer or a window judged: a clock read earlier went back. */
  latest = -Infinity;
  readonly #onChange: PayoutsOptions['onChange'];

  constructor(options: PayoutsOptions) {
    // Date.now read at each call: fake timers (vitest, sinon) move it.
    const { client, store, onChange, now = () => Date.now() } = options ?? ({} as PayoutsOptions);
    const intents = store?.payouts;
    if (!intents)
      throw new ConfigurationError(
        'createPayouts: store must be memoryStore(), postgresStore(…) or redisStore(…) (one with payout intents)',
      );
    if (typeof client?.payouts?.create !== 'function') throw new ConfigurationError('createPayouts: client must be a PaymentsClient');
    const keyRetention = positive(options.keyRetention, 'keyRetention') ?? 24 * HOUR;
    const resendWindow = positive(options.resendWindow, 'resendWindow', 0) ?? Math.max(0, keyRetention - HOUR);
    if (resendWindow > keyRetention) throw new ConfigurationError('createPayouts: resendWindow must be at most keyRetention');
    this.senderGrace = positive(options.settleAfter, 'settleAfter', 0) ?? 60_000;
    this.tolerance = positive(options.matchTolerance, 'matchTolerance', 0) ?? 600_000;
    this.phoneCountry = client.phoneCountry ?? 'TZ';
    const country = phoneCountryError(this.phoneCountry);
    if (country) throw new ConfigurationError(`createPayouts: the client's phoneCountry: ${country}`);
    this.client = client;
    this.intents = intents;
    this.durable = store.durable !== false;
    this.now = now;
    this.#onChange = onChange;
    this.keyRetention = keyRetention;
    this.resendWindow = resendWindow;
    this.margin = keyRetention - resendWindow + 1000;
  }

  /**
   * One change: the intent with `patch`, its version one more, if no other change came first
   * (else undefined). Fields set to undefined are dropped, so the store keeps them absent.
   */
  async change(from: PayoutIntent, patch: Partial<PayoutIntent>): Promise<PayoutIntent | undefined> {
    const next = JSON.parse(JSON.stringify({ ...from, ...patch, version: from.version + 1, updatedAt: this.now() })) as PayoutIntent;
    if (!(await this.intents.swap(next))) return;
    if (next.state !== from.state) await this.emit(from.state, next);
    return next;
  }

  /** Records `patch` on the intent (a change), or resolves the intent as another change left it. */
  async record(from: PayoutIntent, patch: Partial<PayoutIntent>): Promise<PayoutIntent> {
    return (await this.change(from, patch)) ?? (await this.intents.get(from.key))!;
  }

  /**
   * Records the payout the service described for this intent: bound to it (a payout is never
   * two intents'), its outcome the intent's state.
   */
  async found(intent: PayoutIntent, payout: Payout, matchedBy: PayoutIntent['matchedBy'], note?: string): Promise<PayoutIntent> {
    const id = typeof payout?.id === 'string' ? payout.id : undefined;
    const review = (why: string) => this.record(intent, { state: 'needs_review', payout, note: `${why} ${LOOKUP}` });
    // An answer about another amount is not this intent's payout (a proxy's cache, a hostile
    // server): it is not bound, so the payout stays free for the intent it is.
    if (typeof payout?.amount === 'number' && payout.amount !== intent.amount)
      return review(`The service answered with a payout of ${payout.amount}, not ${intent.amount}.`);
    const holder = id === undefined ? intent.key : await this.intents.bind(id, intent.key);
    if (holder !== intent.key) return review(`The service named payout ${id} for it, which intent '${holder}' holds.`);
    const word = String(payout?.status);
    const state = OUTCOMES[word] ?? 'in_progress';
    if (state === 'in_progress' && word !== 'INPROGRESS')
      note ??= `The service's status '${word}' names no outcome: resolve() looks it up again.`;
    return this.record(intent, { state, payoutId: id, payout, matchedBy, note, error: undefined });
  }

  /** Calls `onChange` with a state change the store has; a throw is logged and changes nothing. */
  async emit(from: PayoutIntentState | undefined, intent: PayoutIntent): Promise<void> {
    try {
      await this.#onChange?.({ key: intent.key, from, to: intent.state, intent });
    } catch (error) {
      console.error(`[business-payments] payouts: onChange threw for '${intent.key}' (${from ?? 'new'} → ${intent.state}):`, error);
    }
  }

  /** Waits for a slot in the client's polling budget: each call resolve() sends on its own does. */
  slot(): Promise<void> | undefined {
    return this.client.pollSlot?.();
  }

  /**
   * A call's data, the service's clock read from its answer (`withResponse()`, or an error's
   * headers). A call without withResponse (a test's fake) is awaited as it is.
   */
  async answer<T>(call: PromiseLike<T>): Promise<T> {
    const made = call as PromiseLike<T> & Answered<T>;
    try {
      if (!made.withResponse) return await made;
      const { data, response } = await made.withResponse();
      this.#heard(response.headers);
      return data;
    } catch (error) {
      this.#heard((error as { headers?: Headers } | undefined)?.headers);
      throw error;
    }
  }

  /**
   * The intent with the service's time of its first send: on that send (taken, then answered),
   * the local send time corrected by the last Date this kit saw (its answer's, when it has one;
   * none seen: unknown). Later sends keep it.
   */
  stamped(intent: PayoutIntent): PayoutIntent {
    return intent.sends === 1 && this.offset !== undefined ? { ...intent, serviceAt: intent.sentAt! + this.offset } : intent;
  }

  /** Reads this host's clock, and keeps the latest time read (`latest`). */
  tick(): number {
    const local = this.now();
    this.latest = Math.max(this.latest, local);
    return local;
  }

  // The service's clock, as an answer's Date says it (whole seconds: their middle), against ours.
  #heard(headers: { get?(name: string): string | null } | undefined): void {
    const at = Date.parse(headers?.get?.('date') ?? '');
    const local = this.tick();
    if (at === at) this.offset = at + 500 - local;
  }
}

// An option in ms, when given: a number at least `least`.
function positive(value: unknown, name: string, least = 1) {
  if (value !== undefined && !(typeof value === 'number' && value >= least && value < Infinity))
    throw new ConfigurationError(`createPayouts: ${name} must be a number of milliseconds ≥ ${least}`);
  return value;
}
