// diagnose(): what is wrong with an integration, checked against the live service with the
// client's own configuration. Used by `business-payments doctor` and health endpoints.
// The client and its error classes come from the main entry (the package itself, not a
// copy): the errors a call throws are then the classes checked here.
import {
  APIConnectionError,
  APIError,
  ConfigurationError,
  MerchantPendingApprovalError,
  PaymentsClient,
  PaymentsError,
  type ClientOptions,
  type ServiceGeneration,
} from 'business-payments';
import { contractDrift, provisionalDifferences, type OpenAPIDoc } from './contract.js';
import { readEnv } from '../internal/env.js';
import { signWebhook } from '../testing/sign-webhook.js';

/** Options of {@link diagnose}: the client's options, plus the webhook endpoint to try. */
export interface DiagnoseOptions extends ClientOptions {
  /**
   * Your webhook endpoint: a signed test `payment.completed` is sent to it (for the test
   * transaction `TRX_DOCTOR_TEST_…`; in production only with `confirmProduction`).
   */
  webhookUrl?: string | undefined;
  /** The webhook signing secret your endpoint verifies with. */
  webhookSecret?: string | undefined;
  /**
   * Send the test delivery also when the client is for production. Without it, the
   * `webhook endpoint` check is skipped in production: the test event is a signed
   * `payment.completed` (for a test transaction the service does not know), and a handler
   * that does not verify with the service before it fulfils would act on it. With a sandbox
   * client it lets doctor send, when the endpoint refuses the test delivery, the same one
   * marked production, to tell whether the endpoint is for production (then the fix names the
   * environment, not the signature).
   */
  confirmProduction?: boolean | undefined;
  /** Time your endpoint has to answer, in ms. Default 10 000 (the service's delivery timeout). */
  webhookTimeout?: number | undefined;
  /** The local clock in ms (for the clock-skew check). Default `Date.now`. */
  now?: (() => number) | undefined;
  /**
   * Where the values given in these options came from, by option name, for the checklist to
   * name them: `{ baseUrl: 'BUSINESS_PAYMENTS_BASE_URL', apiKey: '--api-key' }` (the CLI passes
   * its flags and variables so), or `'default'` for a value that is the default. A value given
   * without a source here is named as a code option (`the apiKey option`); a client option
   * left unset is read by the client from its variable, and named by it.
   */
  sources?:
    | Partial<Record<'environment' | 'baseUrl' | 'merchantKey' | 'apiKey' | 'apiSecret' | 'webhookUrl' | 'webhookSecret', string>>
    | undefined;
}

/** One line of the checklist. */
export interface DiagnosisCheck {
  /** What was checked, e.g. `credentials`. */
  name: string;
  /** `pass`, `fail`, or `skip` (not checked: an earlier check failed, or it does not apply). */
  status: 'pass' | 'fail' | 'skip';
  /** What was found. */
  detail: string;
  /** How to fix a failure. */
  fix?: string | undefined;
  /**
   * Findings that are not failures: for `contract`, each field where the live service
   * describes a shape the spec does not show otherwise than the SDK's guess.
   */
  advice?: string[] | undefined;
}

/** What {@link diagnose} found: `ok` when no check failed. */
export interface Diagnosis {
  /** True when every check passed or was skipped. */
  ok: boolean;
  /** The service's generation, when it could be told (see `client.generation()`, docs/generations.md). */
  generation?: ServiceGeneration | undefined;
  /** The checklist, in order. */
  checks: DiagnosisCheck[];
}

/** Largest clock difference the service accepts on a signed request (seconds). */
const MAX_SKEW_S = 300;

