// The SDK's one redaction rule, as its logger and error messages apply it (public: a copy here would drift).
import { redactPersonalData } from '../index.js';
import type { BillingKit, BillingReconcileReport, SubscriptionRecord, SubscriptionState } from '../billing.js';
import { interruptible, loadKit, parseKitArgs, type KitCommand } from './kit-command.js';
import { columns, iso, table } from './table.js';
import { EXIT_FAILURE, EXIT_OK, type CliIo, type Command } from './args.js';

// The billing kit (`business-payments/billing`) is reached only through the merchant's own
// object, loaded from --billing: its types only are imported here, so the CLI bundle holds
// none of its code.

/** The part of the kit (`BillingKit`) the CLI uses. */
type BillingKitLike = Pick<BillingKit, 'subscriptions' | 'reconcile'> & { readonly durable?: boolean };

// Every state, in the kit's order (a state added to the kit fails the typecheck here).
const EVERY_STATE: Record<SubscriptionState, true> = {
  pending: true,
  active: true,
  past_due: true,
  suspended: true,
  cancelled: true,
  ended: true,
};
const STATES = Object.keys(EVERY_STATE) as SubscriptionState[];

const usage = `Usage: business-payments billing list --billing FILE [--state S] [--limit N] [--json]
       business-payments billing reconcile --billing FILE [--json]

The subscriptions in your store, through your createBilling({ ... }) object:
  list       the subscription records, by key: key, customer, plan, state (worked out now),
             paid through, the service's subscription id, invoices charged after a cancel
  reconcile  runs your billing's reconcile(), as a cron job would: reads the invoices of
             each subscription the service may still charge and records what no event
             brought (a lost invoice.paid still grants access). It never subscribes anew; a
             create never answered is sent again with its own key. Prints what changed and
             what could not be read. Running it again is safe.

Exit 0 when done; 2 for bad arguments; reconcile exits 1 when a subscription's invoices could
not be read (run it again). An invoice paid after a cancel (the API cannot stop the renewal
pushes) never extends access: list shows it, for you to refund (onChargedAfterCancel).

Options:
  --billing FILE      a module whose export named billing, or default export, is your
                      createBilling({ ... }) with its client and the store your app uses
                      (postgresStore, redisStore: a memoryStore() forgets with its process,
                      and is refused)
  --state S           list: only the subscriptions in state S, one of
                      ${STATES.join(', ')}
  --limit N           list: at most N subscriptions (default 1000)
  --json              list: the records as one JSON array (phone numbers masked to their
                      last 3 digits); reconcile: the report as one JSON object
  -h, --help          show this help
`;

const COMMAND: KitCommand = {
  name: 'billing',
  action: 'reconcile',
  states: STATES,
  methods: ['subscriptions', 'reconcile'],
  factory: 'createBilling',
  records: 'subscriptions',
  usage,
};

/** `business-payments billing`: the subscription records in the merchant's store, listed or reconciled. */
export const billing: Command = {
  name: 'billing',
  summary: 'list subscriptions, or reconcile their invoices (--billing FILE)',
  usage,
  async run(args: string[], io: CliIo): Promise<number> {
    const parsed = parseKitArgs(COMMAND, args, io);
    if (typeof parsed === 'number') return parsed;
    const loaded = await loadKit<BillingKitLike>(COMMAND, parsed.file, io);
    if (parsed.sub === 'action') return runReconcile(loaded, parsed.file, parsed.json, io);
    const shown = (
      await loaded.subscriptions({ ...(parsed.state && { state: parsed.state as SubscriptionState }), limit: parsed.limit })
    ).map(showRecord);
    io.stdout.write(
      parsed.json ? `${JSON.stringify(shown)}\n` : formatList(shown, parsed.state as SubscriptionState | undefined, columns(io)),
    );
    return EXIT_OK;
  },
};

async function runReconcile(loaded: BillingKitLike, file: string, json: boolean, io: CliIo): Promise<number> {
  const report = await interruptible(COMMAND, io, (options) => loaded.reconcile(options));
  if (!report) return EXIT_FAILURE;
  const shown: BillingReconcileReport = {
    checked: report.checked,
    changed: report.changed,
    errors: report.errors.map((e) => ({ key: e.key, message: redactPersonalData(e.message) })),
  };
  io.stdout.write(json ? `${JSON.stringify(shown)}\n` : formatReconcile(shown, file));
  return shown.errors.length === 0 ? EXIT_OK : EXIT_FAILURE;
}

// What is printed of a record: the customer's phone number as its last 3 digits, the consent's
// IP address and user agent left out, any phone number or e-mail address in free text (the
// terms, the error) redacted.

/** `255712345678` → `…678`. */
function mask(value: string): string {
  const digits = value.replace(/\D/g, '');
  return digits.length > 3 ? `…${digits.slice(-3)}` : '…';
}

function showRecord(record: SubscriptionRecord): SubscriptionRecord {
  const shown: SubscriptionRecord = { ...record, phone: mask(record.phone), termsShown: redactPersonalData(record.termsShown) };
  if (record.consent) {
    const { ip: _ip, userAgent: _userAgent, ...consent } = record.consent;
    shown.consent = consent;
  }
  if (typeof record.error === 'string') shown.error = redactPersonalData(record.error);
  return shown;
}

function formatList(records: SubscriptionRecord[], state: SubscriptionState | undefined, width: number): string {
  if (records.length === 0) return `No subscriptions${state ? ` in state ${state}` : ''}.\n`;
  const header = ['key', 'customer', 'plan', 'state', 'paid through', 'subscription id', 'charged after cancel'];
  const rows = records.map((r) => [
    r.key,
    r.customer,
    r.plan,
    r.state,
    iso(r.paidThrough),
    r.subscriptionId ?? '-',
    String(r.chargedAfterCancel.length),
  ]);
  const lines = table([header, ...rows], width);
  // Each state with records in it, in the kit's order.
  const counts = STATES.map((s) => [s, records.filter((r) => r.state === s).length] as const).filter(([, n]) => n > 0);
  const summary = state ? ` in state ${state}` : `: ${counts.map(([s, n]) => `${n} ${s}`).join(', ')}`;
  lines.push('', `${records.length} subscription(s)${summary}.`);
  const charged = records.filter((r) => r.chargedAfterCancel.length > 0);
  if (charged.length) {
    const invoices = charged.reduce((sum, r) => sum + r.chargedAfterCancel.length, 0);
    lines.push(
      `${invoices} invoice(s) charged after a cancel, on ${charged.length} subscription(s): the customer paid a renewal the API`,
      'could not stop. Refund each one (onChargedAfterCancel in your createBilling is called once for each); it never extends access.',
    );
  }
  return `${lines.join('\n')}\n`;
}

function formatReconcile(report: BillingReconcileReport, file: string): string {
  const lines = [`Reconciled with ${file} (its client and store): ${report.checked} subscription(s) checked.`];
  lines.push('', `Changed: ${report.changed.length}`, ...report.changed.map((c) => `  ${c.key}: ${c.from} → ${c.to}`));
  lines.push('', `Errors: ${report.errors.length}${report.errors.length ? ' (run reconcile again to retry them)' : ''}`);
  lines.push(...report.errors.map((e) => `  ${e.key}: ${e.message}`));
  return `${lines.join('\n')}\n`;
}
