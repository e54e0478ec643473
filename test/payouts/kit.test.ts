// The payout-intent kit against a scripted service: every answer the kit can meet (accepted,
// unsettled, refused, lost, a 5xx, a 429), a process that died between record and send,
// resolve() inside and past the key window, list matches that are ambiguous, and concurrency
// over one store. The same kit against the sandbox over a real socket: sandbox.test.ts.
import { describe, expect, test, vi } from 'vitest';
import { bundleEntry } from '../support/bundle.js';
import { memoryStore } from '../../src/payouts/store.js';
import { createPayouts, PayoutIntentError, type PayoutIntentChange, type PayoutsClient } from '../../src/payouts.js';
import type { Payout } from '../../src/resources/payouts.js';
import { InvalidParamsError } from '../../src/core/error.js';

const HOUR = 3_600_000;
const T0 = Date.parse('2026-11-25T08:00:00Z');

/** An HTTP error as the client throws it (the kit reads `status`, `body`, `attempts`, `name`). */
const httpError = (status: number, body: unknown = {}, message = `HTTP ${status}`) =>
  Object.assign(new Error(message), { name: 'APIError', status, body, attempts: 1 });
const lostError = () => Object.assign(new Error('connection reset'), { name: 'APIConnectionError', attempts: 1 });

type Script = (call: { amount: number; key: string; n: number }) => 'ok' | 'lost' | Error | Partial<Payout>;

/**
 * A service with a payout ledger and key replay for `retention` ms of its own clock. `script`
 * picks each create's fate: made and answered, made and the answer lost, refused (an Error, no
 * payout), or answered with fields of its own.
 */
function service(clock: { now: number }, script: Script = () => 'ok', retention = 24 * HOUR) {
  const made: Payout[] = [];
  const keys = new Map<string, { at: number; payout: Payout }>();
  let n = 0;
  const client: PayoutsClient = {
    payouts: {
      create: vi.fn(
        async (params: { amount: number; destination?: string | undefined }, { idempotencyKey: key }: { idempotencyKey: string }) => {
          await Promise.resolve();
          const kept = keys.get(key);
          if (kept && clock.now - kept.at < retention) return structuredClone(kept.payout);
          const fate = script({ amount: params.amount, key, n: n++ });
          if (fate instanceof Error) throw fate;
          const payout: Payout = {
            id: crypto.randomUUID(),
            amount: params.amount,
            destination: params.destination ?? '255700000001',
            status: 'SUCCESS',
            created_at: new Date(clock.now).toISOString(),
            ...(typeof fate === 'object' ? fate : {}),
          };
          made.push(payout);
          keys.set(key, { at: clock.now, payout });
          if (fate === 'lost') throw lostError();
          return structuredClone(payout);
        },
      ),
      retrieve: vi.fn(async (id: string) => {
        await Promise.resolve();
        const payout = made.find((p) => p.id === id);
        if (!payout) throw httpError(404);
        return structuredClone(payout);
      }),
      list: vi.fn(() =>
        (async function* () {
          await Promise.resolve();
          yield* [...made].reverse().map((p) => structuredClone(p));
        })(),
      ),
    },
    // As PaymentsClient tells an error of its own that sent nothing (test/core/kit-client.test.ts).
    refused: (error) => error instanceof InvalidParamsError,
  };
  return { client, made, keys };
}

function kit(options: { script?: Script; retention?: number; store?: ReturnType<typeof memoryStore> } & Record<string, unknown> = {}) {
  const clock = { now: T0 };
  const { script, retention, store = memoryStore(), ...rest } = options;
  const svc = service(clock, script, retention);
  const changes: PayoutIntentChange[] = [];
  const payouts = createPayouts({ client: svc.client, store, now: () => clock.now, onChange: (c) => void changes.push(c), ...rest });
  return { payouts, clock, store, changes, ...svc };
}

