// One request budget across processes (the client option `requestBudget`, src/fulfillment/shared-budget.ts):
// two clients standing for two processes, sharing one budget store, keep the merchant's calls and
// the SDK's own together under the budget; the merchant's calls are recorded and never delayed,
// the SDK's own wait for room (and for a 429 met by the other process); a store that fails hands
// the pacing back to each client's own pacer with one warning. In process on fake timers (the
// store on Date.now, the pacer on performance.now), then end to end over a real socket against the
// sandbox with the budget in PGlite's Postgres.
import { PGlite } from '@electric-sql/pglite';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { ConfigurationError, PaymentsClient, sharedBudget, type Logger, type RequestBudget } from '../../src/index.js';
import { memoryStore } from '../../src/fulfillment.js';
import { postgresStore } from '../../src/fulfillment-postgres.js';
import { createMockService, type MockRequestLogEntry } from '../../src/testing.js';
import { START } from '../support/fake-api.js';
import { memoryBudget } from '../support/memory-budget.js';
import { startSandbox } from '../support/sandbox.js';
import { settled } from '../support/settled.js';

afterEach(() => vi.useRealTimers());

const fake = () =>
  vi.useFakeTimers({ now: START, toFake: ['Date', 'performance', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });

const logger = () => ({ error: vi.fn(), warn: vi.fn<(line: string) => void>(), info: vi.fn(), debug: vi.fn() }) satisfies Logger;

/** The sandbox in process (fake timers move it), and a client of it per process, sharing `requestBudget`. */
function processes(requestBudget: RequestBudget | undefined, options: { pollingBudget?: number; logger?: Logger } = {}) {
  const log: MockRequestLogEntry[] = [];
  const mock = createMockService({ rateLimitPerMinute: 20, onRequest: (entry) => log.push(entry) });
  const client = () =>
    new PaymentsClient({
      environment: 'sandbox',
      ...mock.credentials.sandbox,
      baseUrl: 'https://sandbox.business-payments.test',
      fetch: (input, init) => mock.handle(new Request(input, init)),
      pollingBudget: options.pollingBudget ?? 20,
      requestBudget,
      maxRetries: 0,
      logger: options.logger,
      logLevel: options.logger ? 'warn' : 'off',
    });
  return { mock, log, a: client(), b: client() };
}

const create = (client: PaymentsClient, ref: string) =>
  client.payments.create({ payment_amount: 25, currency_code: 'USD', ref_trx: ref, ipn_url: 'https://shop.example.test/ipn' });

/** `count` slots asked of `client` at once: how many were given now. */
async function given(client: PaymentsClient, count: number) {
  const slots = Array.from({ length: count }, () => client.pollSlot());
  return { slots, now: (await Promise.all(slots.map(settled))).filter(Boolean).length };
}

describe('two processes, one budget', () => {
  test("the SDK's own sends of both share 9/10 of one budget, the merchant's sends counted in it", async () => {
    fake();
    const budget = memoryBudget();
    const { a, b, mock } = processes(sharedBudget(budget.store));
    for (let i = 0; i < 10; i++) await create(a, `order-${i}`); // the merchant's, in process A
    // 18 of 20 a minute for the SDK, 10 spent by the merchant: 8 left, for A and B together.
    const fromA = await given(a, 5);
    const fromB = await given(b, 5);
    expect(fromA.now + fromB.now).toBe(8);
    expect(await budget.store.count('sandbox:' + mock.credentials.sandbox.merchantKey, 60_000)).toBe(18);
    // A minute on, the merchant's sends left the window: the rest are given.
    await vi.advanceTimersByTimeAsync(60_000);
    expect((await Promise.all([...fromA.slots, ...fromB.slots].map(settled))).every(Boolean)).toBe(true);
    await mock.close();
  });

  test('without a shared budget each process counts alone (what the option is for): 18 each', async () => {
    fake();
    const { a, b, mock } = processes(undefined);
    expect((await given(a, 20)).now + (await given(b, 20)).now).toBe(36);
    await mock.close();
  });

  test("the merchant's calls are never delayed: the window full (another process's takes), a create goes at once, and is counted", async () => {
    fake();
    const budget = memoryBudget();
    const { a, mock } = processes(sharedBudget(budget.store));
    const key = 'sandbox:' + mock.credentials.sandbox.merchantKey;
    for (let i = 0; i < 18; i++) expect(await budget.store.take(key, 18, 60_000)).toBe(0);
    expect(await settled(a.pollSlot())).toBe(false);
    expect(await settled(create(a, 'order-now'))).toBe(true);
    expect(await budget.store.count(key, 60_000)).toBe(19);
    await mock.close();
  });

  test("the SDK's own calls wait: waitForOutcome sends its verify only once the shared window has room", async () => {
    fake();
    const budget = memoryBudget();
    const { a, b, log, mock } = processes(sharedBudget(budget.store));
    const payment = await create(a, 'order-wait');
    await mock.completeCheckout(payment.trx_id, 'success');
    const key = 'sandbox:' + mock.credentials.sandbox.merchantKey;
    for (let i = 0; i < 17; i++) await budget.store.take(key, 18, 60_000); // another process's polls
    const outcome = b.payments.waitForOutcome(payment.trx_id, { timeout: 120_000 });
    expect(await settled(outcome)).toBe(false);
    expect(log.filter((entry) => entry.path.includes('verify'))).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(await outcome).toMatchObject({ status: 'success' });
    expect(log.filter((entry) => entry.status === 429)).toEqual([]);
    await mock.close();
  });

  test("a 429 met by one process pauses the other's own sends for its hint", async () => {
    fake();
    const budget = memoryBudget();
    const limited = new PaymentsClient({
      environment: 'sandbox',
      merchantKey: 'm',
      apiKey: 'k',
      apiSecret: 's',
      baseUrl: 'https://payments.example.test',
      requestBudget: sharedBudget(budget.store),
      maxRetries: 0,
      fetch: async () => Response.json({ status: 'error', message: 'slow down' }, { status: 429, headers: { 'Retry-After': '5' } }),
    });
    const other = limited.withOptions({ requestBudget: sharedBudget(budget.store) }); // a pacer of its own, as another process has
    await expect(limited.balance.retrieve()).rejects.toThrow();
    const waiting = other.pollSlot();
    await vi.advanceTimersByTimeAsync(4_000);
    expect(await settled(waiting)).toBe(false);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await settled(waiting)).toBe(true);
    expect(budget.calls).toContain('pause');
  });

  test('withOptions() keeps the budget and its pacer; a requestBudget of its own gets its own pacer', async () => {
    fake();
    const budget = memoryBudget();
    const { a, mock } = processes(sharedBudget(budget.store), { pollingBudget: 4 }); // 3 a minute
    expect((await given(a, 3)).now).toBe(3);
    expect(await settled(a.withOptions({ timeout: 5_000 }).pollSlot())).toBe(false);
    expect(await settled(a.withOptions({ requestBudget: sharedBudget(memoryBudget().store) }).pollSlot())).toBe(true);
    await mock.close();
  });
});

