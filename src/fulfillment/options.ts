// What the fulfillment kit is given: its options, the client it verifies through, its
// handlers and what they get. Types only, below every step of the kit (no import circle).
import type { PaymentRecord, VerifiedTransaction } from '../schemas/payments.js';
import type { WebhookEvent } from '../webhooks/events.js';
import type { FulfillmentStore } from './store.js';
import type { FulfillmentTrigger } from './trigger.js';

/** What the kit needs of a `PaymentsClient` (pass the client itself). */
export interface FulfillmentClient {
  /** The client's environment: it must be the kit's. */
  readonly environment: 'sandbox' | 'production';
  /** `verify` confirms each outcome; `list` is walked by `reconcile`. */
  readonly payments: {
    /** `client.payments.verify`: confirms an outcome before any handler runs. */
    verify(trxId: string): PromiseLike<VerifiedTransaction>;
    /** `client.payments.list`: walked by `reconcile`. */
    list(params?: { limit?: number }): AsyncIterable<PaymentRecord>;
  };
  /** The client's polling budget: each verify the kit sends on its own waits for a slot (a client without it is not paced). */
  pollSlot?(signal?: AbortSignal): Promise<void>;
  /** The client's logger at warn: why a delivery was refused. */
  warn?(line: string): void;
  /**
   * Whether an error says the server has no such route (the earlier generation's payment
   * list): `reconcile` then walks the store. A wrapper around the client passes it on
   * (`unsupported: (error) => client.unsupported(error)`); without it, reconcile on the earlier
   * generation throws the client's RouteNotSupportedError.
   */
  unsupported?(error: unknown): boolean;
}

/** A verified transaction as the handlers get it: with your order reference when known. */
export type FulfilledTransaction = VerifiedTransaction & {
  /** Your `ref_trx`, from the webhook (or, when the service sent none, the `merchantRef` you passed), when known. */
  merchant_ref?: string | undefined;
  /**
   * The order this payment was an attempt at: `merchant_ref` without its attempt suffix
   * (`order-1001~a2` → `order-1001`, see {@link Fulfillment.newAttempt}), else `merchant_ref`
   * itself. An order is paid once across its attempts.
   */
  order_ref?: string | undefined;
};

/** An order's price, as {@link FulfillmentOptions.expect} gives it. */
export interface ExpectedPrice {
  /** The amount the customer should have paid: a number, or a decimal string (pg's `numeric`). */
  amount: number | string;
  /** Its 3-letter currency code. */
  currency: string;
}

/** What a handler gets beside the transaction or event. */
export interface FulfillmentContext<Db = unknown> {
  /**
   * The claim's own database handle (`postgresStore`: the claim's transaction, so what you
   * write through it commits with the claim, exactly once); `undefined` for other stores.
   */
  db: Db;
  /** Which path reported it. */
  source: 'webhook' | 'verified' | 'reconcile';
  /** The webhook event, when a delivery reported it. */
  event?: WebhookEvent | undefined;
  /** `onMismatch`: the price `expect` gave for the order. */
  expected?: ExpectedPrice | undefined;
  /**
   * A key for what this handler does, the same for every run of it for this payment (or event)
   * and outcome, in any process: `payment:<trx_id>:paid` (`onPaid`, `expect`),
   * `payment:<trx_id>:failed`, `payment:<trx_id>:review:<reason>`, `event:<id>:handled` (an
   * event without an id gets one of its own each time). Pass it as the idempotency key of an
   * effect outside `ctx.db` (a warehouse API, an e-mail): where a handler can run twice (Redis
   * and memory stores: a crash, or a holder paused past its lease), the effect then happens once.
   */
  effectKey: string;
  /**
   * Aborts when the kit stops waiting for this handler (`handlerTimeout`). Pass it on (`fetch`,
   * your driver) to stop then: the claim is held until the handler returns, whatever the kit
   * answered. (A handler run without a claim, for an event without an id, gets one that never aborts.)
   */
  signal: AbortSignal;
}

/** A handler of the kit: the verified transaction (or event) and its context; may be async. */
export type Handler<T, Db = unknown> = (value: T, context: FulfillmentContext<Db>) => unknown;

/**
 * Options of {@link createFulfillment}. `Db` is what the store's claims hand the handlers as
 * `ctx.db`: inferred from `store` (`postgresStore`: `PostgresClaimDb`, the claim's own
 * transaction; `memoryStore` and `redisStore`: `undefined`).
 */
