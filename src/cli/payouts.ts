// The SDK's one redaction rule, as its logger and error messages apply it (public: a copy here would drift).
import { redactPersonalData } from '../index.js';
import type { PayoutIntent, PayoutIntentState, PayoutKit, PayoutResolveReport } from '../payouts.js';
import { interruptible, loadKit, parseKitArgs, type KitCommand } from './kit-command.js';
import { columns, iso, table } from './table.js';
import { EXIT_FAILURE, EXIT_OK, type CliIo, type Command } from './args.js';

// The payout kit (`business-payments/payouts`) is reached only through the merchant's own
// object, loaded from --payouts: its types only are imported here, so the CLI bundle holds
// none of its code.

/** The part of the kit (`PayoutKit`) the CLI uses (`durable` may be missing on an older kit's). */
type PayoutKitLike = Pick<PayoutKit, 'intents' | 'resolve'> & { readonly durable?: boolean };

// Every state, in the kit's order (a state added to the kit fails the typecheck here).
const EVERY_STATE: Record<PayoutIntentState, true> = {
  pending: true,
  in_progress: true,
  ambiguous: true,
  unknown: true,
  sent: true,
  failed: true,
  needs_review: true,
};
const STATES = Object.keys(EVERY_STATE) as PayoutIntentState[];

const usage = `Usage: business-payments payouts list --payouts FILE [--state S] [--limit N] [--json]
       business-payments payouts resolve --payouts FILE [--json]

The payout intents in your store, through your createPayouts({ ... }) object:
  list     the intents, ordered by state then key: key, state, amount, destination (its
           last 3 digits), payout id, sends, last change, note
  resolve  runs your payouts' resolve(), as a cron job would: settles each intent not final
           (pending, unknown, in_progress, ambiguous). It sends: a pending intent is sent,
           one without an answer is sent again with its key while the key window lasts
           (never a second payout); one with a payout id is looked up. What it cannot tell
           becomes needs_review. Prints what changed, what is still open, what waits for a
           person. Running it again is safe.

Exit 0 when done; 2 for bad arguments; resolve exits 1 when an intent errored or any intent
is in needs_review: a payout waiting for a person, so alert on it (from cron, page someone).
An intent in needs_review is never sent again by the kit: once a person is sure no payout was
made for it, payouts.confirmResend(key) in your code lets it be sent again.

Options:
  --payouts FILE      a module whose export named payouts, or default export, is your
                      createPayouts({ ... }) with its client and the store your app uses
                      (postgresStore, redisStore: a memoryStore() forgets with its process,
                      and is refused)
  --state S           list: only the intents in state S, one of
                      ${STATES.join(', ')}
  --limit N           list: at most N intents (default 1000)
  --json              list: the intents as one JSON array; resolve: the report as one JSON
                      object (destinations masked to their last 3 digits)
  -h, --help          show this help
`;

const COMMAND: KitCommand = {
  name: 'payouts',
  action: 'resolve',
  states: STATES,
  methods: ['intents', 'resolve'],
  factory: 'createPayouts',
  records: 'intents',
  usage,
};

/** `business-payments payouts`: the payout intents in the merchant's store, listed or resolved. */
export const payouts: Command = {
  name: 'payouts',
  summary: 'list payout intents, or resolve the open ones (--payouts FILE)',
  usage,
  async run(args: string[], io: CliIo): Promise<number> {
    const parsed = parseKitArgs(COMMAND, args, io);
    if (typeof parsed === 'number') return parsed;
    const loaded = await loadKit<PayoutKitLike>(COMMAND, parsed.file, io);
    if (parsed.sub === 'action') return runResolve(loaded, parsed.file, parsed.json, io);
    const shown = (await loaded.intents({ ...(parsed.state && { state: parsed.state as PayoutIntentState }), limit: parsed.limit })).map(
      showIntent,
    );
    io.stdout.write(
      parsed.json ? `${JSON.stringify(shown)}\n` : formatList(shown, parsed.state as PayoutIntentState | undefined, columns(io)),
    );
    return EXIT_OK;
  },
};

