#!/usr/bin/env bash
# Packs the package, installs the tarball into an empty folder as a user would, and drives
# it from ESM and from CJS against a tiny local server that checks signatures itself.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cd "$root"
npm run build >/dev/null
# Built just above: --ignore-scripts keeps prepack from building again (and its output off stdout).
tarball="$(npm pack --silent --ignore-scripts --pack-destination "$work" | tail -n 1)"
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
const { body, headers } = await signWebhook({ secret: 'whsec_1', payload: { id: 'evt_1', type: 'payment.completed', api_version: '2026-01-01', created_at: '2026-11-22T00:00:00+00:00', data: { trx_id: 'TRX1' } } });
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
  // verifyWebhookSignature names the event header as unsigned (it has no eventType any more).
  if (checked.unsignedEventHeader !== 'payment.failed' || checked.signed.body.length !== body.length) throw new Error('unexpected ' + JSON.stringify(checked));
  console.log('cjs ok', info.site_name, status, checked.unsignedEventHeader);
})().catch((e) => { console.error(e); process.exit(1); });
JS

cat > sandbox.mjs <<'JS'
import { PaymentsClient } from 'business-payments';
import { createMockService } from 'business-payments/testing';
const mock = createMockService({ timeScale: 0.001 });
const server = await mock.listen({ port: 0 });
const client = new PaymentsClient({ ...mock.credentials.sandbox, baseUrl: server.url });
const payment = await client.payments.create({ payment_amount: 5000, currency_code: 'TZS', ref_trx: 'pack-1', payment_mode: 'push', customer_phone: '255700000001', ipn_url: 'http://127.0.0.1:9/unused' });
const outcome = await client.payments.waitForOutcome(payment.trx_id, { interval: 50, timeout: 10_000 });
await mock.close();
console.log('sandbox ok', payment.trx_id, outcome.status);
JS

node server.mjs > server.out &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do [ -s server.out ] && break; sleep 0.1; done
url="$(head -n 1 server.out)"
node esm.mjs "$url"
node cjs.cjs "$url"
echo "server saw: $(tail -n 1 server.out)"
node sandbox.mjs
# The bin, as `npx business-payments` runs it: its signature must equal openssl's.
cli="$(./node_modules/.bin/business-payments sign --method GET --path /api/v1/balance --secret s3cret --timestamp 1700000000 | grep -i '^X-Signature' | sed 's/.*sha256=//')"
ossl="$(printf '%s' '1700000000.GET./api/v1/balance.' | openssl dgst -sha256 -hmac s3cret | awk '{print $NF}')"
[ "$cli" = "$ossl" ] && echo "bin ok: sign matches openssl ($cli)" || { echo "bin sign mismatch: $cli vs $ossl"; exit 1; }
