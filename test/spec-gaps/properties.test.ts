// Where the spec is silent: random JSON thrown at every route, through the real client and a
// real server of our own (test/support/other-servers.ts, which checks every signature with its
// own HMAC).
// - Only a PaymentsError ever escapes: never a TypeError, SyntaxError or RangeError.
// - A 2xx body that says the call failed is an APIError (with that 2xx status), never a result.
// - Provisional routes never give ResponseValidationError, except a list body with no item array.
// - Shown routes give ResponseValidationError exactly when a field the merchant acts on is
//   missing or unusable, computed here from the generated body; otherwise every acted-on field
//   is read right and nothing the server sent is lost.
// Runs are seeded (FC_SEED to explore another seed, FC_RUNS to scale the number of runs).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { APIError, PaymentsError, ResponseValidationError, type PaymentsClient } from '../../src/index.js';
import {
  LIST_DIALECTS,
  keptOrRead,
  listReply,
  startOtherServer,
  type OtherServer,
  type Reply,
  type Seen,
} from '../support/other-servers.js';

const SEED = Number(process.env.FC_SEED ?? 20261122);
const SCALE = Number(process.env.FC_RUNS ?? 1);
const runs = (numRuns: number) => ({ numRuns: Math.max(1, Math.round(numRuns * SCALE)), seed: SEED });

let server: OtherServer;
let client: PaymentsClient;
let answer: (req: Seen) => Reply = () => ({ body: {} });

beforeAll(async () => {
  server = await startOtherServer();
  server.on('*', '*', (req) => answer(req));
  client = server.client({ maxRetries: 0 });
});
afterAll(() => server.close());

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Serves `reply` to every request and runs `call`; what it resolved to or threw. */
async function attempt(reply: Reply | ((req: Seen) => Reply), call: (c: PaymentsClient) => Promise<unknown>): Promise<Outcome> {
  answer = typeof reply === 'function' ? reply : () => reply;
  server.seen.length = 0;
  let outcome: Outcome;
  try {
    outcome = { ok: true, value: await call(client) };
  } catch (error) {
    outcome = { ok: false, error };
  }
  // Every request, next-page links followed included, passed the server's own HMAC check.
  expect(server.refused(), 'a request the server refused').toEqual([]);
  return outcome;
}

// --- What a body says, computed independently of the SDK ----------------------------------

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
/** The body as it goes over the wire and comes back (undefined fields gone, -0 is 0). */
const wire = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

const FAILED_WORD = /^(error|fail|failed|failure)$/i;
const ENVELOPE_WORD = /^(success|succeeded|ok|error|fail|failed|failure)$/i;
/** Id names that make a body a resource, not a failure envelope. */
const IDS = [
  'id',
  'trx_id',
  'transaction_id',
  'trxId',
  'payout_id',
  'subscription_id',
  'invoice_id',
  'plan_code',
  'plan_id',
  'uuid',
  'reference',
];
// `code` may be an error code or a plan's code: beside a failure word, either reading is accepted.
const AMBIGUOUS_IDS = ['code'];

/** Whether a 2xx body says the call failed: `yes` (APIError), `no` (not one), `either`. */
function saysFailed(body: unknown): 'yes' | 'no' | 'either' {
  if (!isRecord(body) || (typeof body.data === 'object' && body.data !== null)) return 'no';
  const failed = body.success === false || (typeof body.status === 'string' && FAILED_WORD.test(body.status));
  if (!failed && body.status !== false) return 'no';
  if (IDS.some((key) => body[key] != null)) return 'no';
  return !failed || AMBIGUOUS_IDS.some((key) => body[key] != null) ? 'either' : 'yes';
}

/** Checks every outcome: only PaymentsError escapes, and APIError exactly for a failure body. True when the failure rule decided it. */
function checkCommon(outcome: Outcome, body: unknown, status: number): boolean {
  if (!outcome.ok) {
    expect(outcome.error).toBeInstanceOf(PaymentsError);
    // A 2xx body is read: the only errors it can give are these two.
    expect(outcome.error instanceof APIError || outcome.error instanceof ResponseValidationError, String(outcome.error)).toBe(true);
  }
  const failed = saysFailed(body);
  const isFailure = !outcome.ok && outcome.error instanceof APIError;
  if (failed === 'yes') {
    expect(isFailure, `a body that says the call failed is an APIError: ${JSON.stringify(body)}`).toBe(true);
    expect((outcome as { error: APIError }).error.status).toBe(status);
  }
  if (failed === 'no') expect(isFailure, `not a failure body, yet APIError: ${JSON.stringify(body)}`).toBe(false);
  return isFailure;
}

const DECIMAL = /^-?\d+(\.\d+)?$/;
/** An amount the merchant can act on: a number or a decimal string. */
const usableAmount = (value: unknown) => typeof value === 'number' || (typeof value === 'string' && DECIMAL.test(value.trim()));
/**
 * An id: a non-blank string or a whole number (read as its digits). The rules do not say
 * whether a blank string or a fractional number (1.5) is one: either reading is accepted.
 */
function usableId(value: unknown): boolean | undefined {
  if (typeof value === 'string') return value.trim() === '' ? undefined : true;
  if (typeof value === 'number') return Number.isSafeInteger(value) ? true : undefined;
  return false;
}
const usableText = (value: unknown) => typeof value === 'string';
const asNumber = (value: unknown) => (typeof value === 'string' && DECIMAL.test(value.trim()) ? Number(value) : value);
const asId = (value: unknown) => (typeof value === 'number' ? String(value) : value);

/** `true`: all acted-on fields usable; `false`: one is not; `undefined`: either reading. */
function acted(checks: Array<boolean | undefined>): boolean | undefined {
  if (checks.includes(false)) return false;
  return checks.includes(undefined) ? undefined : true;
}

