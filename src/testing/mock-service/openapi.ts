// GET /api/v1/openapi.json: an OpenAPI 3.1 description of every /api/v1 route the service
// answers, read from the route table (routes.ts API_ROUTES): method, path, operationId,
// summary, and whether it is a create (Idempotency-Key, 503 when the key store is full).
import { SITE_API_VERSION } from './defaults.js';
import type { ApiRoute } from './router.js';
import { API_ROUTES } from './routes.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const jsonContent = (schema: unknown) => ({ 'application/json': { schema } });
const str = { type: 'string' };
/** The list shape `{ data, total, limit, offset, has_more }` of `item` records. */
const listOf = (item: string) => ({
  type: 'object',
  properties: {
    data: { type: 'array', items: ref(item) },
    total: { type: 'integer' },
    limit: { type: 'integer' },
    offset: { type: 'integer' },
    has_more: { type: 'boolean' },
  },
});
const num = { type: 'number' };
const nullableStr = { type: ['string', 'null'] };
const money = { type: 'object', required: ['value', 'currency'], properties: { value: num, currency: str } };
const environmentName = { type: 'string', enum: ['sandbox', 'production'] };
const paymentStatus = { type: 'string', enum: ['pending', 'success', 'failed'] };
/** Every listed property is always sent: all of them required. */
const always = (properties: Record<string, unknown>) => ({ type: 'object', required: Object.keys(properties), properties });

const REQUEST_BODIES: Record<string, string> = {
  createPayment: 'PaymentCreateRequest',
  initiatePayment: 'PaymentInitiateRequest',
  pushPayment: 'PaymentPushRequest',
  previewPayout: 'PayoutPreviewRequest',
  createPayout: 'PayoutCreateRequest',
  createBillingPlan: 'PlanCreateRequest',
  createBillingSubscription: 'SubscriptionCreateRequest',
};

const RESPONSES: Record<string, unknown> = {
  createPayment: ref('PaymentCreateResponse'),
  listPayments: ref('PaymentList'),
  getPayment: { type: 'object', required: ['status', 'data'], properties: { status: str, data: ref('PaymentRecord') } },
  pushPayment: {
    type: 'object',
    required: ['status', 'message', 'data'],
    properties: {
      status: str,
      message: str,
      data: {
        type: 'object',
        required: ['trx_id', 'status', 'customer_phone', 'push_count'],
        properties: { trx_id: str, status: paymentStatus, customer_phone: str, push_count: { type: 'integer' } },
      },
    },
  },
  getBalance: {
    type: 'object',
    required: ['status', 'environment', 'data'],
    properties: { status: str, environment: environmentName, data: { type: 'array', items: ref('WalletBalance') } },
  },
  initiatePayment: ref('PaymentSession'),
  verifyPayment: ref('VerifiedTransaction'),
  getSiteInfo: ref('SiteInfo'),
  previewPayout: ref('PayoutPreview'),
  createPayout: { type: 'object', properties: { status: str, data: ref('Payout') } },
  listPayouts: listOf('Payout'),
  getPayout: { type: 'object', properties: { status: str, data: ref('Payout') } },
  createBillingPlan: { type: 'object', properties: { status: str, data: ref('Plan') } },
  createBillingSubscription: { type: 'object', properties: { status: str, data: ref('Subscription') } },
  listBillingInvoices: listOf('Invoice'),
  getOpenApi: { type: 'object' },
};

const QUERY: Record<string, Array<[string, unknown]>> = {
  listPayments: [
    ['limit', { type: 'integer', minimum: 1, maximum: 100, default: 20 }],
    ['offset', { type: 'integer', minimum: 0, default: 0 }],
    ['status', { type: 'string', enum: ['pending', 'success', 'failed'] }],
    ['merchant_ref', str],
  ],
  listPayouts: [
    ['limit', { type: 'integer', minimum: 1, maximum: 100, default: 20 }],
    ['offset', { type: 'integer', minimum: 0, default: 0 }],
  ],
  listBillingInvoices: [
    ['subscription', { type: 'string', pattern: '^sub_[A-Za-z0-9_-]+$' }],
    ['limit', { type: 'integer', minimum: 1, maximum: 100, default: 20 }],
    ['offset', { type: 'integer', minimum: 0, default: 0 }],
  ],
};

const paymentFields = {
  payment_amount: { type: 'number', minimum: 1, maximum: 1e12 },
  currency_code: { type: 'string', pattern: '^[A-Z]{3}$' },
  ref_trx: { type: 'string', maxLength: 60 },
  success_redirect: { type: 'string', format: 'uri' },
  cancel_redirect: { type: 'string', format: 'uri' },
  ipn_url: { type: 'string', format: 'uri' },
  description: str,
  customer_name: { type: 'string', maxLength: 100 },
  customer_email: { type: 'string', format: 'email', maxLength: 100 },
  customer_phone: { type: 'string', pattern: '^\\+?[1-9]\\d{7,14}$' },
  payment_mode: { type: 'string', enum: ['hosted', 'push'], default: 'hosted' },
  allow_payment_methods: { oneOf: [str, { type: 'array', items: str }] },
};

