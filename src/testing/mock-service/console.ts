// The web console at the sandbox's root URL: payments, payouts, webhook events with every
// attempt, and the actions a developer needs while building an integration (settle a pending
// payment, resend an event, send a test event anywhere, switch how payouts are answered).
// Plain server-rendered HTML: every action is a form that POSTs and redirects back (303), so
// it works without JavaScript; a small inline script only refreshes the page while something
// is pending.
//
// It is a local development tool and takes no credentials. Forms carry a per-service token
// that only a page of this origin can read (the console sends no CORS headers), so another
// site open in the same browser cannot settle payments or send events. The payout switch also
// takes a JSON body (a script's control call), with the same token in it and the same guard:
// a page of another site can neither read the token nor send JSON here (no CORS answer).
// Over a real socket (listen()) the console also answers only requests sent for one of the
// server's own host names (http-server.ts), so a page of another site whose name is made to
// resolve to this machine (DNS rebinding: the same origin, to the browser) reads no page and
// token, and posts nothing: every console row, page or action, refuses another Host with 403.
import type { Ctx } from './context.js';
import { queueIpn, resendIpn } from './earlier-ipn.js';
import type { EarlierPaymentRow } from './earlier-row.js';
import type { PaymentRow } from './payments.js';
import { payoutBehaviour, type PayoutRow } from './payouts.js';
import { errorResponse, json } from './responses.js';
import type { MockDeliveryAttempt, MockMerchant, MockPayoutBehaviour, MockWebhookEvent } from './types.js';
import { formOf, type Exchange, type Step } from './router.js';
import { html, isObject, safeEqual } from './util.js';
import { isHttpUrl } from './validation.js';
import { EVENT_TYPES, resendEvent, webhookSecretOf } from './webhooks.js';

/** Rows a list shows: the newest first. */
const LIST_LIMIT = 50;

/** Failure reasons a developer can settle a pending payment with (the spec's codes, and the checkout's). */
const FAILURE_REASONS = {
  INSUFFICIENT_FUNDS: 'Customer has insufficient funds.',
  PAYMENT_DECLINED: 'Declined by the payment processor.',
  CANCELED: 'The customer canceled hosted checkout.',
  EXPIRED_SESSION: 'Payment session expired; create a new payment.',
  TIMEOUT: 'The customer did not answer in time.',
} as const;

/** Event types the console can send as a test: every one the spec documents. */
const TEST_EVENT_TYPES = EVENT_TYPES;

/** What the console needs from the service around it. */
export interface ConsoleContext {
  ctx: Ctx;
  /** Token every console form carries. */
  token: string;
  /** Public base of the service as the browser reached it (origin plus base path). */
  base: string;
  /** The request's Origin header, if it sent one (browsers do on every form post). */
  origin: string | null;
  /** Runs due jobs when the service runs its own clock (so a resend's effects show at once). */
  settle: () => Promise<void>;
}

/** Console page views: answered, but kept out of the request log (a pending page reloads every 2 s). */
export const PAGE_VIEWS = new WeakSet<Response>();

/** The console's view of a request. */
function consoleOf(x: Exchange): ConsoleContext {
  const { ctx, consoleToken } = x.service;
  const settle = async () => (ctx.autoRun ? ctx.scheduler.runDue() : undefined);
  return { ctx, token: consoleToken, base: x.base, origin: x.request.headers.get('origin'), settle };
}

/** The console's refusal of a request sent for another host name (see http-server.ts), before anything else. */
function foreignHostRefused(x: Exchange): Response | undefined {
  if (x.foreignHost === undefined) return undefined;
  const port = x.url.port ? `:${x.url.port}` : '';
  return page(
    403,
    'Refused',
    `<h1>Refused</h1><p>This sandbox console answers only at its own address, not at ${html(JSON.stringify(x.foreignHost))}: open it at <code>http://localhost${html(port)}/</code> or <code>http://127.0.0.1${html(port)}/</code> (or an IP address of this machine, or the host it was started on). A page of another site must not reach it under a name of its own (DNS rebinding).</p>`,
  );
}

