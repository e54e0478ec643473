// Defaults of the simulated service: the demo merchant, its gateways, the fixed test phone
// numbers and the timings of the simulation.
import type { MockGateway, MockMerchant } from './types.js';

/**
 * Fixed customer phone numbers that decide a simulated USSD push's outcome (payments and
 * billing charges). Any other valid number is approved after the answer time.
 *
 * | number | outcome |
 * |---|---|
 * | 255700000001 | approved: payment `success` |
 * | 255700000002 | insufficient funds: `failed` (INSUFFICIENT_FUNDS) |
 * | 255700000003 | declined by the customer: `failed` (PAYMENT_DECLINED) |
 * | 255700000004 | no answer: `failed` (TIMEOUT) after the longer timeout |
 */
export const TEST_PHONE_NUMBERS = {
  success: '255700000001',
  insufficientFunds: '255700000002',
  declined: '255700000003',
  timeout: '255700000004',
} as const;

/** Origin the msw handlers answer on by default. */
export const DEFAULT_BASE_URL = 'https://sandbox.business-payments.test';

/**
 * Credentials of the default merchant per environment, each with its own webhook secret
 * (documented in docs/testing.md; the CLI prints the sandbox set). `webhookSecret` at the
 * top is the sandbox one, kept for older code.
 */
export const DEFAULT_CREDENTIALS = {
  sandbox: {
    merchantKey: 'test_merchant_1001',
    apiKey: 'test_api_key_1001',
    apiSecret: 'test_secret_1001',
    webhookSecret: 'whsec_test_1001',
  },
  production: {
    merchantKey: 'live_merchant_1001',
    apiKey: 'live_api_key_1001',
    apiSecret: 'live_secret_1001',
    webhookSecret: 'whsec_live_1001',
  },
  webhookSecret: 'whsec_test_1001',
} as const;

/** Date-form version carried by webhook payloads. */
export const WEBHOOK_API_VERSION = '2024-06-01';
/** api_version of site-info. */
export const SITE_API_VERSION = 'v1';

/** Simulated times, in ms before `timeScale`. */
export const TIMING = {
  /** The customer answers a USSD push. */
  pushAnswerMs: 5_000,
  /** Nobody answers: the push times out. */
  pushTimeoutMs: 60_000,
  /** Hosted checkout link lifetime (expires_at). */
  checkoutLifetimeMs: 60 * 60_000,
  /** Webhook retry delays after each failed attempt: 3, 6, 12, 24 minutes. */
  webhookRetryMs: [3 * 60_000, 6 * 60_000, 12 * 60_000, 24 * 60_000],
  /** An INPROGRESS payout settles (SUCCESS) after this long. */
  payoutSettleMs: 60_000,
  /** Billing dunning: retry charges 1 and 2 days after the previous failure (3 attempts). */
  dunningRetryMs: [24 * 3_600_000, 48 * 3_600_000],
  /** Idempotency keys are kept this long. */
  idempotencyMs: 24 * 3_600_000,
} as const;

/** Fees of the simulation. */
export const FEES = {
  /** Payments and invoices: 3 % of the amount, rounded to 2 decimals. */
  paymentRate: 0.03,
  /** Payouts: 1 % of the amount, rounded to 2 decimals. */
  payoutRate: 0.01,
} as const;

/** The default merchant: approved, USD and TZS with active wallets, EUR without a wallet. */
export function defaultMerchant(): MockMerchant {
  return {
    id: 1001,
    name: 'Demo Shop',
    status: 'approved',
    kybApproved: true,
    settlementNumber: '255712345678',
    credentials: {
      sandbox: { ...DEFAULT_CREDENTIALS.sandbox },
      production: { ...DEFAULT_CREDENTIALS.production },
    },
    webhookSecret: DEFAULT_CREDENTIALS.sandbox.webhookSecret,
    defaultWebhookUrl: null,
    siteUrl: 'https://shop.example.com',
    currencies: {
      USD: { wallet: true, balance: 1_000 },
      TZS: { wallet: true, balance: 1_000_000 },
      EUR: { wallet: false, balance: 0 },
    },
    selectedGatewayIds: [],
  };
}

/** Default gateways: card + paypal (USD), mpesa + tigopesa + airtelmoney (TZS), sepa (EUR). */
export function defaultGateways(): MockGateway[] {
  return [
    { id: 1, code: 'card', name: 'Card', currency: 'USD', active: true },
    { id: 2, code: 'paypal', name: 'PayPal', currency: 'USD', active: true },
    { id: 3, code: 'mpesa', name: 'M-Pesa', currency: 'TZS', active: true },
    { id: 4, code: 'tigopesa', name: 'Tigo Pesa', currency: 'TZS', active: true },
    { id: 5, code: 'airtelmoney', name: 'Airtel Money', currency: 'TZS', active: true },
    { id: 6, code: 'sepa', name: 'SEPA Transfer', currency: 'EUR', active: true },
  ];
}

/**
 * Credentials of the default merchant when the sandbox plays the earlier generation: sandbox
 * keys start `test_` (the secret `test_secret_`, the merchant key `test_merchant_`),
 * production keys carry no prefix. There is no webhook secret: the IPN is signed with the
 * API secret of the payment's environment.
 */
export const EARLIER_CREDENTIALS = {
  sandbox: { merchantKey: 'test_merchant_1001', apiKey: 'test_api_key_1001', apiSecret: 'test_secret_1001' },
  production: { merchantKey: 'merchant-key-1001', apiKey: 'api-key-1001', apiSecret: 'api-secret-1001' },
} as const;

/** Timings of the earlier generation, in ms before `timeScale`. */
export const EARLIER_TIMING = {
  /** The payment link is a signed URL valid 900 minutes. */
  checkoutLifetimeMs: 900 * 60_000,
  /** An IPN attempt times out after 30 s. */
  ipnTimeoutMs: 30_000,
  /** Tries of an IPN that times out, 1 s apart. */
  ipnTries: 3,
  ipnRetryMs: 1_000,
  /** The rate limit's fixed window. */
  rateWindowMs: 60_000,
} as const;

/** The merchant's fee on a payment in the earlier generation (an option: merchantFeeRate). */
export const EARLIER_FEE_RATE = 0.025;

/** The default merchant of the earlier generation: the same shop with that generation's credentials. */
export function earlierMerchant(): MockMerchant {
  const { webhookSecret: _none, ...merchant } = defaultMerchant();
  return { ...merchant, credentials: { sandbox: { ...EARLIER_CREDENTIALS.sandbox }, production: { ...EARLIER_CREDENTIALS.production } } };
}
