// phpJson: the sandbox's encoder (PHP's json_encode), so a body sent here is byte for byte what it sends.
import { phpJson, signWebhook, type SignedWebhook } from '../testing.js';
import { WEBHOOK_EVENT_TYPES } from '../index.js';
import {
  environment,
  EXIT_FAILURE,
  EXIT_OK,
  integer,
  parseCommandArgs,
  printHelp,
  required,
  secret as secretOption,
  UsageError,
  type CliIo,
  type Command,
} from './args.js';

const usage = `Usage: business-payments trigger <event-type> --url U --secret S [options]

Sends one signed test webhook to your endpoint, as the service would, and prints the
status it answered (exit 0 on 2xx, 1 otherwise).

Event types: ${WEBHOOK_EVENT_TYPES.join(', ')}
(payment.* carry the spec's payload; any other type gets a small plain data object).
With --format legacy it sends the earlier generation's IPN instead (payment.completed or
payment.failed only): its body {"data":{…},"message","status","timestamp"} signed with
X-Signature = HMAC-SHA256 of the body alone, keyed with the API secret.
A route on the fulfillment kit verifies every payment with the service before it runs a
handler: give it a payment the service knows, --data '{"trx_id":"TRX…","merchant_ref":"…"}',
or it answers 500 (no such payment).

Options:
  --url U             your webhook endpoint, e.g. http://localhost:3000/webhooks
  --secret S          webhook signing secret of that environment (default: env
                      BUSINESS_PAYMENTS_WEBHOOK_SECRET_SANDBOX or _PRODUCTION, after
                      --environment, else BUSINESS_PAYMENTS_WEBHOOK_SECRET); with
                      --format legacy, the API secret (default: env
                      BUSINESS_PAYMENTS_API_SECRET)
  --format F          current (default: the spec's delivery) or legacy (the earlier
                      generation's IPN: X-Signature over the body, signed with the API secret)
  --data JSON         fields merged over the event's data, e.g. '{"merchant_ref":"order-7"}'
                      (legacy: over the IPN's data, e.g. '{"ref_trx":"order-7"}')
  --environment E     X-Environment and data.environment (default sandbox); each
                      environment signs with its own secret
  --brand B           brand in the header names, X-<B>-Signature (default Service; not
                      with --format legacy, which has no brand)
  --timestamp T       sign with this unix time (default now; an old one tests your replay
                      check); legacy: the body's timestamp
  -h, --help          show this help
`;

/** `business-payments trigger`: one signed delivery to a local endpoint. */
export const trigger: Command = {
  name: 'trigger',
  summary: 'send a signed test webhook to your endpoint',
  usage,
  async run(args: string[], io: CliIo): Promise<number> {
    const { values, positionals } = parseCommandArgs(
      args,
      {
        url: { type: 'string' },
        secret: { type: 'string' },
        data: { type: 'string' },
        environment: { type: 'string' },
        brand: { type: 'string' },
        timestamp: { type: 'string' },
        format: { type: 'string' },
      },
      true,
    );
    if (values.help) return printHelp(io, usage);
    const type = eventTypeOf(positionals);
    const url = parseUrl(required(values.url, 'url'));
    const format = webhookFormat(values.format);
    const legacy = format === 'legacy';
    if (legacy && type !== 'payment.completed' && type !== 'payment.failed') {
      throw new UsageError(`--format legacy sends payment.completed or payment.failed only (the earlier generation's IPN), got '${type}'`);
    }
    if (legacy && values.brand !== undefined)
      throw new UsageError('--brand does not apply to --format legacy (its X-Signature has no brand)');
    const env = environment(values.environment) ?? 'sandbox';
    // The earlier generation signs its IPN with the API secret.
    const secret = secretOption(
      values.secret,
      'secret',
      io.env ?? process.env,
      legacy ? ['BUSINESS_PAYMENTS_API_SECRET'] : webhookSecretVars(env),
    );
    const brand = values.brand ?? 'Service';
    if (!/^[A-Za-z0-9-]+$/.test(brand)) throw new UsageError(`--brand must be letters, digits or -, got '${brand}'`);
    const timestamp = values.timestamp === undefined ? undefined : integer(values.timestamp, 'timestamp', 0, 10 ** 12);
    const extra = parseData(values.data);
    if (!(WEBHOOK_EVENT_TYPES as readonly string[]).includes(type)) {
      io.stderr.write(`note: '${type}' is not a documented event type; sending it anyway\n`);
    }
    const event = legacy ? buildLegacyIpn(type, env, extra, timestamp) : buildEvent(type, env, extra);
    // The current form's body as the service writes it (PHP's json_encode: `\/`, `\uXXXX`), as
    // the sandbox sends it: a handler that re-serialises the body fails here as in production.
    const payload = legacy ? event : phpJson(event);
    const signed = await signWebhook({ payload, secret, brand, environment: env, timestamp, format });
    const label = 'id' in event ? event.id : `${String(event.data.trx_id)} (legacy IPN)`;
    return deliver(url, signed, type, label, io);
  },
};

/** POSTs one signed delivery to `url` and prints what the endpoint answered: the exit code. */
async function deliver(url: URL, { body, headers }: SignedWebhook, type: string, label: string, io: CliIo) {
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', body, headers, signal: AbortSignal.timeout(30_000) });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
    io.stderr.write(`trigger: could not deliver ${type} to ${url.href}: ${reason}\n`);
    return EXIT_FAILURE;
  }
  const answer = await response.text().catch(() => '');
  io.stdout.write(`${type} ${label} -> ${url.href}: ${response.status} ${response.statusText}\n`);
  if (response.ok) return EXIT_OK;
  if (answer.trim() !== '') io.stderr.write(`endpoint answered: ${answer.trim().slice(0, 500)}\n`);
  return EXIT_FAILURE;
}

