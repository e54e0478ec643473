// Event types. Exact where the spec speaks, tolerant where it is silent: the spec shows the
// payment events' payload, and run time checks only what a merchant acts on in it (`id`,
// `type`, `data.trx_id`); every other field may be missing or null, and the types say so.
// The spec shows no payload for subscription.* and invoice.*: those are typed as our
// sandbox sends them, with every field but `type` optional, and nothing in them is checked.
// The earlier generation's IPN becomes a payment event of its own type (LegacyPaymentEvent:
// `format: 'legacy'`, no `id`), so `event.id` is optional only where it can be missing.

/** An amount with its currency, as payment events carry it (either may be missing or null). */
export interface Money {
  /** In currency units: a number, also when the service sent a decimal string ("25.00"). */
  value?: number | null;
  /** 3-letter currency code. */
  currency?: string | null;
}

/**
 * `data` of payment.completed / payment.failed, as the spec shows it. Only `trx_id` is
 * checked; the rest may be missing or null, so confirm the outcome and amount with
 * `payments.verify(trx_id)` before you fulfil.
 */
export interface PaymentEventData {
  /** The service's transaction id (checked: always a string). */
  trx_id: string;
  /** Your order reference (`ref_trx` of the payment). */
  merchant_ref?: string | null;
  /** `completed` for payment.completed. */
  status?: string | null;
  /** The amount charged. */
  amount?: Money | null;
  /** What the payment settles as. */
  settlement?: { gross?: Money | null; fees?: Money | null; net?: Money | null } | null;
  /** The paying customer. */
  customer?: { name?: string | null; email?: string | null; phone?: string | null } | null;
  /** `sandbox` or `production`. */
  environment?: 'sandbox' | 'production' | null;
  [key: string]: unknown;
}

/**
 * The form a delivery came in. `'current'`: the spec's (`X-<Brand>-Signature` over
 * `<timestamp>.<body>`, with timestamp and event headers). `'legacy'`: the earlier
 * generation's IPN (`X-Signature` over the body alone, keyed with the API secret; the
 * timestamp inside the body), normalised to a payment event.
 */
export type WebhookFormat = 'current' | 'legacy';

/**
 * An event whose payload the spec shows (the payment events). `id`, `type` and `data` are
 * checked; `api_version` and `created_at` may be missing or null.
 */
export interface WebhookEventBase<Type extends string | UnknownWebhookEventType, Data> {
  /** Event id (prefix `evt_`): de-duplicate deliveries by it. Checked: always a string. */
  id: string;
  type: Type;
  /**
   * `'current'`: the spec's form. Always set by `verifyWebhook` (it replaces a `format` the
   * body may carry); optional in the type so that events built by hand or stored before it
   * existed still type-check. Events of the earlier form are {@link LegacyPaymentEvent}s.
   */
  format?: 'current';
  /** Date-form version string. */
  api_version?: string | null;
  /** ISO 8601 timestamp with offset. */
  created_at?: string | null;
  data: Data;
  [key: string]: unknown;
}

/**
 * An event whose payload the spec does not show (subscription.*, invoice.*, and types this
 * SDK does not know): any signed JSON object is accepted, with every field the server sent.
 * Typed as our sandbox sends it, but nothing in it is checked: every field but `type` may be
 * missing (or of another type). `type` is the payload's, or the event header's when the
 * payload has none.
 */
export interface ProvisionalWebhookEvent<Type extends string | UnknownWebhookEventType> {
  /** Event id (`evt_…` from our sandbox): de-duplicate by it when it is there. Not checked. */
  id?: string;
  type: Type;
  /** `'current'`: only the spec's form carries these events. Always set by `verifyWebhook`; optional as in {@link WebhookEventBase}. */
  format?: 'current';
  /** Date-form version string (not checked). */
  api_version?: string;
  /** ISO 8601 timestamp with offset (not checked). */
  created_at?: string;
  /** The event's object (not shown in the spec; not checked). */
  data?: Record<string, unknown> | null;
  [key: string]: unknown;
}

