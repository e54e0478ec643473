// The payout-intent kit against the sandbox over a real socket, on both generations: the
// sandbox's payout behaviour (settle later, lost answers) and its 24 h key window on an
// injected clock, with the kit on the same clock, or on clocks of its own (behind, stepped
// back, agreeing within the margin): the key window is judged on the service's clock.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { memoryStore } from '../../src/payouts/store.js';
import { createPayouts } from '../../src/payouts.js';
import { startSandbox, type Sandbox } from '../support/sandbox.js';

const HOUR = 3_600_000;
let open: Sandbox | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

/** A sandbox and a kit on one clock (`clock.ms` ahead of real time); no retries, so each send is one request. */
async function setup(generation: 'current' | 'earlier' = 'current') {
  const clock = { ms: 0 };
  const now = () => Date.now() + clock.ms;
  const sandbox = (open = await startSandbox({ generation, now, autoRun: true, timeScale: 1, toleranceSeconds: 100 * 3600 }));
  const client = sandbox.clientWith({ maxRetries: 0 });
  const payouts = createPayouts({ client, store: memoryStore(), now, settleAfter: 0 });
  return { ...sandbox, clock, payouts, made: () => sandbox.mock.state.payouts.size };
}

describe('against the sandbox over a real socket', () => {
  test('a payout answered INPROGRESS is settled by resolve() once the service settles it', async () => {
    const { mock, payouts, clock } = await setup();
    mock.payoutBehaviour({ answer: 'INPROGRESS', settleAs: 'SUCCESS', settleAfterMs: 60_000 });
    const intent = await payouts.send({ key: 'p-1', amount: 40 });
    expect(intent).toMatchObject({ state: 'in_progress', matchedBy: 'answer' });
    expect((await payouts.resolve()).changed).toEqual([]); // still INPROGRESS at the service
    clock.ms += 61_000;
    await mock.runDue();
    expect((await payouts.resolve()).changed).toEqual([{ key: 'p-1', from: 'in_progress', to: 'sent' }]);
    expect((await payouts.get('p-1'))?.payout?.status).toBe('SUCCESS');
  });

  test('AMBIGUOUS that settles as FAILED: failed, the wallet refunded', async () => {
    const { mock, payouts, clock } = await setup();
    mock.payoutBehaviour({ answer: 'AMBIGUOUS', settleAs: 'FAILED', settleAfterMs: 1_000 });
    expect((await payouts.send({ key: 'p-2', amount: 40 })).state).toBe('ambiguous');
    clock.ms += 2_000;
    await mock.runDue();
    await payouts.resolve();
    expect((await payouts.get('p-2'))?.state).toBe('failed');
  });

  test('the answer lost after the payout was made: unknown, then sent by a replay of its key, one payout', async () => {
    const { mock, payouts, made } = await setup();
    mock.payoutBehaviour({ loseAnswer: 1 });
    const intent = await payouts.send({ key: 'p-3', amount: 41 });
    expect(intent.state).toBe('unknown');
    expect(intent.error).toMatch(/may have been made/);
    expect(made()).toBe(1);
    // resolve() sends it again with its key: the service replays the answer it kept (a replay is never lost).
    expect((await payouts.resolve()).changed).toEqual([{ key: 'p-3', from: 'unknown', to: 'sent' }]);
    expect(made()).toBe(1);
  });

  test('past 24 h the sandbox has forgotten the key: the list finds the payout, nothing is sent again', async () => {
    const { mock, payouts, clock, made } = await setup();
    mock.payoutBehaviour({ loseAnswer: 1 });
    await payouts.send({ key: 'p-4', amount: 42.5 });
    mock.payoutBehaviour({ loseAnswer: 0 });
    clock.ms += 25 * HOUR;
    await payouts.resolve();
    expect(await payouts.get('p-4')).toMatchObject({ state: 'sent', matchedBy: 'list' });
    expect(made()).toBe(1);
  });

  test('past 24 h with no payout made (the request lost on the way): needs review; confirmResend pays it once', async () => {
    const { mock, clock, made, server } = await setup();
    let drop = true;
    // The first payout request never reaches the service: the connection resets on the way.
    const client = open!.clientWith({
      maxRetries: 0,
      fetch: (input, init) => {
        if (drop && new Request(input, init).method === 'POST') {
          drop = false;
          return Promise.reject(
            Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) }),
          );
        }
        return fetch(input, init);
      },
    });
    expect(server.url).toMatch(/^http:/);
    const payouts = createPayouts({ client, store: memoryStore(), now: () => Date.now() + clock.ms, settleAfter: 0 });
    expect((await payouts.send({ key: 'p-5', amount: 43 })).state).toBe('unknown');
    clock.ms += 25 * HOUR;
    const report = await payouts.resolve();
    expect(report.review.map((i) => i.key)).toEqual(['p-5']);
    expect(made()).toBe(0);
    expect((await payouts.confirmResend('p-5')).state).toBe('sent');
    expect(made()).toBe(1);
    expect(mock.state.payouts.size).toBe(1);
  });

  test('hostile answers through the real client: a 303 redirect is unknown (never failed: a new key could pay twice); a new status word is in_progress', async () => {
    const { clock } = await setup();
    const answer = { next: new Response(null, { status: 303, headers: { location: 'https://elsewhere.example/payouts' } }) };
    const client = open!.clientWith({ maxRetries: 0, fetch: () => Promise.resolve(answer.next) });
    const payouts = createPayouts({ client, store: memoryStore(), now: () => Date.now() + clock.ms });
    expect(await payouts.send({ key: 'h-1', amount: 5 })).toMatchObject({ state: 'unknown', error: expect.stringMatching(/303/) });
    const body = { status: 'success', data: { id: crypto.randomUUID(), amount: 5, status: 'ON_HOLD' } };
    answer.next = new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
    const held = await payouts.send({ key: 'h-2', amount: 5 });
    expect(held).toMatchObject({ state: 'in_progress', payout: { status: 'ON_HOLD' } });
    expect(held.note).toMatch(/ON_HOLD/);
  });

  test('a stalled server (no answer, or an answer whose body stops half-way): unknown after the per-attempt timeout, never failed (a new key could pay twice)', async () => {
    const { clock, made } = await setup();
    const server = createServer((req, res) => {
      req.resume();
      // /stall-body/: a 200 whose body never ends; anything else: no answer at all.
      if (req.url?.startsWith('/stall-body/')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"status":"success","data":{');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      for (const [key, base] of [
        ['s-1', origin],
        ['s-2', `${origin}/stall-body`],
      ] as const) {
        const client = open!.clientWith({ maxRetries: 0, timeout: 200, baseUrl: base });
        const payouts = createPayouts({ client, store: memoryStore(), now: () => Date.now() + clock.ms });
        const intent = await payouts.send({ key, amount: 7 });
        expect(intent).toMatchObject({ state: 'unknown', error: expect.stringMatching(/timed out/) });
      }
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    expect(made()).toBe(0);
  });

  test('the earlier generation has no payout routes: failed (nothing paid), with the reason', async () => {
    const { payouts, made } = await setup('earlier');
    const intent = await payouts.send({ key: 'p-6', amount: 10 });
    expect(intent.state).toBe('failed');
    expect(intent.error).toMatch(/payouts/i);
    expect(made()).toBe(0);
  });
});