/** Fields of `resource` other than `skip` are in `got`, as sent or read as the spec's type. */
function expectKept(got: unknown, resource: Record<string, unknown>, skip: readonly string[] = []): void {
  expect(isRecord(got), `an object: ${JSON.stringify(got)}`).toBe(true);
  const record = got as Record<string, unknown>;
  for (const [key, value] of Object.entries(resource)) {
    if (skip.includes(key)) continue;
    expect(
      Object.hasOwn(record, key) && keptOrRead(value, record[key], key),
      `${key}: sent ${JSON.stringify(value)}, got ${JSON.stringify(record[key])}`,
    ).toBe(true);
  }
}

/** The canonical field filled from its other names: its own value unless null/absent, else the first other one that is not. */
function filled(resource: Record<string, unknown>, name: string, others: readonly string[]): unknown {
  if (resource[name] != null) return resource[name];
  const from = others.find((key) => resource[key] != null);
  return from === undefined ? resource[name] : resource[from];
}

// --- Arbitraries ---------------------------------------------------------------------------------

const junk = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 8 }),
  fc.jsonValue({ maxDepth: 2 }),
);
const often = <T>(good: fc.Arbitrary<T>) => fc.oneof({ weight: 4, arbitrary: good }, { weight: 1, arbitrary: junk });
const decimal = fc.double({ min: -1e6, max: 1e6, noNaN: true }).map((n) => n.toFixed(2));
const amount = often(fc.oneof(fc.integer({ min: 0, max: 1_000_000 }), fc.double({ min: 0, max: 1e6, noNaN: true }), decimal));
const id = often(fc.oneof(fc.stringMatching(/^[A-Z]{3}\d{1,6}$/), fc.integer({ min: 1, max: 2_000_000_000 })));
const uuid = often(fc.uuid());
const text = often(fc.string({ minLength: 1, maxLength: 10 }));
const word = (...words: string[]) => often(fc.constantFrom(...words));
const PAYMENT_STATUS = word('pending', 'success', 'failed', 'processing', 'error', 'ok');
// Fields the SDK does not know, with any value (prefixed: never an id, envelope or list key).
const extras = fc.dictionary(
  fc.string({ maxLength: 4 }).map((key) => `x_${key}`),
  junk,
  { maxKeys: 2 },
);

