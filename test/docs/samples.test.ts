// The docs as tests: every ```ts and ```js block of README.md and docs/*.md, and every
// `@example` in the JSDoc of the package's public entries, as a reader (or an editor's hover)
// shows it.
// - All of them are type-checked, each as a module of its own, in one program, under
//   `strict`, `exactOptionalPropertyTypes` and `noUncheckedIndexedAccess`, the package resolved
//   to its source. What a snippet uses without declaring it (your `client`, `params`, `req`…)
//   is declared beside it by the test (context.ts), never in the docs; a page's block imports
//   what it uses from the package.
// - Every one that the test can give what it uses runs, against the local sandbox
//   (createMockService on a real port, its production credentials in the BUSINESS_PAYMENTS_*
//   variables): a self-contained script as it is, a snippet with stand-ins (a payment paid on
//   the sandbox, its signed delivery, PGlite behind pg's Pool, recorders). A module that
//   exports a route (`POST`, a Worker's `fetch`) is handed a signed delivery and must answer 200.
// - A block that cannot run says why, where it is written: `<!-- not run: <why> -->` above it
//   (in JSDoc, between `@example` and the fence). One that uses a name the test has no
//   stand-in for (`Deno`, `webhookSecret`) and is not marked fails the test.
// docs/fulfillment.md, docs/fulfillment-stores.md and docs/payouts.md, whose blocks are the
// files of an app, are checked and run by their own tests (OWN_TESTS).
import diagnostics from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { openSandbox } from '../fulfillment/docs-pages.js';
import { DECLARATIONS, closePglite, delivery, isExport, noStandIn, standIns, warmPglite, type Run } from './context.js';
import { checkInWorker, exampleSamples, pageSamples, pages, removeCache, root, sourcesWithExamples, type Sample } from './samples.js';

/** The pages whose blocks are an app's files, and the test that checks and runs them. */
const OWN_TESTS: Record<string, string> = {
  'docs/fulfillment.md': 'test/fulfillment/docs-sample.test.ts',
  'docs/fulfillment-stores.md': 'test/fulfillment/docs-sample.test.ts',
  'docs/payouts.md': 'test/payouts/docs.test.ts',
};

const fromPages = pages()
  .filter((page) => !(page in OWN_TESTS))
  .flatMap(pageSamples);
const allExamples = sourcesWithExamples().flatMap(exampleSamples);
warmPglite(); // while the program is built
const checked = await checkInWorker([...fromPages, ...allExamples], DECLARATIONS);
/** The JSDoc of what the public entries reach (the CLI's in-process entry, say, is not). */
const examples = allExamples.filter((s) => checked.reached.has(s.source));
const samples = [...fromPages, ...examples];
const uses = (s: Sample) => checked.uses.get(s.at)!;

test('every page with ts or js blocks is checked here, or by its own test', () => {
  for (const [page, file] of Object.entries(OWN_TESTS))
    expect(readFileSync(join(root, file), 'utf8'), file).toContain(`readPage('${page}')`);
  const counted = Object.fromEntries(pages().map((page) => [page, pageSamples(page).length]));
  expect(Object.keys(counted)).toContain('README.md');
  for (const page of Object.keys(OWN_TESTS)) expect(counted[page], page).toBeGreaterThan(0);
  expect(fromPages.length).toBeGreaterThanOrEqual(45);
  expect(examples.length).toBeGreaterThanOrEqual(25);
  // The one @example outside what the public entries reach: the CLI's in-process entry.
  expect([...new Set(allExamples.filter((s) => !examples.includes(s)).map((s) => s.source))]).toEqual(['src/cli/main.ts']);
});

test('every block and public @example compiles under strict, exactOptionalPropertyTypes and noUncheckedIndexedAccess', () => {
  const reported = checked.diagnostics.filter((d) => !d.source.startsWith('src/') || checked.reached.has(d.source)).map((d) => d.text);
  expect(reported).toEqual([]);
});

test("a page's block imports what it uses from the package (an @example's import is implied)", () => {
  const unimported = fromPages.flatMap((s) =>
    uses(s).flatMap((name) => (isExport(name) ? [`${s.at}: uses ${name} without importing it`] : [])),
  );
  expect(unimported).toEqual([]);
});

test('a block that cannot run is marked not run, and says why', () => {
  for (const s of samples) if (s.notRun !== undefined) expect(s.notRun.length, s.at).toBeGreaterThan(15);
  const unmarked = samples.flatMap((s) => {
    const missing = s.notRun === undefined && noStandIn(uses(s));
    return missing ? [`${s.at}: the test has nothing to run it with (${missing}): mark it <!-- not run: <why> -->`] : [];
  });
  expect(unmarked).toEqual([]);
});

// ---------------------------------------------------------------------------------------
// The runs: a sandbox per page (the blocks of a page run in order against it, as a reader
// trying them one after the other would), one for all the @examples.

const groups = [...new Set(fromPages.map((s) => s.source))]
  .map((page) => ({ name: page, samples: fromPages.filter((s) => s.source === page) }))
  .concat([{ name: 'the @examples of the public JSDoc', samples: examples }]);

afterAll(async () => {
  await closePglite();
  removeCache();
});

/** What a sample's run must have done besides not failing, found by a line of its code. */
const CHECKS: Array<[string, (run: Run) => void]> = [
  // docs/testing.md's clock: the client's push payment failed on the service's clock, and its webhook went out.
  [
    'createMockService({ now: () => t, autoRun: false, fetch: myRecordingFetch })',
    (run) => {
      const sent = run.calls.filter(([name]) => name === 'myRecordingFetch').map(([, [, init]]) => (init as RequestInit).body as string);
      expect(sent.map((body) => (JSON.parse(body) as { type: string }).type)).toEqual(['payment.failed']);
    },
  ],
];

