// Helpers of the mock service's own tests. The signer here is written from the spec with
// node:crypto, on purpose independent of the SDK's signer and of the mock's WebCrypto one.
import { createHmac } from 'node:crypto';
import { createMockService, type MockServiceOptions } from '../../src/testing.js';

/** 2025-01-15T12:00:00Z */
export const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);
export const BASE = 'https://sandbox.business-payments.test';

/** A clock tests move by hand. */
function manualClock(start = T0) {
  let t = start;
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
    set: (ms: number) => {
      t = ms;
    },
  };
}

/** `sha256=` + hex HMAC-SHA256(secret, `<ts>.<METHOD>.<path_with_query>.<raw_body>`). */
export function sign(secret: string, timestamp: string | number, method: string, pathWithQuery: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${method}.${pathWithQuery}.${body}`).digest('hex')}`;
}

/** hex HMAC-SHA256(secret, `<ts>.<body>`): the webhook signature. */
export function webhookSignature(secret: string, timestamp: string, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

interface Creds {
  merchantKey: string;
  apiKey: string;
  apiSecret: string;
}

export interface CallOptions {
  env?: 'sandbox' | 'production';
  creds?: Creds;
  /** Unix seconds; default the clock's now. */
  timestamp?: number;
  /** Replace or drop (null) headers after signing. */
  headers?: Record<string, string | null>;
  /** Exact raw body (else JSON.stringify(body)). */
  rawBody?: string;
  idempotencyKey?: string;
  /** Sign with this secret instead. */
  signWith?: string;
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint: tests read arbitrary JSON
  body: any;
}

/** A mock on a manual clock (autoRun off unless given) with a signed caller and a recording webhook receiver. */
export function setup(options: MockServiceOptions = {}) {
  const clock = manualClock();
  const received: Array<{ url: string; headers: Record<string, string>; body: string; at: number }> = [];
  /** Status the receiver answers, per attempt in order (last one repeats); default 200. */
  const answers: Array<number | 'network-error'> = [];
  const fetchImpl = async (input: string | URL | Request, init?: RequestInit) => {
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((v, k) => {
      headers[k] = v;
    });
    received.push({ url: String(input), headers, body: String(init?.body), at: clock.now() });
    const answer = answers.length > 1 ? answers.shift()! : (answers[0] ?? 200);
    if (answer === 'network-error') throw new TypeError('fetch failed');
    return new Response('ok', { status: answer });
  };
  const mock = createMockService({ now: clock.now, autoRun: false, fetch: fetchImpl as typeof fetch, ...options });
  const defaults = mock.credentials;

  async function call(method: string, path: string, body?: unknown, opts: CallOptions = {}): Promise<Reply> {
    const env = opts.env ?? 'sandbox';
    const creds = opts.creds ?? defaults[env];
    const raw = opts.rawBody ?? (body === undefined ? '' : JSON.stringify(body));
    const ts = opts.timestamp ?? Math.floor(clock.now() / 1000);
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      Accept: 'application/json',
      'X-Environment': env,
      'X-Merchant-Key': creds.merchantKey,
      'X-API-Key': creds.apiKey,
      'X-Timestamp': String(ts),
      'X-Signature': sign(opts.signWith ?? creds.apiSecret, ts, method, path, method === 'GET' ? '' : raw),
    };
    if (opts.idempotencyKey !== undefined) headers['Idempotency-Key'] = opts.idempotencyKey;
    for (const [name, value] of Object.entries(opts.headers ?? {})) {
      if (value === null) delete headers[name];
      else headers[name] = value;
    }
    const response = await mock.handle(new Request(BASE + path, { method, headers, body: method === 'GET' ? undefined : raw }));
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, text, body: parsed };
  }

  return { mock, clock, call, received, answers, creds: defaults };
}

/** A valid hosted payment body. */
export const hostedBody = (extra: Record<string, unknown> = {}) => ({
  payment_amount: 25,
  currency_code: 'USD',
  ref_trx: 'order-1001',
  ipn_url: 'https://shop.example.com/ipn',
  customer_name: 'Asha Mwangi',
  customer_email: 'asha@example.com',
  ...extra,
});

/** A valid push payment body. */
export const pushBody = (phone: string, extra: Record<string, unknown> = {}) => ({
  payment_amount: 5000,
  currency_code: 'TZS',
  ref_trx: `push-${phone}`,
  ipn_url: 'https://shop.example.com/ipn',
  payment_mode: 'push',
  customer_phone: phone,
  ...extra,
});