/** The client options a configuration is made of, each with its variable and its CLI flag. */
const CONFIG = {
  environment: ['BUSINESS_PAYMENTS_ENVIRONMENT', '--environment'],
  baseUrl: ['BUSINESS_PAYMENTS_BASE_URL', '--base-url'],
  merchantKey: ['BUSINESS_PAYMENTS_MERCHANT_KEY', '--merchant-key'],
  apiKey: ['BUSINESS_PAYMENTS_API_KEY', '--api-key'],
  apiSecret: ['BUSINESS_PAYMENTS_API_SECRET', '--api-secret'],
} as const;
type ConfigName = keyof typeof CONFIG;
const CONFIG_NAMES = Object.keys(CONFIG) as ConfigName[];

/**
 * Where a value came from, as the checklist names it: the `sources` entry, else `the <name>
 * option` for one given in the options; for one left unset, the variable the client reads
 * (`default` for an environment neither sets), or undefined when nothing sets it.
 */
function sourceOf(options: DiagnoseOptions, name: ConfigName | 'webhookUrl' | 'webhookSecret'): string | undefined {
  if (options[name] !== undefined) return options.sources?.[name] ?? `the ${name} option`;
  if (name === 'webhookUrl' || name === 'webhookSecret') return undefined;
  const variable = CONFIG[name][0];
  return readEnv(variable, true) ? variable : name === 'environment' ? 'default' : undefined;
}

/** Where the configuration came from, values of one source together: `merchantKey, apiKey from code options; baseUrl from --base-url`. */
function provenance(sources: Record<ConfigName, string | undefined>, names: readonly ConfigName[] = CONFIG_NAMES): string {
  const groups = new Map<string | undefined, string[]>();
  for (const name of names) {
    const source = sources[name] === `the ${name} option` ? 'code options' : sources[name];
    groups.set(source, [...(groups.get(source) ?? []), name]);
  }
  return [...groups].map(([source, names]) => from(names.join(', '), source)).join('; ');
}

/** `name from <source>` (`name by default`), for a detail or a fix. */
function from(name: string, source: string | undefined): string {
  return source === 'default' ? `${name} by default` : `${name} from ${source ?? 'nowhere (not set)'}`;
}

/**
 * Checks an integration against the live service: configuration, reachability and latency,
 * credentials and signature, clock skew, production approval, wallets, your webhook
 * endpoint (when `webhookUrl` is given) and contract drift. Never throws for what it finds.
 *
 * @example
 * <!-- not run: it posts a signed test delivery to your public webhook URL -->
 * ```ts
 * const { ok, checks } = await diagnose({ webhookUrl: 'https://shop.example.com/hooks', webhookSecret });
 * for (const c of checks) console.log(c.status, c.name, c.detail, c.fix ?? '');
 * ```
 */
