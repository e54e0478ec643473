// The hosted checkout page a payment's checkout_url points at: GET shows the payment with
// Pay, Decline and Cancel buttons; POST …/pay settles it (success), …/decline fails it as the
// processor would (PAYMENT_DECLINED), …/cancel fails it (CANCELED), each then redirecting (303) to the payment's success or cancel redirect. The link is
// signed and time-limited (expires + signature query parameters).
import type { Ctx } from './context.js';
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

/** Checks the link's signature and lifetime and that the payment is pending; returns an error page or the payment. */
async function open(ctx: Ctx, trx: string, query: URLSearchParams): Promise<Response | PaymentRow> {
  const row = ctx.state.payments.get(trx) as PaymentRow | undefined;
  if (!row) return page(404, 'Payment not found', '<h1>Payment not found</h1><p>This checkout link does not match any payment.</p>');
  const expires = query.get('expires') ?? '';
  const signature = query.get('signature') ?? '';
  const expected = await hmacHex(ctx.checkoutKey, `${trx}.${expires}`);
  if (!/^\d+$/.test(expires) || !safeEqual(signature, expected)) {
    return page(
      403,
      'Invalid link',
      '<h1>Invalid checkout link</h1><p>The link signature is missing or wrong. Use the payment_url from the API response.</p>',
    );
  }
  if (Number(expires) * 1000 < ctx.now()) {
    return page(
      410,
      'Checkout expired',
      '<h1>This checkout link has expired</h1><p>EXPIRED_SESSION: payment session expired; the merchant must create a new payment.</p>',
    );
  }
  return row.status === 'pending' ? row : finished(row);
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
  if (row instanceof Response) return row;
  const merchant = ctx.state.merchants.find((m) => m.id === row.merchant_id);
  const action = (verb: string) => html(`${url.pathname.replace(/\/$/, '')}/${verb}${url.search}`);
  // The earlier generation's sandbox checkout completes on any gateway, or is cancelled: no decline.
  const decline =
    ctx.generation === 'earlier'
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
<p class="muted">Order ${html(row.merchant_ref)} · ${html(row.trx_id)}</p>
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

/** POST /checkout/{trx}/pay, /decline and /cancel */
export async function submitCheckout(ctx: Ctx, trx: string, url: URL, verb: CheckoutVerb, form: URLSearchParams): Promise<Response> {
  const row = await open(ctx, trx, url.searchParams);
  if (row instanceof Response) return row;
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