/** Step of the console's GET and HEAD rows: the answer is a page view (refused for another host name). */
export const pageView: Step = async (x, next) => {
  const refused = foreignHostRefused(x);
  if (refused) return refused;
  const view = await next();
  PAGE_VIEWS.add(view);
  return view;
};

/**
 * Step of the console's POST rows: a request sent for another host name is refused (DNS
 * rebinding, see http-server.ts); a form posted from another site carries that site's Origin
 * and is refused even before the token, compared in constant time (the console's only credential).
 * A JSON body (Content-Type application/json, which a page of another site cannot send here
 * without a CORS preflight the console never answers) carries the token as its `token` field.
 */
export const formToken: Step = async (x, next) => {
  const refused = foreignHostRefused(x);
  if (refused) return refused;
  const c = consoleOf(x);
  const crossSite = c.origin !== null && c.origin !== new URL(c.base).origin;
  if (!crossSite && safeEqual(postedToken(x), c.token)) return next();
  return page(
    403,
    'Refused',
    '<h1>Refused</h1><p>This form did not come from the console page (its token is missing or stale). Reload the console and try again.</p>',
  );
};

/** Whether a console POST is a JSON control call (else an HTML form). */
const isJsonPost = (x: Exchange): boolean => /^application\/([\w.-]+\+)?json\b/i.test((x.request.headers.get('content-type') ?? '').trim());

/** A JSON control call's body, or undefined when it is not a JSON object. */
function jsonOf(x: Exchange): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(x.rawBody));
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The token a console POST carries: the form's `token` field, or a JSON body's. */
function postedToken(x: Exchange): string {
  if (!isJsonPost(x)) return formOf(x).get('token') ?? '';
  const token = jsonOf(x)?.token;
  return typeof token === 'string' ? token : '';
}

/** GET / (for a browser), /console: the payments, the payouts, the events and the test-event form. */
export const consoleHome = (x: Exchange): Response => page(200, 'Sandbox console', home(consoleOf(x)));
/** GET /console/payments/{trx} */
export const consolePayment = (x: Exchange): Response => paymentPage(consoleOf(x), x.params.trx!);
/** GET /console/events/{id} */
export const consoleEvent = (x: Exchange): Response => eventPage(consoleOf(x), x.params.id!);
/** POST /console/payments/{trx}/settle */
export const consoleSettle = (x: Exchange): Promise<Response> => settleAction(consoleOf(x), x.params.trx!, formOf(x));
/** POST /console/events/{id}/resend */
export const consoleResend = (x: Exchange): Promise<Response> => resendAction(consoleOf(x), x.params.id!);
/** POST /console/events/test */
export const consoleTestEvent = (x: Exchange): Promise<Response> => testEventAction(consoleOf(x), formOf(x));
/** POST /console/payouts/behaviour: the Payouts switch (a form, or a JSON control call). */
export const consolePayoutBehaviour = (x: Exchange): Response => payoutBehaviourAction(consoleOf(x), x);
/** Any other console path. */
export const consoleNotFound = (): Response => notFound();
/** A console path with a method other than GET, HEAD and POST. */
export const consoleMethodNotAllowed = (): Response =>
  page(405, 'Method not allowed', '<h1>Method not allowed</h1>', { Allow: 'GET, POST' });

async function settleAction(c: ConsoleContext, trx: string, form: URLSearchParams): Promise<Response> {
  const row = c.ctx.state.payments.get(trx) as PaymentRow | undefined;
  if (!row) return notFound();
  const outcome = form.get('outcome');
  if (outcome !== 'success' && outcome !== 'failed') return badRequest(c, 'Choose success or failed.');
  const reason = form.get('reason') ?? 'PAYMENT_DECLINED';
  if (outcome === 'failed' && !(reason in FAILURE_REASONS)) return badRequest(c, `Unknown failure reason ${reason}.`);
  if (row.status !== 'pending') return badRequest(c, `Payment ${trx} is already ${row.status}; only a pending payment can be settled.`);
  c.ctx.settle(trx, outcome, outcome === 'success' ? {} : { reason, message: FAILURE_REASONS[reason as keyof typeof FAILURE_REASONS] });
  await c.settle();
  return redirect(`${c.base}/console/payments/${encodeURIComponent(trx)}`);
}