export async function diagnose(options: DiagnoseOptions = {}): Promise<Diagnosis> {
  const checks: DiagnosisCheck[] = [];
  const add = (check: DiagnosisCheck) => (checks.push(check), check);
  const skip = (name: string, detail: string) => add({ name, status: 'skip', detail });
  const now = options.now ?? Date.now;

  const sources = Object.fromEntries(CONFIG_NAMES.map((name) => [name, sourceOf(options, name)])) as Record<ConfigName, string | undefined>;
  const given = options.fetch;
  const clock = serviceClock(given, now);
  const { fetch } = clock;

  // A `fetch` that is not a function is left for the client to refuse.
  const { client, check } = configured(options, given === undefined || typeof given === 'function' ? fetch : given, sources);
  add(check);
  if (!client) {
    for (const name of ['service reachable', 'generation', 'credentials', 'clock', 'approval', 'wallets', 'webhook endpoint', 'contract'])
      skip(name, 'needs a valid configuration');
    return done(checks);
  }

  // One signed call answers four questions: reachable, credentials, clock, approval.
  const started = now();
  const siteInfo = await client.siteInfo.retrieve().then(
    (value) => ({ value, error: undefined }),
    (error: unknown) => ({ value: undefined, error }),
  );
  const latency = Math.max(0, now() - started);
  if (siteInfo.error instanceof APIConnectionError) {
    add({ name: 'service reachable', status: 'fail', detail: message(siteInfo.error), fix: reachFix(siteInfo.error) });
    for (const name of ['generation', 'credentials', 'clock', 'approval', 'wallets', 'webhook endpoint', 'contract'])
      skip(name, 'the service is not reachable');
    return done(checks);
  }
  add({ name: 'service reachable', status: 'pass', detail: `answered in ${latency} ms` });
  const generation = await client.generation().catch((error: unknown) => error as Error);
  add(generationCheck(generation));
  // The earlier generation has no such routes: nothing to check, and nothing to fix.
  const lacks = (name: string, route: string): DiagnosisCheck | undefined =>
    generation === 'earlier' ? { name, status: 'skip', detail: `the earlier generation has no ${route} route` } : undefined;

  // The signed call is the first answer: its Date (a 401 has one too), else the generation probe's.
  const { served } = clock;
  const skew = served && Math.round((served.at - served.date) / 1000);
  const signed = signedCallChecks(client.environment, siteInfo.error, skew, sources, unprefixed(options));
  checks.push(...signed);
  // Refused for the clock: nothing after it could be checked, however right the credentials.
  const refused = siteInfo.error ? (signed[0]!.status === 'skip' ? 'needs a clock the service accepts' : 'needs accepted credentials') : '';
  add(lacks('wallets', 'balance') ?? (refused ? { name: 'wallets', status: 'skip', detail: refused } : await walletsCheck(client)));
  add(await webhookCheck(options, client.environment, generation === 'earlier'));
  add(lacks('contract', 'openapi.json') ?? (refused ? { name: 'contract', status: 'skip', detail: refused } : await contractCheck(client)));
  return done(checks, typeof generation === 'string' ? generation : undefined);
}

/** The client the checks use and the `configuration` check; no client when the options are refused. */
function configured(options: DiagnoseOptions, fetch: unknown, sources: Record<ConfigName, string | undefined>) {
  try {
    // `now` is the clock doctor checks (its skew against the service's), not one to sign with.
    const { now: _checked, ...clientOptions } = options;
    const client = new PaymentsClient({ ...clientOptions, maxRetries: 0, fetch: fetch as typeof globalThis.fetch });
    const detail = `${client.environment} at ${client.baseUrl} (${provenance(sources)})`;
    return { client, check: { name: 'configuration', status: 'pass', detail } satisfies DiagnosisCheck };
  } catch (error) {
    return { client: undefined, check: configurationFailure(message(error), sources) };
  }
}

/**
 * The service's clock, from the Date of the first answer that has one (the signed call's,
 * refused or not), with the local time it came at: the clock check reads `served`. `fetch`
 * is `given` (else the global fetch) noting it.
 */
function serviceClock(given: typeof globalThis.fetch | undefined, now: () => number) {
  const clock: { fetch: typeof globalThis.fetch; served?: { date: number; at: number } } = {
    fetch: async (input, init) => {
      const answer = await (given ?? globalThis.fetch)(input, init);
      const date = Date.parse(answer.headers.get('date') ?? '');
      // A Date is whole seconds: the service's clock was somewhere in the second after it.
      if (!clock.served && !Number.isNaN(date)) clock.served = { date: date + 500, at: now() };
      return answer;
    },
  };
  return clock;
}

/** Which generation the service is, and the methods it offers. */
function generationCheck(generation: ServiceGeneration | Error): DiagnosisCheck {
  const name = 'generation';
  if (generation instanceof Error) return { name, status: 'skip', detail: `could not be told (${message(generation)})` };
  return generation === 'current'
    ? { name, status: 'pass', detail: 'current: every route of the spec (payments.create, list, push, balance, payouts, billing, …)' }
    : {
        name,
        status: 'pass',
        detail:
          'earlier (the generation deployed today on many servers): it offers payments.initiate, payments.verify and ' +
          'siteInfo.retrieve only; webhooks are signed with the API secret (docs/generations.md)',
      };
}

