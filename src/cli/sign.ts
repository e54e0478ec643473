import { signRequest } from '../index.js';
import {
  credential,
  environmentOption,
  EXIT_OK,
  parseCommandArgs,
  printHelp,
  required,
  secret as secretOption,
  UsageError,
  type CliIo,
  type Command,
} from './args.js';

const usage = `Usage: business-payments sign --method M --path P [--body B] --secret S [options]

Prints the signed headers of one API request as "Name: value" lines, for curl:
  business-payments sign --method POST --path /api/v1/payments --body "$BODY" --secret "$SECRET" > headers.txt
  curl -H @headers.txt --data "$BODY" "$BASE_URL/api/v1/payments"

The signature is sha256=hex(HMAC-SHA256(secret, "<timestamp>.<METHOD>.<path>.<body>")).

Options:
  --method M          HTTP method (GET, POST …)
  --path P            path and query exactly as sent, e.g. /api/v1/payments?limit=10
  --body B            raw body exactly as sent (default: empty, as for GET)
  --secret S          API secret of the environment (default: env BUSINESS_PAYMENTS_API_SECRET)
  --timestamp T       unix seconds (default: now)
  --merchant-key K    also print X-Merchant-Key (default: env BUSINESS_PAYMENTS_MERCHANT_KEY)
  --api-key K         also print X-API-Key (default: env BUSINESS_PAYMENTS_API_KEY)
  --environment E     also print X-Environment, sandbox or production (default: env
                      BUSINESS_PAYMENTS_ENVIRONMENT)
  -h, --help          show this help
`;

const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

/** `business-payments sign`: the headers of a signed request. */
export const sign: Command = {
  name: 'sign',
  summary: 'print the signed headers of an API request (for curl)',
  usage,
  async run(args: string[], io: CliIo): Promise<number> {
    const { values } = parseCommandArgs(args, {
      method: { type: 'string' },
      path: { type: 'string' },
      body: { type: 'string' },
      secret: { type: 'string' },
      timestamp: { type: 'string' },
      'merchant-key': { type: 'string' },
      'api-key': { type: 'string' },
      environment: { type: 'string' },
    });
    if (values.help) return printHelp(io, usage);

    const method = required(values.method, 'method');
    if (!HTTP_METHODS.includes(method.toUpperCase())) {
      throw new UsageError(`--method must be an HTTP method (${HTTP_METHODS.join(', ')}), got '${method}'`);
    }
    const path = required(values.path, 'path');
    if (!path.startsWith('/')) throw new UsageError(`--path must start with / (the path as sent, without the host), got '${path}'`);
    const vars = io.env ?? process.env;
    const secret = secretOption(values.secret, 'secret', vars, ['BUSINESS_PAYMENTS_API_SECRET']);
    // The keys come from the environment as the secret does, so the printed curl authenticates.
    const keys = { 'merchant-key': 'BUSINESS_PAYMENTS_MERCHANT_KEY', 'api-key': 'BUSINESS_PAYMENTS_API_KEY' } as const;
    for (const [name, variable] of Object.entries(keys) as Array<[keyof typeof keys, string]>) {
      const value = credential(values[name], name, vars, [variable]);
      // Printed as a header line: a line break inside would start another header.
      if (/[\r\n]/.test(value ?? '')) throw new UsageError(`${values[name] === undefined ? variable : `--${name}`} must be one line`);
      if (value !== undefined) values[name] = value;
    }
    const timestamp = values.timestamp ?? String(Math.floor(Date.now() / 1000));
    if (!/^\d{1,15}$/.test(timestamp)) throw new UsageError(`--timestamp must be unix seconds, got '${timestamp}'`);
    const env = environmentOption(values.environment, vars);
    const body = values.body ?? '';

    const signature = await signRequest({ secret, timestamp, method, pathWithQuery: path, body });
    const headers: Array<[string, string | undefined]> = [
      ['X-Timestamp', timestamp],
      ['X-Signature', signature],
      ['X-Environment', env],
      ['X-Merchant-Key', values['merchant-key']],
      ['X-API-Key', values['api-key']],
      ['Accept', 'application/json'],
      ['Content-Type', body === '' ? undefined : 'application/json'],
    ];
    for (const [name, value] of headers) if (value !== undefined) io.stdout.write(`${name}: ${value}\n`);
    return EXIT_OK;
  },
};