const schemas = {
  Error: {
    type: 'object',
    required: ['error', 'message'],
    properties: { error: str, message: str, errors: { type: 'object', additionalProperties: { type: 'array', items: str } } },
  },
  PaymentCreateRequest: {
    type: 'object',
    required: ['payment_amount', 'currency_code', 'ref_trx'],
    properties: { ...paymentFields, webhook_url: { type: 'string', format: 'uri' } },
  },
  PaymentInitiateRequest: {
    type: 'object',
    required: ['payment_amount', 'currency_code', 'ref_trx', 'success_redirect', 'cancel_redirect', 'ipn_url'],
    properties: paymentFields,
  },
  PaymentPushRequest: { type: 'object', properties: { customer_phone: paymentFields.customer_phone } },
  Payment: {
    type: 'object',
    required: ['trx_id', 'merchant_ref', 'amount', 'currency', 'status', 'checkout_url', 'expires_at', 'environment'],
    properties: {
      trx_id: str,
      merchant_ref: str,
      amount: num,
      currency: str,
      status: { type: 'string', enum: ['pending', 'success', 'failed'] },
      checkout_url: nullableStr,
      expires_at: { type: 'string', format: 'date-time' },
      environment: { type: 'string', enum: ['sandbox', 'production'] },
    },
  },
  PaymentCreateResponse: {
    type: 'object',
    required: ['status', 'trx_id', 'payment_url', 'data'],
    properties: { status: { const: 'success' }, trx_id: str, payment_url: nullableStr, data: ref('Payment') },
  },
  PaymentSession: {
    type: 'object',
    required: ['payment_url', 'info'],
    properties: {
      payment_url: str,
      info: always({
        ref_trx: str,
        description: nullableStr,
        ipn_url: str,
        cancel_redirect: str,
        success_redirect: str,
        customer_name: nullableStr,
        customer_email: nullableStr,
        merchant_id: { type: 'integer' },
        merchant_name: str,
        amount: num,
        currency_code: str,
        environment: environmentName,
        is_sandbox: { type: 'boolean' },
        allow_payment_methods: { type: ['array', 'null'], items: str },
        merchant_payment_methods_restricted: { type: 'boolean' },
        merchant_payment_method_ids: { type: 'array', items: { type: 'integer' } },
        merchant_payment_method_codes: { type: 'array', items: str },
      }),
      data: { type: 'object', properties: { trx_id: str, checkout_url: nullableStr } },
    },
  },
  PaymentRecord: always({
    trx_id: str,
    merchant_ref: str,
    amount: num,
    fee: num,
    net_amount: num,
    currency: str,
    status: paymentStatus,
    payment_mode: { type: 'string', enum: ['hosted', 'push'] },
    environment: environmentName,
    description: nullableStr,
    customer: always({ name: nullableStr, email: nullableStr, phone: nullableStr }),
    gateway: nullableStr,
    checkout_url: nullableStr,
    expires_at: str,
    failure_reason: nullableStr,
    created_at: str,
    updated_at: str,
  }),
  PaymentList: listOf('PaymentRecord'),
  VerifiedTransaction: {
    type: 'object',
    required: ['status', 'trx_id', 'amount', 'fee', 'currency', 'net_amount', 'customer', 'description', 'created_at', 'updated_at'],
    properties: {
      status: paymentStatus,
      trx_id: str,
      amount: num,
      fee: num,
      currency: str,
      net_amount: num,
      customer: always({ name: nullableStr, email: nullableStr }),
      description: nullableStr,
      created_at: { type: 'string', format: 'date-time' },
      updated_at: { type: 'string', format: 'date-time' },
    },
  },
  SiteInfo: always({
    site_name: str,
    site_logo: str,
    site_url: str,
    gateway_name: str,
    gateway_description: str,
    features: always({ ssl_secured: str, instant_processing: str, global_support: str, mobile_ready: str }),
    environments: always({ production: str, sandbox: str }),
    api_version: str,
    status: str,
  }),
  WalletBalance: always({ currency: str, balance: num }),
  PayoutPreviewRequest: {
    type: 'object',
    required: ['amount'],
    properties: { amount: { type: 'number', exclusiveMinimum: 0, maximum: 1e12 } },
  },
  PayoutCreateRequest: {
    type: 'object',
    required: ['amount'],
    properties: { amount: { type: 'number', exclusiveMinimum: 0, maximum: 1e12 }, destination: str },
  },
  PayoutPreview: {
    type: 'object',
    required: ['amount', 'fee', 'payable_amount'],
    properties: { amount: num, fee: num, payable_amount: num, currency: str },
  },
  Payout: always({
    id: { type: 'string', format: 'uuid' },
    amount: num,
    fee: num,
    payable_amount: num,
    currency: str,
    destination: str,
    status: { type: 'string', enum: ['SUCCESS', 'INPROGRESS', 'AMBIGUOUS', 'FAILED'] },
    environment: environmentName,
    created_at: str,
    updated_at: str,
  }),
  PlanCreateRequest: {
    type: 'object',
    required: ['name', 'amount'],
    properties: {
      plan_code: str,
      name: str,
      description: str,
      amount: { type: 'number', minimum: 1, maximum: 1e12 },
      currency: { type: 'string', default: 'TZS' },
      interval: { type: 'string', enum: ['day', 'week', 'month', 'year'], default: 'month' },
      interval_count: { type: 'integer', minimum: 1, default: 1 },
    },
  },
  Plan: always({
    plan_code: str,
    name: str,
    description: nullableStr,
    amount: num,
    currency: str,
    interval: { type: 'string', enum: ['day', 'week', 'month', 'year'] },
    interval_count: { type: 'integer' },
    status: str,
    environment: environmentName,
    created_at: str,
  }),
  SubscriptionCreateRequest: {
    type: 'object',
    required: ['plan_code', 'customer_phone', 'terms_shown'],
    properties: {
      plan_code: str,
      customer_phone: { type: 'string', pattern: '^\\+?255[67]\\d{8}$' },
      terms_shown: str,
      webhook_url: { type: 'string', format: 'uri' },
    },
  },
  Subscription: always({
    id: { type: 'string', pattern: '^sub_' },
    plan_code: str,
    status: { type: 'string', enum: ['pending', 'active', 'past_due', 'suspended'] },
    customer_phone: str,
    webhook_url: nullableStr,
    consent: always({ terms_shown: str, accepted_at: str, ip_address: str }),
    amount: num,
    currency: str,
    current_period_start: nullableStr,
    current_period_end: nullableStr,
    latest_invoice: nullableStr,
    environment: environmentName,
    created_at: str,
    updated_at: str,
  }),
  Invoice: always({
    id: str,
    subscription: str,
    plan_code: str,
    amount: num,
    currency: str,
    fee: num,
    net_amount: num,
    status: { type: 'string', enum: ['open', 'paid', 'uncollectible'] },
    attempt_count: { type: 'integer' },
    next_attempt_at: nullableStr,
    failure_reason: nullableStr,
    period_start: str,
    period_end: str,
    paid_at: nullableStr,
    environment: environmentName,
    created_at: str,
    updated_at: str,
  }),
  WebhookEvent: {
    type: 'object',
    required: ['id', 'type', 'api_version', 'created_at', 'data'],
    properties: {
      id: { type: 'string', pattern: '^evt_' },
      type: str,
      api_version: str,
      created_at: str,
      data: {
        type: 'object',
        properties: {
          trx_id: str,
          merchant_ref: str,
          status: str,
          amount: money,
          settlement: { type: 'object', properties: { gross: money, fees: money, net: money } },
          customer: { type: 'object', properties: { name: nullableStr, email: nullableStr, phone: nullableStr } },
          environment: str,
        },
      },
    },
  },
};