/**
 * The sandbox on its own clock (`service.ms` ahead of real time) and kits on one store, each on
 * a clock of its own (`Date.now() + ms()`): the window judged on the service's clock, its Date.
 */
async function clocks() {
  const service = { ms: 0 };
  const sandbox = (open = await startSandbox({
    now: () => Date.now() + service.ms,
    autoRun: true,
    timeScale: 1,
    toleranceSeconds: 100 * 3600,
  }));
  const store = memoryStore();
  const kit = (ms: () => number) =>
    createPayouts({ client: sandbox.clientWith({ maxRetries: 0 }), store, now: () => Date.now() + ms(), settleAfter: 0 });
  return { ...sandbox, service, kit, made: () => sandbox.mock.state.payouts.size };
}

describe('the key window on the service clock', () => {
  test('a resolver 25 h behind the service: the forgotten key is never sent again (the list finds its payout); inside the window, its clock is named, nothing sent', async () => {
    const { mock, service, kit, made } = await clocks();
    const sender = kit(() => service.ms);
    mock.payoutBehaviour({ loseAnswer: 1 });
    expect((await sender.send({ key: 'c-1', amount: 44 })).state).toBe('unknown');
    service.ms += 25 * HOUR; // the sandbox has forgotten c-1's key
    expect((await sender.send({ key: 'c-2', amount: 45 })).state).toBe('unknown');
    mock.payoutBehaviour({ loseAnswer: 0 });
    const resolver = kit(() => service.ms - 25 * HOUR); // its clock says c-1 was sent moments ago
    await resolver.resolve();
    expect(made()).toBe(2); // one payout per key
    expect(await resolver.get('c-1')).toMatchObject({ state: 'sent', matchedBy: 'list', sends: 1 });
    expect(await resolver.get('c-2')).toMatchObject({
      state: 'needs_review',
      sends: 1,
      note: expect.stringMatching(/^This host's clock is 25 h behind the service's .*could pay twice/),
    });
  });

  test('a clock stepped back: 25 h later, 3 h back (22 h by its own clock), nothing sent again; one stepped back past a send it recorded is named', async () => {
    const { mock, service, kit, made } = await clocks();
    const local = { ms: 0 };
    const payouts = kit(() => local.ms);
    expect((await payouts.send({ key: 'b-0', amount: 46 })).state).toBe('sent'); // a Date seen
    mock.payoutBehaviour({ loseAnswer: 1 });
    const lost = await payouts.send({ key: 'b-1', amount: 47 });
    // The service's time of its first send: this process's clock corrected by the last Date it saw.
    expect(Math.abs(lost.serviceAt! - (lost.sentAt! + service.ms))).toBeLessThan(2_000);
    service.ms = local.ms = 25 * HOUR;
    await payouts.send({ key: 'b-2', amount: 48 });
    mock.payoutBehaviour({ loseAnswer: 0 });
    local.ms -= 3 * HOUR;
    await payouts.resolve();
    expect(made()).toBe(3);
    expect(await payouts.get('b-1')).toMatchObject({ state: 'sent', matchedBy: 'list', sends: 1 });
    expect(await payouts.get('b-2')).toMatchObject({ state: 'needs_review', sends: 1, note: expect.stringMatching(/^A clock went back/) });
  });

  test('clocks that agree within the margin (the sandbox 5 h ahead of real time, the kits 20 and 40 min behind it): inside the window the re-send replays', async () => {
    const { mock, service, kit, made } = await clocks();
    service.ms = 5 * HOUR;
    const sender = kit(() => service.ms - 20 * 60_000);
    expect((await sender.send({ key: 'a-0', amount: 49 })).state).toBe('sent');
    mock.payoutBehaviour({ loseAnswer: 1 });
    const lost = await sender.send({ key: 'a-1', amount: 50 });
    expect(lost.state).toBe('unknown');
    // Kept on the service's clock, 20 min after the time its host recorded.
    expect(Math.abs(lost.serviceAt! - lost.createdAt - 20 * 60_000)).toBeLessThan(2_000);
    mock.payoutBehaviour({ loseAnswer: 0 });
    service.ms += 22 * HOUR;
    const resolver = kit(() => service.ms - 40 * 60_000);
    expect((await resolver.resolve()).changed).toEqual([{ key: 'a-1', from: 'unknown', to: 'sent' }]);
    expect(await resolver.get('a-1')).toMatchObject({ matchedBy: 'answer', sends: 2 });
    expect(made()).toBe(2);
  });
});