/** An object of `spec`'s fields (each may be absent) and a few unknown ones, as JSON sends it. */
function rec(spec: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> {
  const fields = Object.fromEntries(Object.entries(spec).map(([key, arb]) => [key, fc.option(arb, { nil: undefined, freq: 4 })]));
  return fc.tuple(fc.record(fields), extras).map(([record, extra]) => wire({ ...extra, ...record }) as Record<string, unknown>);
}

type Wrapper = 'bare' | 'status_data' | 'success_data' | 'data_named' | 'named' | 'status_named';
/** A resource in an envelope: the body, and the resource the SDK must find in it (envelope fields beside it). */
function wrap(kind: Wrapper, resource: Record<string, unknown>, name = ''): { body: unknown; resource: Record<string, unknown> } {
  switch (kind) {
    case 'bare':
      return { body: resource, resource };
    case 'status_data':
      return { body: { status: 'success', data: resource }, resource };
    case 'success_data':
      return { body: { success: true, message: 'OK', data: resource }, resource: { message: 'OK', ...resource } };
    case 'data_named':
      return { body: { data: { [name]: resource } }, resource };
    case 'named':
      return { body: { [name]: resource }, resource };
    case 'status_named':
      return { body: { status: 'success', [name]: resource }, resource };
  }
}
const SHOWN_WRAPPERS: Wrapper[] = ['bare', 'status_data', 'success_data'];
const ALL_WRAPPERS: Wrapper[] = [...SHOWN_WRAPPERS, 'data_named', 'named', 'status_named'];
const status2xx = fc.constantFrom(200, 201, 202);

/** A generated case: the reply, and the check of what the SDK made of it. */
interface Case {
  body: unknown;
  status: number;
  check: (outcome: Outcome) => void;
}

async function property(arb: fc.Arbitrary<Case>, call: (c: PaymentsClient) => Promise<unknown>, numRuns: number) {
  await fc.assert(
    fc.asyncProperty(arb, async (c) => {
      const outcome = await attempt({ status: c.status, body: c.body }, call);
      if (!checkCommon(outcome, c.body, c.status)) c.check(outcome);
    }),
    runs(numRuns),
  );
}

const expectRVE = (outcome: Outcome, why: string) => {
  expect(outcome.ok ? 'resolved' : (outcome.error as Error).name, why).toBe('ResponseValidationError');
};
/** Resolves, RVE, or either, as `usable` says; returns the value when it resolved and must check it. */
function byActed(outcome: Outcome, usable: boolean | undefined, body: unknown, mayHaveActed: boolean): Record<string, unknown> | undefined {
  if (usable === false) {
    expectRVE(outcome, `an acted-on field is unusable: ${JSON.stringify(body)}`);
    // It keeps the raw body, and says whether the call may already have taken effect.
    const error = (outcome as { error: ResponseValidationError }).error;
    expect(error.body).toBe(JSON.stringify(body));
    expect(error.serverMayHaveActed).toBe(mayHaveActed);
    return undefined;
  }
  if (usable === undefined) return outcome.ok ? (outcome.value as Record<string, unknown>) : undefined;
  expect(outcome.ok, `acted-on fields usable, yet ${outcome.ok ? '' : String(outcome.error)}: ${JSON.stringify(body)}`).toBe(true);
  return (outcome as { value: Record<string, unknown> }).value;
}

// --- The routes ----------------------------------------------------------------------------------

type Call = (c: PaymentsClient) => Promise<unknown>;
const UUID = '9f1c2b7e-3d4a-4e5f-8a6b-7c8d9e0f1a2b';
const PHONE = '255712345678';

const SHOWN: Record<string, Call> = {
  'payments.create': (c) => c.payments.create({ payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1' }),
  'payments.initiate': (c) =>
    c.payments.initiate({
      payment_amount: 25,
      currency_code: 'USD',
      ref_trx: 'order-1',
      success_redirect: 'https://shop.example.com/ok',
      cancel_redirect: 'https://shop.example.com/cancel',
      ipn_url: 'https://shop.example.com/ipn',
    }),
  'payments.verify': (c) => c.payments.verify('TRX1'),
  'siteInfo.retrieve': (c) => c.siteInfo.retrieve(),
  'payouts.preview': (c) => c.payouts.preview({ amount: 100 }),
};
const PROVISIONAL: Record<string, Call> = {
  'payments.retrieve': (c) => c.payments.retrieve('TRX1'),
  'payments.push': (c) => c.payments.push('TRX1', { customer_phone: PHONE }),
  'balance.retrieve': (c) => c.balance.retrieve(),
  'payouts.create': (c) => c.payouts.create({ amount: 100 }),
  'payouts.retrieve': (c) => c.payouts.retrieve(UUID),
  'billing.plans.create': (c) => c.billing.plans.create({ name: 'Gold', amount: 10000, interval: 'monthly', trial_days: 7 }),
  'billing.subscriptions.create': (c) =>
    c.billing.subscriptions.create({ plan_code: 'GOLD', customer_phone: PHONE, terms_shown: 'TZS 10,000 monthly' }),
};
const LISTS: Record<string, { call: Call; plural: string; walk: (c: PaymentsClient, limit?: number) => AsyncIterable<unknown> }> = {
  'payments.list': { call: (c) => c.payments.list(), plural: 'payments', walk: (c, limit) => c.payments.list({ limit }) },
  'payouts.list': { call: (c) => c.payouts.list(), plural: 'payouts', walk: (c, limit) => c.payouts.list({ limit }) },
  'billing.invoices.list': {
    call: (c) => c.billing.invoices.list(),
    plural: 'invoices',
    walk: (c, limit) => c.billing.invoices.list({ limit }),
  },
};
const OPENAPI: Call = (c) => c.openapi();

/** Whether a list body holds its items in an array the SDK reads: `either` for names only some servers use. */
function itemArray(body: unknown, plural: string): 'yes' | 'no' | 'either' {
  if (Array.isArray(body)) return 'yes';
  if (!isRecord(body)) return 'no';
  const holders = isRecord(body.data) ? [body, body.data] : [body];
  const has = (keys: string[]) => holders.some((holder) => keys.some((key) => Array.isArray(holder[key])));
  if (has(['data', 'items', 'results', 'records', plural])) return 'yes';
  return has(['transactions']) ? 'either' : 'no';
}

// --- 1. Any JSON at every route -------------------------------------------------------------------

describe('any JSON body (fc.jsonValue) at every route', () => {
  const anyBody = fc.tuple(fc.jsonValue({ maxDepth: 4 }), status2xx);

  test.each(Object.entries(SHOWN))('shown %s: RVE for a non-object; a result has usable acted-on fields', async (name, call) => {
    await fc.assert(
      fc.asyncProperty(anyBody, async ([raw, status]) => {
        const body = wire(raw);
        const outcome = await attempt({ status, body }, call);
        if (checkCommon(outcome, body, status)) return;
        if (!isRecord(body)) return expectRVE(outcome, `a ${Array.isArray(body) ? 'list' : typeof body} body`);
        if (!outcome.ok) return;
        const value = outcome.value as Record<string, unknown>;
        if (name === 'payments.create' || name === 'payments.verify') {
          expect([typeof value.trx_id, typeof value.status, typeof value.amount, typeof value.currency]).toEqual([
            'string',
            'string',
            'number',
            'string',
          ]);
        }
        if (name === 'payments.initiate') expect(typeof value.payment_url).toBe('string');
        if (name === 'payouts.preview') expect([typeof value.fee, typeof value.payable_amount]).toEqual(['number', 'number']);
      }),
      runs(25),
    );
  });

  test.each(Object.entries(PROVISIONAL))('provisional %s: never a ResponseValidationError', async (_name, call) => {
    await fc.assert(
      fc.asyncProperty(anyBody, async ([raw, status]) => {
        const body = wire(raw);
        const outcome = await attempt({ status, body }, call);
        checkCommon(outcome, body, status);
        expect(outcome.ok || !(outcome.error instanceof ResponseValidationError), `RVE for ${JSON.stringify(body)}`).toBe(true);
      }),
      runs(25),
    );
  });

  test.each(Object.entries(LISTS))('list %s: RVE exactly for a body with no item array', async (_name, { call, plural }) => {
    await fc.assert(
      fc.asyncProperty(anyBody, async ([raw, status]) => {
        const body = wire(raw);
        const outcome = await attempt({ status, body }, call);
        if (checkCommon(outcome, body, status)) return;
        const items = itemArray(body, plural);
        if (items === 'no') expectRVE(outcome, `no item array in ${JSON.stringify(body)}`);
        if (items === 'yes') expect(outcome.ok, `${outcome.ok ? '' : String(outcome.error)} for ${JSON.stringify(body)}`).toBe(true);
      }),
      runs(25),
    );
  });

  test('openapi: any object is the document, as sent; anything else is a ResponseValidationError', async () => {
    await fc.assert(
      fc.asyncProperty(anyBody, async ([raw, status]) => {
        const body = wire(raw);
        const outcome = await attempt({ status, body }, OPENAPI);
        if (checkCommon(outcome, body, status)) return;
        // zod's object parsing skips a "__proto__" key (prototype-pollution hardening): not compared.
        if (isRecord(body) && !JSON.stringify(body).includes('"__proto__"')) expect(outcome).toStrictEqual({ ok: true, value: body });
        else if (isRecord(body)) expect(outcome.ok).toBe(true);
        else expectRVE(outcome, 'not an object');
      }),
      runs(25),
    );
  });
});

// --- 2. A body that is not JSON -------------------------------------------------------------------

describe('a body that is not JSON', () => {
  const notJson = fc.oneof(
    fc.string({ maxLength: 20 }).filter((s) => {
      try {
        // A leading BOM is dropped by the UTF-8 decoder, as Response.text() does.
        JSON.parse(s.replace(/^\uFEFF/, ''));
        return false;
      } catch {
        return true;
      }
    }),
    fc.constantFrom('<html><body>502 Bad Gateway</body></html>', '{"trx_id": "TRX1", "status": "pen', 'OK', 'null null'),
  );
  const every: Record<string, Call> = {
    ...SHOWN,
    ...PROVISIONAL,
    ...Object.fromEntries(Object.entries(LISTS).map(([name, list]) => [name, list.call])),
    openapi: OPENAPI,
  };
  test.each(Object.entries(every))('%s: ResponseValidationError (push: a blank body is {})', async (name, call) => {
    await fc.assert(
      fc.asyncProperty(notJson, status2xx, async (text, status) => {
        const outcome = await attempt({ status, text }, call);
        if (name === 'payments.push' && text.trim() === '') expect(outcome).toStrictEqual({ ok: true, value: {} });
        else expectRVE(outcome, `text ${JSON.stringify(text)}`);
      }),
      runs(5),
    );
  });
});

// --- 3. Shown routes: bodies built from the spec's fields ------------------------------------------

describe('shown routes: ResponseValidationError exactly when an acted-on field is missing or unusable', () => {
  test('payments.create: trx_id (or the envelope’s), status, amount, currency', async () => {
    const payment = rec({
      trx_id: id,
      merchant_ref: text,
      amount,
      currency: text,
      status: PAYMENT_STATUS,
      checkout_url: text,
      expires_at: text,
      environment: word('sandbox', 'production'),
    });
    const arb = fc
      .tuple(payment, fc.constantFrom('envelope', 'success', 'bare'), fc.option(id, { nil: undefined }), status2xx)
      .map(([resource, kind, topId, status]): Case => {
        const body = wire(
          kind === 'envelope'
            ? { status: 'success', data: resource, trx_id: topId, payment_url: 'https://checkout.other.test/c/1' }
            : kind === 'success'
              ? { success: true, data: resource }
              : resource,
        );
        // A flat body's `status` of success/failed… is the envelope's (the spec's creation
        // response has top-level status "success"), never the payment's.
        const ownStatus = kind !== 'bare' || !(typeof resource.status === 'string' && ENVELOPE_WORD.test(resource.status));
        const trxId = kind === 'envelope' ? (resource.trx_id ?? (body as { trx_id?: unknown }).trx_id) : resource.trx_id;
        const paymentStatus = ownStatus ? resource.status : undefined;
        const usable = acted([usableId(trxId), usableText(paymentStatus), usableAmount(resource.amount), usableText(resource.currency)]);
        return {
          body,
          status,
          check: (outcome) => {
            const value = byActed(outcome, usable, body, true);
            if (!value) return;
            expect(value).toMatchObject({
              trx_id: asId(trxId),
              status: paymentStatus,
              amount: asNumber(resource.amount),
              currency: resource.currency,
            });
            expectKept(value, resource, ['trx_id', 'status', 'amount', 'currency']);
          },
        };
      });
    await property(arb, SHOWN['payments.create']!, 60);
  });

  test('payments.initiate: payment_url; info read PHP-style, nothing lost', async () => {
    const info = rec({
      ref_trx: text,
      description: text,
      merchant_id: often(fc.oneof(fc.integer({ min: 1, max: 1e6 }), fc.integer({ min: 1, max: 1e6 }).map(String))),
      merchant_name: text,
      amount,
      currency_code: text,
      environment: word('sandbox', 'production'),
      is_sandbox: often(fc.constantFrom(true, false, 1, 0, '1', '0', 'true', 'false')),
      merchant_payment_methods_restricted: often(fc.constantFrom(true, false, 1, 0, '1', '0')),
      allow_payment_methods: often(fc.array(fc.string({ maxLength: 5 }), { maxLength: 2 })),
      merchant_payment_method_ids: often(fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 3 })), { maxLength: 3 })),
    });
    const session = rec({
      payment_url: often(fc.stringMatching(/^[a-z0-9]{1,8}$/).map((path) => `https://checkout.other.test/pay/${path}?signature=f00`)),
      info: fc.oneof({ weight: 4, arbitrary: info }, { weight: 1, arbitrary: junk }),
      data: fc.oneof(rec({ trx_id: id, checkout_url: text }), junk),
    });
    const arb = fc.tuple(session, status2xx).map(([body, status]): Case => ({
      body,
      status,
      check: (outcome) => {
        const value = byActed(outcome, usableText(body.payment_url), body, true);
        if (value) expectKept(value, body);
      },
    }));
    await property(arb, SHOWN['payments.initiate']!, 40);
  });

  test('payments.verify: status, trx_id (the one asked for), and once it succeeded amount and currency; an envelope’s status never the payment’s', async () => {
    // Mostly the id asked for (TRX1, in any case), else another: an answer about another
    // payment is refused like one without a usable id.
    const asked = fc.oneof({ weight: 3, arbitrary: fc.constantFrom('TRX1', 'trx1', 'Trx1') }, { weight: 1, arbitrary: id });
    const transaction = rec({
      status: PAYMENT_STATUS,
      trx_id: asked,
      amount,
      fee: amount,
      currency: text,
      net_amount: amount,
      customer: fc.oneof(rec({ name: text, email: text }), junk),
      description: text,
      created_at: text,
      updated_at: text,
    });
    const arb = fc.tuple(transaction, fc.constantFrom(...SHOWN_WRAPPERS), status2xx).map(([inner, kind, status]): Case => {
      const { body, resource } = wrap(kind, inner);
      // The earlier generation sends no amount or currency while pending or after a failure.
      const paid = inner.status === 'success' ? [usableAmount(inner.amount), usableText(inner.currency)] : [];
      const sameId = usableId(inner.trx_id) && String(inner.trx_id).toLowerCase() === 'trx1';
      const usable = acted([usableText(inner.status), usableId(inner.trx_id) && sameId, ...paid]);
      return {
        body,
        status,
        check: (outcome) => {
          const value = byActed(outcome, usable, body, false);
          if (!value) return;
          const want = { status: inner.status, trx_id: asId(inner.trx_id), amount: asNumber(inner.amount), currency: inner.currency };
          // Absent ones (pending or failed) stay absent.
          expect(value).toMatchObject(Object.fromEntries(Object.entries(want).filter(([, field]) => field !== undefined)));
          expectKept(value, resource, ['trx_id', 'amount']);
        },
      };
    });
    await property(arb, SHOWN['payments.verify']!, 60);
  });

  test('siteInfo.retrieve: nothing acted on, every field kept (site_logo: null included)', async () => {
    const site = rec({
      site_name: text,
      site_logo: text,
      site_url: text,
      gateway_name: text,
      gateway_description: text,
      features: fc.oneof(rec({ ssl_secured: text, instant_processing: text, global_support: text, mobile_ready: text }), junk),
      environments: fc.oneof(rec({ production: text, sandbox: text }), junk),
      api_version: text,
      status: word('operational', 'ok', 'maintenance', 'error'),
    });
    const arb = fc.tuple(site, fc.constantFrom(...SHOWN_WRAPPERS), status2xx).map(([inner, kind, status]): Case => {
      const { body, resource } = wrap(kind, inner);
      return {
        body,
        status,
        check: (outcome) => {
          const value = byActed(outcome, true, body, false);
          if (value) expectKept(value, resource);
        },
      };
    });
    await property(arb, SHOWN['siteInfo.retrieve']!, 30);
  });

  test('payouts.preview: fee and payable_amount', async () => {
    const preview = rec({ amount, fee: amount, payable_amount: amount, currency: text });
    const arb = fc.tuple(preview, fc.constantFrom(...SHOWN_WRAPPERS), status2xx).map(([inner, kind, status]): Case => {
      const { body, resource } = wrap(kind, inner);
      return {
        body,
        status,
        check: (outcome) => {
          const value = byActed(outcome, usableAmount(inner.fee) && usableAmount(inner.payable_amount), body, false);
          if (!value) return;
          expect(value).toMatchObject({ fee: asNumber(inner.fee), payable_amount: asNumber(inner.payable_amount) });
          expectKept(value, resource);
        },
      };
    });
    await property(arb, SHOWN['payouts.preview']!, 40);
  });
});

