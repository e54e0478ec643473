// A child process of test/internal/read-body.test.ts: one call with the built client
// against a hostile body, reporting the error it got and how much this process's memory
// grew meanwhile. A process of its own, so that the figure is this read's alone and an
// unbounded read (gigabytes) cannot take the test runner down with it.
//
//   node --expose-gc bounded-read-child.mjs '<json: { dist, warmUrl, baseUrl, clientOptions, idempotencyKey }>'
import { pathToFileURL } from 'node:url';

const { dist, warmUrl, baseUrl, clientOptions = {}, idempotencyKey } = JSON.parse(process.argv[2]);
const sdk = await import(pathToFileURL(dist).href);

const credentials = { environment: 'sandbox', merchantKey: 'test_m', apiKey: 'test_k', apiSecret: 'test_s', maxRetries: 0 };
const params = { payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1001' };

// A first call on the same path (ky, undici and zlib loaded, a gzip body read), so that the
// growth measured below is the hostile read's, not the first request's.
await new sdk.PaymentsClient({ ...credentials, baseUrl: warmUrl }).payments.create(params);
globalThis.gc?.();

const client = new sdk.PaymentsClient({ ...credentials, baseUrl, ...clientOptions });
const before = process.memoryUsage.rss();
let sampled = before;
const sampler = setInterval(() => (sampled = Math.max(sampled, process.memoryUsage.rss())), 5);
const started = Date.now();
let outcome;
try {
  await client.payments.create(params, idempotencyKey === undefined ? {} : { idempotencyKey });
  outcome = { resolved: true };
} catch (error) {
  outcome = {
    name: error?.name,
    constructorName: error?.constructor?.name,
    paymentsError: error instanceof sdk.PaymentsError,
    message: String(error?.message),
    idempotencyKey: error?.idempotencyKey,
    attempts: error?.attempts,
    status: error?.status,
    serverMayHaveActed: error?.serverMayHaveActed,
    label: error?.label,
    bodyType: typeof error?.body,
    bodyLength: typeof error?.body === 'string' ? error.body.length : undefined,
  };
}
clearInterval(sampler);
// maxRSS is the lifetime peak in KiB: it catches a spike between two samples.
const peak = Math.max(sampled, process.memoryUsage.rss(), process.resourceUsage().maxRSS * 1024);
const report = { ...outcome, ms: Date.now() - started, rssBefore: before, sampledGrowth: sampled - before, peakGrowth: peak - before };
process.stdout.write(`${JSON.stringify(report)}\n`, () => process.exit(0));
