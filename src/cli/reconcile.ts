import type { Fulfillment, ReconcileReport } from '../fulfillment.js';
// stopBefore: the kit's stop rule, so the dry run's walk stops where the kit's would.
import { ConfigurationError, PaymentsClient, stopBefore } from '../index.js';
import {
  CLIENT_OPTIONS,
  CLIENT_OPTIONS_USAGE,
  clientOptions,
  duration,
  EXIT_FAILURE,
  EXIT_OK,
  importModule,
  parseCommandArgs,
  printHelp,
  required,
  UsageError,
  type CliIo,
  type Command,
} from './args.js';

const usage = `Usage: business-payments reconcile --since WHEN [--older-than D] [--fulfillment FILE] [--json]

Finds the payments whose webhook never came. Walks every payment created since WHEN (any
status at the service) and verifies each one older than --older-than:
- with --fulfillment FILE: runs your fulfillment's reconcile(), which settles each one your
  store has no outcome for through your onPaid / onFailed, exactly once, as a webhook would;
- without it, a dry run: a client from the options below (or the BUSINESS_PAYMENTS_*
  variables) verifies the same payments and lists what verify says of each; no store, no
  handler, nothing recorded.
The walk stops once the list is past WHEN. Prints a report (a table, or --json). Exit 0 when
no payment errored, 1 when one did, 2 for bad arguments; payments to review (a second payment
of a paid order, an amount that does not match) and unknown ones (an attempt your store never
made) are listed, not errors. Running it again is safe: settled payments are skipped.

Options:
  --since WHEN        start of the window: a duration back from now (30m, 24h, 7d) or an
                      ISO 8601 date or time (2025-06-01 is midnight UTC, 2025-06-01T08:00+03:00)
  --older-than D      skip payments younger than D: their webhook may still come (default
                      10m; 0 takes every one)
  --fulfillment FILE  a module whose export named fulfillment, or default export, is your
                      createFulfillment({ ... }) with its client and a shared store
                      (postgresStore, redisStore: with memoryStore() every paid payment in
                      the window is fulfilled again)
  --json              print the report as one JSON object on stdout
Dry run only (with --fulfillment, your module's client is used):
${CLIENT_OPTIONS_USAGE}
  -h, --help          show this help
`;

/** A payment the dry run verified. */
interface DryRunPayment {
  trx_id: string;
  merchant_ref: string | null;
  status: string;
  /** null while pending or failed on the earlier generation (its verify sends no amount then). */
  amount: number | null;
  currency: string | null;
  created_at: string | null;
}

/** What `reconcile` prints: the kit's report, its window, and (dry run) each payment verified. */
interface Report extends ReconcileReport {
  mode: 'fulfillment' | 'dry-run';
  since: string;
  olderThan: number;
  payments?: DryRunPayment[];
}

interface Window {
  since: Date;
  olderThan: number;
  signal?: AbortSignal | undefined;
  onProgress?: ((report: ReconcileReport) => void) | undefined;
}

/** `business-payments reconcile`: the sweep for webhooks that never came, or a dry run of it. */
export const reconcile: Command = {
  name: 'reconcile',
  summary: 'settle payments whose webhook never came (--fulfillment), or list them (dry run)',
  usage,
  async run(args: string[], io: CliIo): Promise<number> {
    const { values } = parseCommandArgs(args, {
      since: { type: 'string' },
      'older-than': { type: 'string' },
      fulfillment: { type: 'string' },
      json: { type: 'boolean' },
      ...CLIENT_OPTIONS,
    });
    if (values.help) return printHelp(io, usage);
    const since = parseSince(required(values.since, 'since'), Date.now());
    const olderThan = values['older-than'] === undefined ? 600_000 : duration(values['older-than'], 'older-than');
    const { sweep, title, mode } = await chooseSweep(values, io);
    const progress = progressLine(io);
    const window: Window = { since, olderThan, signal: io.signal, onProgress: progress.update };
    let result: ReconcileReport;
    try {
      result = await sweep(window);
    } catch (error) {
      progress.clear();
      if (!io.signal?.aborted) throw error;
      io.stderr.write(`business-payments reconcile: interrupted after ${progress.last?.seen ?? 0} payment(s); run it again to go on\n`);
      return EXIT_FAILURE;
    }
    progress.clear();
    const report: Report = { mode, since: since.toISOString(), olderThan, ...result };
    io.stdout.write(values.json ? `${JSON.stringify(report)}\n` : formatReport(report, title));
    return report.errors.length === 0 ? EXIT_OK : EXIT_FAILURE;
  },
};