// --- 4. Provisional routes: bodies built from the known field names --------------------------------

/** How one provisional record is read: canonical fields and their other names, number fields. */
interface Reading {
  ids?: Record<string, readonly string[]>;
  aliases?: Record<string, readonly string[]>;
  numbers?: readonly string[];
}
const PAYMENT: Reading = {
  ids: { trx_id: ['transaction_id', 'trxId'] },
  aliases: { status: ['state', 'payment_status'] },
  numbers: ['amount', 'fee', 'net_amount'],
};

/** Checks `got` is `resource` read by `reading`: canonical fields filled, nothing else lost. */
function expectRead(got: unknown, resource: Record<string, unknown>, reading: Reading, skip: readonly string[] = []): void {
  expect(isRecord(got), `an object: ${JSON.stringify(got)}`).toBe(true);
  const record = got as Record<string, unknown>;
  const canonical = [...Object.keys(reading.ids ?? {}), ...Object.keys(reading.aliases ?? {})];
  const read = (name: string, value: unknown) =>
    reading.numbers?.includes(name) && typeof value === 'string' && DECIMAL.test(value.trim()) ? Number(value) : value;
  for (const [name, others] of Object.entries(reading.ids ?? {})) {
    if (skip.includes(name)) continue;
    expect(record[name], name).toStrictEqual(read(name, asId(filled(resource, name, others))));
  }
  for (const [name, others] of Object.entries(reading.aliases ?? {})) {
    if (skip.includes(name)) continue;
    expect(record[name], name).toStrictEqual(read(name, filled(resource, name, others)));
  }
  expectKept(record, resource, [...canonical, ...skip]);
}

