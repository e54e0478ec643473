// An msw stand-in for the Business Payments server. It checks every request the way the
// real server does, with its own HMAC (node:crypto here, never the SDK's signer), so a
// signing bug in the client cannot hide behind a helper both sides share.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { http, HttpResponse, type JsonBodyType } from 'msw';
import { setupServer } from 'msw/node';

export const BASE_URL = 'https://api.payments.test';
/** Where the fake timers start in every test of the fake API. */
export const START = Date.UTC(2026, 10, 22, 12, 0, 0);
export const CREDENTIALS = {
  merchantKey: 'test_merchant_001',
  apiKey: 'test_key_001',
  apiSecret: 'test_secret_001',
} as const;

/** What the fake server saw of one request. */
export interface SeenRequest {
  method: string;
  pathWithQuery: string;
  headers: Record<string, string>;
  rawBody: string;
  json: unknown;
  /** Did the signature verify with the fake server's own HMAC? */
  signatureValid: boolean;
  /** Date.now() when the request arrived (virtual time under fake timers). */
  at: number;
}

export function expectedSignature(secret: string, ts: string, method: string, pathWithQuery: string, body: string): string {
  return 'sha256=' + createHmac('sha256', secret).update(`${ts}.${method}.${pathWithQuery}.${body}`, 'utf8').digest('hex');
}

type Reply = { status?: number; body?: JsonBodyType | string; headers?: Record<string, string> };
type Handler = (req: SeenRequest, params: Record<string, string>) => Reply | Promise<Reply>;

export function createFakeApi(options: { secret?: string; now?: () => number } = {}) {
  const secret = options.secret ?? CREDENTIALS.apiSecret;
  const now = options.now ?? (() => Date.now());
  const seen: SeenRequest[] = [];

  const route = (method: 'get' | 'post', path: string, handler: Handler) =>
    http[method](`${BASE_URL}${path}`, async ({ request, params }) => {
      const url = new URL(request.url);
      const rawBody = method === 'get' ? '' : await request.text();
      const headers = Object.fromEntries(request.headers.entries());
      const pathWithQuery = url.pathname + url.search;
      const ts = headers['x-timestamp'] ?? '';
      const given = headers['x-signature'] ?? '';
      const want = expectedSignature(secret, ts, request.method, pathWithQuery, rawBody);
      const signatureValid = given.length === want.length && timingSafeEqual(Buffer.from(given), Buffer.from(want));
      let json: unknown;
      try {
        json = rawBody ? JSON.parse(rawBody) : undefined;
      } catch {
        json = undefined;
      }
      const req: SeenRequest = { method: request.method, pathWithQuery, headers, rawBody, json, signatureValid, at: now() };
      seen.push(req);
      const fresh = /^\d+$/.test(ts) && Math.abs(Number(ts) - Math.floor(now() / 1000)) <= 300;
      if (
        !signatureValid ||
        !fresh ||
        headers['x-api-key'] !== CREDENTIALS.apiKey ||
        headers['x-merchant-key'] !== CREDENTIALS.merchantKey
      ) {
        return HttpResponse.json({ error: 'Invalid API credentials', message: 'Invalid API credentials' }, { status: 401 });
      }
      const reply = await handler(req, params as Record<string, string>);
      const status = reply.status ?? 200;
      if (typeof reply.body === 'string') {
        return new HttpResponse(reply.body, { status, headers: { 'content-type': 'text/html', ...reply.headers } });
      }
      return HttpResponse.json(reply.body ?? {}, { status, headers: reply.headers });
    });

  const server = setupServer();
  return {
    server,
    seen,
    /** Answers `method path` with `handler`, after checking auth and signature. */
    on(method: 'get' | 'post', path: string, handler: Handler | Reply) {
      server.use(route(method, path, typeof handler === 'function' ? handler : () => handler));
    },
    /** Answers with each reply in turn (the last one repeats). */
    sequence(method: 'get' | 'post', path: string, replies: Reply[]) {
      let i = 0;
      server.use(route(method, path, () => replies[Math.min(i++, replies.length - 1)]!));
    },
    /** Raw msw access for connection errors and odd responses. */
    use: (...handlers: Parameters<typeof server.use>) => server.use(...handlers),
  };
}

// Fixtures: documented shapes from the spec.
export const fixtures = {
  payment: {
    trx_id: 'TRX123456',
    merchant_ref: 'order-1001',
    amount: 25,
    currency: 'USD',
    status: 'pending',
    checkout_url: 'https://checkout.payments.test/c/TRX123456',
    expires_at: '2026-11-22T13:00:00Z',
    environment: 'sandbox',
  },
  verified: {
    status: 'success',
    trx_id: 'TRX123456',
    amount: 25,
    fee: 0.75,
    currency: 'USD',
    net_amount: 24.25,
    customer: { name: 'Asha Mussa', email: 'asha@example.com' },
    description: 'Order 1001',
    created_at: '2026-11-22T12:00:00Z',
    updated_at: '2026-11-22T12:01:00Z',
  },
  siteInfo: {
    site_name: 'Business Payments',
    site_logo: 'https://payments.test/logo.png',
    site_url: 'https://payments.test',
    gateway_name: 'BP Gateway',
    gateway_description: 'Hosted checkout and mobile money',
    features: {
      ssl_secured: 'SSL secured',
      instant_processing: 'Instant processing',
      global_support: 'Global support',
      mobile_ready: 'Mobile ready',
    },
    environments: { production: 'Live payments', sandbox: 'Test payments' },
    api_version: '1.0',
    status: 'ok',
  },
  sessionInfo: {
    ref_trx: 'order-1001',
    description: 'Order 1001',
    ipn_url: 'https://shop.example.com/ipn',
    cancel_redirect: 'https://shop.example.com/cancel',
    success_redirect: 'https://shop.example.com/thanks',
    customer_name: 'Asha Mussa',
    customer_email: 'asha@example.com',
    merchant_id: 42,
    merchant_name: 'Duka Ltd',
    amount: 25,
    currency_code: 'USD',
    environment: 'sandbox',
    is_sandbox: true,
    allow_payment_methods: ['mpesa'],
    merchant_payment_methods_restricted: false,
    merchant_payment_method_ids: [1, 2],
    merchant_payment_method_codes: ['mpesa', 'card'],
  },
};