/**
 * The configuration check's failure: the client's words, naming where the value at fault came
 * from (a code option, a variable, a CLI flag), and a fix that says where to correct it.
 */
function configurationFailure(said: string, sources: Record<ConfigName, string | undefined>): DiagnosisCheck {
  const name = 'configuration';
  // The client names a value it was given `<name> option`, one it read by its variable.
  const about = CONFIG_NAMES.find((n) => said.startsWith(`${n} `) || said.startsWith(CONFIG[n][0]));
  const source = about && sources[about];
  if (!about || !source || / is not set/.test(said))
    return {
      name,
      status: 'fail',
      detail: said,
      fix: `Set the value named above: the option or its environment variable (BUSINESS_PAYMENTS_*)${about ? `, or ${CONFIG[about][1]} with the CLI` : ''}.`,
    };
  const detail = said.startsWith(`${about} option `)
    ? `${source}${said.slice(`${about} option`.length)}`
    : said.startsWith(`${about} `)
      ? `${about} (from ${source})${said.slice(about.length)}`
      : said;
  // A credential of the other environment: the environment may be the value at fault.
  const or =
    about !== 'environment' && / but environment is /.test(said)
      ? `, or the environment (${from('environment', sources.environment)})`
      : '';
  return { name, status: 'fail', detail, fix: `Correct ${source}, where the value named above came from${or}.` };
}

/**
 * What the signed site-info call says of credentials, clock and approval. A 401 with the
 * local clock off by more than the service's window is the clock's failure: the service
 * refuses the request's X-Timestamp whatever the credentials, so they are not judged.
 */
function signedCallChecks(
  environment: string,
  error: unknown,
  skew: number | undefined,
  sources: Record<ConfigName, string | undefined>,
  unprefixedKeys: boolean,
): DiagnosisCheck[] {
  const label = error instanceof APIError ? (error.label ?? String(error.status)) : error instanceof Error ? error.name : 'error';
  const unauthorized = error instanceof APIError && error.status === 401;
  const offBy =
    skew === undefined ? '' : `the local clock is ${Math.abs(skew)} s ${skew > 0 ? 'ahead of' : 'behind'} the service's (its Date header)`;
  const clockRefused = unauthorized && skew !== undefined && Math.abs(skew) > MAX_SKEW_S;
  const credentials: DiagnosisCheck =
    error instanceof MerchantPendingApprovalError
      ? { name: 'credentials', status: 'pass', detail: 'accepted (the merchant is not approved yet)' }
      : clockRefused
        ? {
            name: 'credentials',
            status: 'skip',
            detail:
              `not judged: the service answered 401 (${label}), and ${offBy}, beyond its ${MAX_SKEW_S} s window: it refuses ` +
              'a request signed with this clock (X-Timestamp) whatever the credentials. See clock.',
          }
        : error
          ? {
              name: 'credentials',
              status: 'fail',
              detail: `${label}: ${message(error)}`,
              fix:
                unauthorized && environment === 'sandbox' && unprefixedKeys
                  ? forgottenEnvironmentFix(sources)
                  : `Use the merchant key, API key and API secret of the ${environment} environment, all three from the same ` +
                    `credential set (now ${provenance(sources, ['merchantKey', 'apiKey', 'apiSecret'])})` +
                    `${unauthorized && skew === undefined ? '; if they are, check the clock (NTP): the service sent no Date to compare with' : ''}.`,
            }
          : { name: 'credentials', status: 'pass', detail: 'signed request accepted' };
  return [
    credentials,
    clockCheck(skew, clockRefused ? `${offBy}: the service refused the signed request (401 ${label}) for it` : offBy),
    approvalCheck(environment, error, clockRefused),
  ];
}

