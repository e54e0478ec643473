// Everything the simulated service answers, one row each: the web console's pages and actions,
// the CORS preflight, the logo, the hosted checkout pages (each generation's) and the /api/v1 routes (whose rows
// the OpenAPI document describes: openapi.ts reads API_ROUTES). Rows are tried in order
// (router.ts); each names the request steps that apply before its handler.
import { getBalance, getSiteInfo, logo, serviceIndex } from './account.js';
import {
  showCheckout,
  showEarlierCheckout,
  submitCheckout,
  submitEarlierCheckout,
  type CheckoutVerb,
  type EarlierCheckoutVerb,
} from './checkout.js';
import { createPlan, createSubscription, listInvoices } from './billing.js';
import {
  consoleEvent,
  consoleHome,
  consoleMethodNotAllowed,
  consoleNotFound,
  consolePayment,
  consolePayoutBehaviour,
  consoleResend,
  consoleSettle,
  consoleTestEvent,
  formToken,
  pageView,
} from './console.js';
import type { ApiRequest, Ctx } from './context.js';
import { isPreflight, preflight } from './cors.js';
import { createPayment, getPayment, initiatePayment, listPayments, pushPayment, verifyPayment } from './payments.js';
import { createPayout, getPayout, listPayouts, previewPayout } from './payouts.js';
import { errorResponse, json } from './responses.js';
import { formOf, type ApiRoute, type Exchange, type Handler, type Method, type Route, type Step } from './router.js';
import { authenticate, callerOf, idempotent, jsonBody, rateLimit, rateLimitHeaders } from './steps.js';

type ApiHandler = (ctx: Ctx, req: ApiRequest, x: Exchange) => Response | Promise<Response>;

/** Every /api/v1 call: signed, rate-limited, with a JSON body when it has one. */
const API_STEPS: readonly Step[] = [authenticate, rateLimit, jsonBody, rateLimitHeaders];
/** Creates: Idempotency-Key applies too. */
const CREATE_STEPS: readonly Step[] = [...API_STEPS, idempotent];

function api(
  method: ApiRoute['method'],
  path: string,
  operationId: string,
  summary: string,
  handler: ApiHandler,
  create = false,
): ApiRoute {
  const steps = create ? CREATE_STEPS : API_STEPS;
  return { method, path, operationId, summary, create, steps, handler: (x) => handler(x.service.ctx, apiRequest(x), x) };
}

function apiRequest(x: Exchange): ApiRequest {
  return { caller: callerOf(x), body: x.body, query: x.url.searchParams, params: x.params, headers: x.request.headers };
}

/** Every /api/v1 route (method, OpenAPI path, operationId, summary, create), in the document's order. */
export const API_ROUTES: readonly ApiRoute[] = [
  api('POST', '/api/v1/payments', 'createPayment', 'Create payment (hosted checkout or USSD push)', createPayment, true),
  api('GET', '/api/v1/payments', 'listPayments', 'List payments of the authenticated environment', listPayments),
  api('GET', '/api/v1/payments/{trx_id}', 'getPayment', 'Get one payment', getPayment),
  api('POST', '/api/v1/payments/{trx_id}/push', 'pushPayment', 'Trigger USSD push for a pending payment', pushPayment),
  api('GET', '/api/v1/balance', 'getBalance', 'Wallet balances', getBalance),
  api('POST', '/api/v1/initiate-payment', 'initiatePayment', 'Legacy alias of POST /api/v1/payments', initiatePayment, true),
  api('GET', '/api/v1/verify-payment/{trxId}', 'verifyPayment', 'Verify a transaction', verifyPayment),
  api('GET', '/api/v1/site-info', 'getSiteInfo', 'Gateway branding and environment labels', getSiteInfo),
  api('POST', '/api/v1/payouts/preview', 'previewPayout', 'Payout fee preview', previewPayout),
  api('POST', '/api/v1/payouts', 'createPayout', 'Create payout', createPayout, true),
  api('GET', '/api/v1/payouts', 'listPayouts', 'List payouts of the business', listPayouts),
  api('GET', '/api/v1/payouts/{id}', 'getPayout', 'Get payout by UUID', getPayout),
  api('POST', '/api/v1/billing/plans', 'createBillingPlan', 'Create billing plan', createPlan, true),
  api('POST', '/api/v1/billing/subscriptions', 'createBillingSubscription', 'Create subscription with consent', createSubscription, true),
  api('GET', '/api/v1/billing/invoices', 'listBillingInvoices', 'List invoices', listInvoices),
  api('GET', '/api/v1/openapi.json', 'getOpenApi', 'This document', (_ctx, req, x) => json(200, x.service.openApi(req.caller.base))),
];

