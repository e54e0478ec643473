#!/usr/bin/env python3
"""A client written only from the API spec (Python stdlib, no SDK code): starts
`business-payments sandbox --json`, creates a push payment, receives the signed webhook on
its own HTTP endpoint and checks the HMAC itself, verifies the transaction, and checks the
spec's error labels. Exits non-zero on any mismatch."""
import hashlib, hmac, http.server, json, subprocess, sys, threading, time, urllib.request, urllib.error

proc = subprocess.Popen(['node', 'dist/cli.js', 'sandbox', '--json', '--port', '0', '--time-scale', '0.001'],
                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
try:
    creds = json.loads(proc.stdout.readline())
    base, secret = creds['baseUrl'], creds['apiSecret']
    received = []

    class Hook(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers['Content-Length']))
            sig = next(v for k, v in self.headers.items() if k.lower().startswith('x-') and k.lower().endswith('-signature'))
            ts = next(v for k, v in self.headers.items() if k.lower().startswith('x-') and k.lower().endswith('-timestamp'))
            want = hmac.new(creds['webhookSecret'].encode(), ts.encode() + b'.' + body, hashlib.sha256).hexdigest()
            received.append((hmac.compare_digest(sig, want), json.loads(body)))
            self.send_response(200); self.end_headers()
        def log_message(self, *a): pass

    hook = http.server.HTTPServer(('127.0.0.1', 0), Hook)
    threading.Thread(target=hook.serve_forever, daemon=True).start()

    def call(method, path, body=None, key=creds['apiKey']):
        raw = json.dumps(body) if body is not None else ''
        ts = str(int(time.time()))
        sig = 'sha256=' + hmac.new(secret.encode(), f'{ts}.{method}.{path}.{raw}'.encode(), hashlib.sha256).hexdigest()
        req = urllib.request.Request(base + path, data=raw.encode() if body is not None else None, method=method, headers={
            'Content-Type': 'application/json', 'Accept': 'application/json', 'X-Environment': 'sandbox',
            'X-Merchant-Key': creds['merchantKey'], 'X-API-Key': key, 'X-Timestamp': ts, 'X-Signature': sig})
        try:
            with urllib.request.urlopen(req) as r: return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e: return e.code, json.loads(e.read())

    status, created = call('POST', '/api/v1/payments', {'payment_amount': 5000, 'currency_code': 'TZS', 'ref_trx': 'spec-client-1',
        'payment_mode': 'push', 'customer_phone': '255700000001', 'ipn_url': f'http://127.0.0.1:{hook.server_port}/hook'})
    assert status == 200 and created['status'] == 'success', (status, created)
    trx = created['trx_id']
    for _ in range(200):
        if received: break
        time.sleep(0.05)
    assert received and received[0][0], 'webhook missing or its signature does not verify'
    assert received[0][1]['type'] == 'payment.completed' and received[0][1]['data']['trx_id'] == trx
    status, verified = call('GET', f'/api/v1/verify-payment/{trx}')
    assert status == 200 and verified['status'] == 'success', verified
    labels = {
        'currency': call('POST', '/api/v1/payments', {'payment_amount': 5, 'currency_code': 'GBP', 'ref_trx': 'x', 'ipn_url': 'https://a.example/h'}),
        'wallet': call('POST', '/api/v1/payments', {'payment_amount': 5, 'currency_code': 'EUR', 'ref_trx': 'x', 'ipn_url': 'https://a.example/h'}),
        'credentials': call('GET', '/api/v1/balance', key='test_wrong'),
        'validation': call('POST', '/api/v1/payments', {'payment_amount': 0.5, 'currency_code': 'usd', 'ref_trx': 'x'}),
    }
    expected = {'currency': (422, 'Currency is not enabled for this merchant'), 'wallet': (422, 'Receiver wallet for this currency is not available'),
                'credentials': (401, 'Invalid API credentials'), 'validation': (422, 'Validation failed')}
    for name, (st, body) in labels.items():
        assert (st, body['error']) == expected[name], (name, st, body)
    print(f'spec-only client ok: created {trx}, webhook signature verified with its own HMAC, verify={verified["status"]}, labels: ' +
          '; '.join(f'{st} {b["error"]}' for st, b in labels.values()))
finally:
    proc.terminate()