/**
 * True when none of the three credentials carries the sandbox's `test_` prefix. Sandbox keys
 * start `test_`; production keys carry no prefix (spec/deployed-generation.md), and a `live_`
 * one in the sandbox is refused at construction. Read as the client read them: the option,
 * else its variable.
 */
function unprefixed(options: DiagnoseOptions): boolean {
  return (['merchantKey', 'apiKey', 'apiSecret'] as const).every(
    (name) => !(options[name] ?? readEnv(CONFIG[name][0], true) ?? '').startsWith('test_'),
  );
}

/**
 * The fix for a sandbox client refused with three unprefixed keys: production keys, and the
 * environment left at its default (or set to sandbox). Says how to set it, by where the
 * environment came from (a CLI flag, the option, else the variable), then where each value came from.
 */
function forgottenEnvironmentFix(sources: Record<ConfigName, string | undefined>): string {
  const source = sources.environment;
  const set = source?.startsWith('--')
    ? 'pass --environment production'
    : source === 'the environment option'
      ? "set environment: 'production' (the environment option)"
      : "set BUSINESS_PAYMENTS_ENVIRONMENT=production (or environment: 'production')";
  return (
    `These look like production keys (no test_ prefix): ${set}. ` +
    `Now ${provenance(sources, ['environment', 'merchantKey', 'apiKey', 'apiSecret'])}.`
  );
}

/** The local clock against the service's: `detail` says by how much (and what it cost). */
function clockCheck(skew: number | undefined, detail: string): DiagnosisCheck {
  const name = 'clock';
  if (skew === undefined) return { name, status: 'skip', detail: 'the service sent no Date header' };
  if (Math.abs(skew) <= MAX_SKEW_S) return { name, status: 'pass', detail: `within ${Math.abs(skew)} s of the service` };
  return {
    name,
    status: 'fail',
    detail,
    fix:
      `Synchronise this machine's clock with NTP (e.g. timedatectl set-ntp true, or w32tm /resync), then run doctor again: ` +
      `each request is signed with the local time (X-Timestamp), and the service refuses one more than ${MAX_SKEW_S} s from its own clock.`,
  };
}

/** Production only: the merchant is approved. */
function approvalCheck(environment: string, error: unknown, clockRefused: boolean): DiagnosisCheck {
  const name = 'approval';
  if (environment !== 'production') return { name, status: 'skip', detail: 'sandbox: approval is not needed' };
  if (error instanceof MerchantPendingApprovalError)
    return { name, status: 'fail', detail: message(error), fix: 'Finish business approval in the dashboard; until then use the sandbox.' };
  if (!error) return { name, status: 'pass', detail: 'the merchant is approved for production' };
  return {
    name,
    status: 'skip',
    detail: clockRefused ? 'unknown: the signed request was refused for the clock' : 'unknown: the credentials were refused',
  };
}

/** Currencies with an active wallet (balance). */
async function walletsCheck(client: PaymentsClient): Promise<DiagnosisCheck> {
  try {
    const wallets = await client.balance.retrieve();
    return wallets.length > 0
      ? { name: 'wallets', status: 'pass', detail: wallets.map((w) => `${w.currency} ${w.balance}`).join(', ') }
      : {
          name: 'wallets',
          status: 'fail',
          detail: 'no currency has an active wallet',
          fix: 'Activate a receiver wallet for each currency you charge in.',
        };
  } catch (error) {
    return { name: 'wallets', status: 'fail', detail: message(error) };
  }
}