/** One row of a route table. */
export function row(
  method: Route['method'],
  path: string,
  handler: Handler,
  steps: readonly Step[] = [],
  more: Partial<Route> = {},
): Route {
  return { method, path, handler, steps, ...more };
}

const PAGE: readonly Method[] = ['GET', 'HEAD'];
/** Console page views (kept out of the request log) and console form posts (token checked). */
const VIEW = [pageView];
const FORM = [formToken];
/** Console paths carry ids as sent when they are not valid %-encoding. */
const KEEP = { badSegment: 'keep' } as const;

/** The console's rows: its pages, its actions, and a 404 or 405 page for the rest of its paths. */
export const CONSOLE: readonly Route[] = [
  row(PAGE, '/', consoleHome, VIEW),
  row(PAGE, '/console/?', consoleHome, VIEW),
  row(PAGE, '/console/payments/{trx}', consolePayment, VIEW, KEEP),
  row(PAGE, '/console/events/{id}', consoleEvent, VIEW, KEEP),
  row('POST', '/console/payments/{trx}/settle', consoleSettle, FORM, KEEP),
  row('POST', '/console/events/{id}/resend', consoleResend, FORM, KEEP),
  row('POST', '/console/events/test', consoleTestEvent, FORM),
  row('POST', '/console/payouts/behaviour', consolePayoutBehaviour, FORM),
  ...['/', '/console', '/console/*'].flatMap((path) => [
    row(PAGE, path, consoleNotFound, VIEW),
    row('POST', path, consoleNotFound, FORM),
    row('*', path, consoleMethodNotAllowed),
  ]),
];

const noCheckout = { badSegment: () => errorResponse(404, 'Not Found', 'No such checkout.') };
const CHECKOUT_VERB = '/checkout/{trx}/{verb:pay|decline|cancel}/?';
const notAllowedHere = (allow: string) => (x: Exchange) =>
  errorResponse(405, 'Method Not Allowed', `${x.method} is not allowed here.`, { headers: { Allow: allow } });

/** The hosted checkout page (GET) and its buttons (POST …/pay, …/decline, …/cancel). */
const CHECKOUT: readonly Route[] = [
  row('GET', '/checkout/{trx}/?', (x) => showCheckout(x.service.ctx, x.params.trx!, x.url), [], noCheckout),
  row(
    'POST',
    CHECKOUT_VERB,
    (x) => submitCheckout(x.service.ctx, x.params.trx!, x.url, x.params.verb as CheckoutVerb, formOf(x)),
    [],
    noCheckout,
  ),
  row('*', '/checkout/{trx}/?', notAllowedHere('GET'), [], noCheckout),
  row('*', CHECKOUT_VERB, notAllowedHere('POST'), [], noCheckout),
];

const EARLIER_PAGE = '/payment/checkout/?';
const EARLIER_VERB = '/payment/checkout/{verb:pay|cancel}/?';

/**
 * The earlier generation's checkout, at the real product's signed link
 * (`/payment/checkout?expires&token&signature`, earlier-link.ts): the page (GET, HEAD) and its two
 * buttons (POST …/pay, …/cancel), each with the link's query.
 */
export const EARLIER_CHECKOUT: readonly Route[] = [
  // Laravel answers HEAD on a GET route.
  row(PAGE, EARLIER_PAGE, (x) => showEarlierCheckout(x.service.ctx, x.url)),
  row('POST', EARLIER_VERB, (x) => submitEarlierCheckout(x.service.ctx, x.url, x.params.verb as EarlierCheckoutVerb, formOf(x))),
  row('*', EARLIER_PAGE, notAllowedHere('GET, HEAD')),
  row('*', EARLIER_VERB, notAllowedHere('POST')),
];

/** The root's JSON index is for a client that does not ask for HTML. */
export const wantsJson = (x: Exchange) => !/\btext\/html\b/.test(x.request.headers.get('accept') ?? '');

/** The one route table: everything the service answers. */
export const ROUTES: readonly Route[] = [
  // The root: a JSON index for an API client, the web console for a browser.
  row('GET', '/', (x) => serviceIndex(x.base), [], { when: wantsJson }),
  ...CONSOLE,
  // CORS preflight of an API call from a page (the sandbox is a local development server).
  row('OPTIONS', '/api/*', preflight, [], { when: isPreflight }),
  row('GET', '/assets/logo.svg', logo),
  ...CHECKOUT,
  ...API_ROUTES,
];