describe('a budget store that fails', () => {
  test("hands the pacing back to each client's own pacer, says so once at warn, and is asked again a minute later", async () => {
    fake();
    const budget = memoryBudget();
    const log = logger();
    const { a, mock } = processes(sharedBudget(budget.store), { pollingBudget: 4, logger: log });
    budget.fail(Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432 password=hunter2'), { code: 'ECONNREFUSED' }));
    await create(a, 'order-1'); // the merchant's call goes, whatever the store
    const slots = await given(a, 4);
    expect(slots.now).toBe(2); // own pacer: 3 a minute, 1 spent by the merchant
    await create(a, 'order-2');
    expect(log.warn).toHaveBeenCalledTimes(1);
    const [line] = log.warn.mock.calls[0]!;
    expect(line).toMatch(/requestBudget: the budget store failed \(ECONNREFUSED\): this client paces its own sends alone/);
    expect(line).not.toMatch(/hunter2|10\.0\.0\.5/);
    const asked = budget.calls.length;
    budget.fail(undefined);
    await vi.advanceTimersByTimeAsync(60_000);
    await Promise.all(slots.slots); // by the own pacer, once its minute passed
    expect(budget.calls.length).toBe(asked); // not asked while down
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await settled(a.pollSlot())).toBe(true);
    expect(budget.calls.at(-1)).toBe('take'); // the store again
    expect(log.warn).toHaveBeenCalledTimes(1);
    await mock.close();
  });

  test('a store that throws at once (not a rejection) is a failure too', async () => {
    fake();
    const budget = memoryBudget();
    const store = { ...budget.store, take: () => Promise.reject(new TypeError('boom')) };
    const log = logger();
    const { a, mock } = processes(sharedBudget(store), { logger: log });
    expect(await settled(a.pollSlot())).toBe(true);
    expect(log.warn).toHaveBeenCalledTimes(1);
    expect(log.warn.mock.calls[0]![0]).toMatch(/failed \(TypeError\)/);
    await mock.close();
  });

  test('a take not answered in 2 s is a failure (a hung server, or one connection held by the caller’s own claim)', async () => {
    fake();
    const budget = memoryBudget();
    const store = { ...budget.store, take: () => new Promise<number>(() => {}) };
    const log = logger();
    const { a, mock } = processes(sharedBudget(store), { logger: log });
    const slot = a.pollSlot();
    await vi.advanceTimersByTimeAsync(1_999);
    expect(await settled(slot)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(slot)).toBe(true); // by the client's own pacer
    expect(log.warn).toHaveBeenCalledTimes(1);
    expect(log.warn.mock.calls[0]![0]).toMatch(/failed \(ETIMEDOUT\)/);
    expect(vi.getTimerCount()).toBe(0);
    await mock.close();
  });
});