/** The live openapi.json against the SDK's schemas: drift where the spec shows a shape, advice where it does not. */
async function contractCheck(client: PaymentsClient): Promise<DiagnosisCheck> {
  try {
    const doc = (await client.openapi()) as unknown as OpenAPIDoc;
    const drift = contractDrift(doc);
    const advice = provisionalDifferences(doc);
    const list = (lines: string[]) => `${lines.slice(0, 3).join('; ')}${lines.length > 3 ? '; …' : ''}`;
    const note = advice.length
      ? `. Advice, not a failure: ${advice.length} shape(s) the spec does not show differ from the SDK's guess, ` +
        `which it reads defensively (docs/spec-gaps.md): ${list(advice)}`
      : '';
    const check: DiagnosisCheck =
      drift.length === 0
        ? { name: 'contract', status: 'pass', detail: `the service describes the API this SDK version calls${note}` }
        : {
            name: 'contract',
            status: 'fail',
            detail: `${drift.length} difference(s): ${list(drift)}${note}`,
            fix: 'Update business-payments, or tell the service owner which side is wrong.',
          };
    if (advice.length) check.advice = advice;
    return check;
  } catch (error) {
    return { name: 'contract', status: 'skip', detail: `the service's openapi.json could not be read (${message(error)})` };
  }
}

const WEBHOOK_CHECK = 'webhook endpoint';

/**
 * doctor's test delivery: a complete `payment.completed`, every field of the spec's payment
 * payload, for a test transaction the service does not know (`TRX_DOCTOR_TEST_…`): TZS
 * 1,000 settled with the service's 3 % fee. docs/cli.md shows it.
 */
function testEvent(environment: 'sandbox' | 'production', now: number) {
  const tag = Array.from(crypto.getRandomValues(new Uint8Array(6)), (b) => b.toString(16).padStart(2, '0')).join('');
  const tzs = (value: number) => ({ value, currency: 'TZS' });
  return {
    id: `evt_doctor_test_${tag}`,
    type: 'payment.completed',
    api_version: '2024-06-01', // the date-form version the service's payloads carry
    created_at: new Date(now).toISOString().replace(/\.\d{3}Z$/, '+00:00'),
    data: {
      trx_id: `TRX_DOCTOR_TEST_${tag.toUpperCase()}`,
      merchant_ref: 'doctor-test',
      status: 'completed',
      amount: tzs(1_000),
      settlement: { gross: tzs(1_000), fees: tzs(30), net: tzs(970) },
      customer: { name: 'Business Payments doctor (test)', email: 'doctor-test@example.com', phone: '255700000000' },
      environment,
    },
  };
}

/** doctor's test delivery in the earlier generation's IPN form (docs/cli.md shows it). */
function legacyTestIpn(event: ReturnType<typeof testEvent>, webhookUrl: string): Record<string, unknown> {
  const { data } = event;
  return {
    data: {
      ref_trx: data.merchant_ref,
      description: 'Business Payments doctor (test)',
      ipn_url: webhookUrl,
      customer_name: data.customer.name,
      customer_email: data.customer.email,
      merchant_name: 'Business Payments doctor',
      amount: data.amount.value,
      currency_code: data.amount.currency,
      environment: data.environment,
      is_sandbox: data.environment === 'sandbox',
      trx_id: data.trx_id,
    },
    message: 'Payment Completed',
    status: 'completed',
    timestamp: Math.floor(Date.parse(event.created_at) / 1000),
  };
}