// A form redirects back to the console (303); a JSON call gets the behaviour now in force (200)
// or 400 with the error shape.
function payoutBehaviourAction(c: ConsoleContext, x: Exchange): Response {
  if (c.ctx.generation === 'earlier') return notFound(); // that generation has no payouts
  const asJson = isJsonPost(x);
  const refuse = (message: string) => (asJson ? errorResponse(400, 'Bad Request', message) : badRequest(c, message));
  try {
    let changes: Record<string, unknown>;
    if (asJson) {
      const body = jsonOf(x);
      if (!body) return refuse('The body must be a JSON object: { token, answer?, settleAs?, settleAfterMs?, loseAnswer? }.');
      const { token: _token, ...rest } = body;
      changes = rest;
    } else changes = behaviourForm(formOf(x));
    const now = payoutBehaviour(c.ctx, changes, 'Payout behaviour');
    return asJson ? json(200, now) : redirect(`${c.base}/#payouts`);
  } catch (error) {
    if (error instanceof TypeError || error instanceof RangeError) return refuse(error.message);
    throw error;
  }
}

/**
 * The Payouts form's fields as behaviour changes: `answer`, `settleAs`, `settleAfter` (seconds),
 * `loseAnswer` (a checkbox: lose every answer) else `losePercent` (0–100). An absent field
 * changes nothing.
 */
function behaviourForm(form: URLSearchParams): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  const answer = form.get('answer');
  if (answer !== null) changes.answer = answer;
  const settleAs = form.get('settleAs');
  if (settleAs !== null) changes.settleAs = settleAs;
  const after = form.get('settleAfter')?.trim();
  if (after) {
    const seconds = Number(after);
    if (!Number.isFinite(seconds) || seconds < 0)
      throw new RangeError(`Settle after must be a number of seconds ≥ 0, not ${JSON.stringify(after)}.`);
    changes.settleAfterMs = Math.round(seconds * 1000);
  }
  const always = form.get('loseAnswer');
  const percent = form.get('losePercent')?.trim();
  if (always !== null && always !== '0') changes.loseAnswer = 1;
  else if (always === '0' || percent !== undefined) {
    const share = percent ? Number(percent) : 0;
    if (!(share >= 0 && share <= 100))
      throw new RangeError(`Lose answers must be a percentage from 0 to 100, not ${JSON.stringify(percent)}.`);
    changes.loseAnswer = share / 100;
  }
  return changes;
}

async function resendAction(c: ConsoleContext, id: string): Promise<Response> {
  const event = c.ctx.state.events.find((e) => e.id === id);
  if (!event) return notFound();
  if (!event.url) return badRequest(c, 'This event has no endpoint URL: there is nowhere to send it.');
  await (event.generation === 'earlier' ? resendIpn(c.ctx, event) : resendEvent(c.ctx, event));
  return redirect(`${c.base}/console/events/${encodeURIComponent(id)}`);
}

async function testEventAction(c: ConsoleContext, form: URLSearchParams): Promise<Response> {
  const type = form.get('type') ?? '';
  const url = (form.get('url') ?? '').trim();
  if (!testTypes(c.ctx).includes(type)) return badRequest(c, `Unknown event type ${type}.`);
  if (!isHttpUrl(url)) return badRequest(c, 'The URL must be an absolute http:// or https:// URL, e.g. http://localhost:3000/webhooks.');
  const merchant = c.ctx.state.merchants[0]!;
  const before = c.ctx.state.events.length;
  if (c.ctx.generation === 'earlier') {
    const result = type === 'payment.completed' ? 'success' : 'failed';
    queueIpn(c.ctx, { merchantId: merchant.id, environment: 'sandbox', url, data: sampleIpnData(c.ctx, merchant.name), result });
  } else c.ctx.emit({ merchant, environment: 'sandbox', type, url, data: sampleData(c.ctx, type) });
  await c.settle();
  const event = c.ctx.state.events[before] ?? c.ctx.state.events.at(-1);
  return redirect(event ? `${c.base}/console/events/${encodeURIComponent(event.id)}` : `${c.base}/`);
}

