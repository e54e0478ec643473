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
   * that does not verify with the service before it fulfils would act on it.
   */
  confirmProduction?: boolean | undefined;
  /** Time your endpoint has to answer, in ms. Default 10 000 (the service's delivery timeout). */
  webhookTimeout?: number | undefined;
  /** The local clock in ms (for the clock-skew check). Default `Date.now`. */
  now?: (() => number) | undefined;
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

/**
 * Checks an integration against the live service: configuration, reachability and latency,
 * credentials and signature, clock skew, production approval, wallets, your webhook
 * endpoint (when `webhookUrl` is given) and contract drift. Never throws for what it finds.
 *
 * @example
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

  let client: PaymentsClient;
  try {
    client = new PaymentsClient({ ...options, maxRetries: 0 });
    add({ name: 'configuration', status: 'pass', detail: `${client.environment} at ${client.baseUrl}` });
  } catch (error) {
    add({
      name: 'configuration',
      status: 'fail',
      detail: message(error),
      fix: 'Set the option or environment variable named above (BUSINESS_PAYMENTS_*).',
    });
    for (const name of ['service reachable', 'generation', 'credentials', 'clock', 'approval', 'wallets', 'webhook endpoint', 'contract'])
      skip(name, 'needs a valid configuration');
    return done(checks);
  }

  // One signed call answers four questions: reachable, credentials, clock, approval.
  const started = now();
  const siteInfo = await client.siteInfo
    .retrieve()
    .withResponse()
    .then(
      (value) => ({ value, error: undefined }),
      (error: unknown) => ({ value: undefined, error }),
    );
  const latency = Math.max(0, now() - started);
  const response = siteInfo.value?.response ?? (siteInfo.error instanceof APIError ? siteInfo.error : undefined);
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

  const date = response && 'headers' in response ? response.headers?.get('date') : undefined;
  const skew = date ? Math.round((now() - Date.parse(date)) / 1000) : undefined;
  checks.push(...signedCallChecks(client.environment, siteInfo.error, skew));
  add(
    lacks('wallets', 'balance') ??
      (siteInfo.error ? { name: 'wallets', status: 'skip', detail: 'needs accepted credentials' } : await walletsCheck(client)),
  );
  add(await webhookCheck(options, client.environment, generation === 'earlier'));
  add(
    lacks('contract', 'openapi.json') ??
      (siteInfo.error ? { name: 'contract', status: 'skip', detail: 'needs accepted credentials' } : await contractCheck(client)),
  );
  return done(checks, typeof generation === 'string' ? generation : undefined);
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

/** What the signed site-info call says of credentials, clock and approval. */
function signedCallChecks(environment: string, error: unknown, skew: number | undefined): DiagnosisCheck[] {
  const checks: DiagnosisCheck[] = [];
  if (error instanceof MerchantPendingApprovalError) {
    checks.push({ name: 'credentials', status: 'pass', detail: 'accepted (the merchant is not approved yet)' });
  } else if (error) {
    const label = error instanceof APIError ? (error.label ?? String(error.status)) : error instanceof Error ? error.name : 'error';
    checks.push({
      name: 'credentials',
      status: 'fail',
      detail: `${label}: ${message(error)}`,
      fix: `Use the merchant key, API key and API secret of the ${environment} environment, all three from the same credential set.`,
    });
  } else {
    checks.push({ name: 'credentials', status: 'pass', detail: 'signed request accepted' });
  }
  if (skew === undefined) checks.push({ name: 'clock', status: 'skip', detail: 'the service sent no Date header' });
  else if (Math.abs(skew) > MAX_SKEW_S) {
    checks.push({
      name: 'clock',
      status: 'fail',
      detail: `the local clock is ${Math.abs(skew)} s ${skew > 0 ? 'ahead of' : 'behind'} the service's`,
      fix: `Synchronise the clock (NTP): signed requests are refused beyond ${MAX_SKEW_S} s.`,
    });
  } else {
    checks.push({ name: 'clock', status: 'pass', detail: `within ${Math.abs(skew)} s of the service` });
  }
  if (environment !== 'production') checks.push({ name: 'approval', status: 'skip', detail: 'sandbox: approval is not needed' });
  else if (error instanceof MerchantPendingApprovalError) {
    checks.push({
      name: 'approval',
      status: 'fail',
      detail: message(error),
      fix: 'Finish business approval in the dashboard; until then use the sandbox.',
    });
  } else
    checks.push({
      name: 'approval',
      status: error ? 'skip' : 'pass',
      detail: error ? 'unknown: the credentials were refused' : 'the merchant is approved for production',
    });
  return checks;
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
      detail: 'webhookSecret is not set (webhookUrl is)',
      fix: 'Pass the webhook signing secret your endpoint verifies with (on the earlier generation, the API secret: it signs its IPN).',
    };
  // The rule of every secret: surrounding whitespace is refused, never trimmed.
  if (options.webhookSecret !== options.webhookSecret.trim())
    return {
      name,
      status: 'fail',
      detail: 'webhookSecret has leading or trailing whitespace (a copy-paste slip?)',
      fix: 'Remove it: the service signs with the secret exactly as its dashboard shows it.',
    };
  const timeout = options.webhookTimeout ?? 10_000;
  const event = testEvent(environment, (options.now ?? Date.now)());
  try {
    // The earlier generation's endpoint gets the IPN form it will see (signed with the API
    // secret: pass that as webhookSecret there), for the same test transaction.
    const { body, headers } = earlier
      ? await signWebhook({
          format: 'legacy',
          payload: legacyTestIpn(event, options.webhookUrl),
          secret: options.webhookSecret,
          environment,
        })
      : await signWebhook({ payload: event, secret: options.webhookSecret, environment });
    const fetchImpl = options.fetch ?? globalThis.fetch;
    const answer = await fetchImpl(options.webhookUrl, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeout),
    });
    const text = (await answer.text()).slice(0, 4_000);
    return judgeAnswer(answer, text, event.data.trx_id, environment);
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
 * What the endpoint's answer to the test delivery says. 2xx passes. A handler that verifies
 * each payment with the service (as `createFulfillment` does) finds no such transaction:
 * a 409, or any other answer but 401 that names the test transaction, shows it took the
 * signed event and looked the payment up, and passes with a note.
 */
function judgeAnswer(answer: Response, text: string, trxId: string, environment: string): DiagnosisCheck {
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
      ? `The endpoint refused the signature: check it verifies the raw body with this secret (the ${environment} one).`
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
