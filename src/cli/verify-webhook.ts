import { ConfigurationError } from '../index.js';
import { verifyWebhook, WebhookVerificationError } from '../webhooks.js';
import {
  environment,
  EXIT_FAILURE,
  EXIT_OK,
  integer,
  parseCommandArgs,
  printHelp,
  readOptionFile,
  required,
  secret as secretOption,
  UsageError,
  type CliIo,
  type Command,
} from './args.js';
import { webhookFormat, webhookSecretVars } from './trigger.js';

const usage = `Usage: business-payments verify-webhook --secret S --headers FILE --body FILE [options]

Checks a saved webhook delivery exactly as verifyWebhook does: the X-<Brand>-Signature
HMAC over "<timestamp>.<raw body>", the timestamp window and the event header. A delivery
of the earlier generation (X-Signature, HMAC over the raw body alone, keyed with the API
secret; the timestamp and environment in the body) is checked too, and printed as the
payment event it stands for ("format": "legacy").
Prints the event as JSON and exits 0, or prints "invalid: <reason>: <message>" and exits 1.

Options:
  --secret S          webhook signing secret (repeat during a rotation: any may match;
                      default: env BUSINESS_PAYMENTS_WEBHOOK_SECRET_SANDBOX or
                      _PRODUCTION after --environment, else BUSINESS_PAYMENTS_WEBHOOK_SECRET);
                      for an earlier-generation delivery, the API secret (default with
                      --format legacy: env BUSINESS_PAYMENTS_API_SECRET)
  --headers FILE      the delivery's headers: "Name: value" lines (an HTTP request line
                      first is skipped), or a JSON object of names to values;
                      at most 64 KiB
  --body FILE         the raw body, byte for byte as received (at most 1 MiB)
  --tolerance N       allowed age of the timestamp in seconds, both ways (default 300)
  --now T             check as if the time were T (unix seconds), e.g. for an old delivery
  --environment E     also require the delivery's environment to be E (sandbox or
                      production: X-Environment; the earlier form's signed body), and
                      take that environment's secret by default
  --brand B           pin the brand of the header names (X-<B>-Signature)
  --format F          accept only this form: current or legacy (repeatable; default both)
  -h, --help          show this help
`;

/** `business-payments verify-webhook`: checks a saved delivery. */
export const verifyWebhookCommand: Command = {
  name: 'verify-webhook',
  summary: 'check a saved webhook delivery (headers file + body file)',
  usage,
  async run(args: string[], io: CliIo): Promise<number> {
    const { values } = parseCommandArgs(args, {
      secret: { type: 'string', multiple: true },
      headers: { type: 'string' },
      body: { type: 'string' },
      tolerance: { type: 'string' },
      now: { type: 'string' },
      environment: { type: 'string' },
      brand: { type: 'string' },
      format: { type: 'string', multiple: true },
    });
    if (values.help) return printHelp(io, usage);

    const env = environment(values.environment);
    const formats = values.format?.map(webhookFormat) as ('current' | 'legacy')[] | undefined;
    // Sandbox and production deliveries are signed with different secrets: --environment picks.
    // The earlier generation signs with the API secret.
    const vars = formats?.every((f) => f === 'legacy') ? ['BUSINESS_PAYMENTS_API_SECRET'] : webhookSecretVars(env);
    const secrets = (values.secret ?? [undefined]).map((value) => secretOption(value, 'secret', io.env ?? process.env, vars));
    const headersPath = required(values.headers, 'headers');
    const bodyPath = required(values.body, 'body');
    const toleranceSeconds = values.tolerance === undefined ? undefined : integer(values.tolerance, 'tolerance', 1, 3600);
    const nowSeconds = values.now === undefined ? undefined : integer(values.now, 'now', 0, 10 ** 12);

    const cwd = io.cwd ?? process.cwd();
    const headerBytes = await readOptionFile(cwd, headersPath, 'headers', MAX_HEADERS_BYTES, HEADERS_TOO_LARGE);
    const headers = parseHeadersFile(headerBytes.toString('utf8'));
    const payload = new Uint8Array(await readOptionFile(cwd, bodyPath, 'body', MAX_BODY_BYTES, BODY_TOO_LARGE));

    try {
      const event = await verifyWebhook({
        payload,
        headers,
        secret: secrets.length === 1 ? secrets[0]! : secrets,
        toleranceSeconds,
        now: nowSeconds === undefined ? undefined : () => nowSeconds * 1000,
        environment: env,
        brand: values.brand,
        formats,
      });
      io.stdout.write(`${JSON.stringify(event, null, 2)}\n`);
      return EXIT_OK;
    } catch (error) {
      if (error instanceof WebhookVerificationError) {
        io.stderr.write(`invalid: ${error.reason}: ${error.message}\n`);
        return EXIT_FAILURE;
      }
      if (error instanceof ConfigurationError) throw new UsageError(error.message);
      throw error;
    }
  },
};

// The files are read with a bound (a device such as /dev/zero never ends): a delivery's body
// is at most what the sandbox and the fulfillment kit take (maxBodyBytes, 1 MiB), its headers
// far less (Node refuses a header block over 16 KiB).
const MAX_BODY_BYTES = 1024 * 1024;
const MAX_HEADERS_BYTES = 64 * 1024;
const BODY_TOO_LARGE = 'no webhook delivery is that large (the sandbox and the fulfillment kit refuse a body over 1 MiB)';
const HEADERS_TOO_LARGE = "a delivery's header block is far smaller: save the headers alone";

/**
 * Reads a saved header block: a JSON object, or `Name: value` lines as a raw HTTP request
 * shows them (a request line first is skipped; a repeated name is joined with ", " as Node does).
 */
export function parseHeadersFile(text: string): Record<string, string> {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) return parseJsonHeaders(trimmed);
  const headers: Record<string, string> = {};
  const lines = trimmed.split(/\r?\n/);
  lines.forEach((line, index) => {
    if (line.trim() === '') return;
    if (index === 0 && /^[A-Z]+ \S+ HTTP\/[\d.]+$/.test(line.trim())) return;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new UsageError(`--headers line ${index + 1} is not "Name: value": '${line.slice(0, 60)}'`);
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  });
  return headers;
}

function parseJsonHeaders(text: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError('--headers file starts with { but is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError('--headers JSON must be an object of header names to values');
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (typeof value === 'string' || typeof value === 'number') headers[name.toLowerCase()] = String(value);
    else if (Array.isArray(value)) headers[name.toLowerCase()] = value.map(String).join(', ');
    else throw new UsageError(`--headers JSON value of '${name}' must be a string`);
  }
  return headers;
}
