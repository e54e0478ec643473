// The billing kit's public shapes: what it needs of the client, its options, what `subscribe`
// takes and resolves, what `entitlement` and `reconcile()` report, and the kit itself
// (`BillingKit`, which createBilling returns).
import type { Invoice } from '../schemas/billing/invoices.js';
import type { Subscription } from '../schemas/billing/subscriptions.js';
import type { WebhookEvent } from '../webhooks/events.js';
import type { PaidPeriod, SubscriptionConsent, SubscriptionRecord, SubscriptionState, SubscriptionStore } from './store.js';

/** What the kit needs of a `PaymentsClient` (pass the client itself). */
export interface BillingClient {
  /** `client.billing`: `subscriptions.create` subscribes, `invoices.list` is what `reconcile()` reads. */
  readonly billing: {
    /** `client.billing.subscriptions`. */
    readonly subscriptions: {
      /** `client.billing.subscriptions.create`, always called with the record's key as its Idempotency-Key. */
      create(
        params: { plan_code: string; customer_phone: string; terms_shown: string; webhook_url?: string | undefined },
        options: { idempotencyKey: string; signal?: AbortSignal | undefined },
      ): PromiseLike<Subscription>;
    };
    /** `client.billing.invoices`. */
    readonly invoices: {
      /** `client.billing.invoices.list`: the invoices of one subscription (newest first), walked page by page. */
      list(
        params: { subscription: string; limit?: number | undefined },
        options?: { signal?: AbortSignal | undefined },
      ): AsyncIterable<Invoice>;
    };
  };
  /** The client's polling budget: each page `reconcile()` reads waits for a slot (a client without it is not paced). */
  pollSlot?(signal?: AbortSignal): Promise<void>;
  /** Whether `error` is the client refusing the params before sending anything: the record ends, nothing was sent. */
  refused?(error: unknown): boolean;
}

/** What a callback is told beside the record: what made the change. */
export interface BillingChangeContext {
  /** The record's state before the change (`undefined` when it was just recorded). */
  previous: SubscriptionState | undefined;
  /** What made it: `subscribe`, `cancel`, an `event` (`handleEvent`) or `reconcile()`. */
  source: 'subscribe' | 'cancel' | 'event' | 'reconcile';
  /** The event, when `handleEvent` made it. */
  event?: WebhookEvent | undefined;
  /** What `handleEvent` was given beside the event (createFulfillment's handler context), when it was. */
  context?: unknown;
}

/** Options of {@link createBilling}. */
export interface BillingOptions {
  /** The `PaymentsClient` that subscribes and lists invoices. */
  client: BillingClient;
  /**
   * Where the records live: `postgresStore(pool)` or `redisStore(redis)` (shared by every
   * process), or `memoryStore()` for tests (it forgets with its process). Its `subscriptions`
   * part is used.
   */
  store: { readonly subscriptions?: SubscriptionStore | undefined; readonly durable?: boolean | undefined };
  /** How long (ms) access is kept after `paidThrough` while a renewal is late or failing (`past_due`). Default 259,200,000 (3 days). */
  grace?: number | undefined;
  /**
   * Called after each change of a record's state this process makes, once the store has it.
   * A throw is logged (console.error) and changes nothing. A process that dies between the
   * change and the call does not call it: read `subscriptions()` to catch up.
   */
  onChange?: ((record: SubscriptionRecord, ctx: BillingChangeContext) => unknown) | undefined;
  /**
   * Called once for each invoice paid for a period after a local cancel (the API cannot stop the
   * renewal pushes): refund it. It never extends access. Without it the invoice waits on the
   * review list: the record's `chargedAfterCancel` (which lists it either way). A throw is
   * logged and changes nothing.
   */
  onChargedAfterCancel?: ((record: SubscriptionRecord, invoice: PaidPeriod, ctx: BillingChangeContext) => unknown) | undefined;
  /** The kit's clock (ms since the epoch): pass a test clock's `now`. Default `Date.now`. */
  now?: (() => number) | undefined;
}

