import { diagnose } from '../doctor-entry.js';
import {
  environment,
  EXIT_FAILURE,
  EXIT_OK,
  parseCommandArgs,
  printHelp,
  secret as secretOption,
  type CliIo,
  type Command,
} from './args.js';

const usage = `Usage: business-payments doctor [options]

Checks an integration against the live service and prints a checklist, with a fix for each
failure: configuration, the service reachable, credentials and signature, clock skew,
production approval, wallets, your webhook endpoint, and contract drift. Exits 1 when a
check fails. Takes the client's configuration: the options below, or the env variables.

Options:
  --environment E     sandbox or production (default: env BUSINESS_PAYMENTS_ENVIRONMENT)
  --base-url U        the service address (default: env BUSINESS_PAYMENTS_BASE_URL)
  --merchant-key K    (default: env BUSINESS_PAYMENTS_MERCHANT_KEY)
  --api-key K         (default: env BUSINESS_PAYMENTS_API_KEY)
  --api-secret S      (default: env BUSINESS_PAYMENTS_API_SECRET)
  --webhook-url U     your webhook endpoint: a signed test event is sent to it
  --webhook-secret S  the secret it verifies with (default: env BUSINESS_PAYMENTS_WEBHOOK_SECRET)
  --json              one JSON object: { ok, checks: [{ name, status, detail, fix }] }
  -h, --help          show this help
`;

const MARK = { pass: '✓', fail: '✗', skip: '–' } as const;

/** `business-payments doctor`: what is wrong with an integration, and how to fix it. */
export const doctor: Command = {
  name: 'doctor',
  summary: 'check an integration: credentials, clock, wallets, webhook endpoint, contract',
  usage,
  async run(args: string[], io: CliIo): Promise<number> {
    const { values } = parseCommandArgs(args, {
      environment: { type: 'string' },
      'base-url': { type: 'string' },
      'merchant-key': { type: 'string' },
      'api-key': { type: 'string' },
      'api-secret': { type: 'string' },
      'webhook-url': { type: 'string' },
      'webhook-secret': { type: 'string' },
      json: { type: 'boolean' },
    });
    if (values.help) return printHelp(io, usage);
    const env = io.env ?? process.env;
    const webhookSecret = values['webhook-secret'] ?? env.BUSINESS_PAYMENTS_WEBHOOK_SECRET;
    const diagnosis = await diagnose({
      environment: environment(values.environment ?? env.BUSINESS_PAYMENTS_ENVIRONMENT) ?? 'sandbox',
      baseUrl: values['base-url'] ?? env.BUSINESS_PAYMENTS_BASE_URL,
      merchantKey: values['merchant-key'] ?? env.BUSINESS_PAYMENTS_MERCHANT_KEY,
      apiKey: values['api-key'] ?? env.BUSINESS_PAYMENTS_API_KEY,
      apiSecret: values['api-secret'] ?? env.BUSINESS_PAYMENTS_API_SECRET,
      webhookUrl: values['webhook-url'],
      webhookSecret: webhookSecret === undefined ? undefined : secretOption(webhookSecret, 'webhook-secret'),
    });
    if (values.json) {
      io.stdout.write(`${JSON.stringify(diagnosis)}\n`);
    } else {
      for (const check of diagnosis.checks) {
        io.stdout.write(`${MARK[check.status]} ${check.name}: ${check.detail}\n`);
        if (check.fix) io.stdout.write(`    fix: ${check.fix}\n`);
      }
      io.stdout.write(diagnosis.ok ? 'All checks passed.\n' : 'Some checks failed: see the fixes above.\n');
    }
    return diagnosis.ok ? EXIT_OK : EXIT_FAILURE;
  },
};
