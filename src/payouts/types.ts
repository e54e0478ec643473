// The payout kit's public shapes: what it needs of the client, its options, what `send` takes,
// what `resolve()` reports, and the kit itself (`PayoutKit`, which createPayouts returns).
import type { PhoneCountry } from '../core/phone.js';
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
export interface PayoutKit {
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