export interface FulfillmentOptions<Db = unknown> {
  /** Deliveries for the other environment are refused, and the client must be of this one. */
  environment: 'sandbox' | 'production';
  /**
   * The webhook signing secret (an array during rotation). On the service's earlier
   * generation, which has no webhook secret, the **API secret**: its IPN is signed with it
   * (during a move between generations, `[webhookSecret, apiSecret]`). Checked by
   * `createFulfillment`: not set, or leading or trailing whitespace (never trimmed), is a
   * `ConfigurationError`.
   */
  secret: string | readonly string[];
  /**
   * The `PaymentsClient` of that environment: it verifies every outcome before a handler runs.
   * A delivery `handleWebhook` refuses (401, 400) is logged through its `logger` at `warn`
   * (with `logLevel` `warn` or more): `webhook refused, <reason>: <why>`, e.g.
   * `timestamp_too_old: Timestamp 3600 s old (tolerance 300 s)` from a clock that is off;
   * never the secret, the signature or the body.
   */
  client: FulfillmentClient;
  /** Where claims and outcomes live. Default `memoryStore()`: one process only. */
  store?: FulfillmentStore<Db> | undefined;
  /** Runs once per `trx_id`, with the verified transaction, only when its status is `success`. Check the amount and currency against your order here. */
  onPaid: Handler<FulfilledTransaction, Db>;
  /** Runs at most once per `trx_id` when verify says `failed`, never after `onPaid`. */
  onFailed?: Handler<FulfilledTransaction, Db> | undefined;
  /**
   * The price of the order a payment is for (`tx.order_ref`), read in the claim (`ctx.db`):
   * the kit compares it with {@link paidAmount}`(tx)` and the currency, and on a mismatch runs
   * `onMismatch` (or puts the payment on the review list, `inbox({ state: 'review' })`), never
   * `onPaid`. Return `undefined` to skip the check for a payment.
   */
  expect?:
    | ((tx: FulfilledTransaction, context: FulfillmentContext<Db>) => ExpectedPrice | undefined | PromiseLike<ExpectedPrice | undefined>)
    | undefined;
  /** Runs once per `trx_id` for a payment whose amount or currency is not what `expect` gave (`ctx.expected`). Without it, the payment goes on the review list. */
  onMismatch?: Handler<FulfilledTransaction, Db> | undefined;
  /**
   * Runs once per `trx_id` for a second successful payment of an order already paid (another
   * attempt of it): refund it, or tell a person. Without it, the payment goes on the review list.
   */
  onDuplicatePayment?: Handler<FulfilledTransaction, Db> | undefined;
  /** Runs once per event id for every other event (subscription.*, invoice.*, a `payment.*` other than `payment.completed` / `payment.failed`, newer types); `ctx.db` is `undefined` for an event without an id (no claim). */
  onEvent?: Handler<WebhookEvent, Db | undefined> | undefined;
  /** How long a claim keeps others out if its holder crashes, ms. Default 300 000 (5 minutes). */
  lease?: number | undefined;
  /**
   * How long the kit waits for a handler (`expect` and `onPaid`, or `onFailed`, `onEvent`…, in
   * one claim), ms. Default 300 000 (5 minutes). Past it the kit aborts `ctx.signal` and fails
   * the attempt (an inbox delivery is retried on its backoff, then `dead`; in the request, a
   * 500), but the claim stays held, and renewed, until the handler does return, so that a second
   * run never starts beside one that may still act: meanwhile the key's attempts in this process
   * fail at once, and other processes find it busy.
   */
  handlerTimeout?: number | undefined;
  /** Keeps a serverless runtime alive for work after the response (Workers' `ctx.waitUntil`). */
  waitUntil?: ((promise: Promise<unknown>) => void) | undefined;
  /**
   * `true` (the default with a durable store that has one): `handleWebhook` verifies a
   * delivery, records it in the store's inbox and answers 200 at once; it is processed right
   * after (in the background, or through `waitUntil`), and by `drain()` / `work()` if that
   * did not finish. `false`: processed inside the request, as the service waits.
   */
  inbox?: boolean | undefined;
  /**
   * Your queue engine wakes a worker for each recorded delivery (`pgBossTrigger`,
   * `bullmqTrigger`, `queueTrigger`): its worker calls `fulfillment.process(id)`. Nothing
   * polls then, nor is the delivery processed in the request's process. Turns the inbox on (a
   * store without one is a `ConfigurationError`, and so is `inbox: false`).
   */
  trigger?: FulfillmentTrigger | undefined;
  /** Processing attempts of an inbox record before it is `dead`. Default 8. */
  maxAttempts?: number | undefined;
  /** How long an inbox record waits after its `attempts`-th failure, ms. Default 10 s × 2^(attempts − 1), at most an hour. */
  retryDelay?: ((attempts: number) => number) | undefined;
  /**
   * The most bytes of a webhook body `handleWebhook` reads. A longer one (by its declared
   * `content-length`, as it streams in, or a `payload` given) is answered 413
   * `{ error: 'payload_too_large' }` and the rest is not read. Default 1,048,576 (1 MiB; a
   * delivery is a few KB). A whole number more than 0, else a `ConfigurationError`.
   */
  maxBodyBytes?: number | undefined;
  /**
   * The kit's clock, ms since the epoch: the 300 s freshness window of each delivery's
   * timestamp, and `reconcile`'s `olderThan`. Default `Date.now`, read at each use. In tests, a
   * test clock's `now` (`createTestClock()` from `business-payments/testing`), the one the
   * sandbox signs its deliveries on. (Claims' leases run on the monotonic clock, the store's.)
   */
  now?: (() => number) | undefined;
}
