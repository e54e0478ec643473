// Run by scripts/engines-check.mjs on one Node release, inside a project where the packed
// tarball is installed: loads every entry of the package, with require() (`node
// engines-probe.mjs require`, the CommonJS build) or import (`... import`, the ES build),
// and uses each for real: a signed create and verify against the simulated service, an API
// error class, the sandbox's listen() and a call over its socket, a webhook signed and
// verified (and a tampered one refused), diagnose().
// Prints { ok, steps } as JSON and never throws, so every failure is reported by step.
import { createRequire } from 'node:module';

const mode = process.argv[2];
const steps = [];
const step = async (name, fn) => {
  try {
    steps.push({ name, ok: true, detail: String((await fn()) ?? '') });
  } catch (error) {
    steps.push({ name, ok: false, detail: `${error?.name ?? 'Error'}: ${error?.message ?? String(error)}` });
  }
};
const ENTRIES = ['business-payments', 'business-payments/webhooks', 'business-payments/testing', 'business-payments/doctor'];

let sdk, webhooks, testing, doctor, mock, client;
await step(`${mode} every entry`, async () => {
  const load = mode === 'require' ? createRequire(`${process.cwd()}/`) : (name) => import(name);
  [sdk, webhooks, testing, doctor] = await Promise.all(ENTRIES.map((name) => load(name)));
  if (typeof sdk.PaymentsClient !== 'function' || typeof webhooks.verifyWebhook !== 'function') throw new Error('exports missing');
  if (typeof testing.createMockService !== 'function' || typeof doctor.diagnose !== 'function') throw new Error('exports missing');
  mock = testing.createMockService({ rateLimitPerMinute: 1_000_000 });
  return `${ENTRIES.length} entries`;
});
// The client against the simulated service in process (its `fetch` option), so that its
// steps do not hang on listen(), which is checked on its own below.
const inProcess = () => ({
  ...mock.credentials.sandbox,
  environment: 'sandbox',
  baseUrl: 'https://sandbox.business-payments.test',
  fetch: (input, init) => mock.handle(new Request(input, init)),
  maxRetries: 0,
});
await step('signed create and verify', async () => {
  client = new sdk.PaymentsClient(inProcess());
  const payment = await client.payments.create({
    payment_amount: 25,
    currency_code: 'USD',
    ref_trx: `engines-${process.version}-${mode}`,
    ipn_url: 'https://shop.example.com/ipn',
  });
  const verified = await client.payments.verify(payment.trx_id);
  if (verified.status !== 'pending') throw new Error(`status ${verified.status}`);
  return payment.trx_id;
});
await step('API error class', async () => {
  const error = await client.payments.retrieve('TRXDOESNOTEXIST').then(
    () => undefined,
    (e) => e,
  );
  if (!(error instanceof sdk.NotFoundError) || error.status !== 404) throw new Error(`got ${error}`);
  return 'NotFoundError 404';
});
await step('sandbox listen(), a call over the socket', async () => {
  const server = await mock.listen({ port: 0 });
  const overSocket = new sdk.PaymentsClient({ ...mock.credentials.sandbox, environment: 'sandbox', baseUrl: server.url, maxRetries: 0 });
  const info = await overSocket.siteInfo.retrieve();
  return `${server.url} ${info.site_name}`;
});
await step('verifyWebhook', async () => {
  const secret = 'whsec_engines';
  const payload = {
    id: 'evt_engines',
    type: 'payment.completed',
    api_version: '2026-01-01',
    created_at: new Date().toISOString(),
    data: { trx_id: 'TRXENGINES', status: 'completed' },
  };
  const { body, headers } = await testing.signWebhook({ secret, payload });
  const event = await webhooks.verifyWebhook({ payload: body, headers, secret });
  const refused = await webhooks.verifyWebhook({ payload: body.replace('evt_engines', 'evt_other'), headers, secret }).then(
    () => undefined,
    (e) => e,
  );
  if (!(refused instanceof webhooks.WebhookVerificationError) || refused.reason !== 'invalid_signature') {
    throw new Error(`a tampered body was not refused: ${refused}`);
  }
  return `${event.type}; tampered: ${refused.reason}`;
});
await step('diagnose()', async () => {
  const report = await doctor.diagnose(inProcess());
  if (report.ok !== true) throw new Error(JSON.stringify(report).slice(0, 300));
  return 'ok';
});
await mock?.close();
console.log(JSON.stringify({ ok: steps.every((s) => s.ok), steps }));