/** The merchant's fulfillment from --fulfillment, or else the dry run with a client of the given configuration. */
async function chooseSweep(
  values: { fulfillment?: string | undefined } & Parameters<typeof clientOptions>[0],
  io: CliIo,
): Promise<{ sweep: (window: Window) => Promise<ReconcileReport>; title: string; mode: Report['mode'] }> {
  if (values.fulfillment !== undefined) {
    const given = Object.keys(CLIENT_OPTIONS).find((name) => values[name as keyof typeof CLIENT_OPTIONS] !== undefined);
    if (given) throw new UsageError(`--${given} is for the dry run: with --fulfillment, your module's client is used`);
    const fulfillment = await loadFulfillment(values.fulfillment, io.cwd ?? process.cwd());
    return {
      sweep: (window) => fulfillment.reconcile(window),
      title: `Reconciled with ${values.fulfillment} (its client, store and handlers).`,
      mode: 'fulfillment',
    };
  }
  const client = dryRunClient(clientOptions(values, io.env ?? process.env, true));
  return {
    sweep: (window) => dryRun(client, window),
    title: `Dry run (no --fulfillment) on ${client.environment} at ${client.baseUrl}: verify only; no store, no handler ran, nothing recorded.`,
    mode: 'dry-run',
  };
}

/** `24h`, `30m`, `7d` back from `now`, or an ISO 8601 date or date-time. */
function parseSince(value: string, now: number): Date {
  if (/^\d+[smhd]$/.test(value)) return new Date(now - duration(value, 'since'));
  const at = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/i.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(at)) throw new UsageError(`--since must be a duration such as 24h or an ISO 8601 date, got '${value}'`);
  if (at > now) throw new UsageError(`--since ${value} is in the future`);
  return new Date(at);
}

/** Imports the merchant's module and finds its `Fulfillment`. */
async function loadFulfillment(file: string, cwd: string): Promise<Pick<Fulfillment, 'reconcile'>> {
  const module = await importModule('fulfillment', file, cwd);
  const named = (value: unknown) => (value as { fulfillment?: unknown } | null | undefined)?.fulfillment;
  const found = [module.fulfillment, module.default, named(module.default)].find(
    (value) => typeof (value as { reconcile?: unknown } | null | undefined)?.reconcile === 'function',
  );
  if (!found) {
    throw new UsageError(
      `--fulfillment ${file} exports no fulfillment: export const fulfillment = createFulfillment({ ... }) (or export default)`,
    );
  }
  // A memory store starts empty in this process: every paid payment in the window would look
  // unsettled, and its onPaid run again, whatever the app's own process already did.
  if ((found as Partial<Fulfillment>).store?.durable === false) {
    throw new UsageError(
      `--fulfillment ${file} uses memoryStore(), which starts empty here: every paid payment would be fulfilled again. ` +
        'Give it postgresStore or redisStore (the store your app uses), or run the dry run (no --fulfillment).',
    );
  }
  return found as Pick<Fulfillment, 'reconcile'>;
}

function dryRunClient(options: ReturnType<typeof clientOptions>): PaymentsClient {
  try {
    return new PaymentsClient(options);
  } catch (error) {
    // Missing or contradictory configuration: what to fix is in the message.
    if (error instanceof ConfigurationError) throw new UsageError(error.message);
    throw error;
  }
}

/**
 * The sweep without a store or handlers: the kit's walk and window (every payment created
 * since `since` and older than `olderThan`; one without a readable creation time is
 * checked), each verified and counted by what verify says. Nothing is recorded.
 */
async function dryRun(client: PaymentsClient, { since, olderThan, signal, onProgress }: Window) {
  const from = +since;
  const until = Date.now() - olderThan;
  const report: ReconcileReport & { payments: DryRunPayment[] } = {
    seen: 0,
    checked: 0,
    paid: 0,
    failed: 0,
    pending: 0,
    busy: 0,
    errors: [],
    unknown: [],
    review: [],
    payments: [],
  };
  const past = stopBefore(from);
  for await (const payment of client.payments.list({ limit: 100 }, { signal })) {
    signal?.throwIfAborted();
    report.seen++;
    const created = Date.parse(payment.created_at ?? '');
    if (past(created)) break;
    if (Number.isNaN(created) || (created >= from && created <= until)) {
      report.checked++;
      try {
        const tx = await client.payments.verify(payment.trx_id, { signal });
        report[tx.status === 'success' ? 'paid' : tx.status === 'failed' ? 'failed' : 'pending']++;
        // At most 1,000 listed (the counts go on): a long window keeps memory bounded.
        if (report.payments.length < 1_000)
          report.payments.push({
            trx_id: tx.trx_id,
            merchant_ref: payment.merchant_ref ?? null,
            status: tx.status,
            amount: tx.amount ?? null,
            currency: tx.currency ?? null,
            created_at: payment.created_at ?? tx.created_at ?? null,
          });
      } catch (error) {
        signal?.throwIfAborted();
        if (report.errors.length < 1_000)
          report.errors.push({ trx_id: payment.trx_id, message: error instanceof Error ? error.message : String(error) });
      }
    }
    onProgress?.(report);
  }
  return report;
}