/** `data` of subscription and invoice events: the spec shows no shape, so a plain object. */
export type BillingEventData = Record<string, unknown>;

/** A payment settled successfully. */
export type PaymentCompletedEvent = WebhookEventBase<'payment.completed', PaymentEventData>;
/** A payment failed or was canceled. */
export type PaymentFailedEvent = WebhookEventBase<'payment.failed', PaymentEventData>;
/**
 * `data` of a payment event of the earlier generation's form: every field of the IPN's
 * `data` as sent (`ref_trx`, `amount` as the merchant sent it, `currency_code`,
 * `customer_name`, `customer_email`, `is_sandbox`, …), with the fields of
 * {@link PaymentEventData} filled in from them: `merchant_ref` (from `ref_trx`), `amount`
 * (`{ value: the gross amount, currency: currency_code }`), `status` and `environment`.
 * The untouched body is the event's `legacy`.
 */
export interface LegacyPaymentEventData extends PaymentEventData {
  /** The service's transaction id (checked: always a string). */
  trx_id: string;
  /** `ref_trx`, your order reference. */
  merchant_ref?: string | null;
  /** The body's `status`. */
  status: 'completed' | 'failed';
  /** The gross amount the payment was initiated with (`data.amount`, a numeric string read as its number; kept as sent when not numeric) and `currency_code`. */
  amount: Money;
  /** From the signed body (`data.environment`, else `data.is_sandbox`); `null` when it says neither. Never from the unsigned X-Environment header. */
  environment: 'sandbox' | 'production' | null;
  /** Your order reference as sent. */
  ref_trx?: string;
  /** 3-letter currency code as sent. */
  currency_code?: string;
  /** The paying customer's name as sent (may be null). */
  customer_name?: string | null;
  /** The paying customer's email as sent (may be null). */
  customer_email?: string | null;
  /** `true` or `1` in the sandbox, `false` or `0` in production. */
  is_sandbox?: boolean | number;
}

/** The earlier generation's IPN body exactly as parsed (its `data` untouched). */
export interface LegacyWebhookBody {
  /** The payment's fields, `trx_id` last (see {@link LegacyPaymentEventData}). */
  data: Record<string, unknown>;
  /** `Payment Completed` or `Payment Failed`. */
  message?: string;
  /** The outcome (checked). */
  status: 'completed' | 'failed';
  /** Unix seconds (checked: within `toleranceSeconds` of now). Signed with the body. */
  timestamp: number;
  [key: string]: unknown;
}

/**
 * A payment event delivered in the earlier generation's form (`event.format === 'legacy'`):
 * the IPN, normalised to the same `type` and `data` fields as the spec's payment events.
 * It has **no `id`**: de-duplicate by `data.trx_id` and `type` (it is sent once per
 * outcome). `created_at` is the body's `timestamp` as an ISO string; `legacy` is the body.
 */
export interface LegacyPaymentEvent<Type extends 'payment.completed' | 'payment.failed'> {
  /** Never there: the earlier generation sends no event id. */
  id?: undefined;
  type: Type;
  /** The earlier generation's form. */
  format: 'legacy';
  /** Never there: the earlier generation sends no version. */
  api_version?: undefined;
  /** The body's signed `timestamp` as an ISO 8601 string (UTC, `Z`). */
  created_at: string;
  data: LegacyPaymentEventData;
  /** The signed body as parsed, untouched: `message`, `status`, `timestamp`, the original `data`, and any other keys. */
  legacy: LegacyWebhookBody;
  [key: string]: unknown;
}