async function webhookCheck(options: DiagnoseOptions, environment: 'sandbox' | 'production', earlier: boolean): Promise<DiagnosisCheck> {
  const name = WEBHOOK_CHECK;
  if (!options.webhookUrl) return { name, status: 'skip', detail: 'no webhookUrl given' };
  if (environment === 'production' && !options.confirmProduction)
    return {
      name,
      status: 'skip',
      detail:
        'not sent: the client is for production, and the test delivery is a signed payment.completed (of a test transaction ' +
        'the service does not know) that a handler which fulfils without verifying would act on. ' +
        'To send it anyway: --yes (CLI) or confirmProduction: true (diagnose).',
    };
  if (!options.webhookSecret)
    return {
      name,
      status: 'fail',
      detail: `webhookSecret is not set (webhookUrl is: ${from('webhookUrl', sourceOf(options, 'webhookUrl'))})`,
      fix: 'Pass the webhook signing secret your endpoint verifies with (on the earlier generation, the API secret: it signs its IPN).',
    };
  const secretFrom = sourceOf(options, 'webhookSecret');
  // The rule of every secret: surrounding whitespace is refused, never trimmed.
  if (options.webhookSecret !== options.webhookSecret.trim())
    return {
      name,
      status: 'fail',
      detail: `${options.sources?.webhookSecret ?? 'webhookSecret'} has leading or trailing whitespace (a copy-paste slip?)`,
      fix: 'Remove it: the service signs with the secret exactly as its dashboard shows it.',
    };
  const timeout = options.webhookTimeout ?? 10_000;
  const event = testEvent(environment, (options.now ?? Date.now)());
  const { webhookUrl: url, webhookSecret: secret } = options;
  const send = (marked: 'sandbox' | 'production') => deliver(options, { event, url, secret, timeout, earlier }, marked);
  try {
    const { answer, text } = await send(environment);
    const check = judgeAnswer(answer, text, event.data.trx_id, `the ${environment} one, ${from('webhookSecret', secretFrom)}`);
    const refused = check.status === 'fail' && [400, 401, 403].includes(answer.status);
    return refused ? await forOtherEnvironment(check, text, event.data.trx_id, environment, options, send) : check;
  } catch (error) {
    const timedOut = error instanceof Error && error.name === 'TimeoutError';
    return {
      name,
      status: 'fail',
      detail: timedOut ? `no answer within ${timeout} ms` : `could not be reached (${message(error)})`,
      fix: timedOut
        ? 'Answer within the delivery timeout; do slow work after answering.'
        : 'Check the URL is public and reachable from the service.',
    };
  }
}

/**
 * Posts the test delivery, marked for `environment` (X-Environment, `data.environment`), to
 * the endpoint: its answer and the first 4,000 characters of what it said.
 */
async function deliver(
  options: DiagnoseOptions,
  test: { event: ReturnType<typeof testEvent>; url: string; secret: string; timeout: number; earlier: boolean },
  environment: 'sandbox' | 'production',
): Promise<{ answer: Response; text: string }> {
  const event = { ...test.event, data: { ...test.event.data, environment } };
  const { body, headers } = await signTestDelivery(event, test.url, test.secret, environment, test.earlier);
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const answer = await fetchImpl(test.url, {
    method: 'POST',
    headers,
    body,
    redirect: 'manual',
    signal: AbortSignal.timeout(test.timeout),
  });
  return { answer, text: (await answer.text()).slice(0, 4_000) };
}

/**
 * A refused test delivery (400, 401, 403) looked at again: the endpoint may be for the other
 * environment, and then the signature is not at fault. The endpoint says so itself (its answer
 * names the environment: the fulfillment kit's 400 `environment_mismatch`), or it accepts the
 * same delivery marked for the other environment. That second delivery is sent only where it
 * cannot reach a production handler unasked: marked sandbox, or marked production with
 * `confirmProduction`. Otherwise, or when the second one is refused too, `refused` stands.
 */
async function forOtherEnvironment(
  refused: DiagnosisCheck,
  text: string,
  trxId: string,
  environment: 'sandbox' | 'production',
  options: DiagnoseOptions,
  send: (marked: 'sandbox' | 'production') => Promise<{ answer: Response; text: string }>,
): Promise<DiagnosisCheck> {
  const other = environment === 'sandbox' ? 'production' : 'sandbox';
  const fix =
    `The endpoint is for the ${other} environment, this configuration for ${environment} (${from('environment', sourceOf(options, 'environment'))}): ` +
    `give doctor your ${environment} endpoint's URL, or check this one with the ${other} configuration ` +
    `(environment: '${other}', with the ${other} keys and webhook secret).`;
  if (/environment/i.test(text)) return { ...refused, fix };
  if (other === 'production' && !options.confirmProduction) return refused;
  try {
    const { answer, text: said } = await send(other);
    const second = judgeAnswer(answer, said, trxId, '');
    if (second.status !== 'pass') return refused;
    return {
      ...refused,
      detail: `${refused.detail}; the same test delivery marked ${other} was accepted (answered ${answer.status})`,
      fix,
    };
  } catch {
    return refused;
  }
}