describe('what requestBudget and sharedBudget take', () => {
  const options = {
    environment: 'sandbox',
    merchantKey: 'm',
    apiKey: 'k',
    apiSecret: 's',
    baseUrl: 'https://payments.example.test',
  } as const;

  test.each([
    ['a plain object', {}],
    ['a whole fulfilment store', memoryStore()],
    ['a RequestBudgetStore not wrapped by sharedBudget', memoryBudget().store],
    ['null', null],
    ['a number', 120],
  ])('requestBudget: %s → ConfigurationError naming the option', (_what, requestBudget) => {
    const make = () => new PaymentsClient({ ...options, requestBudget: requestBudget as never });
    expect(make).toThrow(ConfigurationError);
    expect(make).toThrow(/^requestBudget must be store\.budget or sharedBudget\(store\)\.$/);
  });

  test('sharedBudget refuses what is not a RequestBudgetStore, naming the missing method', () => {
    expect(() => sharedBudget({} as never)).toThrow(ConfigurationError);
    expect(() => sharedBudget({ ...memoryBudget().store, pause: undefined } as never)).toThrow(/pause is missing/);
    expect(() => sharedBudget(undefined as never)).toThrow(/count is missing/);
  });

  test('a RequestBudget is itself a RequestBudgetStore: its methods are the store’s', async () => {
    fake();
    const budget = memoryBudget();
    const shared = sharedBudget(budget.store);
    expect(await shared.take('k', 1, 1_000)).toBe(0);
    expect(await shared.take('k', 1, 1_000)).toBe(1_000);
    await shared.record('k', 1_000);
    await shared.pause('k', 10);
    expect(await shared.count('k', 1_000)).toBe(2);
    expect(budget.calls).toEqual(['take', 'take', 'record', 'pause', 'count']);
    expect(JSON.stringify(shared)).toBe('{}');
  });
});

test('end to end over a real socket: two processes on one Postgres budget (PGlite) against the sandbox: no 429, the window shared', async () => {
  const db = await PGlite.create();
  const sandbox = await startSandbox({ timeScale: 0.001, rateLimitPerMinute: 20 });
  try {
    const [a, b] = [1, 2].map(() => sandbox.clientWith({ pollingBudget: 20, requestBudget: postgresStore(db).budget, maxRetries: 0 }));
    for (let i = 0; i < 10; i++) await create(a!, `order-e2e-${i}`);
    // 8 left for both processes' own sends: 4 from A, 4 from B, then B waits.
    for (const client of [a, a, a, a, b, b, b, b]) await client!.pollSlot();
    const ninth = b!.pollSlot();
    const outcome = await Promise.race([ninth.then(() => 'given'), new Promise((resolve) => setTimeout(resolve, 300, 'waiting'))]);
    expect(outcome).toBe('waiting');
    const key = `sandbox:${sandbox.mock.credentials.sandbox.merchantKey}`;
    await vi.waitFor(async () => expect(await postgresStore(db).budget!.count(key, 60_000)).toBe(18));
    expect(sandbox.mock.state.requests.filter((entry) => entry.status === 429)).toEqual([]);
    ninth.catch(() => {});
  } finally {
    await sandbox.close();
    await db.close();
  }
}, 30_000);