// A test event's data: the newest payment's fields for payment.*, a small object otherwise.
function sampleData(ctx: Ctx, type: string): Record<string, unknown> {
  if (type.startsWith('payment.')) {
    const row = [...ctx.state.payments.values()].at(-1) as PaymentRow | undefined;
    const amount = { value: row?.amount ?? 100, currency: row?.currency ?? 'USD' };
    return {
      trx_id: row?.trx_id ?? 'TXNTEST0000000001',
      merchant_ref: row?.merchant_ref ?? 'test-order',
      status: type === 'payment.completed' ? 'completed' : 'failed',
      amount,
      settlement: { gross: amount, fees: { value: 0, currency: amount.currency }, net: amount },
      customer: { name: row?.customer.name ?? null, email: row?.customer.email ?? null, phone: row?.customer.phone ?? null },
      environment: 'sandbox',
      test: true,
    };
  }
  return { id: `${type.split('.')[0]}_test`, test: true };
}

/** Event types the console can send as a test on this generation (the earlier one has the IPN's two outcomes). */
const testTypes = (ctx: Ctx): readonly string[] =>
  ctx.generation === 'earlier' ? ['payment.completed', 'payment.failed'] : TEST_EVENT_TYPES;

// A test IPN's data: the newest payment's echo, or a sample of the same fields.
function sampleIpnData(ctx: Ctx, merchantName: string): Record<string, unknown> {
  const row = [...ctx.state.payments.values()].at(-1) as EarlierPaymentRow | undefined;
  if (row?.echo) return { ...row.echo, trx_id: row.trx_id };
  return {
    ref_trx: 'test-order',
    description: 'Test IPN from the sandbox console',
    merchant_name: merchantName,
    amount: 100,
    currency_code: 'USD',
    environment: 'sandbox',
    is_sandbox: true,
    trx_id: 'TRXTEST000000001',
  };
}

function home(c: ConsoleContext): string {
  const payments = [...c.ctx.state.payments.values()].slice(-LIST_LIMIT).reverse() as unknown as PaymentRow[];
  const events = c.ctx.state.events.slice(-LIST_LIMIT).reverse();
  const payoutSettling = c.ctx.scheduler.pending().some((task) => task.label.startsWith('payout '));
  const pending = payments.some((p) => p.status === 'pending') || events.some((e) => e.status === 'pending') || payoutSettling;
  const merchant = c.ctx.state.merchants[0];
  const words = wording(c);
  return `<header><h1>Sandbox console</h1><p class="muted">${words.header}</p></header>
${
  merchant
    ? `<details><summary>Sandbox credentials</summary><dl class="kv">
<dt>Merchant key</dt><dd><code>${html(merchant.credentials.sandbox.merchantKey)}</code></dd>
<dt>API key</dt><dd><code>${html(merchant.credentials.sandbox.apiKey)}</code></dd>
<dt>API secret</dt><dd><code>${html(merchant.credentials.sandbox.apiSecret)}</code></dd>
${words.secret(merchant)}</dl>
<p class="muted">Test credentials of this local sandbox only; production keys are never shown. ${words.production}</p></details>`
    : ''
}
<section id="payments"><h2>Payments <span class="muted">(newest ${LIST_LIMIT})</span></h2>
${payments.length === 0 ? '<p class="muted">No payments yet: create one through the API (payments.create).</p>' : paymentsTable(c, payments)}
</section>
${c.ctx.generation === 'earlier' ? '' : payoutsSection(c)}
<section id="events"><h2>Webhook events <span class="muted">(newest ${LIST_LIMIT})</span></h2>
${events.length === 0 ? '<p class="muted">No events yet: they are sent when a payment settles, or from the form below.</p>' : eventsTable(c, events)}
</section>
<section id="test-event"><h2>Send a test event</h2>
<form method="post" action="${html(c.base)}/console/events/test" class="inline">
${tokenField(c)}
<label>Type <select name="type">${testTypes(c.ctx)
    .map((t) => `<option>${html(t)}</option>`)
    .join('')}</select></label>
<label>URL <input name="url" type="url" required placeholder="http://localhost:3000/webhooks" size="40"></label>
<button type="submit">Send</button></form>
<p class="muted">${words.test}</p></section>
${pending ? LIVE : ''}`;
}