const payment = rec({
  trx_id: id,
  transaction_id: id,
  trxId: id,
  status: PAYMENT_STATUS,
  state: PAYMENT_STATUS,
  payment_status: PAYMENT_STATUS,
  amount,
  fee: amount,
  net_amount: amount,
  currency: text,
  merchant_ref: text,
  failure_reason: text,
  customer: fc.oneof(rec({ name: text, phone: text }), junk),
  push_count: often(fc.integer({ min: 0, max: 5 })),
});

// Where servers put a payout's outcome and the words they use for it.
const UNSETTLED = /(?:^|[^a-z])(in[ _-]?progress|ambiguous)(?:[^a-z]|$)/i;
const OUTCOME_WORDS: Record<string, string> = {
  SUCCESS: 'SUCCESS',
  SUCCESSFUL: 'SUCCESS',
  Completed: 'SUCCESS',
  paid: 'SUCCESS',
  FAILED: 'FAILED',
  failure: 'FAILED',
  rejected: 'FAILED',
  PENDING: 'INPROGRESS',
  processing: 'INPROGRESS',
  queued: 'INPROGRESS',
  IN_PROGRESS: 'INPROGRESS',
  'in-progress': 'INPROGRESS',
  AMBIGUOUS: 'AMBIGUOUS',
  Ambiguous: 'AMBIGUOUS',
  REVERSED: 'REVERSED',
};
const payoutWord = often(fc.constantFrom(...Object.keys(OUTCOME_WORDS), 'success'));
const payout = rec({
  id: uuid,
  payout_id: uuid,
  uuid,
  reference: uuid,
  amount,
  fee: amount,
  payable_amount: amount,
  currency: text,
  destination: text,
  status: payoutWord,
  payout_status: payoutWord,
  state: payoutWord,
  code: word('TRANSACTION_AMBIGUOUS', 'E100', 'OK'),
  message: word('network did not confirm', 'Payout Ambiguous', 'queued', 'done'),
});

