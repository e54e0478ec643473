import { EXIT_OK, printFailure, printUsageError, UsageError, type CliIo, type Command } from './args.js';
import { billing } from './billing.js';
import { doctor } from './doctor.js';
import { payouts } from './payouts.js';
import { reconcile } from './reconcile.js';
import { sandbox } from './sandbox.js';
import { sign } from './sign.js';
import { trigger } from './trigger.js';
import { verifyWebhookCommand } from './verify-webhook.js';
import { VERSION } from '../version.js';

export type { CliIo } from './args.js';

const commands: Command[] = [sandbox, sign, verifyWebhookCommand, trigger, doctor, reconcile, payouts, billing];

const usage = `Usage: business-payments <command> [options]

The Business Payments SDK's command line: a local sandbox, request signing, webhook tools,
an integration check, the reconcile sweep, payout intents and billing subscriptions.

Commands:
${commands.map((command) => `  ${command.name.padEnd(16)}${command.summary}`).join('\n')}

Run "business-payments <command> --help" for a command's options;
"business-payments --version" prints the version.
`;

/**
 * Runs the CLI in-process and resolves to the exit code: 0 done, 1 the check or delivery
 * failed, 2 bad arguments (a one-line reason and the usage on stderr).
 *
 * @example
 * ```ts
 * const code = await main(['sign', '--method', 'GET', '--path', '/api/v1/balance', '--secret', 's'], {
 *   stdout: process.stdout, stderr: process.stderr,
 * });
 * ```
 */
export async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) return printUsageError(io, 'business-payments', new UsageError('missing command'), usage);
  if (name === '--help' || name === '-h' || name === 'help') {
    const command = commands.find((c) => c.name === rest[0]);
    io.stdout.write(command?.usage ?? usage);
    return EXIT_OK;
  }
  if (name === '--version' || name === '-v') {
    io.stdout.write(`${VERSION}\n`);
    return EXIT_OK;
  }
  const command = commands.find((c) => c.name === name);
  if (command === undefined) {
    const reason = name.startsWith('-') ? `unknown option '${name}'` : `unknown command '${name}'`;
    return printUsageError(io, 'business-payments', new UsageError(reason), usage);
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) return printUsageError(io, `business-payments ${command.name}`, error, command.usage);
    return printFailure(io, `business-payments ${command.name}`, error);
  }
}