// What the home page says of the API, the signing secret and test events, per generation.
function wording(c: ConsoleContext) {
  const api = `API at <code>${html(c.base)}/api/v1</code>`;
  if (c.ctx.generation === 'earlier') {
    return {
      header: `Business Payments API (simulated, earlier generation: initiate-payment, verify-payment, site-info) · ${api}`,
      secret: (_m: MockMerchant) => '<dt>IPN signing key</dt><dd>the API secret above (this generation has no webhook secret)</dd>',
      production: 'Production IPNs are signed with the production API secret.',
      test: 'A sandbox IPN (Payment Completed / Payment Failed), signed with the sandbox API secret; retried only when it times out (3 tries).',
    };
  }
  return {
    header: `Business Payments API (simulated) · ${api} · <a href="${html(c.base)}/api/v1/openapi.json">openapi.json</a>`,
    secret: (m: MockMerchant) =>
      `<dt>Webhook secret</dt><dd><code>${html(webhookSecretOf(m, 'sandbox'))}</code> (signs sandbox deliveries)</dd>`,
    production: 'Production deliveries are signed with the production webhook secret, not this one.',
    test: "A sandbox event, signed with the sandbox webhook secret and retried on the service's schedule (0, 3, 6, 12, 24 min) until a 2xx.",
  };
}

function paymentsTable(c: ConsoleContext, rows: PaymentRow[]): string {
  const body = rows
    .map(
      (
        p,
      ) => `<tr><td><a href="${html(c.base)}/console/payments/${html(encodeURIComponent(p.trx_id))}">${html(p.trx_id)}</a></td><td>${html(p.merchant_ref)}</td>
<td class="num">${html(p.amount)} ${html(p.currency)}</td><td>${badge(p.status)}</td><td>${html(p.payment_mode)}</td><td>${html(p.environment)}</td><td>${html(p.created_at)}</td></tr>`,
    )
    .join('\n');
  return `<table><thead><tr><th>Transaction</th><th>Reference</th><th>Amount</th><th>Status</th><th>Mode</th><th>Environment</th><th>Created</th></tr></thead><tbody>${body}</tbody></table>`;
}

const ANSWER_LABELS: Record<MockPayoutBehaviour['answer'], string> = {
  normal: 'normal (by amount)',
  INPROGRESS: 'INPROGRESS, settles later',
  AMBIGUOUS: 'AMBIGUOUS, settles later',
};

/** What the behaviour does, in words. */
function behaviourWords(b: MockPayoutBehaviour): string {
  const answer =
    b.answer === 'normal'
      ? 'New payouts are answered by amount (12.12 INPROGRESS, 13.13 AMBIGUOUS, 14.14 FAILED, else SUCCESS).'
      : `Every new payout answers ${b.answer} and becomes ${b.settleAs}${b.settleAs === 'FAILED' ? ' (refunded)' : ''} ${b.settleAfterMs / 1000} s later (× timeScale).`;
  const lost =
    b.loseAnswer === 0
      ? 'No answer is lost.'
      : `${b.loseAnswer === 1 ? 'Every' : `${percentOf(b.loseAnswer)} % of the`} payout answer${b.loseAnswer === 1 ? ' is' : 's are'} lost (the payout is made; a replay with the same Idempotency-Key gets the answer).`;
  return `${answer} ${lost}`;
}

const percentOf = (share: number) => Number((share * 100).toPrecision(12));