/** The SDK's reading of a payout's outcome: INPROGRESS/AMBIGUOUS anywhere, else its status word mapped. */
function payoutOutcome(record: Record<string, unknown>): unknown {
  const unsettled = UNSETTLED.exec(JSON.stringify(record));
  if (unsettled) return /ambig/i.test(unsettled[1]!) ? 'AMBIGUOUS' : 'INPROGRESS';
  const spoken = ['status', 'payout_status', 'state'].map((key) => record[key]).find((value) => typeof value === 'string') as
    string | undefined;
  if (spoken === undefined) return record.status;
  const known = Object.entries(OUTCOME_WORDS).find(
    ([spelling]) => spelling.toUpperCase().replace(/[ _-]/g, '') === spoken.toUpperCase().replace(/[ _-]/g, ''),
  );
  return known ? known[1] : spoken === 'success' ? 'SUCCESS' : spoken;
}

const PAYOUT: Reading = { ids: { id: ['payout_id', 'uuid', 'reference'] }, numbers: ['amount', 'fee', 'payable_amount'] };

function expectPayout(got: unknown, resource: Record<string, unknown>): void {
  expectRead(got, resource, PAYOUT, ['status']);
  const record = got as Record<string, unknown>;
  const outcome = payoutOutcome(resource);
  expect(record.status, `status of ${JSON.stringify(resource)}`).toStrictEqual(outcome);
  if (resource.status !== undefined && outcome !== resource.status) expect(record.server_status).toStrictEqual(resource.status);
  else expect(record.server_status).toBeUndefined();
}

const CANONICAL_IDS = (record: Record<string, unknown>) => IDS.some((key) => record[key] != null);
const isEnvelopeWord = (status: unknown) => typeof status === 'boolean' || (typeof status === 'string' && ENVELOPE_WORD.test(status));

