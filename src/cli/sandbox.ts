import {
  createMockService,
  TEST_PHONE_NUMBERS,
  type MockDeliveryAttempt,
  type MockRequestLogEntry,
  type MockService,
  type MockServiceOptions,
} from '../testing.js';
import { EXIT_FAILURE, EXIT_OK, integer, parseCommandArgs, printHelp, UsageError, type CliIo, type Command } from './args.js';

const DEFAULT_PORT = 4010;
const LOG_INTERVAL_MS = 100;

const usage = `Usage: business-payments sandbox [--port N] [--json] [--time-scale X] [--rate-limit N]
                                [--idempotency-keys N] [--generation current|earlier]

Runs the simulated Business Payments service (createMockService) on 127.0.0.1: every
route of the API with signature checks, USSD push with fixed test phone numbers, and
signed webhooks to your ipn_url. Prints the base URL and the sandbox credentials, then
one line per request. Stops on Ctrl+C.

Options:
  --port N            port to listen on (default ${DEFAULT_PORT}; 0 picks a free one)
  --json              first stdout line: {"merchantKey","apiKey","apiSecret","webhookSecret",
                      "baseUrl","consoleUrl","environment"} (the sandbox set: its webhook
                      secret signs sandbox deliveries only); then one JSON object per line
  --time-scale X      multiply simulated delays (push answers, webhook retries);
                      0.01 makes the 3-minute webhook retry take 1.8 s (default 1)
  --rate-limit N      requests per minute per merchant and IP before 429 (default 120);
                      raise it for load tests
  --idempotency-keys N
                      Idempotency-Keys kept at once, each for 24 h (default 50000);
                      past that a new key gets 503 until the oldest expires
  --generation G      which server to play: current (default; the spec's API) or
                      earlier (the generation deployed today: only initiate-payment,
                      verify-payment and site-info, every other route Laravel's 404; the
                      IPN to ipn_url signed with the API secret, which is then the
                      webhook secret printed)
  -h, --help          show this help
`;

/** `business-payments sandbox`: the mock service as a local HTTP server. */
export const sandbox: Command = {
  name: 'sandbox',
  summary: 'run the local sandbox server (no credentials, no network)',
  usage,
  async run(args: string[], io: CliIo): Promise<number> {
    const { values } = parseCommandArgs(args, {
      port: { type: 'string' },
      json: { type: 'boolean' },
      'time-scale': { type: 'string' },
      'rate-limit': { type: 'string' },
      'idempotency-keys': { type: 'string' },
      generation: { type: 'string' },
    });
    if (values.help) return printHelp(io, usage);
    const port = values.port === undefined ? DEFAULT_PORT : integer(values.port, 'port', 0, 65_535);
    const options = serviceOptions(values);
    const json = values.json === true;
    const generation = generationOf(values.generation);
    // The log is made after the banner; requests before it are queued for it.
    const early: MockRequestLogEntry[] = [];
    let onRequest: (entry: MockRequestLogEntry) => void = (entry) => void early.push(entry);
    const mock = createMockService({ ...options, generation, onRequest: (entry) => onRequest(entry) });
    let server: { url: string; close(): Promise<void> };
    try {
      server = await mock.listen({ port, host: '127.0.0.1' });
    } catch (error) {
      await mock.close();
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE') {
        io.stderr.write(`sandbox: port ${port} is in use; pass --port 0 for any free port, or another port\n`);
        return EXIT_FAILURE;
      }
      throw error;
    }
    const baseUrl = server.url.replace(/\/$/, '');
    // The sandbox set only: its webhook secret signs sandbox deliveries (production has its own).
    const { merchantKey, apiKey, apiSecret, webhookSecret } = mock.credentials.sandbox;
    if (json) {
      const config = { merchantKey, apiKey, apiSecret, webhookSecret, baseUrl, consoleUrl: `${baseUrl}/`, environment: 'sandbox' };
      io.stdout.write(`${JSON.stringify(generation === 'earlier' ? { ...config, generation } : config)}\n`);
    } else {
      io.stdout.write(
        generation === 'earlier' ? earlierBanner(baseUrl, mock.credentials.sandbox) : banner(baseUrl, mock.credentials.sandbox),
      );
    }
    const log = startLog(mock, io, json);
    onRequest = log.onRequest;
    for (const entry of early) log.onRequest(entry);
    await untilAborted(io.signal);
    log.stop();
    await server.close();
    await mock.close();
    io.stderr.write('sandbox stopped\n');
    return EXIT_OK;
  },
};

/** The service's options the flags set (a flag not given leaves the service's default). */
function serviceOptions(values: Record<string, string | boolean | undefined>): MockServiceOptions {
  const flag = (name: string) => (typeof values[name] === 'string' ? values[name] : undefined);
  const timeScale = flag('time-scale');
  const rateLimit = flag('rate-limit');
  const keys = flag('idempotency-keys');
  return {
    ...(timeScale === undefined ? {} : { timeScale: positiveNumber(timeScale, 'time-scale') }),
    ...(rateLimit === undefined ? {} : { rateLimitPerMinute: integer(rateLimit, 'rate-limit', 1, 1_000_000_000) }),
    ...(keys === undefined ? {} : { limits: { idempotencyKeys: integer(keys, 'idempotency-keys', 1, 10_000_000) } }),
  };
}

type Printed = { merchantKey: string; apiKey: string; apiSecret: string; webhookSecret: string };

