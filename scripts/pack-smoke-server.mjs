// A tiny stand-in server for pack-smoke.sh: checks every signature with node:crypto itself.
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';

let verified = 0;
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const want =
      'sha256=' + createHmac('sha256', 'test_s').update(`${req.headers['x-timestamp']}.${req.method}.${req.url}.${body}`).digest('hex');
    const send = (status, json) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(json));
    };
    if (req.headers['x-signature'] !== want) return send(401, { error: 'Invalid API credentials', message: 'bad signature' });
    verified++;
    process.stdout.write(`verified ${verified}\n`);
    if (req.method === 'POST' && req.url === '/api/v1/payments') {
      const p = JSON.parse(body);
      return send(200, {
        status: 'success',
        trx_id: 'TRX1',
        payment_url: 'https://pay.test/c/TRX1',
        data: {
          trx_id: 'TRX1',
          merchant_ref: p.ref_trx,
          amount: p.payment_amount,
          currency: p.currency_code,
          status: 'pending',
          checkout_url: 'https://pay.test/c/TRX1',
          expires_at: '2026-11-22T13:00:00Z',
          environment: 'sandbox',
        },
      });
    }
    if (req.url === '/api/v1/verify-payment/TRX1') {
      return send(200, {
        status: 'success',
        trx_id: 'TRX1',
        amount: 10,
        fee: 0.3,
        currency: 'USD',
        net_amount: 9.7,
        customer: { name: null, email: null },
        description: 'Malipo ☕',
        created_at: '2026-11-22T12:00:00Z',
        updated_at: '2026-11-22T12:00:00Z',
      });
    }
    if (req.url === '/api/v1/site-info') {
      return send(200, {
        site_name: 'BP',
        site_logo: 'https://pay.test/l.png',
        site_url: 'https://pay.test',
        gateway_name: 'g',
        gateway_description: 'd',
        features: { ssl_secured: 'a', instant_processing: 'b', global_support: 'c', mobile_ready: 'd' },
        environments: { production: 'p', sandbox: 's' },
        api_version: '1',
        status: 'ok',
      });
    }
    return send(404, { error: 'Not Found', message: `no route ${req.method} ${req.url}` });
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${server.address().port}\n`));