describe('provisional routes: never a ResponseValidationError; every field kept; canonical fields filled', () => {
  /** A property over `record` in every envelope of `wrappers`, read by `check(value, resource)`. */
  function provisional(
    record: fc.Arbitrary<Record<string, unknown>>,
    name: string,
    check: (value: unknown, resource: Record<string, unknown>, kind: Wrapper) => void,
    wrappers: Wrapper[] = ALL_WRAPPERS,
  ): fc.Arbitrary<Case> {
    return fc.tuple(record, fc.constantFrom(...wrappers), status2xx).map(([inner, kind, status]): Case => {
      const { body, resource } = wrap(kind, inner, name);
      return {
        body,
        status,
        check: (outcome) => {
          expect(outcome.ok, `${outcome.ok ? '' : String(outcome.error)} for ${JSON.stringify(body)}`).toBe(true);
          check((outcome as { value: unknown }).value, resource, kind);
        },
      };
    });
  }

  test('payments.retrieve: trx_id ← transaction_id, status ← state / payment_status, decimal amounts', async () => {
    await property(
      provisional(payment, 'payment', (value, resource) => expectRead(value, resource, PAYMENT)),
      PROVISIONAL['payments.retrieve']!,
      50,
    );
  });

  test('payments.push: the status is the resource’s; a flat body’s success/failed word is the envelope’s', async () => {
    const arb = fc
      .tuple(payment, fc.constantFrom<Wrapper | 'reproduction'>(...ALL_WRAPPERS, 'reproduction'), status2xx)
      .map(([inner, kind, status]): Case => {
        const { body, resource } =
          kind === 'reproduction'
            ? { body: { status: 'success', trx_id: 'TRX1', data: inner }, resource: { trx_id: 'TRX1', ...inner } }
            : wrap(kind, inner, 'payment');
        // Flat: the envelope's word is dropped, the payment's own status read from its other names.
        const { status: flatStatus, ...rest } = resource;
        const read = kind === 'bare' && isEnvelopeWord(flatStatus) ? rest : resource;
        return {
          body,
          status,
          check: (outcome) => {
            expect(outcome.ok, `${outcome.ok ? '' : String(outcome.error)} for ${JSON.stringify(body)}`).toBe(true);
            expectRead((outcome as { value: unknown }).value, read, PAYMENT);
          },
        };
      });
    await property(arb, PROVISIONAL['payments.push']!, 50);
  });

  for (const name of ['payouts.create', 'payouts.retrieve']) {
    test(`${name}: id ← payout_id / uuid / reference; status: INPROGRESS/AMBIGUOUS anywhere, else the word mapped`, async () => {
      const arb = provisional(payout, 'payout', (value, resource, kind) => {
        // A flat body naming no id at all: its success/failed word is the envelope's.
        const flat = kind === 'bare' && !CANONICAL_IDS(resource) && isEnvelopeWord(resource.status);
        const { status: _envelope, ...rest } = resource;
        expectPayout(value, flat ? rest : resource);
      });
      await property(arb, PROVISIONAL[name]!, 50);
    });
  }

  test('billing.plans.create: plan_code ← code / plan_id / id, amount ← price', async () => {
    const plan = rec({
      plan_code: id,
      code: id,
      plan_id: id,
      id,
      name: text,
      amount,
      price: amount,
      currency: text,
      interval: word('month', 'monthly', 'year'),
      interval_count: amount,
      status: word('active', 'inactive'),
    });
    const reading: Reading = {
      ids: { plan_code: ['code', 'plan_id', 'id'] },
      aliases: { amount: ['price'] },
      numbers: ['amount', 'price', 'interval_count'],
    };
    await property(
      provisional(plan, 'plan', (value, resource) => expectRead(value, resource, reading)),
      PROVISIONAL['billing.plans.create']!,
      40,
    );
  });

  test('billing.subscriptions.create: id ← subscription_id', async () => {
    const subscription = rec({
      id,
      subscription_id: id,
      plan_code: text,
      status: word('pending', 'active', 'past_due'),
      customer_phone: text,
      amount,
      currency: text,
      consent: fc.oneof(rec({ terms_shown: text, accepted_at: text }), junk),
    });
    const reading: Reading = { ids: { id: ['subscription_id'] }, numbers: ['amount'] };
    await property(
      provisional(subscription, 'subscription', (value, resource) => expectRead(value, resource, reading)),
      PROVISIONAL['billing.subscriptions.create']!,
      40,
    );
  });

  test('balance.retrieve: wallets from a list, any envelope, a list key, or a currency map', async () => {
    const WALLET: Reading = {
      aliases: { balance: ['available', 'available_balance', 'amount'] },
      numbers: ['balance', 'available', 'available_balance', 'amount', 'pending', 'pending_balance'],
    };
    const walletFields = { balance: amount, available: amount, available_balance: amount, amount, pending: amount };
    const wallet = rec({ currency: fc.constantFrom('USD', 'TZS', 'EUR'), ...walletFields });
    const wallets = fc.array(fc.oneof({ weight: 5, arbitrary: wallet }, { weight: 1, arbitrary: junk }), { maxLength: 4 });
    const listForm = fc.constantFrom('bare', 'data', 'status_data', 'wallets', 'balances', 'items', 'accounts', 'nested', 'named');
    const currencies = fc.dictionary(
      fc.stringMatching(/^[A-Z]{3}$/),
      fc.oneof(
        amount.filter((v) => !isRecord(v)),
        rec(walletFields),
      ),
      {
        minKeys: 1,
        maxKeys: 3,
      },
    );
    const mapForm = fc.constantFrom('bare', 'status_data', 'named');
    const asList = fc.tuple(wallets, listForm, status2xx).map(([list, form, status]): Case => {
      const bodies: Record<string, unknown> = {
        bare: list,
        data: { data: list },
        status_data: { status: 'success', data: list },
        wallets: { wallets: list },
        balances: { balances: list },
        items: { items: list },
        accounts: { accounts: list },
        nested: { data: { wallets: list } },
        named: { balance: { balances: list } },
      };
      return {
        body: bodies[form],
        status,
        check: (outcome) => {
          expect(outcome.ok).toBe(true);
          const got = (outcome as { value: unknown[] }).value;
          expect(got).toHaveLength(list.length);
          list.forEach((sent, i) => (isRecord(sent) ? expectRead(got[i], sent, WALLET) : expect(got[i]).toStrictEqual(sent)));
        },
      };
    });
    const asMap = fc.tuple(currencies, mapForm, status2xx).map(([map, form, status]): Case => {
      const body = form === 'bare' ? map : form === 'status_data' ? { status: 'success', data: map } : { balance: map };
      return {
        body,
        status,
        check: (outcome) => {
          expect(outcome.ok).toBe(true);
          const got = (outcome as { value: unknown[] }).value;
          expect(got).toHaveLength(Object.keys(map).length);
          Object.entries(map).forEach(([currency, entry], i) => {
            if (isRecord(entry)) expectRead(got[i], { currency, ...entry }, WALLET);
            else expect(got[i]).toStrictEqual({ currency, balance: asNumber(entry) });
          });
        },
      };
    });
    await property(fc.oneof(asList, asMap), PROVISIONAL['balance.retrieve']!, 50);
  });
});

// --- 5. Lists: the first page of any list body, and whole walks -----------------------------------

const LIST_ITEMS: Record<
  string,
  { record: fc.Arbitrary<Record<string, unknown>>; check: (got: unknown, sent: Record<string, unknown>) => void }
> = {
  'payments.list': { record: payment, check: (got, sent) => expectRead(got, sent, PAYMENT) },
  'payouts.list': { record: payout, check: expectPayout },
  'billing.invoices.list': {
    record: rec({
      id,
      invoice_id: id,
      subscription: text,
      subscription_id: text,
      status: word('open', 'paid', 'uncollectible'),
      amount,
      fee: amount,
      net_amount: amount,
      attempt_count: amount,
      currency: text,
    }),
    check: (got, sent) =>
      expectRead(got, sent, {
        ids: { id: ['invoice_id'], subscription: ['subscription_id'] },
        numbers: ['amount', 'fee', 'net_amount', 'attempt_count'],
      }),
  },
};