const sh = (value: string) => (/^[\w.:/@%+=-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`);

function generationOf(value: string | undefined): 'current' | 'earlier' {
  if (value === undefined || value === 'current' || value === 'earlier') return value ?? 'current';
  throw new UsageError(`--generation must be current or earlier, got '${value}'`);
}

function banner(baseUrl: string, c: Printed): string {
  return [
    `Business Payments sandbox running at ${baseUrl}`,
    ...credentialLines(baseUrl, c, '', '# for verifyWebhook, trigger, verify-webhook'),
    '',
    'The webhook secret above signs sandbox deliveries only. Calls with X-Environment:',
    'production take the production credential set, whose webhooks are signed with its own',
    'secret (DEFAULT_CREDENTIALS in business-payments/testing; docs/testing.md).',
    '',
    'USSD push test numbers (customer_phone):',
    `  ${TEST_PHONE_NUMBERS.success}  approves (success)`,
    `  ${TEST_PHONE_NUMBERS.insufficientFunds}  insufficient funds (failed)`,
    `  ${TEST_PHONE_NUMBERS.declined}  declined by the customer (failed)`,
    `  ${TEST_PHONE_NUMBERS.timeout}  no answer (failed after the timeout)`,
    '',
    'Press Ctrl+C to stop. Requests and webhook deliveries:',
    '',
  ].join('\n');
}

// The earlier generation: three routes, the IPN signed with the API secret, no push numbers.
function earlierBanner(baseUrl: string, c: Printed): string {
  return [
    `Business Payments sandbox (earlier generation) running at ${baseUrl}`,
    ...credentialLines(baseUrl, c, '   (the API secret: it signs the IPN)', '# the API secret: verifies the IPN'),
    '',
    'Routes: POST /api/v1/initiate-payment, GET /api/v1/verify-payment/{trxId},',
    'GET /api/v1/site-info; any other is the framework 404 ("The route ... could not be found.").',
    'The IPN goes to ipn_url with X-Signature = hex HMAC-SHA256(API secret, body) and X-Environment.',
    '',
    'Press Ctrl+C to stop. Requests and IPN deliveries:',
    '',
  ].join('\n');
}

// Both banners' credentials, and the exports for the SDK; `note` and `comment` say what the
// webhook secret is on each generation.
function credentialLines(baseUrl: string, c: Printed, note: string, comment: string): string[] {
  return [
    '',
    `  environment     sandbox`,
    `  base URL        ${baseUrl}`,
    `  web console     ${baseUrl}/`,
    `  merchant key    ${c.merchantKey}`,
    `  API key         ${c.apiKey}`,
    `  API secret      ${c.apiSecret}`,
    `  webhook secret  ${c.webhookSecret}${note}`,
    '',
    'For the SDK (new PaymentsClient() reads the first five):',
    `  export BUSINESS_PAYMENTS_ENVIRONMENT=sandbox`,
    `  export BUSINESS_PAYMENTS_BASE_URL=${sh(baseUrl)}`,
    `  export BUSINESS_PAYMENTS_MERCHANT_KEY=${sh(c.merchantKey)}`,
    `  export BUSINESS_PAYMENTS_API_KEY=${sh(c.apiKey)}`,
    `  export BUSINESS_PAYMENTS_API_SECRET=${sh(c.apiSecret)}`,
    `  export BUSINESS_PAYMENTS_WEBHOOK_SECRET=${sh(c.webhookSecret)}   ${comment}`,
  ];
}

/** Prints each new request and webhook attempt from the service's state. */
// Requests come from onRequest (the request log is a bounded ring: indexes into it shift);
// deliveries are printed after the last one printed, found from the end of their list.
// Lines go out in one write per tick (100 ms): under load that is a few writes a second,
// not one per request (each write is a message to the main thread, see bin.ts).
function startLog(
  mock: MockService,
  io: CliIo,
  json: boolean,
): { onRequest: (entry: MockRequestLogEntry) => void; flush: () => void; stop: () => void } {
  const pending: MockRequestLogEntry[] = [];
  let lastDelivery: MockDeliveryAttempt | undefined;
  const flush = () => {
    let text = '';
    for (const { method, path, status, at, reason } of pending.splice(0)) {
      text += json
        ? `${JSON.stringify({ kind: 'request', method, path, status, at, ...(reason ? { reason } : {}) })}\n`
        : `${clock(at)}  ${method} ${path} ${status}${reason ? `  ${reason}` : ''}\n`;
    }
    const { deliveries } = mock.state;
    const from = lastDelivery ? deliveries.lastIndexOf(lastDelivery) + 1 : 0;
    for (const delivery of deliveries.slice(from)) {
      const { eventId, type, url, attempt, status, at, error, manual } = delivery;
      text += json
        ? `${JSON.stringify({ kind: 'webhook', eventId, type, url, attempt, status, at, ...(error ? { error } : {}), ...(manual ? { manual } : {}) })}\n`
        : `${clock(at)}  webhook ${type} ${eventId} -> ${url} ${status ?? `no answer (${error ?? 'network error'})`} (attempt ${attempt}${manual ? ', resend' : ''})\n`;
      lastDelivery = delivery;
    }
    if (text) io.stdout.write(text);
  };
  const timer = setInterval(flush, LOG_INTERVAL_MS);
  return {
    onRequest(entry) {
      pending.push(entry);
    },
    flush,
    stop() {
      clearInterval(timer);
      flush();
    },
  };
}

function clock(at: number): string {
  return new Date(at).toISOString().slice(11, 19);
}

function positiveNumber(value: string, name: string): number {
  const number = Number(value);
  if (value.trim() === '' || !Number.isFinite(number) || number <= 0)
    throw new UsageError(`--${name} must be a number above 0, got '${value}'`);
  return number;
}

function untilAborted(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    signal?.addEventListener('abort', () => resolve(), { once: true });
  });
}
