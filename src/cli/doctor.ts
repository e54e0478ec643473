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
      io.stdout.write(`${jsonSafe(JSON.stringify(diagnosis))}\n`);
    } else {
      for (const check of diagnosis.checks) {
        io.stdout.write(`${MARK[check.status]} ${terminalSafe(check.name)}: ${terminalSafe(check.detail)}\n`);
        if (check.fix) io.stdout.write(`    fix: ${terminalSafe(check.fix)}\n`);
      }
      io.stdout.write(diagnosis.ok ? 'All checks passed.\n' : 'Some checks failed: see the fixes above.\n');
    }
    return diagnosis.ok ? EXIT_OK : EXIT_FAILURE;
  },
};

// A check's words may carry what a server sent (an error message, the endpoint's answer): to a
// terminal, a control character is a command (ESC sequences set the title, clear the screen,
// hide a link behind text with OSC 8; a newline forges a checklist line). Each one is shown
// escaped, inert and visible: C0 and DEL, C1 (8-bit CSI, OSC…), and the bidirectional
// overrides that reorder what is shown (as in "Trojan Source").
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * `text` with every control character escaped (`\x1b`, `\n`, `\u202e`), for a terminal; once
 * it has one, its backslashes are doubled too, so what is shown reads back unambiguously.
 */
function terminalSafe(text: string): string {
  if (text.search(UNSAFE) === -1) return text;
  return text.replace(/\\/g, '\\\\').replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return NAMED[c] ?? (code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`);
  });
}

/**
 * JSON text with the characters JSON.stringify leaves raw but a terminal obeys (C1, the
 * bidirectional overrides) written as \u escapes: still the same JSON value (C0 and ESC are
 * escaped by JSON.stringify itself; outside strings, JSON text is ASCII).
 */
function jsonSafe(json: string): string {
  return json.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