const errorBody = (description: string, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: jsonContent(ref('Error')),
});
const intHeader = (description: string) => ({ description, schema: { type: 'integer' } });

/** The error answers every route can give, as the service sends them. */
const errorResponses = {
  '401': errorBody(
    'Invalid API credentials: a missing or wrong key, a bad signature, or a timestamp more than 300 s from the server clock.',
  ),
  '403': errorBody('Merchant Pending Approval (production), or a suspended or rejected merchant.'),
  '404': errorBody('Not Found: no such resource for this merchant and environment, or no such route.'),
  '405': errorBody('Method Not Allowed: the path exists with another method (see Allow).', {
    Allow: { description: 'The methods the path takes.', schema: str },
  }),
  '422': errorBody('Validation failed (with an errors map), a decision-order rule, or an Idempotency-Key reused with another body.'),
  '429': errorBody('Too Many Requests: the per-minute limit of this merchant and IP was reached.', {
    'Retry-After': intHeader('Seconds until a request is accepted again.'),
    'X-RateLimit-Limit': intHeader('Requests allowed per minute.'),
    'X-RateLimit-Remaining': intHeader('Requests left in the current minute (0 here).'),
  }),
  '500': errorBody('Internal Server Error: the service failed; retry later (creates with the same Idempotency-Key).'),
};
// Only routes with a JSON body can get a 400 (body not JSON, or not an object).
const badBody = { '400': errorBody('Bad Request: the body is not a JSON object sent as application/json.') };
// Payment creates: ref_trx is unique per merchant and environment.
const duplicateReference = {
  '409': errorBody(
    'DUPLICATE_REFERENCE: ref_trx is already used by a payment of this merchant and environment (errors.ref_trx says so). A replay with the same Idempotency-Key gets the first answer instead.',
  ),
};
// Create routes: the sandbox keeps Idempotency-Keys 24 h under a cap.
const storeFull = {
  '503': errorBody('Idempotency key store full: every kept key is younger than 24 h; a new key is accepted after Retry-After.', {
    'Retry-After': intHeader('Seconds until the oldest kept key expires.'),
  }),
};
const PAYMENT_CREATES = new Set(['createPayment', 'initiatePayment']);
/** The responses in status order, as a reader looks them up. */
const byStatus = (responses: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  schema: { type: 'string', maxLength: 64 },
  description: 'Replays the stored response for 24 h.',
};

