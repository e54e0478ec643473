// GET /api/v1/balance and GET /api/v1/site-info; the JSON index at the root and the logo.
import type { ApiRequest, Ctx } from './context.js';
import { SITE_API_VERSION } from './defaults.js';
import { json } from './responses.js';

/** Balances of the merchant's supported currencies that have an active wallet. */
export function getBalance(_ctx: Ctx, req: ApiRequest): Response {
  const { merchant, environment } = req.caller;
  const data = Object.entries(merchant.currencies)
    .filter(([, wallet]) => wallet.wallet)
    .map(([currency, wallet]) => ({ currency, balance: wallet.balance }));
  return json(200, { status: 'success', environment, data });
}

/** Every field of the spec's Site info. */
export function getSiteInfo(_ctx: Ctx, req: ApiRequest): Response {
  return json(200, siteInfo(req.caller.base));
}

/** The earlier generation's site-info: the spec's fields plus security_message and branding, api_version "1.0". */
export function getEarlierSiteInfo(_ctx: Ctx, req: ApiRequest): Response {
  const base = req.caller.base;
  return json(200, {
    ...siteInfo(base),
    api_version: '1.0',
    security_message: 'Your payment is protected with bank-level security and encryption.',
    branding: { logo: `${base}/assets/logo.svg`, primary_color: '#1a7f37', secondary_color: '#ffffff' },
  });
}

function siteInfo(base: string) {
  return {
    site_name: 'Business Payments Sandbox',
    site_logo: `${base}/assets/logo.svg`,
    site_url: base,
    gateway_name: 'Business Payments',
    gateway_description: 'Hosted checkout and mobile-money USSD push for businesses (simulated service).',
    features: {
      ssl_secured: 'SSL Secured',
      instant_processing: 'Instant Processing',
      global_support: 'Global Support',
      mobile_ready: 'Mobile Ready',
    },
    environments: {
      production: 'Live payments with real money; needs an approved business.',
      sandbox: 'Test payments with no real money; available before approval.',
    },
    api_version: SITE_API_VERSION,
    status: 'operational',
  };
}

/** GET / for an API client (a browser gets the console): where the API and its description are. */
export function serviceIndex(base: string): Response {
  return json(200, {
    service: 'Business Payments API (simulated)',
    api: `${base}/api/v1`,
    openapi: `${base}/api/v1/openapi.json`,
    console: `${base}/`,
  });
}

/** GET / for an API client when the sandbox plays the earlier generation (it serves no openapi.json). */
export function earlierIndex(base: string): Response {
  return json(200, { service: 'Business Payments API (simulated, earlier generation)', api: `${base}/api/v1`, console: `${base}/` });
}

/** The logo site_logo points at. */
export function logo(): Response {
  const svg =
    '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64"><rect width="64" height="64" rx="14" fill="#1a7f37"/><text x="32" y="41" font-family="sans-serif" font-size="26" fill="#fff" text-anchor="middle">BP</text></svg>';
  return new Response(svg, { headers: { 'Content-Type': 'image/svg+xml' } });
}
