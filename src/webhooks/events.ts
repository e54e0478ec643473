/** An amount with its currency, as webhook payloads carry it. */
export interface Money {
  value: number;
  currency: string;
}

/** `data` of payment.completed / payment.failed, as the spec shows it. */
export interface PaymentEventData {
  trx_id: string;
  merchant_ref: string;
  /** `completed` for payment.completed. */
  status: string;
  amount: Money;
  settlement: { gross: Money; fees: Money; net: Money };
  customer: { name: string; email: string; phone: string };
  environment: 'sandbox' | 'production';
  [key: string]: unknown;
}

/** Fields every delivery carries. */
export interface WebhookEventBase<Type extends string | UnknownWebhookEventType, Data> {
  /** Event id (prefix `evt_`): de-duplicate deliveries by it. */
  id: string;
  type: Type;
  /** Date-form version string. */
  api_version: string;
  /** ISO 8601 timestamp with offset. */
  created_at: string;
  data: Data;
  [key: string]: unknown;
}

// The spec does not show subscription.* and invoice.* payloads: their data is a plain object.
/** `data` of subscription and invoice events (not shown in the spec). */
export type BillingEventData = Record<string, unknown>;

/** A payment settled successfully. */
export type PaymentCompletedEvent = WebhookEventBase<'payment.completed', PaymentEventData>;
/** A payment failed or was canceled. */
export type PaymentFailedEvent = WebhookEventBase<'payment.failed', PaymentEventData>;
/** A subscription was created after consent was recorded. */
export type SubscriptionCreatedEvent = WebhookEventBase<'subscription.created', BillingEventData>;
/** A subscription was cancelled. */
export type SubscriptionCancelledEvent = WebhookEventBase<'subscription.cancelled', BillingEventData>;
/** A subscription reached its maximum dunning failures. */
export type SubscriptionSuspendedEvent = WebhookEventBase<'subscription.suspended', BillingEventData>;
/** A billing invoice was opened. */
export type InvoiceCreatedEvent = WebhookEventBase<'invoice.created', BillingEventData>;
/** An invoice was settled by USSD push. */
export type InvoicePaidEvent = WebhookEventBase<'invoice.paid', BillingEventData>;
/** A charge attempt failed; the dunning schedule applies. */
export type InvoicePaymentFailedEvent = WebhookEventBase<'invoice.payment_failed', BillingEventData>;

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

/** A documented event, typed by `type`. */
export type KnownWebhookEvent =
  | PaymentCompletedEvent
  | PaymentFailedEvent
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
 * An event of a type this SDK version does not know yet, passed through as received: its
 * `data` is a plain object. It is the `default:` branch of a `switch (event.type)`, so an
 * exhaustive `never` check does not compile: handle (or ignore) newer events explicitly.
 */
export type UnknownWebhookEvent = WebhookEventBase<UnknownWebhookEventType, Record<string, unknown>>;

/**
 * What `verifyWebhook` resolves to: a documented event, typed by `type`, or an event of a
 * newer type passed through untyped.
 *
 * @example
 * ```ts
 * switch (event.type) {
 *   case 'payment.completed': fulfil(event.data.trx_id, event.data.amount.value); break;
 *   case 'payment.failed': cancel(event.data.merchant_ref); break;
 *   default: log(`ignored ${String(event.type)}`); // newer and unhandled types
 * }
 * ```
 */
export type WebhookEvent = KnownWebhookEvent | UnknownWebhookEvent;
