// The billing kit's store: one record per subscription this app asked for, keyed
// `sub:<customer>:<plan>:<n>`, recorded before the service is asked, and changed only by a
// compare-and-swap on its version (the payout intents' pattern). What a record holds are the
// facts the kit has seen (paid periods, failed charges, the service's suspension, the local
// cancel); its state is worked out from them (see reduce.ts), never stored as the last event.

/**
 * Where a subscription record stands: `pending` (created, its first charge not paid yet),
 * `active` (paid through a period not over), `past_due` (a renewal failed or is late; access
 * until `paidThrough + grace`), `suspended` (the service suspended it), `cancelled` (cancelled
 * here; access until `paidThrough`), `ended` (cancelled or suspended, and past `paidThrough`;
 * or its create was refused).
 */
export type SubscriptionState = 'pending' | 'active' | 'past_due' | 'suspended' | 'cancelled' | 'ended';

/** A period paid: the invoice and the period it covers (ms since the epoch). */
export interface PaidPeriod {
  /** The service's invoice id. */
  invoice: string;
  /** Start of the period paid for. */
  start: number;
  /** End of the period paid for: access runs to here. */
  end: number;
}

/** The consent the customer gave, kept with the record beside the terms the service stores. */
export interface SubscriptionConsent {
  /** When the customer accepted the terms (ms since the epoch, or an ISO 8601 string as given). */
  at: number | string;
  /** The customer's IP address, when known. */
  ip?: string | undefined;
  /** The customer's user agent, when known. */
  userAgent?: string | undefined;
  /** Your version label of the terms shown. */
  termsVersion?: string | undefined;
}

/** One subscription this app asked for, as the billing kit records it. JSON-serialisable. */
export interface SubscriptionRecord {
  /** `sub:<customer>:<plan>:<n>`: also the Idempotency-Key of its create. */
  key: string;
  /** Your customer id. */
  customer: string;
  /** The plan's `plan_code`. */
  plan: string;
  /** 1 for the first subscription of this customer to this plan, then 2, 3… */
  n: number;
  /** Bumped by each change (compare-and-swap). Starts at 1. */
  version: number;
  /** The state as last worked out (the kit works it out again at each read: time moves). */
  state: SubscriptionState;
  /**
   * The end of the latest paid period that gives access (ms since the epoch; a period charged
   * after the local cancel never counts), as last worked out, like `state`. Absent until a
   * period is paid.
   */
  paidThrough?: number | undefined;
  /** When it was recorded (ms since the epoch, the kit's clock). */
  createdAt: number;
  /** When it last changed. */
  updatedAt: number;
  /** The service's subscription id (`sub_…`), once its create was answered. */
  subscriptionId?: string | undefined;
  /** How many times its create was sent (replays included). */
  sends: number;
  /** The phone number each charge is pushed to, normalised (`255712345678`). */
  phone: string;
  /** The exact terms shown to the customer (sent as `terms_shown`). */
  termsShown: string;
  /** The consent the customer gave, when given. */
  consent?: SubscriptionConsent | undefined;
  /** `webhook_url` sent with the create, when given. */
  webhookUrl?: string | undefined;
  /** The periods paid (each invoice once), in no particular order. */
  paid: PaidPeriod[];
  /** Invoices whose charge failed (each once), with their period. */
  failed: PaidPeriod[];
  /** When the service suspended it (`subscription.suspended`), if it did. */
  suspendedAt?: number | undefined;
  /** When the service said it was cancelled (`subscription.cancelled`), if it did. */
  endedByServiceAt?: number | undefined;
  /** The local cancel: when, and the `paidThrough` the record had then (a later period never extends access). */
  cancel?: { at: number; paidThrough: number } | undefined;
  /** Invoices paid for a period after the cancel, each reported once (to `onChargedAfterCancel` or the review list). */
  chargedAfterCancel: string[];
  /** Why its create was refused (then `state` is `ended`), if it was. */
  error?: string | undefined;
}

/**
 * The interface a store implements for subscription records (`memoryStore`, `postgresStore`
 * and `redisStore` do, as `store.subscriptions`). Every method is atomic across the processes
 * sharing the store.
 */
export interface SubscriptionStore {
  /**
   * Records `record` (its `version` is 1) unless a record with its key exists. Resolves the
   * stored record: `record` itself when recorded now (`created: true`), else the one found.
   */
  add(record: SubscriptionRecord): Promise<{ record: SubscriptionRecord; created: boolean }>;
  /** The record with this key, or `undefined`. */
  get(key: string): Promise<SubscriptionRecord | undefined>;
  /**
   * Replaces the record with `next.key` by `next` only if the stored one's version is
   * `next.version - 1`. Resolves whether it did (false: another change came first, or there
   * is no such record).
   */
  swap(next: SubscriptionRecord): Promise<boolean>;
  /** Records ordered by key, those with a key greater than `after` (when given), at most `limit`. */
  list(limit: number, after?: string): Promise<SubscriptionRecord[]>;
  /**
   * Binds the service's subscription `subscriptionId` to the record `key` unless another record
   * holds it. Resolves the key that holds it now (`key` itself, or the other one).
   */
  bind(subscriptionId: string, key: string): Promise<string>;
  /** The key of the record that holds `subscriptionId`, or `undefined`. */
  owner(subscriptionId: string): Promise<string | undefined>;
}