/** Path parameters (an `id` is a UUID), query parameters, and Idempotency-Key on a create. */
function parametersOf(route: ApiRoute): unknown[] {
  const parameters: unknown[] = [];
  for (const name of route.path.match(/\{(\w+)\}/g) ?? []) {
    const param = name.slice(1, -1);
    parameters.push({ name: param, in: 'path', required: true, schema: param === 'id' ? { type: 'string', format: 'uuid' } : str });
  }
  for (const [name, schema] of QUERY[route.operationId] ?? []) parameters.push({ name, in: 'query', required: false, schema });
  if (route.create) parameters.push(IDEMPOTENCY_KEY);
  return parameters;
}

function operation(route: ApiRoute): Record<string, unknown> {
  const { operationId, summary } = route;
  const body = REQUEST_BODIES[operationId];
  const described: Record<string, unknown> = {
    operationId,
    summary,
    description: `${summary}. Signed like every /api/v1 call (see the security schemes).`,
    parameters: parametersOf(route),
    responses: byStatus({
      '200': {
        description: 'OK. Every answer carries X-RateLimit-Limit and X-RateLimit-Remaining.',
        content: jsonContent(RESPONSES[operationId] ?? { type: 'object' }),
      },
      ...(body ? badBody : {}),
      ...(PAYMENT_CREATES.has(operationId) ? duplicateReference : {}),
      ...errorResponses,
      ...(route.create ? storeFull : {}),
    }),
  };
  if (body) described.requestBody = { required: operationId !== 'pushPayment', content: jsonContent(ref(body)) };
  return described;
}

const INFO = {
  title: 'Business Payments API (simulated)',
  version: SITE_API_VERSION,
  description:
    'Merchant payment API: hosted checkout and mobile-money USSD push, verification, balance, payouts, recurring billing, signed webhooks. Served by business-payments/testing createMockService.\n\n' +
    'Every /api/v1 call carries X-Environment, X-Merchant-Key, X-API-Key, X-Timestamp (unix seconds) and X-Signature = "sha256=" + hex HMAC-SHA256(API secret, "<X-Timestamp>.<METHOD>.<path_with_query>.<raw_body>"), where path_with_query and raw_body are byte for byte what is sent (a GET has an empty body, so the signed string ends with a dot).',
  license: { name: 'MIT', identifier: 'MIT' },
};

const WEBHOOKS = {
  paymentEvent: {
    post: {
      operationId: 'receivePaymentEvent',
      summary:
        'Signed event delivery (X-<Brand>-Event, X-<Brand>-Timestamp, X-<Brand>-Signature = hex HMAC-SHA256(webhook secret, "<timestamp>.<body>"))',
      requestBody: { content: jsonContent(ref('WebhookEvent')) },
      responses: { '200': { description: 'Any 2xx acknowledges the delivery' } },
    },
  },
};

const SECURITY_SCHEMES = {
  merchantKey: { type: 'apiKey', in: 'header', name: 'X-Merchant-Key', description: 'Business ID (alias header X-Business-Key)' },
  apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
  environment: { type: 'apiKey', in: 'header', name: 'X-Environment', description: 'sandbox or production' },
  timestamp: { type: 'apiKey', in: 'header', name: 'X-Timestamp', description: 'Unix seconds, within 300 s of the server clock' },
  signature: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Signature',
    description: 'sha256=<hex HMAC-SHA256(API secret, "<ts>.<METHOD>.<path_with_query>.<raw_body>")>',
  },
};

/** The OpenAPI document, with `server` as the base address. */
export function openApiDocument(server: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of API_ROUTES) (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route);
  return {
    openapi: '3.1.0',
    info: INFO,
    servers: [{ url: server }],
    security: [{ merchantKey: [], apiKey: [], environment: [], timestamp: [], signature: [] }],
    paths,
    webhooks: WEBHOOKS,
    components: { schemas, securitySchemes: SECURITY_SCHEMES },
  };
}
