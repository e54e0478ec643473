#!/usr/bin/env bash
# Packs the package, installs the tarball into an empty folder as a user would, and drives
# it from ESM and from CJS against a tiny local server that checks signatures itself.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cd "$root"
npm run build >/dev/null
tarball="$(npm pack --silent --pack-destination "$work" | tail -n 1)"
echo "packed: $tarball ($(du -k "$work/$tarball" | cut -f1) kB)"

cd "$work"
npm init -y >/dev/null
npm install --silent --no-audit --no-fund "./$tarball" >/dev/null
cp "$root/scripts/pack-smoke-server.mjs" ./server.mjs

cat > esm.mjs <<'JS'
import { PaymentsClient, signRequest, InvalidParamsError, verifyWebhook as fromRoot } from 'business-payments';
import { verifyWebhook } from 'business-payments/webhooks';
import { signWebhook } from 'business-payments/testing';
const baseUrl = process.argv[2];
const client = new PaymentsClient({ merchantKey: 'test_m', apiKey: 'test_k', apiSecret: 'test_s', baseUrl });
const payment = await client.payments.create({ payment_amount: 10, currency_code: 'USD', ref_trx: 'esm-1', description: 'Malipo ☕' });
const verified = await client.payments.verify(payment.trx_id);
const sig = await signRequest({ secret: 'test_s', timestamp: 1, method: 'get', pathWithQuery: '/x' });
let invalid = false;
try { await client.payments.create({ payment_amount: 0, currency_code: 'usd', ref_trx: 'x' }); } catch (e) { invalid = e instanceof InvalidParamsError; }
const { body, headers } = await signWebhook({ secret: 'whsec_1', payload: { id: 'evt_1', type: 'payment.completed', api_version: '2026-01-01', created_at: '2026-11-22T00:00:00+00:00', data: {} } });
const event = await verifyWebhook({ payload: body, headers, secret: 'whsec_1' });
if (fromRoot !== verifyWebhook) throw new Error('root re-export differs');
console.log('esm ok', payment.trx_id, verified.status, sig.slice(0, 14), invalid, event.type);
JS

cat > cjs.cjs <<'JS'
const { PaymentsClient, APIError } = require('business-payments');
const { verifyWebhookSignature } = require('business-payments/webhooks');
const { signWebhook } = require('business-payments/testing');
(async () => {
  const client = new PaymentsClient({ merchantKey: 'test_m', apiKey: 'test_k', apiSecret: 'test_s', baseUrl: process.argv[2] });
  const info = await client.siteInfo.retrieve();
  let status = 0;
  try { await client.payments.verify('missing'); } catch (e) { status = e instanceof APIError ? e.status : -1; }
  const { body, headers } = await signWebhook({ secret: 'whsec_1', payload: '{"type":"payment.failed"}', type: 'payment.failed' });
  const checked = await verifyWebhookSignature({ payload: Buffer.from(body), headers, secret: 'whsec_1' });
  console.log('cjs ok', info.site_name, status, checked.eventType);
})().catch((e) => { console.error(e); process.exit(1); });
JS

node server.mjs > server.out &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do [ -s server.out ] && break; sleep 0.1; done
url="$(head -n 1 server.out)"
node esm.mjs "$url"
node cjs.cjs "$url"
echo "server saw: $(tail -n 1 server.out)"