test('each check of a run finds the one sample it is for, and that sample runs', () => {
  for (const [line] of CHECKS) {
    const found = samples.filter((s) => s.code.includes(line));
    const where = found.map((s) => s.at);
    expect(where, line).toHaveLength(1);
    expect(found[0]!.notRun, line).toBeUndefined();
  }
});

/** The SDK's channels (docs/observability.md): a run leaves none with a subscriber it added. */
const SDK_CHANNELS = ['business-payments:request', 'business-payments:fulfillment'].flatMap((name) =>
  ['start', 'end', 'asyncStart', 'asyncEnd', 'error'].map((event) => `tracing:${name}:${event}`).concat(`${name}:retry`),
);

/**
 * Records what a sample subscribes to diagnostics_channel (docs/observability.md's subscribers),
 * to take it back after the run: the files after this one run in the same process.
 */
function channelGuard(undo: Array<() => unknown>): void {
  const dc = diagnostics as unknown as Record<'subscribe' | 'channel' | 'tracingChannel', unknown>;
  const { subscribe, channel, tracingChannel } = diagnostics;
  // A channel whose subscribe() is recorded, and undone after.
  const recorded = <C extends { subscribe(h: never): unknown; unsubscribe(h: never): unknown }>(target: C): C =>
    new Proxy(target, {
      get(on, key) {
        if (key === 'subscribe')
          return (handler: never) => {
            undo.push(() => on.unsubscribe(handler));
            return on.subscribe(handler);
          };
        const value: unknown = Reflect.get(on, key);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(on) : value;
      },
    });
  dc.subscribe = (name: string, handler: diagnostics.ChannelListener) => {
    undo.push(() => diagnostics.unsubscribe(name, handler));
    subscribe(name, handler);
  };
  dc.channel = (name: string) => recorded(channel(name));
  dc.tracingChannel = (name: string) => recorded(tracingChannel(name));
  undo.push(() => Object.assign(dc, { subscribe, channel, tracingChannel }));
}

/** "Your app" on 127.0.0.1:3000 (or localhost), that a sample posts a signed delivery to: answers 200. */
const YOUR_APP = /^http:\/\/(127\.0\.0\.1|localhost):3000\//;

async function runSample(s: Sample, sandbox: Run['sandbox']): Promise<void> {
  const cleanups: Array<() => unknown> = [];
  const run: Run = { sample: s, sandbox, calls: [], defer: (cleanup) => cleanups.push(cleanup) };
  const names = uses(s);
  const global = globalThis as Record<string, unknown>;
  const real = globalThis.fetch;
  vi.spyOn(console, 'log').mockImplementation(() => {});
  vi.stubGlobal('fetch', (input: string | URL | Request, init?: RequestInit) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!YOUR_APP.test(url)) return real(input, init);
    run.calls.push(['your app', [url]]);
    return Promise.resolve(Response.json({ received: true }));
  });
  const subscribed = SDK_CHANNELS.map((name) => diagnostics.hasSubscribers(name));
  channelGuard(cleanups);
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    Object.assign(global, await standIns(names, run));
    const module = (await Promise.race([
      import(join(checked.runDir, s.module)),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${s.at}: still running after 20 s`)), 20_000))),
    ])) as Record<string, unknown>;
    // A route it exports answers a delivery of a payment paid on the sandbox.
    if (typeof module.POST === 'function') {
      const answer = await (module.POST as (request: Request) => Promise<Response>)(await delivery(run));
      expect(answer.status, `${s.at}: its POST route`).toBe(200);
    }
    const worker = module.default as { fetch?: (request: Request, env: object, ctx: object) => Promise<Response> } | undefined;
    if (typeof worker?.fetch === 'function') {
      const waits: Promise<unknown>[] = [];
      const env = { BUSINESS_PAYMENTS_WEBHOOK_SECRET: sandbox.production.webhookSecret };
      const answer = await worker.fetch(await delivery(run), env, { waitUntil: (p: Promise<unknown>) => waits.push(p) });
      expect(answer.status, `${s.at}: its Worker's fetch`).toBe(200);
      await Promise.all(waits);
    }
    for (const [line, check] of CHECKS) if (s.code.includes(line)) check(run);
  } catch (error) {
    throw new Error(`${s.at} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  } finally {
    clearTimeout(timer);
    for (const name of names) delete global[name];
    vi.unstubAllGlobals();
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
  const left = SDK_CHANNELS.filter((name, i) => diagnostics.hasSubscribers(name) && !subscribed[i]);
  expect(left, `${s.at}: subscribers left on the SDK's channels`).toEqual([]);
}

describe.each(groups)('$name', ({ samples: group }) => {
  const runs = group.filter((s) => s.notRun === undefined && !noStandIn(uses(s)));
  const skipped = group.filter((s) => !runs.includes(s));
  let sandbox: Run['sandbox'] | undefined;
  beforeAll(async () => {
    if (runs.length) sandbox = await openSandbox('current', () => Promise.resolve(Response.json({ received: true })));
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  if (runs.length)
    test.each(runs.map((s) => [s.at, s] as const))(
      '%s runs against the sandbox',
      async (_, s) => {
        if (s.generation === 'current') return runSample(s, sandbox!);
        const earlier = await openSandbox('earlier', () => Promise.resolve(Response.json({ received: true })));
        try {
          await runSample(s, earlier);
        } finally {
          await earlier.close();
        }
      },
      30_000,
    );
  if (skipped.length)
    test.each(skipped.map((s) => [s.at, s.notRun ?? 'unmarked'] as const))('%s is type-checked only: %s', (_, why) => {
      expect(why).not.toBe('unmarked');
    });
});
