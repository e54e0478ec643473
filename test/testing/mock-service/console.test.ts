// The sandbox's web console, through mock.handle (the Chromium walk-through is in
// test/browser/console.browser.test.ts): pages, actions, the form token, escaping, CORS.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LIVE_HASH, LIVE_SCRIPT } from '../../../src/testing/mock-service/console.js';
import { BASE, hostedBody, setup } from '../../support/mock-service.js';

const HTML = { Accept: 'text/html,application/xhtml+xml' };

async function get(mock: ReturnType<typeof setup>['mock'], path: string) {
  const response = await mock.handle(new Request(BASE + path, { headers: HTML }));
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** The form token the console page embeds. */
async function tokenOf(mock: ReturnType<typeof setup>['mock']): Promise<string> {
  const { text } = await get(mock, '/');
  return /name="token" value="([0-9a-f]+)"/.exec(text)![1]!;
}

function post(mock: ReturnType<typeof setup>['mock'], path: string, form: Record<string, string>) {
  return mock.handle(
    new Request(BASE + path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    }),
  );
}

describe('sandbox web console', () => {
  it('answers a browser at the root with the console, and an API client with the JSON index', async () => {
    const { mock } = setup();
    const page = await get(mock, '/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.text).toContain('Sandbox console');
    expect(page.text).toContain('No payments yet');
    const index = await mock.handle(new Request(`${BASE}/`, { headers: { Accept: 'application/json' } }));
    expect(await index.json()).toMatchObject({ api: `${BASE}/api/v1`, console: `${BASE}/` });
  });

  it('lists payments with status, mode and amount, newest first, and links each to its page', async () => {
    const { mock, call } = setup();
    await call('POST', '/api/v1/payments', hostedBody({ ref_trx: 'order-1' }));
    const second = (await call('POST', '/api/v1/payments', hostedBody({ ref_trx: 'order-2', payment_amount: 40 }))).body.trx_id as string;
    const { text } = await get(mock, '/');
    expect(text.indexOf('order-2')).toBeLessThan(text.indexOf('order-1'));
    expect(text).toContain('40 USD');
    expect(text).toMatch(/badge wait">pending/);
    expect(text).toContain('<td>hosted</td>');
    expect(text).toContain(`href="${BASE}/console/payments/${second}"`);
    const detail = await get(mock, `/console/payments/${second}`);
    expect(detail.status).toBe(200);
    expect(detail.text).toContain('Settle as success');
    expect(detail.text).toContain('INSUFFICIENT_FUNDS');
  });

  it('settles a pending payment as failed with a reason; the webhook attempt and its answer show', async () => {
    const { mock, call, answers } = setup();
    answers.push(500);
    const trx = (await call('POST', '/api/v1/payments', hostedBody())).body.trx_id as string;
    const token = await tokenOf(mock);
    const settled = await post(mock, `/console/payments/${trx}/settle`, { token, outcome: 'failed', reason: 'INSUFFICIENT_FUNDS' });
    expect(settled.status).toBe(303);
    expect(settled.headers.get('location')).toBe(`${BASE}/console/payments/${trx}`);
    expect((await call('GET', `/api/v1/payments/${trx}`)).body.data).toMatchObject({
      status: 'failed',
      failure_reason: 'INSUFFICIENT_FUNDS',
    });
    await mock.runDue();
    const detail = await get(mock, `/console/payments/${trx}`);
    expect(detail.text).toContain('payment.failed');
    expect(detail.text).toContain('HTTP 500');
    // The next retry is 3 minutes after the failed first attempt.
    const event = mock.state.events.at(-1)!;
    expect(event.nextAttemptAt).toBe(mock.state.deliveries.at(-1)!.at + 3 * 60_000);
    expect((await get(mock, `/console/events/${event.id}`)).text).toMatch(/in 180 s/);
    // A settled payment cannot be settled again.
    expect((await post(mock, `/console/payments/${trx}/settle`, { token, outcome: 'success' })).status).toBe(400);
  });

  it('resends an event at once; a 2xx marks it delivered and the scheduled retry is skipped', async () => {
    const { mock, call, answers, clock, received } = setup();
    answers.push(503, 200);
    const trx = (await call('POST', '/api/v1/payments', hostedBody())).body.trx_id as string;
    await mock.completeCheckout(trx, 'success');
    await mock.runDue();
    const event = mock.state.events.at(-1)!;
    expect(event).toMatchObject({ status: 'pending', attempts: 1 });
    const resent = await post(mock, `/console/events/${event.id}/resend`, { token: await tokenOf(mock) });
    expect(resent.status).toBe(303);
    expect(event).toMatchObject({ status: 'delivered', attempts: 2, nextAttemptAt: null });
    expect(mock.state.deliveries.map((d) => [d.attempt, d.status, d.manual ?? false])).toEqual([
      [1, 503, false],
      [2, 200, true],
    ]);
    const page = await get(mock, `/console/events/${event.id}`);
    expect(page.text).toContain('2 (resend)');
    expect(page.text).toContain('HTTP 200');
    clock.advance(3 * 60_000);
    await mock.runDue();
    expect(received).toHaveLength(2);
  });

  it('sends a test event of any type to any URL, and shows a connection error with the next retry', async () => {
    const { mock, answers } = setup();
    answers.push('network-error');
    const token = await tokenOf(mock);
    const sent = await post(mock, '/console/events/test', { token, type: 'invoice.paid', url: 'http://localhost:9/hooks' });
    expect(sent.status).toBe(303);
    await mock.runDue();
    const event = mock.state.events.at(-1)!;
    expect(event).toMatchObject({ type: 'invoice.paid', url: 'http://localhost:9/hooks', status: 'pending' });
    expect(sent.headers.get('location')).toBe(`${BASE}/console/events/${event.id}`);
    const page = await get(mock, `/console/events/${event.id}`);
    expect(page.text).toContain('fetch failed');
    expect(page.text).toContain('Resend now');
    expect((await post(mock, '/console/events/test', { token, type: 'invoice.paid', url: 'ftp://x' })).status).toBe(400);
    expect((await post(mock, '/console/events/test', { token, type: 'nope.event', url: 'http://localhost:9/' })).status).toBe(400);
  });

  it("shows the sandbox webhook secret, and on each event page which environment's secret signed it", async () => {
    const { mock, call, creds } = setup();
    const home = await get(mock, '/');
    expect(home.text).toContain(`<code>${creds.sandbox.webhookSecret}</code> (signs sandbox deliveries)`);
    expect(home.text).not.toContain(creds.production.webhookSecret);
    for (const env of ['sandbox', 'production'] as const) {
      const { body } = await call('POST', '/api/v1/payments', hostedBody(), { env, creds: creds[env] });
      await mock.completeCheckout(body.trx_id, 'success');
    }
    await mock.runDue();
    const [sandbox, production] = mock.state.events;
    const sandboxPage = await get(mock, `/console/events/${sandbox!.id}`);
    expect(sandboxPage.text).toContain(`<dt>Environment</dt><dd>sandbox</dd>`);
    expect(sandboxPage.text).toContain(`the sandbox webhook secret <code>${creds.sandbox.webhookSecret}</code>`);
    const productionPage = await get(mock, `/console/events/${production!.id}`);
    expect(productionPage.text).toContain('<dt>Environment</dt><dd>production</dd>');
    expect(productionPage.text).toContain('the production webhook secret (not shown)');
    expect(productionPage.text).not.toContain(creds.production.webhookSecret);
    expect(productionPage.text).not.toContain(creds.sandbox.webhookSecret);
  });

  it('refuses a form without the page token (another site in the same browser cannot act)', async () => {
    const { mock, call } = setup();
    const trx = (await call('POST', '/api/v1/payments', hostedBody())).body.trx_id as string;
    for (const token of [undefined, '', 'f'.repeat(32)]) {
      const response = await post(
        mock,
        `/console/payments/${trx}/settle`,
        token === undefined ? { outcome: 'success' } : { token, outcome: 'success' },
      );
      expect(response.status).toBe(403);
    }
    expect(mock.state.payments.get(trx)).toMatchObject({ status: 'pending' });
    // The console sends no CORS headers, so a page elsewhere cannot read the token either.
    expect((await get(mock, '/')).headers.get('access-control-allow-origin')).toBeNull();
    // And a form posted from another site is refused even with the right token.
    const token = await tokenOf(mock);
    const crossSite = await mock.handle(
      new Request(`${BASE}/console/payments/${trx}/settle`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: 'https://evil.example' },
        body: new URLSearchParams({ token, outcome: 'success' }).toString(),
      }),
    );
    expect(crossSite.status).toBe(403);
    expect(mock.state.payments.get(trx)).toMatchObject({ status: 'pending' });
  });

  it('keeps page views out of the request log (a pending page reloads itself), but logs actions', async () => {
    const { mock, call } = setup();
    const trx = (await call('POST', '/api/v1/payments', hostedBody())).body.trx_id as string;
    const before = mock.state.requests.length;
    await get(mock, '/');
    await get(mock, `/console/payments/${trx}`);
    expect(mock.state.requests).toHaveLength(before);
    await post(mock, `/console/payments/${trx}/settle`, { token: await tokenOf(mock), outcome: 'success' });
    expect(mock.state.requests.at(-1)).toMatchObject({ method: 'POST', path: `/console/payments/${trx}/settle`, status: 303 });
  });

  it('allows only its own inline script (CSP hash), and no framing', async () => {
    const { mock, call } = setup();
    await call('POST', '/api/v1/payments', hostedBody());
    const page = await get(mock, '/');
    expect(createHash('sha256').update(LIVE_SCRIPT).digest('base64')).toBe(LIVE_HASH);
    expect(page.text).toContain(`<script>${LIVE_SCRIPT}</script>`);
    expect(page.headers.get('content-security-policy')).toContain(`script-src 'sha256-${LIVE_HASH}'`);
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });

  it('escapes whatever came through the API', async () => {
    const { mock, call } = setup();
    const trx = (
      await call(
        'POST',
        '/api/v1/payments',
        hostedBody({ ref_trx: '<img src=x onerror=alert(1)>', customer_name: '"><script>x()</script>' }),
      )
    ).body.trx_id as string;
    for (const path of ['/', `/console/payments/${trx}`]) {
      const { text } = await get(mock, path);
      expect(text).not.toContain('<img src=x');
      expect(text).not.toContain('<script>x()');
    }
  });

  it('answers unknown pages and ids with 404 and other methods with 405, never 5xx', async () => {
    const { mock } = setup();
    expect((await get(mock, '/console/payments/TXNNOPE')).status).toBe(404);
    expect((await get(mock, '/console/events/evt_nope')).status).toBe(404);
    expect((await get(mock, '/console/nothing')).status).toBe(404);
    expect((await get(mock, '/console/payments/%E0%A4%A')).status).toBe(404);
    expect((await mock.handle(new Request(`${BASE}/console/`, { method: 'PUT' }))).status).toBe(405);
    expect((await post(mock, '/console/events/evt_nope/resend', { token: await tokenOf(mock) })).status).toBe(404);
  });
});

describe('sandbox CORS (a local development server)', () => {
  it('answers a preflight of an API call, and lets a page read API answers and their rate-limit headers', async () => {
    const { mock, call } = setup();
    const preflight = await mock.handle(
      new Request(`${BASE}/api/v1/payments`, {
        method: 'OPTIONS',
        headers: {
          Origin: 'http://localhost:5173',
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'content-type,x-signature',
        },
      }),
    );
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(preflight.headers.get('access-control-allow-headers')).toBe('content-type,x-signature');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    const answer = await call('GET', '/api/v1/balance');
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    expect(answer.headers.get('access-control-expose-headers')).toContain('X-RateLimit-Remaining');
    // An OPTIONS that is not a preflight is still refused.
    expect((await mock.handle(new Request(`${BASE}/api/v1/payments`, { method: 'OPTIONS' }))).status).toBe(405);
  });
});
