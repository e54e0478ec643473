// The client's route table: every route the SDK calls, declared once. Resource methods are
// one-line calls over it (`this._client.get('payouts.retrieve', id, options)`); the
// README's method table (test/resources/routes.test.ts) and doctor's contract check
// (src/doctor/contract.ts) are read from it; a test holds it to the sandbox's own table and
// the sandbox's OpenAPI document. Adding a route: its schemas in src/schemas/, a row here,
// a one-line method in its resource class (CONTRIBUTING.md has the checklist).
import * as z from 'zod/mini';
import type { PaymentsError } from '../core/error.js';
import { pathId, type Schema } from '../internal/fields.js';
import type { RetryMode } from '../internal/retry.js';
import { BalanceResult } from '../schemas/balance.js';
import { Invoice, InvoiceListParams } from '../schemas/billing/invoices.js';
import { Plan, PlanCreateParams } from '../schemas/billing/plans.js';
import { Subscription, SubscriptionCreateParams } from '../schemas/billing/subscriptions.js';
import { OpenAPIDocument } from '../schemas/openapi.js';
import { PAYOUT_LOOKUP, payoutFailureHint } from '../schemas/payout-outcome.js';
import * as payments from '../schemas/payments.js';
import * as payouts from '../schemas/payouts.js';
import { SiteInfo } from '../schemas/site-info.js';

/** @internal One route the client calls. */
export interface ClientRoute {
  method: 'GET' | 'POST';
  /** At most one `{name}` placeholder, filled from the method's id argument. */
  path: string;
  /** Schema of the path placeholder's value. */
  id?: Schema<string>;
  /** Body (POST) or query (GET) params. */
  params?: z.ZodMiniType;
  /** The result; for a list route (`list` set) one item of it. */
  result: z.ZodMiniType;
  /** A list route, with the names a server may keep its items under besides `data`. */
  list?: readonly string[];
  /** Default: `safe` for GET, `create` for POST; a function of the params when they decide it. */
  retry?: RetryMode | ((params: unknown) => RetryMode);
  /** What the server may have done when a call fails without a clear answer, and how to look it up. */
  acted?: string | ((params: unknown) => string);
  /** URL fields of `params` that must be https:// in production. */
  httpsInProduction?: readonly string[];
  /** The spec shows no response body: an empty 2xx is a success. */
  emptyBodyOk?: boolean;
  /** The result's field that must name the path id asked for: an answer about another one is refused. */
  sameId?: string;
  /** Words added to the message of an error from this route. */
  failureHint?: (error: PaymentsError) => string | undefined;
}

const RANG = " and the customer's phone may have rung";
// A push-mode payment rings the phone as it is created: sent once, like a push.
const isPush = (params: unknown) => (params as { payment_mode?: unknown } | undefined)?.payment_mode === 'push';
// URL fields that carry payment data to the merchant: HTTPS only in production.
const URL_FIELDS = ['ipn_url', 'webhook_url'];

/** @internal Every route the client calls, by operation name (`resource.method`). */
export const CLIENT_ROUTES = {
  'payments.create': {
    method: 'POST',
    path: '/api/v1/payments',
    params: payments.PaymentCreateParams,
    result: payments.PaymentCreateResponse,
    httpsInProduction: URL_FIELDS,
    retry: (params) => (isPush(params) ? 'once' : 'create'),
    acted: (params) =>
      isPush(params)
        ? `a payment may have been created${RANG}: look it up with client.payments.list({ merchant_ref }) first`
        : 'a payment may have been created',
  },
  'payments.list': {
    method: 'GET',
    path: '/api/v1/payments',
    params: payments.PaymentListParams,
    result: payments.PaymentListItem,
    list: ['payments', 'transactions'],
  },
  'payments.retrieve': {
    method: 'GET',
    path: '/api/v1/payments/{trx_id}',
    id: pathId,
    result: payments.PaymentRecord,
  },
  'payments.push': {
    method: 'POST',
    path: '/api/v1/payments/{trx_id}/push',
    id: pathId,
    params: payments.PaymentPushParams,
    result: payments.PaymentPushResult,
    retry: 'push',
    acted: "the customer's phone may have rung: check client.payments.retrieve(trx_id) first",
    emptyBodyOk: true,
  },
  'payments.verify': {
    method: 'GET',
    path: '/api/v1/verify-payment/{trxId}',
    id: pathId,
    result: payments.VerifiedTransaction,
    sameId: 'trx_id',
  },
  'payments.initiate': {
    method: 'POST',
    path: '/api/v1/initiate-payment',
    params: payments.PaymentInitiateParams,
    result: payments.PaymentSession,
    httpsInProduction: URL_FIELDS,
    acted: 'a payment session may have been created',
  },
  'balance.retrieve': { method: 'GET', path: '/api/v1/balance', result: BalanceResult },
  'siteInfo.retrieve': { method: 'GET', path: '/api/v1/site-info', result: SiteInfo },
  'payouts.preview': {
    method: 'POST',
    path: '/api/v1/payouts/preview',
    params: payouts.PayoutPreviewParams,
    result: payouts.PayoutPreview,
    retry: 'safe',
  },
  'payouts.create': {
    method: 'POST',
    path: '/api/v1/payouts',
    params: payouts.PayoutCreateParams,
    result: payouts.Payout,
    retry: 'once',
    acted: `a payout may have been made. ${PAYOUT_LOOKUP}`,
    failureHint: payoutFailureHint,
  },
  'payouts.list': {
    method: 'GET',
    path: '/api/v1/payouts',
    params: payouts.PayoutListParams,
    result: payouts.PayoutItem,
    list: ['payouts'],
  },
  'payouts.retrieve': { method: 'GET', path: '/api/v1/payouts/{id}', id: payouts.PayoutId, result: payouts.Payout },
  'billing.plans.create': {
    method: 'POST',
    path: '/api/v1/billing/plans',
    params: PlanCreateParams,
    result: Plan,
    acted: 'a plan may have been created',
  },
  'billing.subscriptions.create': {
    method: 'POST',
    path: '/api/v1/billing/subscriptions',
    params: SubscriptionCreateParams,
    result: Subscription,
    retry: 'once',
    acted: `a subscription may have been created${RANG}: wait for its subscription.created webhook first`,
    httpsInProduction: ['webhook_url'],
  },
  'billing.invoices.list': {
    method: 'GET',
    path: '/api/v1/billing/invoices',
    params: InvoiceListParams,
    result: Invoice,
    list: ['invoices'],
  },
  openapi: { method: 'GET', path: '/api/v1/openapi.json', result: OpenAPIDocument },
} as const satisfies Record<string, ClientRoute>;

type Routes = typeof CLIENT_ROUTES;
/** @internal A route's operation name. */
export type RouteName = keyof Routes;
/** @internal Names of the one-result routes of a method (lists excluded). */
export type RouteOf<M extends 'GET' | 'POST'> = {
  [N in RouteName]: Routes[N] extends { method: M } ? (Routes[N] extends { list: object } ? never : N) : never;
}[RouteName];
/** @internal Names of the list routes. */
export type ListRoute = { [N in RouteName]: Routes[N] extends { list: object } ? N : never }[RouteName];
/** @internal What a route's call resolves to (one item, for a list route). */
export type ResultOf<N extends RouteName> = z.output<Routes[N]['result']>;
/** @internal The arguments after the name: the path id first when the route has one. */
export type RouteArgs<N extends RouteName, Rest extends unknown[]> = Routes[N] extends { id: object } ? [id: string, ...Rest] : Rest;