async function runResolve(loaded: PayoutKitLike, file: string, json: boolean, io: CliIo): Promise<number> {
  const report = await interruptible(COMMAND, io, (options) => loaded.resolve(options));
  if (!report) return EXIT_FAILURE;
  const shown: PayoutResolveReport = {
    checked: report.checked,
    changed: report.changed,
    open: report.open.map(showIntent),
    review: report.review.map(showIntent),
    errors: report.errors.map((e) => ({ key: e.key, error: redactPersonalData(e.error) })),
  };
  io.stdout.write(json ? `${JSON.stringify(shown)}\n` : formatResolve(shown, file, columns(io)));
  return shown.errors.length === 0 && shown.review.length === 0 ? EXIT_OK : EXIT_FAILURE;
}

// What is printed of an intent: the destination as its last 3 digits, the service's payout
// record with its phone fields masked the same way, and any phone number or e-mail address in
// free text (note, error, the record's other strings) redacted.

// The fields of the service's payout record (and of any record it nests) that hold a phone number.
const PHONE_KEYS = new Set(['destination', 'phone', 'customer_phone', 'msisdn', 'mobile', 'phone_number', 'settlement_number']);

/** `+255 712 345 678` → `…678`. */
function mask(value: string): string {
  const digits = value.replace(/\D/g, '');
  return digits.length > 3 ? `…${digits.slice(-3)}` : '…';
}

function maskRecord(value: unknown): unknown {
  if (typeof value === 'string') return redactPersonalData(value);
  if (Array.isArray(value)) return value.map(maskRecord);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, field]) => [key, PHONE_KEYS.has(key) && typeof field === 'string' ? mask(field) : maskRecord(field)]),
  );
}

function showIntent(intent: PayoutIntent): PayoutIntent {
  const shown: PayoutIntent = { ...intent };
  if (typeof intent.destination === 'string') shown.destination = mask(intent.destination);
  if (intent.payout !== undefined) shown.payout = maskRecord(intent.payout) as Record<string, unknown>;
  if (typeof intent.note === 'string') shown.note = redactPersonalData(intent.note);
  if (typeof intent.error === 'string') shown.error = redactPersonalData(intent.error);
  return shown;
}

/** What an intent's note column says: its note, else its last error. */
function noteOf(intent: PayoutIntent): string {
  return intent.note ?? (intent.error ? `error: ${intent.error}` : '');
}

function formatList(intents: PayoutIntent[], state: PayoutIntentState | undefined, width: number): string {
  if (intents.length === 0) return `No payout intents${state ? ` in state ${state}` : ''}.\n`;
  const header = ['key', 'state', 'amount', 'to', 'payout id', 'sends', 'updated', 'note'];
  const rows = intents.map((i) => [
    i.key,
    i.state,
    String(i.amount),
    i.destination ?? '',
    i.payoutId ?? '',
    String(i.sends),
    iso(i.updatedAt),
    noteOf(i),
  ]);
  const review = state === undefined || state === 'needs_review' ? intents.filter((i) => i.state === 'needs_review').length : 0;
  const lines = table([header, ...rows], width);
  lines.push('', `${intents.length} intent(s)${state ? ` in state ${state}` : ''}.`);
  if (review) lines.push(`${review} in needs_review: once a person is sure no payout was made, payouts.confirmResend(key) in your code.`);
  return `${lines.join('\n')}\n`;
}

function formatResolve(report: PayoutResolveReport, file: string, width: number): string {
  const lines = [`Resolved with ${file} (its client and store): ${report.checked} intent(s) checked.`];
  lines.push('', `Changed: ${report.changed.length}`, ...report.changed.map((c) => `  ${c.key}: ${c.from} → ${c.to}`));
  const intentRows = (list: PayoutIntent[]) =>
    table(
      list.map((i) => [i.key, i.state, String(i.amount), i.destination ?? '', i.payoutId ?? '', noteOf(i)]),
      width,
    );
  lines.push('', `Still open: ${report.open.length}${report.open.length ? ' (run resolve again later)' : ''}`);
  if (report.open.length) lines.push(...intentRows(report.open));
  lines.push('', `Needs review: ${report.review.length}`);
  if (report.review.length) {
    lines.push(
      ...intentRows(report.review),
      '  The kit will not send these again: sending could pay twice. Once a person is sure no payout',
      '  was made for one, call payouts.confirmResend(key) in your code to let it be sent again.',
    );
  }
  lines.push('', `Errors: ${report.errors.length}${report.errors.length ? ' (run resolve again to retry them)' : ''}`);
  lines.push(...report.errors.map((e) => `  ${e.key}  ${e.error}`));
  return `${lines.join('\n')}\n`;
}