/** A payment completed, delivered in the earlier generation's form (no `id`). */
export type LegacyPaymentCompletedEvent = LegacyPaymentEvent<'payment.completed'>;
/** A payment failed or was canceled, delivered in the earlier generation's form (no `id`). */
export type LegacyPaymentFailedEvent = LegacyPaymentEvent<'payment.failed'>;
/** A subscription was created after consent was recorded (payload not shown in the spec). */
export type SubscriptionCreatedEvent = ProvisionalWebhookEvent<'subscription.created'>;
/** A subscription was cancelled (payload not shown in the spec). */
export type SubscriptionCancelledEvent = ProvisionalWebhookEvent<'subscription.cancelled'>;
/** A subscription reached its maximum dunning failures (payload not shown in the spec). */
export type SubscriptionSuspendedEvent = ProvisionalWebhookEvent<'subscription.suspended'>;
/** A billing invoice was opened (payload not shown in the spec). */
export type InvoiceCreatedEvent = ProvisionalWebhookEvent<'invoice.created'>;
/** An invoice was settled by USSD push (payload not shown in the spec). */
export type InvoicePaidEvent = ProvisionalWebhookEvent<'invoice.paid'>;
/** A charge attempt failed; the dunning schedule applies (payload not shown in the spec). */
export type InvoicePaymentFailedEvent = ProvisionalWebhookEvent<'invoice.payment_failed'>;

/** The 8 documented event types. */
export const WEBHOOK_EVENT_TYPES = [
  'payment.completed',
  'payment.failed',
  'subscription.created',
  'subscription.cancelled',
  'subscription.suspended',
  'invoice.created',
  'invoice.paid',
  'invoice.payment_failed',
] as const;

/** A documented event type. */
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * A documented event, typed by `type`. A payment event is of the spec's form
 * (`PaymentCompletedEvent`, `id` a string) or of the earlier generation's
 * (`LegacyPaymentCompletedEvent`, no `id`): `event.format` tells them apart.
 */
export type KnownWebhookEvent =
  | PaymentCompletedEvent
  | PaymentFailedEvent
  | LegacyPaymentCompletedEvent
  | LegacyPaymentFailedEvent
  | SubscriptionCreatedEvent
  | SubscriptionCancelledEvent
  | SubscriptionSuspendedEvent
  | InvoiceCreatedEvent
  | InvoicePaidEvent
  | InvoicePaymentFailedEvent;

/**
 * The `type` of an event this SDK version does not know yet: a plain string at run time.
 * Opaque on purpose: TypeScript cannot express "any string but the 8 known ones", and a
 * string type here would stop `event.type === 'payment.completed'` from narrowing the
 * {@link WebhookEvent} union. String methods work on it (`event.type.startsWith('payment.')`);
 * for a `string`, use `String(event.type)`, e.g. `String(event.type) === 'payout.settled'`.
 */
// A String object type on purpose: it keeps a newer type comparable without widening the union to string.
// eslint-disable-next-line @typescript-eslint/no-wrapper-object-types
export interface UnknownWebhookEventType extends String {
  /** Type-level marker only: no such property exists at run time. */
  readonly __unknownWebhookEventType: true;
}

/**
 * An event of a type this SDK version does not know yet, passed through as received (its
 * payload is not shown in the spec, so nothing but `type` is certain). It is the `default:`
 * branch of a `switch (event.type)`, so an exhaustive `never` check does not compile:
 * handle (or ignore) newer events explicitly.
 */
export type UnknownWebhookEvent = ProvisionalWebhookEvent<UnknownWebhookEventType>;

/**
 * What `verifyWebhook` resolves to: a documented event, typed by `type`, or an event of a
 * newer type passed through untyped.
 *
 * @example
 * ```ts
 * switch (event.type) {
 *   // Either form; event.id is there only when event.format === 'current'.
 *   case 'payment.completed': await fulfil(event.data.trx_id); break; // confirm with payments.verify(trx_id)
 *   case 'payment.failed': cancel(event.data.trx_id); break;
 *   default: log(`ignored ${String(event.type)} ${event.id ?? ''}`); // provisional and newer types
 * }
 * ```
 */
export type WebhookEvent = KnownWebhookEvent | UnknownWebhookEvent;