/** The one event type named on the command line, e.g. `payment.completed`. */
function eventTypeOf(positionals: string[]): string {
  if (positionals.length === 0) throw new UsageError('missing <event-type>, e.g. payment.completed');
  if (positionals.length > 1) throw new UsageError(`one event type at a time, got ${positionals.length}`);
  const type = positionals[0]!;
  if (!/^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$/.test(type)) throw new UsageError(`'${type}' is not an event type (like payment.completed)`);
  return type;
}

/**
 * Where the default webhook secret for `environment` comes from, first set first: env
 * `BUSINESS_PAYMENTS_WEBHOOK_SECRET_SANDBOX` or `_PRODUCTION` (sandbox and production
 * deliveries are signed with different secrets), then `BUSINESS_PAYMENTS_WEBHOOK_SECRET`.
 */
export function webhookSecretVars(environment?: 'sandbox' | 'production'): string[] {
  const shared = 'BUSINESS_PAYMENTS_WEBHOOK_SECRET';
  return environment === undefined ? [shared] : [`${shared}_${environment.toUpperCase()}`, shared];
}

/** Parses `--format`: `current` or `legacy` (undefined when not given). */
export function webhookFormat(value: string | undefined): 'current' | 'legacy' | undefined {
  if (value === undefined || value === 'current' || value === 'legacy') return value;
  throw new UsageError(`--format must be current or legacy, got '${value}'`);
}

function parseUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--url must be an absolute URL such as http://localhost:3000/webhooks, got '${value}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--url must be http or https, got '${url.protocol}'`);
  return url;
}

function parseData(value: string | undefined): Record<string, unknown> {
  if (value === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new UsageError('--data must be a JSON object');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError('--data must be a JSON object');
  return parsed as Record<string, unknown>;
}

/** A webhook event as the service sends it: the spec's envelope, realistic test data. */
function buildEvent(
  type: string,
  env: 'sandbox' | 'production',
  extra: Record<string, unknown> = {},
): { id: string; type: string; api_version: string; created_at: string; data: Record<string, unknown> } {
  return {
    id: `evt_${randomHex(24)}`,
    type,
    api_version: '2024-06-01',
    created_at: new Date().toISOString().replace(/\.\d{3}Z$/, '+00:00'),
    data: { ...sampleData(type, env), ...extra },
  };
}

/**
 * The earlier generation's IPN body as it sends it: `data` holds the fields the payment was
 * initiated with (the gross `amount` as sent), `environment`, `is_sandbox`, and `trx_id`
 * last; then `message`, `status` and `timestamp` (unix seconds). `extra` is merged over
 * `data` (before `trx_id`, unless it sets one).
 */
function buildLegacyIpn(
  type: string,
  env: 'sandbox' | 'production',
  extra: Record<string, unknown> = {},
  timestamp = Math.floor(Date.now() / 1000),
): { data: Record<string, unknown>; message: string; status: string; timestamp: number } {
  const completed = type === 'payment.completed';
  return {
    data: {
      ref_trx: 'order-1001',
      description: 'Test order',
      ipn_url: 'https://merchant.example/ipn',
      cancel_redirect: 'https://merchant.example/cancel',
      success_redirect: 'https://merchant.example/success',
      customer_name: 'Zoë Mwinyi',
      customer_email: 'zoe@example.com',
      merchant_name: 'Test Merchant',
      amount: 15_000,
      currency_code: 'TZS',
      environment: env,
      is_sandbox: env === 'sandbox',
      ...extra,
      trx_id: extra.trx_id ?? `TRX${randomHex(12).toUpperCase()}`,
    },
    message: completed ? 'Payment Completed' : 'Payment Failed',
    status: completed ? 'completed' : 'failed',
    timestamp,
  };
}

function sampleData(type: string, env: 'sandbox' | 'production'): Record<string, unknown> {
  const [group, action] = type.split('.') as [string, string];
  const tzs = (value: number) => ({ value, currency: 'TZS' });
  if (group === 'payment') {
    // As the service settles: 3 % fee on success; nothing kept on failure.
    const completed = action === 'completed';
    const fees = completed ? 450 : 0;
    const net = completed ? 15_000 - fees : 0;
    return {
      trx_id: `TRX${randomHex(12).toUpperCase()}`,
      merchant_ref: 'order-1001',
      status: completed ? 'completed' : action,
      amount: tzs(15_000),
      settlement: { gross: tzs(15_000), fees: tzs(fees), net: tzs(net) },
      customer: { name: 'Zoë Mwinyi', email: 'zoe@example.com', phone: '255712345678' },
      environment: env,
    };
  }
  if (group === 'subscription') {
    const status = { created: 'active', cancelled: 'cancelled', suspended: 'suspended' }[action] ?? action;
    return { subscription_id: `sub_${randomHex(12)}`, plan_code: 'plan_monthly', customer_phone: '255712345678', status, environment: env };
  }
  if (group === 'invoice') {
    const status = { created: 'open', paid: 'paid', payment_failed: 'failed' }[action] ?? action;
    return { invoice_id: `inv_${randomHex(12)}`, subscription_id: `sub_${randomHex(12)}`, amount: tzs(15_000), status, environment: env };
  }
  return { environment: env };
}

function randomHex(length: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(Math.ceil(length / 2)));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0'))
    .join('')
    .slice(0, length);
}