/** The Payouts switch and the newest payouts. */
function payoutsSection(c: ConsoleContext): string {
  const b = payoutBehaviour(c.ctx);
  const rows = [...c.ctx.state.payouts.values()].slice(-LIST_LIMIT).reverse() as unknown as PayoutRow[];
  const options = <T extends string>(values: readonly T[], current: T, label: (v: T) => string = (v) => v) =>
    values.map((v) => `<option value="${html(v)}"${v === current ? ' selected' : ''}>${html(label(v))}</option>`).join('');
  return `<section id="payouts"><h2>Payouts <span class="muted">(newest ${LIST_LIMIT})</span></h2>
<p class="muted" id="payout-behaviour">${html(behaviourWords(b))}</p>
<form method="post" action="${html(c.base)}/console/payouts/behaviour" class="inline">
${tokenField(c)}
<label>Answer <select name="answer">${options(['normal', 'INPROGRESS', 'AMBIGUOUS'] as const, b.answer, (v) => ANSWER_LABELS[v])}</select></label>
<label>then settle as <select name="settleAs">${options(['SUCCESS', 'FAILED'] as const, b.settleAs)}</select></label>
<label>after <input name="settleAfter" type="number" min="0" step="any" size="6" value="${html(b.settleAfterMs / 1000)}"> s</label>
<label><input name="loseAnswer" type="checkbox" value="1"${b.loseAnswer === 1 ? ' checked' : ''}> lose every answer</label>
<label>or lose <input name="losePercent" type="number" min="0" max="100" step="any" size="4" value="${html(b.loseAnswer === 1 ? 0 : percentOf(b.loseAnswer))}"> % of them</label>
<button type="submit">Apply</button></form>
${rows.length === 0 ? '<p class="muted">No payouts yet: make one through the API (payouts.create).</p>' : payoutsTable(rows)}
</section>`;
}

function payoutsTable(rows: PayoutRow[]): string {
  const body = rows
    .map(
      (p) =>
        `<tr><td><code>${html(p.id)}</code></td><td class="num">${html(p.amount)} ${html(p.currency)}</td><td>${badge(p.status)}</td><td>${html(p.environment)}</td><td>${html(p.created_at)}</td><td>${html(p.updated_at)}</td></tr>`,
    )
    .join('\n');
  return `<table><thead><tr><th>Payout</th><th>Amount</th><th>Status</th><th>Environment</th><th>Created</th><th>Updated</th></tr></thead><tbody>${body}</tbody></table>`;
}

function eventsTable(c: ConsoleContext, events: MockWebhookEvent[]): string {
  const body = events
    .map((e) => {
      const last = lastAttempt(c, e);
      return `<tr><td><a href="${html(c.base)}/console/events/${html(encodeURIComponent(e.id))}">${html(e.id)}</a></td><td>${html(e.type)}</td><td>${badge(e.status)}</td>
<td class="num">${e.attempts}</td><td>${last ? outcome(last) : '—'}</td><td>${next(c, e)}</td><td class="url">${html(e.url ?? '—')}</td></tr>`;
    })
    .join('\n');
  return `<table><thead><tr><th>Event</th><th>Type</th><th>Status</th><th>Attempts</th><th>Last answer</th><th>Next retry</th><th>URL</th></tr></thead><tbody>${body}</tbody></table>`;
}

function paymentPage(c: ConsoleContext, trx: string): Response {
  const p = c.ctx.state.payments.get(trx) as PaymentRow | undefined;
  if (!p) return notFound();
  const events = c.ctx.state.events.filter((e) => (e.payload.data as { trx_id?: unknown } | undefined)?.trx_id === trx);
  const fields: Array<[string, unknown]> = [
    ['Status', p.status],
    ['Amount', `${p.amount} ${p.currency}`],
    ['Mode', p.payment_mode],
    ['Environment', p.environment],
    ['Reference', p.merchant_ref],
    ['Customer', [p.customer.name, p.customer.email, p.customer.phone].filter(Boolean).join(' · ') || '—'],
    ['Gateway', p.gateway ?? '—'],
    ['Failure', p.failure_reason ? `${p.failure_reason}: ${p.failure_message ?? ''}` : '—'],
    ['Webhook URL', p.ipn_url ?? '—'],
    ['Created', p.created_at],
    ['Updated', p.updated_at],
  ];
  const settle =
    p.status === 'pending'
      ? `<h2>Settle</h2><div class="actions">
<form method="post" action="${html(c.base)}/console/payments/${html(encodeURIComponent(trx))}/settle">${tokenField(c)}<input type="hidden" name="outcome" value="success"><button class="ok" type="submit">Settle as success</button></form>
<form method="post" action="${html(c.base)}/console/payments/${html(encodeURIComponent(trx))}/settle">${tokenField(c)}<input type="hidden" name="outcome" value="failed">
<label>Reason <select name="reason">${Object.keys(FAILURE_REASONS)
          .map((r) => `<option>${html(r)}</option>`)
          .join('')}</select></label>
<button class="fail" type="submit">Settle as failed</button></form></div>
${p.checkout_url ? `<p><a href="${html(p.checkout_url)}">Open the hosted checkout page</a></p>` : ''}`
      : '';
  return page(
    200,
    `Payment ${trx}`,
    `<p><a href="${html(c.base)}/">← Console</a></p><h1>Payment <code>${html(trx)}</code> ${badge(p.status)}</h1>
<dl class="kv">${fields.map(([k, v]) => `<dt>${html(k)}</dt><dd>${html(v)}</dd>`).join('')}</dl>
${settle}
<h2>Webhook events</h2>${events.length ? eventsTable(c, events.reverse()) : '<p class="muted">None yet: one is sent when the payment settles.</p>'}
${p.status === 'pending' || events.some((e) => e.status === 'pending') ? LIVE : ''}`,
  );
}

