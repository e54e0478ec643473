// The hosted checkout page a payment's checkout_url points at: GET shows the payment with
// Pay, Decline and Cancel buttons; POST …/pay settles it (success), …/decline fails it as the
// processor would (PAYMENT_DECLINED), …/cancel fails it (CANCELED), each then redirecting (303) to the payment's success or cancel redirect. The link is
// signed and time-limited (expires + signature query parameters). The current generation's
// link names the payment in its path (/checkout/{trx}); the earlier generation's is the real
// product's /payment/checkout?expires&token&signature, the payment in an encrypted token
// (earlier-link.ts), and its page has Pay and Cancel only.
import type { Ctx } from './context.js';
import { earlierLinkSigned, trxOfToken } from './earlier-link.js';
import type { PaymentRow } from './payments.js';
import { hmacHex } from './hmac.js';
import { html, safeEqual } from './util.js';

function page(status: number, title: string, body: string, headers: Record<string, string> = {}): Response {
  const doc = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${html(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1b1b1b}
.card{border:1px solid #ddd;border-radius:12px;padding:1.5rem}.amount{font-size:2rem;font-weight:600}
button{font-size:1rem;padding:.6rem 1.4rem;border-radius:8px;border:0;cursor:pointer;margin-right:.5rem}
.pay{background:#1a7f37;color:#fff}.decline{background:#b42318;color:#fff}.cancel{background:#eee}.muted{color:#666;font-size:.9rem}
.sandbox{background:#fff4ce;padding:.4rem .8rem;border-radius:6px;display:inline-block}</style></head>
<body>${body}</body></html>`;
  return new Response(doc, { status, headers: { 'Content-Type': 'text/html; charset=utf-8', ...headers } });
}

const refused = () =>
  page(
    403,
    'Invalid link',
    '<h1>Invalid checkout link</h1><p>The link signature is missing or wrong. Use the payment_url from the API response.</p>',
  );
const missing = () => page(404, 'Payment not found', '<h1>Payment not found</h1><p>This checkout link does not match any payment.</p>');
const expired = () =>
  page(
    410,
    'Checkout expired',
    '<h1>This checkout link has expired</h1><p>EXPIRED_SESSION: payment session expired; the merchant must create a new payment.</p>',
  );
const isPast = (ctx: Ctx, expires: string | null) => Number(expires) * 1000 < ctx.now();
const pendingOr = (row: PaymentRow): Response | PaymentRow => (row.status === 'pending' ? row : finished(row));

/** The current generation's link, /checkout/{trx}?expires&signature (signed over `<trx>.<expires>`): the pending payment or an error page. */
async function open(ctx: Ctx, trx: string, query: URLSearchParams): Promise<Response | PaymentRow> {
  const row = ctx.state.payments.get(trx) as PaymentRow | undefined;
  if (!row) return missing();
  const expires = query.get('expires') ?? '';
  const signature = query.get('signature') ?? '';
  const expected = await hmacHex(ctx.checkoutKey, `${trx}.${expires}`);
  if (!/^\d+$/.test(expires) || !safeEqual(signature, expected)) return refused();
  return isPast(ctx, expires) ? expired() : pendingOr(row);
}

/**
 * The earlier generation's link, /payment/checkout?expires&token&signature: the signature
 * first (403; a changed token fails it too), then the lifetime (410), then the payment its
 * token names (404 when it names none: a token this service did not write, or a payment the
 * bounded store has since let go).
 */
async function openEarlier(ctx: Ctx, query: URLSearchParams): Promise<Response | PaymentRow> {
  if (!(await earlierLinkSigned(ctx, query))) return refused();
  if (isPast(ctx, query.get('expires'))) return expired();
  const trx = await trxOfToken(ctx, query.get('token') ?? '');
  const row = trx === null ? undefined : (ctx.state.payments.get(trx) as PaymentRow | undefined);
  return row ? pendingOr(row) : missing();
}

function finished(row: PaymentRow): Response {
  const target = row.status === 'success' ? row.success_redirect : row.cancel_redirect;
  return page(
    409,
    'Payment finished',
    `<h1>Payment ${html(row.status)}</h1><p>This payment is no longer pending.</p><p><a href="${html(target)}">Return to the merchant</a></p>`,
  );
}

/** GET /checkout/{trx} */
export async function showCheckout(ctx: Ctx, trx: string, url: URL): Promise<Response> {
  const row = await open(ctx, trx, url.searchParams);
  return row instanceof Response ? row : checkoutPage(ctx, row, url);
}

/** GET /payment/checkout?expires&token&signature (the earlier generation) */
export async function showEarlierCheckout(ctx: Ctx, url: URL): Promise<Response> {
  const row = await openEarlier(ctx, url.searchParams);
  return row instanceof Response ? row : checkoutPage(ctx, row, url);
}

/** The page of a pending payment: its buttons post to `<the page's path>/<verb>` with the link's query. */
function checkoutPage(ctx: Ctx, row: PaymentRow, url: URL): Response {
  const merchant = ctx.state.merchants.find((m) => m.id === row.merchant_id);
  const action = (verb: string) => html(`${url.pathname.replace(/\/$/, '')}/${verb}${url.search}`);
  // The earlier generation's sandbox checkout completes on any gateway, or is cancelled: no
  // decline. Its page does not show the trx_id either: its link and redirects hide it.
  const earlier = ctx.generation === 'earlier';
  const decline = earlier
    ? ''
    : `<form method="post" action="${action('decline')}"><button class="decline" type="submit">Decline (test a failed payment)</button></form>`;
  const gateways = row.merchant_payment_method_codes
    .map((code, i) => {
      const gateway = ctx.state.gateways.find((g) => g.code === code);
      return `<label><input type="radio" name="gateway" value="${html(code)}"${i === 0 ? ' checked' : ''}> ${html(gateway?.name ?? code)}</label><br>`;
    })
    .join('\n');
  return page(
    200,
    `Pay ${merchant?.name ?? 'merchant'}`,
    `<div class="card">
<p class="sandbox">${row.environment === 'sandbox' ? 'Sandbox: no real money moves' : 'Simulated production checkout'}</p>
<h1>${html(merchant?.name ?? 'Merchant')}</h1>
<p class="amount">${html(row.amount)} ${html(row.currency)}</p>
<p>${html(row.description ?? '')}</p>
<p class="muted">Order ${html(row.merchant_ref)}${earlier ? '' : ` · ${html(row.trx_id)}`}</p>
<form method="post" action="${action('pay')}">
<fieldset><legend>Payment method</legend>
${gateways}
</fieldset><br>
<button class="pay" type="submit">Pay ${html(row.amount)} ${html(row.currency)}</button>
</form>
${decline}
<form method="post" action="${action('cancel')}"><button class="cancel" type="submit">Cancel</button></form>
<p class="muted">Link expires ${html(row.expires_at)}</p>
</div>`,
  );
}

/** The buttons of the checkout page. */
export type CheckoutVerb = 'pay' | 'decline' | 'cancel';
/** The earlier generation's buttons: no decline. */
export type EarlierCheckoutVerb = Exclude<CheckoutVerb, 'decline'>;

/** POST /checkout/{trx}/pay, /decline and /cancel */
export async function submitCheckout(ctx: Ctx, trx: string, url: URL, verb: CheckoutVerb, form: URLSearchParams): Promise<Response> {
  const row = await open(ctx, trx, url.searchParams);
  return row instanceof Response ? row : press(ctx, row, verb, form);
}

/** POST /payment/checkout/pay and /cancel with the link's query (the earlier generation) */
export async function submitEarlierCheckout(ctx: Ctx, url: URL, verb: EarlierCheckoutVerb, form: URLSearchParams): Promise<Response> {
  const row = await openEarlier(ctx, url.searchParams);
  return row instanceof Response ? row : press(ctx, row, verb, form);
}

/** A button pressed on a pending payment's page: settled as this generation settles, then the 303 to the merchant. */
async function press(ctx: Ctx, row: PaymentRow, verb: CheckoutVerb, form: URLSearchParams): Promise<Response> {
  const trx = row.trx_id;
  if (verb === 'pay') {
    const chosen = form.get('gateway');
    const gateway = chosen && row.merchant_payment_method_codes.includes(chosen) ? chosen : row.merchant_payment_method_codes[0];
    ctx.settle(trx, 'success', { gateway: gateway ?? null });
  } else if (verb === 'decline') {
    ctx.settle(trx, 'failed', { reason: 'PAYMENT_DECLINED', message: 'Declined by the payment processor.' });
  } else {
    ctx.settle(trx, 'failed', { reason: 'CANCELED', message: 'The customer canceled hosted checkout.' });
  }
  // The earlier generation sends its IPN synchronously: the customer is redirected after it.
  if (ctx.generation === 'earlier' && ctx.autoRun) await ctx.scheduler.runDue();
  const target = verb === 'pay' ? row.success_redirect : row.cancel_redirect;
  const title = { pay: 'Payment successful', decline: 'Payment declined', cancel: 'Payment canceled' }[verb];
  return page(303, title, `<h1>${title}</h1><p><a href="${html(target)}">Return to the merchant</a></p>`, { Location: target });
}