describe('send', () => {
  test('records, sends once with the key as Idempotency-Key, and says what the service answered', async () => {
    const { payouts, client, made, changes } = kit();
    const intent = await payouts.send({ key: 'settle-1', amount: 500 });
    expect(intent).toMatchObject({ key: 'settle-1', amount: 500, state: 'sent', sends: 1, matchedBy: 'answer', payoutId: made[0]!.id });
    expect(intent.payout).toMatchObject({ status: 'SUCCESS', amount: 500 });
    expect(client.payouts.create).toHaveBeenCalledWith({ amount: 500 }, { idempotencyKey: 'settle-1', signal: undefined });
    expect(changes.map((c) => [c.from, c.to])).toEqual([
      [undefined, 'pending'],
      ['pending', 'unknown'],
      ['unknown', 'sent'],
    ]);
  });

  test('the same key again returns the recorded intent and never sends again; other parameters are a key_conflict', async () => {
    const { payouts, client } = kit();
    const first = await payouts.send({ key: 'k', amount: 10, destination: '255700000001' });
    const again = await payouts.send({ key: 'k', amount: 10, destination: '255700000001' });
    expect(again).toEqual(first);
    expect(client.payouts.create).toHaveBeenCalledTimes(1);
    const conflict = await payouts.send({ key: 'k', amount: 11, destination: '255700000001' }).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(PayoutIntentError);
    expect(conflict).toMatchObject({ reason: 'key_conflict' });
    expect((conflict as Error).message).not.toContain('255700000001');
    await expect(payouts.send({ key: 'k', amount: 10 })).rejects.toMatchObject({ reason: 'key_conflict' });
    expect(client.payouts.create).toHaveBeenCalledTimes(1);
  });

  test.each([
    [{ key: '', amount: 1 }, /key/],
    [{ key: 'x'.repeat(65), amount: 1 }, /key/],
    [{ key: 'with space', amount: 1 }, /key/],
    [{ key: 'k', amount: 0 }, /amount/],
    [{ key: 'k', amount: Number.NaN }, /amount/],
    [{ key: 'k', amount: '5 TZS' }, /amount/],
    [{ key: 'k', amount: 5, destination: 255 }, /destination/],
  ])('bad params %j: a PayoutIntentError, nothing recorded or sent', async (params, words) => {
    const { payouts, client } = kit();
    const error = await payouts.send(params as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PayoutIntentError);
    expect(error).toMatchObject({ reason: 'invalid_params', message: expect.stringMatching(words) });
    expect(await payouts.intents()).toEqual([]);
    expect(client.payouts.create).not.toHaveBeenCalled();
  });

  test.each([
    ['INPROGRESS', 'in_progress'],
    ['AMBIGUOUS', 'ambiguous'],
    ['FAILED', 'failed'],
    ['ON_HOLD', 'in_progress'],
  ] as const)('an answer %s leaves the intent %s', async (status, state) => {
    const { payouts } = kit({ script: () => ({ status: status as Payout['status'] }) });
    const intent = await payouts.send({ key: 'k', amount: 7 });
    expect(intent.state).toBe(state);
    expect(intent.payout?.status).toBe(status);
    if (status === 'ON_HOLD') expect(intent.note).toMatch(/ON_HOLD/);
  });

  test.each([
    ['a lost answer', lostError(), 'unknown'],
    ['a 500', httpError(500), 'unknown'],
    ['a 503', httpError(503), 'unknown'],
    ['a 408', httpError(408), 'unknown'],
    ['a 409 (the key in flight)', httpError(409), 'unknown'],
    ['a 303 redirect (not followed)', httpError(303), 'unknown'],
    [
      'a 200 the client could not read',
      Object.assign(new Error('unreadable'), { name: 'ResponseValidationError', attempts: 1 }),
      'unknown',
    ],
    ['a 429 (refused before acting)', httpError(429), 'pending'],
    ['a 422 Payout Rejected', httpError(422, { error: 'Payout Rejected' }, 'Payouts need KYB approval'), 'failed'],
    ['a 404 (a server without payouts)', httpError(404), 'failed'],
    ['a 502 whose body says INPROGRESS', httpError(502, { status: 'INPROGRESS' }), 'in_progress'],
    ['a 422 whose body says Payout Ambiguous', httpError(422, { error: 'Payout Ambiguous' }), 'ambiguous'],
    ['nothing sent (attempts 0)', Object.assign(new Error('aborted'), { name: 'APIUserAbortError', attempts: 0 }), 'pending'],
    ['params the client refused', new InvalidParamsError('payouts.create', { destination: ['bad'] }), 'failed'],
  ])('%s: %s', async (_, error, state) => {
    const { payouts } = kit({ script: () => error });
    const intent = await payouts.send({ key: 'k', amount: 7 });
    expect(intent).toMatchObject({ state, error: error.message });
  });

  test('a 422 about the Idempotency-Key needs review: a payout may exist under the key', async () => {
    const { payouts } = kit({ script: () => httpError(422, {}, 'Idempotency key reuse: this key was used with a different body') });
    const intent = await payouts.send({ key: 'k', amount: 7 });
    expect(intent.state).toBe('needs_review');
    expect(intent.note).toMatch(/confirmResend/);
  });

  test('a payout id the service names that another intent holds: needs review, never taken twice', async () => {
    const { payouts, made } = kit({ script: ({ n }) => (n === 1 ? { id: made[0]!.id } : 'ok') });
    await payouts.send({ key: 'a', amount: 5 });
    const b = await payouts.send({ key: 'b', amount: 6 });
    expect(b.state).toBe('needs_review');
    expect(b.note).toContain("intent 'a' holds");
  });

  test('an answer about another amount is not its payout: needs review', async () => {
    const { payouts } = kit({ script: () => ({ amount: 5000 }) });
    const intent = await payouts.send({ key: 'k', amount: 500 });
    expect(intent).toMatchObject({ state: 'needs_review', note: expect.stringMatching(/payout of 5000, not 500/) });
  });

  test('ten processes send one key at once: one create, one payout, ten equal answers', async () => {
    const store = memoryStore();
    const clock = { now: T0 };
    const svc = service(clock);
    const kits = Array.from({ length: 10 }, () => createPayouts({ client: svc.client, store, now: () => clock.now }));
    const answers = await Promise.all(kits.map((k) => k.send({ key: 'k', amount: 9 })));
    expect(svc.client.payouts.create).toHaveBeenCalledTimes(1);
    expect(svc.made).toHaveLength(1);
    const final = await kits[0]!.get('k');
    expect(final?.state).toBe('sent');
    // The sender sees 'sent'; the others the intent as it stood when they looked (never a second send).
    for (const answer of answers) expect(['unknown', 'sent']).toContain(answer.state);
  });
});