/**
 * The signed test delivery of `event` to `url`. The earlier generation's endpoint gets the IPN
 * form it will see (signed with the API secret: pass that as webhookSecret there), for the
 * same test transaction.
 */
async function signTestDelivery(
  event: ReturnType<typeof testEvent>,
  url: string,
  secret: string,
  environment: 'sandbox' | 'production',
  earlier: boolean,
) {
  return earlier
    ? signWebhook({ format: 'legacy', payload: legacyTestIpn(event, url), secret, environment })
    : signWebhook({ payload: event, secret, environment });
}

/**
 * What the endpoint's answer to the test delivery says. 2xx passes. A handler that verifies
 * each payment with the service (as `createFulfillment` does) finds no such transaction:
 * a 409, or any other answer but 401 that names the test transaction, shows it took the
 * signed event and looked the payment up, and passes with a note.
 */
function judgeAnswer(answer: Response, text: string, trxId: string, secret: string): DiagnosisCheck {
  const name = WEBHOOK_CHECK;
  const { status } = answer;
  const said = text.trim().slice(0, 200);
  const answered = `answered ${status}${said ? `: ${said}` : ''}`;
  if (status >= 200 && status < 300) return { name, status: 'pass', detail: `answered ${status} to a signed test payment.completed` };
  if (status !== 401 && (status === 409 || text.includes(trxId)))
    return {
      name,
      status: 'pass',
      detail:
        `${answered}. Reachable and verifying: it took the signed test event and looked up ${trxId}, which the ` +
        'service does not know (a handler that verifies before it fulfils answers so)',
    };
  const fix =
    status === 400 || status === 401 || status === 403
      ? `The endpoint refused the signature: check it verifies the raw body with this secret (${secret}).`
      : status >= 300 && status < 400
        ? `The service does not follow redirects (this one goes to ${answer.headers.get('location') ?? 'no location'}): use the final URL.`
        : status === 404
          ? 'Nothing answers at this path: use the URL of your webhook route.'
          : 'Answer 2xx once the event is verified (and stored); do slow work after answering.';
  return { name, status: 'fail', detail: answered, fix };
}

function reachFix(error: APIConnectionError): string {
  // The reason sits a few causes down (SDK error → ky → fetch → socket): read them all.
  let text = '';
  for (let at: unknown = error, depth = 0; at && depth < 6; at = (at as { cause?: unknown }).cause, depth++) {
    const { message: said, code } = at as { message?: unknown; code?: unknown };
    text += ` ${typeof said === 'string' ? said : ''} ${typeof code === 'string' ? code : ''}`;
  }
  if (/ENOTFOUND|EAI_AGAIN|getaddrinfo/i.test(text)) return 'The host name does not resolve (DNS): check baseUrl.';
  if (/CERT|TLS|SSL|self[- ]signed/i.test(text)) return 'The TLS handshake failed: check the certificate of the baseUrl host.';
  if (/ECONNREFUSED|refused/i.test(text)) return 'Nothing listens at baseUrl: check the host and port (is the sandbox running?).';
  return 'Check baseUrl and the network between this machine and the service.';
}

function message(error: unknown): string {
  if (error instanceof ConfigurationError || error instanceof PaymentsError || error instanceof Error) return error.message;
  return String(error);
}

function done(checks: DiagnosisCheck[], generation?: ServiceGeneration): Diagnosis {
  const diagnosis: Diagnosis = { ok: checks.every((c) => c.status !== 'fail'), checks };
  if (generation) diagnosis.generation = generation;
  return diagnosis;
}