/** A progress line: what the walk has looked at so far. */
interface Progress {
  /** The latest report seen (also when nothing is shown). */
  last: ReconcileReport | undefined;
  update: (report: ReconcileReport) => void;
  /** Erases the line, so the report starts on a clean one. */
  clear: () => void;
}

/** One line on a terminal's stderr, overwritten in place (at most 10 times a second); nothing elsewhere. */
function progressLine(io: CliIo): Progress {
  const tty = (io.stderr as { isTTY?: unknown }).isTTY === true;
  let shown = false;
  let at = 0;
  const progress: Progress = {
    last: undefined,
    update: (report) => {
      progress.last = { ...report };
      if (!tty || Date.now() - at < 100) return;
      at = Date.now();
      shown = true;
      const { seen, checked, paid, failed, pending, errors } = report;
      io.stderr.write(
        `\r\x1b[2Kreconcile: ${seen} seen, ${checked} checked: ${paid} paid, ${failed} failed, ${pending} pending, ${errors.length} errors`,
      );
    },
    clear: () => {
      if (shown) io.stderr.write('\r\x1b[2K');
      shown = false;
    },
  };
  return progress;
}

const ROWS = {
  fulfillment: {
    seen: 'payments the walk looked at',
    checked: 'in the window, no outcome recorded: verified',
    paid: 'settled as paid now (onPaid ran)',
    failed: 'settled as failed now (onFailed, when given, ran)',
    pending: 'still pending at the service',
    busy: 'being settled elsewhere at this moment',
  },
  'dry-run': {
    seen: 'payments the walk looked at',
    checked: 'in the window: verified',
    paid: 'success at the service',
    failed: 'failed at the service',
    pending: 'still pending at the service',
    busy: '(a dry run has no store)',
  },
} as const;

/** The report as a terminal shows it: what was looked at, a table of counts, the errors. */
function formatReport(report: Report, title: string): string {
  const age = formatDuration(report.olderThan);
  const lines = [title, `Payments created since ${report.since}, older than ${age}:`, ''];
  if (report.payments?.length) {
    const widths = [16, 12, 8].map((min, i) =>
      Math.max(min, ...report.payments!.map((p) => [p.trx_id, p.merchant_ref ?? '', p.status][i]!.length)),
    );
    const row = (cells: string[]) => `  ${cells.map((cell, i) => (i < 3 ? cell.padEnd(widths[i]!) : cell)).join('  ')}`.trimEnd();
    lines.push(row(['trx_id', 'merchant_ref', 'status', 'amount', 'created_at']));
    for (const p of report.payments) {
      lines.push(row([p.trx_id, p.merchant_ref ?? '', p.status, `${p.currency} ${p.amount}`, p.created_at ?? '']));
    }
    lines.push('');
  }
  for (const [key, label] of Object.entries(ROWS[report.mode])) {
    lines.push(`  ${key.padEnd(8)}${String(report[key as keyof typeof ROWS.fulfillment]).padStart(6)}  ${label}`);
  }
  if (report.mode === 'fulfillment') {
    lines.push(
      `  ${'review'.padEnd(8)}${String(report.review.length).padStart(6)}  handed to onDuplicatePayment / onMismatch, or on the review list`,
    );
    lines.push(
      `  ${'unknown'.padEnd(8)}${String(report.unknown.length).padStart(6)}  an attempt reference your store never made: not settled`,
    );
  }
  lines.push(`  ${'errors'.padEnd(8)}${String(report.errors.length).padStart(6)}`);
  for (const [name, list] of [
    ['To review (fulfillment.inbox({ state: "review" }) lists them)', report.review],
    ['Unknown (not made by this app, or another store)', report.unknown],
  ] as const) {
    if (list.length) lines.push('', `${name}:`, ...list.map((trxId) => `  ${trxId}`));
  }
  if (report.errors.length) {
    lines.push('', 'Errors (run it again to retry them):', ...report.errors.map((e) => `  ${e.trx_id}  ${e.message}`));
  }
  if (report.mode === 'dry-run' && report.paid + report.failed > 0) {
    lines.push('', 'A sweep with your fulfillment (--fulfillment FILE) settles each success or failed one your store has not recorded.');
  }
  return `${lines.join('\n')}\n`;
}

const DISPLAY_UNITS: Array<[string, number]> = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
];

/** `600000` → `10m`, `0` → `0s`, as --older-than takes them. */
function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const [unit, size] = DISPLAY_UNITS.find(([, size]) => ms % size === 0) ?? ['ms', 1];
  return `${ms / size}${unit}`;
}
