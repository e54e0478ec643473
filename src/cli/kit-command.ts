// What the kits' commands share (`payouts list|resolve --payouts FILE`, `billing
// list|reconcile --billing FILE`): their arguments, the merchant's kit loaded from its module
// (refused on a memoryStore(), whose records are not the app's), and the cron action run until
// done or interrupted. Each command keeps only what is its kit's: its states, what it prints.
import { importModule, integer, parseCommandArgs, printHelp, required, UsageError, type CliIo } from './args.js';

/** What a kit's command is, for the shared parts. */
export interface KitCommand {
  /** The command and its flag (`payouts`, `billing`): `--<name> FILE` names the merchant's module. */
  name: string;
  /** The cron action beside `list` (`resolve`, `reconcile`). */
  action: string;
  /** The kit's states, in its order (`--state` takes one). */
  states: readonly string[];
  /** The kit's methods the command calls: a module export without them is not the kit. */
  methods: readonly string[];
  /** How the merchant makes it, for the error when none is exported (`createPayouts`). */
  factory: string;
  /** What its records are called (`intents`, `subscriptions`). */
  records: string;
  /** The command's help. */
  usage: string;
}

/** The arguments of a kit's command: `list` with its state and limit, or the action. */
export type KitArgs =
  { sub: 'list'; file: string; state: string | undefined; limit: number; json: boolean } | { sub: 'action'; file: string; json: boolean };

/** Parses `args` (a number: the help was printed, exit with it). */
export function parseKitArgs(command: KitCommand, args: string[], io: CliIo): KitArgs | number {
  const { name, action, states, usage } = command;
  const { values, positionals } = parseCommandArgs(
    args,
    { [name]: { type: 'string' }, state: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } },
    true,
  );
  if (values.help || args.length === 0) return printHelp(io, usage);
  const [sub, extra] = positionals;
  if (sub === undefined) throw new UsageError(`missing subcommand: list or ${action}`);
  if (sub !== 'list' && sub !== action) throw new UsageError(`unknown subcommand '${sub}': list or ${action}`);
  if (extra !== undefined) throw new UsageError(`unexpected argument '${extra}'`);
  const json = values.json === true;
  if (sub === action) {
    const given = (['state', 'limit'] as const).find((option) => values[option] !== undefined);
    if (given) throw new UsageError(`--${given} is for ${name} list`);
    return { sub: 'action', file: required(values[name] as string | undefined, name), json };
  }
  const state = values.state;
  if (state !== undefined && !states.includes(state)) throw new UsageError(`--state must be one of ${states.join(', ')}, got '${state}'`);
  const limit = values.limit === undefined ? 1_000 : integer(values.limit, 'limit', 1, 100_000);
  return { sub: 'list', file: required(values[name] as string | undefined, name), state, limit, json };
}

/**
 * Imports the merchant's module and finds its kit: the export named after the command, the
 * default export, or the default export's property of that name, whichever has the methods.
 */
export async function loadKit<Kit>(command: KitCommand, file: string, io: CliIo): Promise<Kit> {
  const { name, methods, factory, records } = command;
  const module = await importModule(name, file, io.cwd ?? process.cwd());
  const named = (value: unknown) => (value as Record<string, unknown> | null | undefined)?.[name];
  const found = [module[name], module.default, named(module.default)].find((value) =>
    methods.every((method) => typeof (value as Record<string, unknown> | null | undefined)?.[method] === 'function'),
  ) as (Kit & { readonly durable?: boolean }) | undefined;
  if (!found) throw new UsageError(`--${name} ${file} exports no ${name}: export const ${name} = ${factory}({ ... }) (or export default)`);
  // The records live in the store: one in this process's memory is empty here, and what the
  // app's own process recorded is not in it.
  if (found.durable === false) {
    throw new UsageError(
      `--${name} ${file} uses memoryStore(), which forgets with its process: its ${records} are not the app's. ` +
        'Give it postgresStore or redisStore (the store your app uses).',
    );
  }
  return found;
}

/** The action run with the CLI's signal; `undefined` when SIGINT stopped it (said on stderr). */
export async function interruptible<T>(
  command: KitCommand,
  io: CliIo,
  run: (options: { signal?: AbortSignal }) => Promise<T>,
): Promise<T | undefined> {
  try {
    return await run(io.signal ? { signal: io.signal } : {});
  } catch (error) {
    if (!io.signal?.aborted) throw error;
    io.stderr.write(`business-payments ${command.name}: ${command.action} interrupted; run it again to go on\n`);
    return undefined;
  }
}