function eventPage(c: ConsoleContext, id: string): Response {
  const e = c.ctx.state.events.find((x) => x.id === id);
  if (!e) return notFound();
  const attempts = c.ctx.state.deliveries.filter((d) => d.eventId === id);
  const rows = attempts
    .map(
      (d) =>
        `<tr><td class="num">${d.attempt}${d.manual ? ' (resend)' : ''}</td><td>${html(new Date(d.at).toISOString())}</td><td class="url">${html(d.url)}</td><td>${outcome(d)}</td></tr>`,
    )
    .join('\n');
  return page(
    200,
    `Event ${id}`,
    `<p><a href="${html(c.base)}/">← Console</a></p><h1>Event <code>${html(id)}</code> ${badge(e.status)}</h1>
<dl class="kv"><dt>Type</dt><dd>${html(e.type)}</dd><dt>Environment</dt><dd>${html(e.environment)}</dd>
<dt>Signed with</dt><dd>${signedWith(c, e)}</dd><dt>URL</dt><dd>${html(e.url ?? '—')}</dd><dt>Attempts</dt><dd>${e.attempts}</dd><dt>Next retry</dt><dd>${next(c, e)}</dd></dl>
${e.url ? `<form method="post" action="${html(c.base)}/console/events/${html(encodeURIComponent(id))}/resend">${tokenField(c)}<button type="submit">Resend now</button></form>` : ''}
<h2>Attempts</h2>${rows ? `<table><thead><tr><th>#</th><th>Sent</th><th>URL</th><th>Answer</th></tr></thead><tbody>${rows}</tbody></table>` : '<p class="muted">No attempt yet.</p>'}
<h2>Body</h2><pre>${html(e.generation === 'earlier' ? e.body : JSON.stringify(e.payload, null, 2))}</pre>
${e.status === 'pending' ? LIVE : ''}`,
  );
}

// The secret is shown for sandbox events only; a production event names its secret.
function signedWith(c: ConsoleContext, e: MockWebhookEvent): string {
  const merchant = c.ctx.state.merchants.find((m) => m.id === e.merchantId);
  if (e.generation === 'earlier') {
    if (e.environment !== 'sandbox') return 'the production API secret (not shown)';
    return `the sandbox API secret <code>${html(merchant?.credentials.sandbox.apiSecret ?? '')}</code> (X-Signature, over the body alone)`;
  }
  if (e.environment !== 'sandbox') return 'the production webhook secret (not shown)';
  return merchant ? `the sandbox webhook secret <code>${html(webhookSecretOf(merchant, 'sandbox'))}</code>` : 'the sandbox webhook secret';
}

function lastAttempt(c: ConsoleContext, e: MockWebhookEvent): MockDeliveryAttempt | undefined {
  for (let i = c.ctx.state.deliveries.length - 1; i >= 0; i--)
    if (c.ctx.state.deliveries[i]!.eventId === e.id) return c.ctx.state.deliveries[i];
  return undefined;
}

function outcome(d: MockDeliveryAttempt): string {
  if (d.status === null) return `<span class="bad">${html(d.error ?? 'connection failed')}</span>`;
  return `<span class="${d.status >= 200 && d.status < 300 ? 'good' : 'bad'}">HTTP ${d.status}</span>`;
}

function next(c: ConsoleContext, e: MockWebhookEvent): string {
  if (e.status !== 'pending' || e.nextAttemptAt == null) return '—';
  const inMs = e.nextAttemptAt - c.ctx.now();
  return inMs <= 0 ? 'now' : `${html(new Date(e.nextAttemptAt).toISOString())} (in ${Math.ceil(inMs / 1000)} s)`;
}

function badge(status: string): string {
  const word = status.toLowerCase(); // payouts say SUCCESS and FAILED
  const tone = ['success', 'delivered'].includes(word) ? 'good' : ['failed', 'abandoned'].includes(word) ? 'bad' : 'wait';
  return `<span class="badge ${tone}">${html(status)}</span>`;
}

const tokenField = (c: ConsoleContext) => `<input type="hidden" name="token" value="${html(c.token)}">`;

// Reloads while something is pending, unless the developer is typing in a form.
/** The live-reload script, and its SHA-256 for the CSP (a test checks the two agree). */
export const LIVE_SCRIPT =
  "setInterval(function(){var a=document.activeElement;if(document.visibilityState==='visible'&&!(a&&/INPUT|SELECT|TEXTAREA/.test(a.tagName)))location.reload()},2000)";
export const LIVE_HASH = 'AR1wlkTTOJ1ktDAh65aiYILqWTp7Z8HccVXuMhzg8ig=';
const LIVE = `<script>${LIVE_SCRIPT}</script>`;

const redirect = (location: string) => new Response(null, { status: 303, headers: { Location: location } });
const notFound = () =>
  page(404, 'Not found', "<h1>Not found</h1><p>Nothing here (it may have been trimmed from the sandbox's bounded stores).</p>");
const badRequest = (c: ConsoleContext, message: string) =>
  page(400, 'Cannot do that', `<h1>Cannot do that</h1><p>${html(message)}</p><p><a href="${html(c.base)}/">Back to the console</a></p>`);

function page(status: number, title: string, body: string, headers: Record<string, string> = {}): Response {
  const doc = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${html(title)} · Sandbox</title>
<style>body{font-family:system-ui,sans-serif;margin:1.5rem auto;max-width:72rem;padding:0 1rem;color:#1b1b1b}
table{border-collapse:collapse;width:100%;font-size:.9rem}th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #eee;vertical-align:top}
th{background:#fafafa}.num{text-align:right}.url{word-break:break-all;max-width:20rem}.muted{color:#666;font-size:.9rem}
.badge{padding:.1rem .5rem;border-radius:999px;font-size:.8rem}.good{color:#1a7f37}.bad{color:#b42318}.wait{color:#9a6700}
.badge.good{background:#dafbe1}.badge.bad{background:#ffebe9}.badge.wait{background:#fff8c5}
.kv{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem}.kv dt{color:#666}.kv dd{margin:0}
.actions{display:flex;gap:1rem;flex-wrap:wrap}form.inline{display:flex;gap:.75rem;align-items:center;flex-wrap:wrap}
button{font-size:.95rem;padding:.4rem 1rem;border-radius:6px;border:1px solid #ccc;background:#f6f8fa;cursor:pointer}
button.ok{background:#1a7f37;color:#fff;border-color:#1a7f37}button.fail{background:#b42318;color:#fff;border-color:#b42318}
pre{background:#f6f8fa;padding:1rem;border-radius:6px;overflow:auto}code{font-size:.9em}</style></head>
<body>${body}</body></html>`;
  // Never cached (it shows live state) and never framed (a click-jacked Settle is still a click);
  // no script but the page's own inline one, no request to any other origin.
  return new Response(status === 303 ? null : doc, {
    status,
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Frame-Options': 'DENY',
      'Content-Security-Policy': `default-src 'self'; script-src 'sha256-${LIVE_HASH}'; style-src 'unsafe-inline'; frame-ancestors 'none'`,
      ...headers,
    },
  });
}