describe('resolve', () => {
  test('an intent recorded and never sent (the process died): sent, whatever its age', async () => {
    const { payouts, store, clock, made } = kit();
    await store.payouts!.add({ key: 'crashed', amount: 3, state: 'pending', version: 1, createdAt: T0, updatedAt: T0, sends: 0 });
    clock.now += 48 * HOUR;
    const report = await payouts.resolve();
    expect(report.changed).toEqual([{ key: 'crashed', from: 'pending', to: 'sent' }]);
    expect(made).toHaveLength(1);
  });

  test('inside the window an answer lost is asked again with its key: the service replays, one payout', async () => {
    const { payouts, clock, made, client } = kit({ script: ({ n }) => (n === 0 ? 'lost' : 'ok') });
    expect((await payouts.send({ key: 'k', amount: 4 })).state).toBe('unknown');
    clock.now += HOUR;
    const report = await payouts.resolve();
    expect(report).toMatchObject({ checked: 1, changed: [{ key: 'k', from: 'unknown', to: 'sent' }], open: [], review: [], errors: [] });
    expect(made).toHaveLength(1);
    expect(client.payouts.create).toHaveBeenCalledTimes(2);
    expect((await payouts.get('k'))?.payoutId).toBe(made[0]!.id);
  });

  test('a 5xx that never reached the ledger, asked again inside the window: paid once', async () => {
    const { payouts, clock, made } = kit({ script: ({ n }) => (n === 0 ? httpError(503) : 'ok') });
    await payouts.send({ key: 'k', amount: 4 });
    clock.now += 2 * 60_000;
    await payouts.resolve();
    expect(made).toHaveLength(1);
    expect((await payouts.get('k'))?.state).toBe('sent');
  });

  test('an intent sent moments ago is left to its sender (settleAfter)', async () => {
    const { payouts, clock, client } = kit({ script: () => 'lost' });
    await payouts.send({ key: 'k', amount: 4 });
    clock.now += 30_000;
    const report = await payouts.resolve();
    expect(report.changed).toEqual([]);
    expect(report.open.map((i) => i.key)).toEqual(['k']);
    expect(client.payouts.create).toHaveBeenCalledTimes(1);
  });

  test('with a payout id: retrieve, and the settled outcome recorded (INPROGRESS → SUCCESS; AMBIGUOUS stays open)', async () => {
    const { payouts, clock, made } = kit({ script: ({ n }) => ({ status: n === 0 ? 'INPROGRESS' : 'AMBIGUOUS' }) });
    await payouts.send({ key: 'a', amount: 1 });
    await payouts.send({ key: 'b', amount: 2 });
    made[0]!.status = 'SUCCESS';
    clock.now += 2 * 60_000;
    const report = await payouts.resolve();
    expect(report.changed).toEqual([{ key: 'a', from: 'in_progress', to: 'sent' }]);
    expect(report.open.map((i) => [i.key, i.state])).toEqual([['b', 'ambiguous']]);
    // Past the window an intent with an id is still only looked up, never sent again.
    made[1]!.status = 'FAILED';
    clock.now += 30 * HOUR;
    expect((await payouts.resolve()).changed).toEqual([{ key: 'b', from: 'ambiguous', to: 'failed' }]);
    expect(made).toHaveLength(2);
  });

  test('a clock stepped back past the send it recorded (no Date to read: this client has no withResponse): needs review naming the clock, never sent again', async () => {
    const { payouts, clock, client } = kit({ script: () => 'lost' });
    await payouts.send({ key: 'k', amount: 4 });
    clock.now -= 2 * HOUR;
    const report = await payouts.resolve();
    expect(report.review.map((i) => [i.key, i.note?.match(/^A clock went back \(this host's reads ([^,]+),/)?.[1]])).toEqual([
      ['k', new Date(T0 - 2 * HOUR).toISOString()],
    ]);
    expect(client.payouts.create).toHaveBeenCalledTimes(1);
  });

  test('retrieve says there is no such payout: needs review', async () => {
    const { payouts, clock, made } = kit({ script: () => ({ status: 'INPROGRESS' }) });
    await payouts.send({ key: 'a', amount: 1 });
    made.length = 0;
    clock.now += 2 * 60_000;
    const report = await payouts.resolve();
    expect(report.review.map((i) => i.key)).toEqual(['a']);
    expect(report.review[0]!.note).toMatch(/no such payout/);
  });

  describe('past the key window: never sent again; the list, ambiguous by nature', () => {
    test('one match no other intent holds is taken, and said to be a guess', async () => {
      const { payouts, clock, made, client } = kit({ script: () => 'lost' });
      await payouts.send({ key: 'k', amount: 4.25 });
      clock.now += 25 * HOUR; // the service has forgotten the key
      const report = await payouts.resolve();
      expect(report.changed).toEqual([{ key: 'k', from: 'unknown', to: 'sent' }]);
      const intent = (await payouts.get('k'))!;
      expect(intent).toMatchObject({ matchedBy: 'list', payoutId: made[0]!.id });
      expect(intent.note).toMatch(/not by id/);
      expect(client.payouts.create).toHaveBeenCalledTimes(1);
    });

    test('no match: needs review with the way out; confirmResend sends it (once)', async () => {
      const { payouts, clock, client, made } = kit({ script: ({ n }) => (n === 0 ? httpError(504) : 'ok') });
      await payouts.send({ key: 'k', amount: 4 });
      clock.now += 25 * HOUR;
      const report = await payouts.resolve();
      expect(report.review).toHaveLength(1);
      expect(report.review[0]!.note).toMatch(/past the service's 24 h window.*confirmResend/);
      expect(client.payouts.create).toHaveBeenCalledTimes(1);
      // resolve again: still for a person, still not sent.
      await payouts.resolve();
      expect(client.payouts.create).toHaveBeenCalledTimes(1);
      const sent = await payouts.confirmResend('k');
      expect(sent).toMatchObject({ state: 'sent', sends: 2 });
      expect(made).toHaveLength(1);
      await expect(payouts.confirmResend('k')).rejects.toMatchObject({ reason: 'not_allowed' });
      await expect(payouts.confirmResend('nope')).rejects.toMatchObject({ reason: 'not_found' });
    });

    test('two payouts that match: needs review, neither guessed', async () => {
      const { payouts, clock, made } = kit({ script: () => 'lost' });
      await payouts.send({ key: 'k', amount: 4 });
      made.push({ ...made[0]!, id: crypto.randomUUID() });
      clock.now += 25 * HOUR;
      await payouts.resolve();
      expect(await payouts.get('k')).toMatchObject({ state: 'needs_review', note: expect.stringMatching(/^2 payouts/) });
    });

    test('a payout another intent holds is never matched to a second one', async () => {
      // a and b: same amount; a's payout is known by its answer, b's request never arrived.
      const { payouts, clock, made } = kit({ script: ({ n }) => (n === 1 ? httpError(504) : 'ok') });
      await payouts.send({ key: 'a', amount: 4 });
      await payouts.send({ key: 'b', amount: 4 });
      clock.now += 25 * HOUR;
      await payouts.resolve();
      expect(await payouts.get('b')).toMatchObject({ state: 'needs_review', note: expect.stringMatching(/^No payout/) });
      expect(made).toHaveLength(1);
    });

    test('one payout that two open intents of one amount could be: neither guessed, both for a person, named', async () => {
      // a-no-payout: taken for its send, its process died before the request (no payout).
      // b-paid: sent, the payout made, the answer lost. Listed first, a-no-payout must not take b's payout.
      const { payouts, store, clock, made } = kit({ script: () => 'lost' });
      await store.payouts!.add({
        key: 'a-no-payout',
        amount: 500,
        state: 'unknown',
        version: 1,
        createdAt: T0,
        updatedAt: T0,
        sentAt: T0,
        sends: 1,
      });
      await payouts.send({ key: 'b-paid', amount: 500 });
      clock.now += 25 * HOUR;
      const report = await payouts.resolve();
      expect(report.review.map((i) => i.key)).toEqual(['a-no-payout', 'b-paid']);
      expect(report.review[0]!.note).toMatch(/intents 'b-paid' could be its too/);
      expect(report.review[1]!.note).toMatch(/intents 'a-no-payout' could be its too/);
      expect(made).toHaveLength(1);
    });

    test('an intent whose only match went to another intent by a list guess says so, not "no payout"', async () => {
      const { payouts, store, clock } = kit({ script: () => 'lost' });
      await payouts.send({ key: 'b', amount: 500 });
      clock.now += 25 * HOUR;
      await payouts.resolve(); // b takes the payout by a guess (no rival yet)
      expect(await payouts.get('b')).toMatchObject({ state: 'sent', matchedBy: 'list' });
      // Found later: a, of the same amount, sent at the same time, its answer never recorded.
      await store.payouts!.add({ key: 'a', amount: 500, state: 'unknown', version: 1, createdAt: T0, updatedAt: T0, sentAt: T0, sends: 1 });
      await payouts.resolve();
      expect(await payouts.get('a')).toMatchObject({
        state: 'needs_review',
        note: expect.stringMatching(/matched by a list guess to intents 'b'/),
      });
    });

    test.each([
      ['no created_at', undefined],
      ['a created_at that is no time', 'yesterday'],
    ])('a listed payout with %s is at no time: never matched by time, needs review', async (_, createdAt) => {
      const { payouts, clock, made } = kit({ script: () => httpError(504) }); // no payout made for it
      await payouts.send({ key: 'k', amount: 4 });
      made.push({ id: crypto.randomUUID(), amount: 4, destination: '255700000001', status: 'SUCCESS', created_at: createdAt as never });
      clock.now += 25 * HOUR;
      await payouts.resolve();
      expect(await payouts.get('k')).toMatchObject({ state: 'needs_review', note: expect.stringMatching(/^No payout/) });
    });

    test('a payout outside the time tolerance, or to another destination, is no match', async () => {
      const { payouts, clock, made } = kit({ script: () => 'lost' });
      await payouts.send({ key: 'k', amount: 4, destination: '255700000001' });
      made[0]!.created_at = new Date(T0 + HOUR).toISOString();
      clock.now += 25 * HOUR;
      await payouts.resolve();
      expect((await payouts.get('k'))?.state).toBe('needs_review');
    });
  });

  test('a lookup that fails is an error of the report; the intent stays as it was', async () => {
    const { payouts, clock, client } = kit({ script: () => ({ status: 'INPROGRESS' }) });
    await payouts.send({ key: 'a', amount: 1 });
    vi.mocked(client.payouts.retrieve).mockRejectedValueOnce(httpError(503, {}, 'Service Unavailable'));
    clock.now += 2 * 60_000;
    const report = await payouts.resolve();
    expect(report.errors).toEqual([{ key: 'a', error: 'Service Unavailable' }]);
    expect((await payouts.get('a'))?.state).toBe('in_progress');
  });

  test('its own calls wait for a slot in the client polling budget', async () => {
    const clock = { now: T0 };
    const svc = service(clock, () => ({ status: 'INPROGRESS' }));
    const slot = vi.fn(async () => {});
    Object.assign(svc.client, { pollSlot: slot });
    const payouts = createPayouts({ client: svc.client, store: memoryStore(), now: () => clock.now });
    await payouts.send({ key: 'a', amount: 1 });
    expect(slot).not.toHaveBeenCalled(); // the merchant's own send is never held
    clock.now += 2 * 60_000;
    await payouts.resolve();
    expect(slot).toHaveBeenCalledTimes(1);
  });

  test('walks any number of intents (pages of the store) once each', async () => {
    const { payouts, clock, store, made } = kit();
    for (let i = 0; i < 250; i++)
      await store.payouts!.add({
        key: `k${String(i).padStart(3, '0')}`,
        amount: i + 1,
        state: 'pending',
        version: 1,
        createdAt: T0,
        updatedAt: T0,
        sends: 0,
      });
    clock.now += HOUR;
    const report = await payouts.resolve();
    expect(report.checked).toBe(250);
    expect(made).toHaveLength(250);
    expect(await payouts.intents({ state: 'sent', limit: 10_000 })).toHaveLength(250);
  });

  test("reads the store's open intents once a run (each state, each page), however many steps use them", async () => {
    // Counts the store's list calls: the walk, a list match's rivals and the report share one read.
    const store = memoryStore();
    const intents = store.payouts!;
    const listed: string[] = [];
    const counted = {
      ...store,
      payouts: {
        ...intents,
        list: (...args: Parameters<typeof intents.list>) => (listed.push(`${args[0]} after ${args[2] ?? '-'}`), intents.list(...args)),
      },
    };
    const { payouts, clock } = kit({ script: () => 'lost', store: counted });
    // Two open intents of one amount and one payout (each checks the other as a rival), and one for a person.
    const old = { amount: 500, state: 'unknown', version: 1, createdAt: T0, updatedAt: T0, sentAt: T0, sends: 1 } as const;
    await intents.add({ key: 'a-no-payout', ...old });
    await intents.add({ key: 'c-review', ...old, amount: 7, state: 'needs_review' });
    await payouts.send({ key: 'b-paid', amount: 500 });
    clock.now += 25 * HOUR;
    const once = [
      'pending after -',
      'unknown after -',
      'unknown after b-paid',
      'in_progress after -',
      'ambiguous after -',
      'needs_review after -',
      'needs_review after c-review',
    ];
    listed.length = 0;
    const report = await payouts.resolve();
    expect(report.review.map((i) => i.note?.match(/intents '[^']+' could be its too/)?.[0] ?? i.key)).toEqual([
      "intents 'b-paid' could be its too",
      "intents 'a-no-payout' could be its too",
      'c-review',
    ]);
    expect(listed).toEqual(once);
    // The next run: all three for a person, nothing open; still one read.
    listed.length = 0;
    expect(await payouts.resolve()).toMatchObject({
      checked: 0,
      open: [],
      review: [{ key: 'a-no-payout' }, { key: 'b-paid' }, { key: 'c-review' }],
    });
    expect(listed).toEqual(once.filter((line) => line !== 'unknown after b-paid'));
  });
});

describe('the rest', () => {
  test('intents() by state, and a bad state refused', async () => {
    const { payouts } = kit({ script: ({ n }) => (n === 1 ? httpError(503) : 'ok') });
    await payouts.send({ key: 'a', amount: 1 });
    await payouts.send({ key: 'b', amount: 2 });
    expect((await payouts.intents()).map((i) => [i.key, i.state])).toEqual([
      ['b', 'unknown'],
      ['a', 'sent'],
    ]);
    expect((await payouts.intents({ state: 'sent' })).map((i) => i.key)).toEqual(['a']);
    await expect(payouts.intents({ state: 'done' as never })).rejects.toThrow(PayoutIntentError);
    expect(payouts.durable).toBe(false);
  });

  test('an onChange that throws is logged and changes nothing', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const clock = { now: T0 };
    const svc = service(clock);
    const payouts = createPayouts({
      client: svc.client,
      store: memoryStore(),
      onChange: () => {
        throw new Error('ledger down');
      },
    });
    expect((await payouts.send({ key: 'a', amount: 1 })).state).toBe('sent');
    expect(log).toHaveBeenCalledTimes(3);
    log.mockRestore();
  });

  test.each([
    [{ store: {} }, /store must be/],
    [{ store: undefined }, /store must be/],
    [{ client: {} }, /client must be/],
    [{ keyRetention: 0 }, /keyRetention/],
    [{ resendWindow: 25 * HOUR }, /resendWindow must be at most keyRetention/],
    [{ settleAfter: -1 }, /settleAfter/],
  ])('createPayouts(%j) is a ConfigurationError', (override, words) => {
    const clock = { now: T0 };
    const options = { client: service(clock).client, store: memoryStore(), ...override };
    expect(() => createPayouts(options as never)).toThrow(words);
  });
});

test('the entry loads without ky, zod or the client, and is within 6,144 B min+gzip', async () => {
  const { inputs, gzipBytes } = await bundleEntry('src/payouts.ts');
  expect(inputs.filter((path) => /node_modules\/ky\/|src\/client\.ts|node_modules\/zod\/|src\/internal\//.test(path))).toEqual([]);
  expect(gzipBytes).toBeLessThanOrEqual(6_144);
});