describe('lists: the item array is the one acted-on part', () => {
  test.each(Object.entries(LISTS))(
    '%s: any envelope with an item array reads every item; none is an RVE',
    async (name, { call, plural }) => {
      const { record, check } = LIST_ITEMS[name]!;
      const items = fc.array(fc.oneof({ weight: 5, arbitrary: record }, { weight: 1, arbitrary: junk }), { maxLength: 4 });
      const forms = fc.constantFrom(
        'bare',
        'has_more',
        'meta',
        'laravel',
        'nested',
        'items',
        'results',
        'records',
        'plural',
        'object',
        'message',
        'null',
      );
      const arb = fc.tuple(items, forms, junk, status2xx).map(([list, form, noise, status]): Case => {
        const bodies: Record<string, unknown> = {
          bare: list,
          has_more: { data: list, has_more: noise },
          meta: { data: list, meta: { total: noise, limit: 10, offset: 0 } },
          laravel: { data: list, links: { next: noise }, meta: { current_page: 1, last_page: noise, per_page: 15, total: noise } },
          nested: { status: 'success', data: { data: list, total: noise } },
          items: { items: list, hasMore: noise },
          results: { count: noise, next: null, results: list },
          records: { records: list, pagination: noise },
          plural: { [plural]: list, total: noise },
          object: { data: { trx_id: 'TRX1', id: 'inv_1', amount: 1 } },
          message: { message: 'No records', total: 0 },
          null: { data: null, meta: { total: 0 } },
        };
        const body = wire(bodies[form]);
        const hasArray = !['object', 'message', 'null'].includes(form);
        return {
          body,
          status,
          check: (outcome) => {
            if (!hasArray) return expectRVE(outcome, `no item array in ${JSON.stringify(body)}`);
            expect(outcome.ok, `${outcome.ok ? '' : String(outcome.error)} for ${JSON.stringify(body)}`).toBe(true);
            const page = (outcome as { value: { data: unknown[] } }).value;
            expect(page.data).toHaveLength(list.length);
            list.forEach((sent, i) => (isRecord(sent) ? check(page.data[i], sent) : expect(page.data[i]).toStrictEqual(sent)));
          },
        };
      });
      await property(arb, call, 40);
    },
  );

  test.each(Object.entries(LISTS))(
    '%s: a walk over any server’s pagination yields every item exactly once',
    async (_name, { walk, plural }) => {
      const arb = fc.tuple(
        fc.integer({ min: 0, max: 40 }),
        fc.constantFrom(...LIST_DIALECTS),
        fc.option(fc.integer({ min: 1, max: 20 }), { nil: undefined }),
      );
      await fc.assert(
        fc.asyncProperty(arb, async ([count, dialect, limit]) => {
          const items = Array.from({ length: count }, (_, i) => ({ id: `it_${i}`, trx_id: `it_${i}`, amount: `${i}.00` }));
          const outcome = await attempt(
            (req) => listReply(dialect, items, req, server.url, plural),
            async (c) => {
              const got: unknown[] = [];
              for await (const item of walk(c, limit)) if (got.push(item) > 2 * count + 2) throw new Error('the walk does not end');
              return got;
            },
          );
          expect(outcome.ok, outcome.ok ? '' : String(outcome.error)).toBe(true);
          const got = (outcome as { value: Array<Record<string, unknown>> }).value;
          expect(got.map((item) => item.id)).toEqual(items.map((item) => item.id));
        }),
        runs(15),
      );
    },
  );

  test.each(Object.entries(LISTS))(
    '%s: a walk over a server answering any JSON ends, and only in a PaymentsError',
    async (_name, { walk, plural }) => {
      const listy = fc.oneof(
        fc.jsonValue({ maxDepth: 3 }),
        fc.record({
          data: fc.array(fc.oneof(fc.record({ id: fc.string({ maxLength: 3 }) }), junk), { maxLength: 3 }),
          has_more: junk,
          links: fc.record({
            next: fc.oneof(junk, fc.constantFrom('?page=2', '/api/v1/x', 'https://elsewhere.test/p2', '//elsewhere.test/p')),
          }),
          meta: fc.record({ current_page: junk, last_page: junk, total: junk }),
          [plural]: junk,
        }),
      );
      await fc.assert(
        fc.asyncProperty(listy, async (raw) => {
          const body = wire(raw);
          const outcome = await attempt({ body }, async (c) => {
            const got: unknown[] = [];
            for await (const item of walk(c)) if (got.push(item) > 10_000) throw new Error('the walk does not end');
            return got;
          });
          if (!outcome.ok) expect(outcome.error).toBeInstanceOf(PaymentsError);
          else {
            const ids = (outcome.value as unknown[])
              .filter(isRecord)
              .map((item) => item.trx_id ?? item.id)
              .filter((v) => typeof v === 'string');
            expect(new Set(ids).size, 'an id yielded twice').toBe(ids.length);
          }
        }),
        runs(12),
      );
    },
  );
});

// --- 6. waitForOutcome: ends only on success or failed -------------------------------------------

test('payments.waitForOutcome ends on the first success or failed, whatever came before and in whatever envelope', async () => {
  const notFinal = fc.oneof(
    fc.constantFrom('pending', 'processing', 'initiated', 'PENDING', 'Success', 'FAILED', 'completed', 'canceled'),
    fc.string({ maxLength: 6 }).filter((s) => s !== 'success' && s !== 'failed'),
  );
  const arb = fc.tuple(fc.array(notFinal, { maxLength: 4 }), fc.constantFrom('success', 'failed'), fc.constantFrom(...SHOWN_WRAPPERS));
  await fc.assert(
    fc.asyncProperty(arb, async ([before, final, kind]) => {
      const statuses = [...before, final];
      let polls = 0;
      const outcome = await attempt(
        (req) => {
          if (!req.path.startsWith('/api/v1/verify-payment/')) return { status: 404, body: { error: 'Not Found' } };
          const status = statuses[Math.min(polls++, statuses.length - 1)];
          return { body: wrap(kind, { status, trx_id: 'TRX1', amount: '25.00', currency: 'USD', fee: null }).body };
        },
        // This file's client sends hundreds of requests a minute: its polls would wait for the
        // polling budget (docs/retries.md). This server has no rate limit.
        (c) => c.withOptions({ pollingBudget: 1_000_000 }).payments.waitForOutcome('TRX1', { interval: 1, timeout: 10_000 }),
      );
      expect(outcome.ok, outcome.ok ? '' : String(outcome.error)).toBe(true);
      expect((outcome as { value: { status: string } }).value.status).toBe(final);
      expect(polls).toBe(statuses.length);
    }),
    runs(12),
  );
});
