/**
 * The client: `PaymentsClient`, its error classes, every param and result type with its zod
 * schema, `signRequest`, and `verifyWebhook` re-exported from `business-payments/webhooks`.
 *
 * @module business-payments
 */
// Public surface of `business-payments`: re-exports only.
export { PaymentsClient, type ServiceGeneration } from './client.js';
export { APIPromise, type WithResponse } from './core/api-promise.js';
export { PagePromise, type ListPage } from './core/pagination.js';
export {
  PaymentsError,
  ConfigurationError,
  InvalidParamsError,
  APIError,
  type APIErrorInit,
  type ErrorLabel,
  AuthenticationError,
  PermissionDeniedError,
  MerchantPendingApprovalError,
  MerchantUnavailableError,
  NotFoundError,
  RouteNotSupportedError,
  UnprocessableEntityError,
  RateLimitError,
  InternalServerError,
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  ResponseValidationError,
  PaginationError,
} from './core/error.js';
export { signRequest, type SignRequestInput } from './internal/signing.js';
export { paidAmount, type PaidAmountInput } from './core/paid-amount.js';
export { normalizePhone, type NormalizePhoneOptions, type PhoneCountry } from './core/phone.js';
export { redactPersonalData } from './core/personal-data.js';
export { stopBefore } from './core/stop-before.js';
export { sharedBudget, RequestBudget, type RequestBudgetStore } from './fulfillment/shared-budget.js';
export type { RecordTimes, Schema } from './internal/fields.js';
export type { ClientOptions, RequestOptions, FetchOptions, Environment, Logger, LogLevel } from './internal/options.js';
export type { RequestTrace } from './internal/trace.js';
export * from './resources/payments.js';
export * from './resources/payouts.js';
export * from './resources/balance.js';
export * from './resources/site-info.js';
export * from './schemas/openapi.js';
export * from './resources/billing/plans.js';
export * from './resources/billing/subscriptions.js';
export * from './resources/billing/invoices.js';
export { Billing } from './resources/billing/index.js';
export * from './webhooks.js';