/** What `subscribe` records and sends. */
export interface BillingSubscribeParams {
  /** Your customer id: printable ASCII without spaces or `:` (it is part of the record's key). */
  customer: string;
  /** The plan (`plan_code` from `billing.plans.create`): printable ASCII without spaces or `:`. */
  plan_code: string;
  /** The Tanzanian mobile number each charge is pushed to, as written (`0712 345 678`): recorded and sent as `255712345678`. */
  customer_phone: string;
  /** The exact recurring billing terms shown to the customer (sent as `terms_shown`, kept with the record). */
  terms_shown: string;
  /** The consent the customer gave, kept with the record. */
  consent?: SubscriptionConsent | undefined;
  /** Override of your webhook endpoint for this subscription's events. */
  webhook_url?: string | undefined;
}

/** What `subscribe` resolves. */
export interface BillingSubscribeResult {
  /** `true` when this call recorded a new subscription; `false` when it found one live (and sent nothing, or replayed its create). */
  created: boolean;
  /** The record, as it stands. */
  record: SubscriptionRecord;
  /** Its state now. */
  state: SubscriptionState;
}

/** What `entitlement` resolves: whether the customer has access to the plan now. */
export interface BillingEntitlement {
  /** Whether the customer has access now (`active`, `cancelled` before `paidThrough`, `past_due` within the grace). */
  active: boolean;
  /** The state of the subscription it judged by (the one granting access, else the latest), or `none`. */
  state: SubscriptionState | 'none';
  /** The end of the latest paid period that counts (ms since the epoch), when there is one. */
  paidThrough?: number | undefined;
  /** The record it judged by, its `state` worked out now. */
  subscription?: SubscriptionRecord | undefined;
}

/** What `reconcile()` did. */
export interface BillingReconcileReport {
  /** Records whose invoices were read. */
  checked: number;
  /** Records it found new facts for (a paid or failed invoice no event brought), with their state before and after. */
  changed: Array<{ key: string; from: SubscriptionState; to: SubscriptionState }>;
  /** Records whose invoices could not be read this time (they stay as they were): key and message. */
  errors: Array<{ key: string; message: string }>;
}

/** The billing kit returned by {@link createBilling}. */
export interface BillingKit {
  /** `false` on `memoryStore()`: it forgets with its process. */
  readonly durable: boolean;
  /**
   * One live subscription per customer and plan. Finds the latest record of the pair: while it
   * is `pending`, `active`, `past_due` or `cancelled` (the service still charges it), sends
   * nothing and resolves it (`created: false`; a `cancelled` one is taken back, and one whose
   * create was never answered is sent again with its key: the service answers the same
   * subscription). Otherwise records a new one (`sub:<customer>:<plan>:<n>`) before
   * `billing.subscriptions.create` is sent with that key as its Idempotency-Key. A create the
   * client or the service refused ends the record (the error is thrown); an unclear one (a
   * timeout, a 5xx) keeps it for the next `subscribe` to replay (the error is thrown).
   */
  subscribe(params: BillingSubscribeParams, options?: { signal?: AbortSignal | undefined }): Promise<BillingSubscribeResult>;
  /**
   * Records what a `subscription.*` or `invoice.*` event tells (in any order, any number of
   * times); ignores other types. Throws a `BillingError` for an event of a subscription no
   * record holds yet: pass it as `createFulfillment({ onEvent: billing.handleEvent })`, whose
   * inbox retries it.
   */
  handleEvent(event: WebhookEvent, context?: unknown): Promise<void>;
  /** Whether `customer` has access to `plan_code` now, and by which record. */
  entitlement(customer: string, plan_code: string): Promise<BillingEntitlement>;
  /**
   * Cancels the latest subscription of the pair here (the API has no cancel route: the service
   * goes on pushing renewals, and one paid goes to `onChargedAfterCancel`). Access ends at
   * `paidThrough`. Resolves the record (`undefined` when there is none).
   */
  cancel(customer: string, plan_code: string): Promise<SubscriptionRecord | undefined>;
  /**
   * Reads `billing.invoices.list({ subscription })` for each record the service may still
   * charge (each page within the client's polling budget) and records what it finds, as
   * `handleEvent` would: a lost `invoice.paid` still grants access.
   */
  reconcile(options?: { signal?: AbortSignal | undefined }): Promise<BillingReconcileReport>;
  /** The records in `state` now (every state when none), by key, at most `limit` (default 1,000); `state` worked out now. */
  subscriptions(options?: { state?: SubscriptionState | undefined; limit?: number | undefined }): Promise<SubscriptionRecord[]>;
}
