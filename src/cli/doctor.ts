import { diagnose } from '../doctor.js';
import {
  CLIENT_OPTIONS,
  CLIENT_OPTIONS_USAGE,
  clientOptions,
  clientSources,
  credential,
  EXIT_FAILURE,
  EXIT_OK,
  parseCommandArgs,
  printHelp,
  type CliIo,
  type Command,
} from './args.js';
import { webhookSecretVars } from './trigger.js';

const usage = `Usage: business-payments doctor [options]

Checks an integration against the live service and prints a checklist, with a fix for each
failure: configuration, the service reachable, credentials and signature, clock skew,
production approval, wallets, your webhook endpoint, and contract drift. Exits 1 when a
check fails. Takes the client's configuration: the options below, or the env variables.

Options:
${CLIENT_OPTIONS_USAGE}
  --webhook-url U     your webhook endpoint: a signed test payment.completed is sent to it,
                      for the test transaction TRX_DOCTOR_TEST_… (docs/cli.md shows it)
  --webhook-secret S  the secret it verifies with (default: env
                      BUSINESS_PAYMENTS_WEBHOOK_SECRET_SANDBOX or _PRODUCTION, after the
                      environment, else BUSINESS_PAYMENTS_WEBHOOK_SECRET)
  --yes               send the test delivery also when the environment is production
                      (without it, that check is skipped there)
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
      ...CLIENT_OPTIONS,
      'webhook-url': { type: 'string' },
      'webhook-secret': { type: 'string' },
      yes: { type: 'boolean' },
      json: { type: 'boolean' },
    });
    if (values.help) return printHelp(io, usage);
    const env = io.env ?? process.env;
    // Credentials with surrounding whitespace are usage errors naming the flag or the variable;
    // missing ones are left to the checklist's configuration check.
    const client = clientOptions(values, env);
    const secretVars = webhookSecretVars(client.environment);
    // Each value named by where it came from (a flag, a variable), never as a code option.
    const sources: Record<string, string> = { ...clientSources(values, env), webhookUrl: '--webhook-url' };
    const secretFrom = values['webhook-secret'] === undefined ? secretVars.find((variable) => env[variable]) : '--webhook-secret';
    if (secretFrom) sources.webhookSecret = secretFrom;
    const diagnosis = await diagnose({
      ...client,
      webhookUrl: values['webhook-url'],
      webhookSecret: credential(values['webhook-secret'], 'webhook-secret', env, secretVars),
      confirmProduction: values.yes,
      sources,
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
