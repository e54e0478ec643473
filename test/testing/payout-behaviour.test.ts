// The sandbox's payout behaviour switch (mock.payoutBehaviour(), the console's Payouts form and
// its JSON control call): payouts that answer INPROGRESS or AMBIGUOUS and settle later as
// SUCCESS or FAILED (refunded), and payouts whose answer is lost after they are made (a reset
// connection over a real socket, a network error through mock.handle() and msw), replayed by
// their Idempotency-Key.
import { setupServer } from 'msw/node';
import { afterEach, describe, expect, it } from 'vitest';
import { APIConnectionError, PaymentsClient } from '../../src/index.js';
import { createMockService, PAYOUT_TEST_AMOUNTS, type MockService } from '../../src/testing.js';
import { BASE, setup, sign } from '../support/mock-service.js';

const HTML = { Accept: 'text/html,application/xhtml+xml' };
const LOST_REASON = 'answer lost (payout behaviour)';

const tzs = (mock: MockService) => mock.state.merchants[0]!.currencies.TZS!.balance;

async function page(mock: MockService, path = '/') {
  const response = await mock.handle(new Request(BASE + path, { headers: HTML }));
  return { status: response.status, text: await response.text() };
}

/** The form token the console page embeds (as a browser, or a script driving the console, reads it). */
async function tokenOf(mock: MockService): Promise<string> {
  return /name="token" value="([0-9a-f]+)"/.exec((await page(mock)).text)![1]!;
}

function postForm(mock: MockService, form: Record<string, string>, headers: Record<string, string> = {}) {
  return mock.handle(
    new Request(`${BASE}/console/payouts/behaviour`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(form).toString(),
    }),
  );
}

/** A signed POST /api/v1/payouts on the real clock, as raw fetch arguments. */
function signedPayout(mock: MockService, base: string, body: unknown, idempotencyKey: string): [string, RequestInit] {
  const { sandbox } = mock.credentials;
  const raw = JSON.stringify(body);
  const ts = Math.floor(Date.now() / 1000);
  return [
    `${base}/api/v1/payouts`,
    {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json',
        'X-Environment': 'sandbox',
        'X-Merchant-Key': sandbox.merchantKey,
        'X-API-Key': sandbox.apiKey,
        'X-Timestamp': String(ts),
        'X-Signature': sign(sandbox.apiSecret, ts, 'POST', '/api/v1/payouts', raw),
        'Idempotency-Key': idempotencyKey,
      },
      body: raw,
    },
  ];
}

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done();
});

describe('payout behaviour: answers that settle later', () => {
  it('defaults to normal: the amounts table, unchanged', async () => {
    const { mock, call, clock } = setup();
    expect(mock.payoutBehaviour()).toEqual({ answer: 'normal', settleAs: 'SUCCESS', settleAfterMs: 60_000, loseAnswer: 0 });
    const inProgress = await call('POST', '/api/v1/payouts', { amount: PAYOUT_TEST_AMOUNTS.inProgress });
    const ambiguous = await call('POST', '/api/v1/payouts', { amount: PAYOUT_TEST_AMOUNTS.ambiguous });
    const failed = await call('POST', '/api/v1/payouts', { amount: PAYOUT_TEST_AMOUNTS.failed });
    const plain = await call('POST', '/api/v1/payouts', { amount: 10 });
    expect([inProgress, ambiguous, failed, plain].map((r) => r.body.data.status)).toEqual(['INPROGRESS', 'AMBIGUOUS', 'FAILED', 'SUCCESS']);
    clock.advance(60_000);
    await mock.runDue();
    expect((await call('GET', `/api/v1/payouts/${inProgress.body.data.id}`)).body.data.status).toBe('SUCCESS');
    clock.advance(24 * 3_600_000);
    await mock.runDue();
    expect((await call('GET', `/api/v1/payouts/${ambiguous.body.data.id}`)).body.data.status).toBe('AMBIGUOUS');
  });

  it('INPROGRESS, then SUCCESS after settleAfterMs on the service clock', async () => {
    const { mock, call, clock } = setup();
    expect(mock.payoutBehaviour({ answer: 'INPROGRESS', settleAfterMs: 30_000 })).toEqual({
      answer: 'INPROGRESS',
      settleAs: 'SUCCESS',
      settleAfterMs: 30_000,
      loseAnswer: 0,
    });
    const before = tzs(mock);
    const made = await call('POST', '/api/v1/payouts', { amount: 10 });
    expect(made.status).toBe(200);
    expect(made.body.data).toMatchObject({ status: 'INPROGRESS', amount: 10 });
    expect(tzs(mock)).toBe(before - 10);
    const id = made.body.data.id as string;
    clock.advance(29_999);
    await mock.runDue();
    expect((await call('GET', `/api/v1/payouts/${id}`)).body.data.status).toBe('INPROGRESS');
    clock.advance(1);
    await mock.runDue();
    const settled = (await call('GET', `/api/v1/payouts/${id}`)).body.data;
    expect(settled).toMatchObject({ status: 'SUCCESS', created_at: made.body.data.created_at });
    expect(settled.updated_at).toBe(new Date(clock.now()).toISOString());
    expect(tzs(mock)).toBe(before - 10);
  });

  it('AMBIGUOUS, then FAILED with the balance refunded (createMockService option, scaled by timeScale)', async () => {
    const { mock, call, clock } = setup({ timeScale: 0.5, payoutBehaviour: { answer: 'AMBIGUOUS', settleAs: 'FAILED' } });
    const before = tzs(mock);
    // Every amount answers so, even the table's SUCCESS and FAILED ones.
    const a = await call('POST', '/api/v1/payouts', { amount: 250 });
    const b = await call('POST', '/api/v1/payouts', { amount: PAYOUT_TEST_AMOUNTS.failed });
    expect([a.body.data.status, b.body.data.status]).toEqual(['AMBIGUOUS', 'AMBIGUOUS']);
    expect(tzs(mock)).toBe(before - 250 - PAYOUT_TEST_AMOUNTS.failed);
    clock.advance(29_999); // 60 s × 0.5
    await mock.runDue();
    expect(mock.state.payouts.get(a.body.data.id)!.status).toBe('AMBIGUOUS');
    clock.advance(1);
    await mock.runDue();
    for (const reply of [a, b]) expect((await call('GET', `/api/v1/payouts/${reply.body.data.id}`)).body.data.status).toBe('FAILED');
    expect(tzs(mock)).toBe(before);
  });

  it('a payout settles as it was told when made, whatever the switch says later', async () => {
    const { mock, call, clock } = setup({ payoutBehaviour: { answer: 'INPROGRESS', settleAs: 'FAILED', settleAfterMs: 1_000 } });
    const before = tzs(mock);
    const made = await call('POST', '/api/v1/payouts', { amount: 40 });
    mock.payoutBehaviour({ answer: 'normal', settleAs: 'SUCCESS' });
    expect((await call('POST', '/api/v1/payouts', { amount: 5 })).body.data.status).toBe('SUCCESS');
    clock.advance(1_000);
    await mock.runDue();
    expect(mock.state.payouts.get(made.body.data.id)!.status).toBe('FAILED');
    expect(tzs(mock)).toBe(before - 5);
  });

  it('refuses bad values with TypeError or RangeError, changing nothing, and hands out copies', () => {
    const mock = createMockService({ autoRun: false });
    cleanup.push(() => mock.close());
    const start = mock.payoutBehaviour({ answer: 'AMBIGUOUS' });
    expect(() => mock.payoutBehaviour({ answer: 'LATER' as never })).toThrow(RangeError);
    expect(() => mock.payoutBehaviour({ answer: 'LATER' as never })).toThrow(/answer must be 'normal', 'INPROGRESS' or 'AMBIGUOUS'/);
    expect(() => mock.payoutBehaviour({ answer: 1 as never })).toThrow(TypeError);
    expect(() => mock.payoutBehaviour({ settleAs: 'success' as never })).toThrow(/settleAs must be 'SUCCESS' or 'FAILED'/);
    expect(() => mock.payoutBehaviour({ settleAfterMs: -1 })).toThrow(RangeError);
    expect(() => mock.payoutBehaviour({ settleAfterMs: Number.POSITIVE_INFINITY })).toThrow(RangeError);
    expect(() => mock.payoutBehaviour({ settleAfterMs: '60' as never })).toThrow(TypeError);
    expect(() => mock.payoutBehaviour({ loseAnswer: 1.5 })).toThrow(/loseAnswer must be from 0 \(never\) to 1 \(always\)/);
    expect(() => mock.payoutBehaviour({ loseAnswer: Number.NaN })).toThrow(RangeError);
    expect(() => mock.payoutBehaviour({ loseAnswer: true as never })).toThrow(TypeError);
    expect(() => mock.payoutBehaviour({ settleAfter: 5 } as never)).toThrow(/unknown field "settleAfter"/);
    expect(() => mock.payoutBehaviour(null as never)).toThrow(TypeError);
    // All or nothing: the good field of a refused call is not applied either.
    expect(() => mock.payoutBehaviour({ answer: 'INPROGRESS', loseAnswer: 2 })).toThrow(RangeError);
    expect(mock.payoutBehaviour()).toEqual(start);
    const copy = mock.payoutBehaviour();
    copy.answer = 'INPROGRESS';
    expect(mock.payoutBehaviour().answer).toBe('AMBIGUOUS');
    expect(() => createMockService({ payoutBehaviour: { settleAs: 'LATER' as never } })).toThrow(
      /^createMockService: payoutBehaviour: settleAs must be/,
    );
  });
});

describe('payout behaviour: lost answers', () => {
  it('over a real socket: the connection is reset, the payout is made, and a replay gets the kept answer', async () => {
    const mock = createMockService({ payoutBehaviour: { loseAnswer: 1 } });
    const server = await mock.listen({ port: 0 });
    cleanup.push(() => mock.close());
    const before = tzs(mock);
    const [url, init] = signedPayout(mock, server.url, { amount: 10 }, 'lost-1');
    const error = await fetch(url, init).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TypeError); // undici: fetch failed
    expect((error as { cause?: { code?: string } }).cause?.code).toBe('ECONNRESET');
    expect(mock.state.payouts.size).toBe(1);
    const [payout] = mock.state.payouts.values();
    expect(payout).toMatchObject({ amount: 10, status: 'SUCCESS' });
    expect(tzs(mock)).toBe(before - 10);
    expect(mock.state.requests.at(-1)).toMatchObject({ method: 'POST', path: '/api/v1/payouts', status: 0, reason: LOST_REASON });

    // Replays are never lost: the same key gets the answer the first request never saw.
    const replay = await fetch(...signedPayout(mock, server.url, { amount: 10 }, 'lost-1'));
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(((await replay.json()) as { data: unknown }).data).toMatchObject({ id: payout!.id, amount: 10, status: 'SUCCESS' });
    expect(mock.state.payouts.size).toBe(1);
    expect(mock.state.requests.filter((r) => r.status === 0)).toHaveLength(1);
  });

  it('the SDK client: payouts.create rejects with its Idempotency-Key, and the same key then returns the payout', async () => {
    const mock = createMockService({ payoutBehaviour: { answer: 'AMBIGUOUS', loseAnswer: 1 } });
    const server = await mock.listen({ port: 0 });
    cleanup.push(() => mock.close());
    const client = new PaymentsClient({ environment: 'sandbox', ...mock.credentials.sandbox, baseUrl: server.url });
    const error = await client.payouts.create({ amount: 10 }, { idempotencyKey: 'k1' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error).toMatchObject({ idempotencyKey: 'k1' });
    expect(mock.state.payouts.size).toBe(1); // made once, and not sent again after the reset
    const payout = await client.payouts.create({ amount: 10 }, { idempotencyKey: 'k1' });
    expect(payout).toMatchObject({ id: [...mock.state.payouts.keys()][0], status: 'AMBIGUOUS' });
    expect(mock.state.payouts.size).toBe(1);
  });

  it('through mock.handle(): Response.error(); the log counts it, and a replay is answered', async () => {
    const { mock, call } = setup({ payoutBehaviour: { loseAnswer: 1 } });
    const lost = await call('POST', '/api/v1/payouts', { amount: 10 }, { idempotencyKey: 'h-1' });
    expect(lost.status).toBe(0);
    expect(mock.state.payouts.size).toBe(1);
    expect(mock.state.requests.at(-1)).toMatchObject({ status: 0, reason: LOST_REASON });
    const replay = await call('POST', '/api/v1/payouts', { amount: 10 }, { idempotencyKey: 'h-1' });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.data.id).toBe([...mock.state.payouts.keys()][0]);
    // Only payouts are lost, and only made ones: a refused payout and other creates answer.
    expect((await call('POST', '/api/v1/payouts', { amount: -1 })).status).toBe(422);
    expect((await call('POST', '/api/v1/payouts/preview', { amount: 10 })).status).toBe(200);
    mock.payoutBehaviour({ loseAnswer: 0 });
    expect((await call('POST', '/api/v1/payouts', { amount: 10 })).status).toBe(200);
    expect(mock.state.requests.filter((r) => r.reason === LOST_REASON)).toHaveLength(1);
  });

  it('a fraction loses about that share of payouts (Math.random per payout)', async () => {
    const { mock, call } = setup({ payoutBehaviour: { loseAnswer: 0.5 } });
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await call('POST', '/api/v1/payouts', { amount: 1 })).status);
    const lost = statuses.filter((s) => s === 0).length;
    expect(lost).toBeGreaterThan(5);
    expect(lost).toBeLessThan(55);
    expect(statuses.filter((s) => s === 200)).toHaveLength(60 - lost);
    expect(mock.state.payouts.size).toBe(60);
  });

  it('through msw: the fetch fails with a network error, and a replay is answered', async () => {
    const mock = createMockService({ autoRun: false, payoutBehaviour: { loseAnswer: 1 } });
    const server = setupServer(...mock.handlers);
    server.listen({ onUnhandledFrame: 'error' });
    cleanup.push(() => server.close());
    const error = await fetch(...signedPayout(mock, BASE, { amount: 10 }, 'msw-1')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(mock.state.payouts.size).toBe(1);
    const replay = await fetch(...signedPayout(mock, BASE, { amount: 10 }, 'msw-1'));
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(mock.state.payouts.size).toBe(1);
  });
});

describe('payout behaviour: the console switch', () => {
  it('shows the switch and the newest payouts, escaped', async () => {
    const { mock, call } = setup();
    const empty = await page(mock);
    expect(empty.text).toContain('<section id="payouts">');
    expect(empty.text).toContain(`action="${BASE}/console/payouts/behaviour"`);
    expect(empty.text).toContain('<option value="normal" selected>');
    expect(empty.text).toContain('No payouts yet');
    mock.payoutBehaviour({ answer: 'INPROGRESS', settleAs: 'FAILED', settleAfterMs: 90_000 });
    const made = await call('POST', '/api/v1/payouts', { amount: 75 });
    mock.payoutBehaviour({ loseAnswer: 0.25 }); // after the payout: its answer is not at stake
    const { text } = await page(mock);
    expect(text).toContain(`<code>${made.body.data.id}</code>`);
    expect(text).toContain('75 TZS');
    expect(text).toMatch(/badge wait">INPROGRESS/);
    expect(text).toContain('<option value="INPROGRESS" selected>');
    expect(text).toContain('<option value="FAILED" selected>');
    expect(text).toContain('name="settleAfter" type="number" min="0" step="any" size="6" value="90"');
    expect(text).toContain('value="25"> % of them');
    expect(text).toContain('becomes FAILED (refunded) 90 s later');
    expect(text).toContain('<script>'); // reloads while a payout is settling
  });

  it('a form post with the token switches the behaviour and redirects back', async () => {
    const { mock, call } = setup();
    const token = await tokenOf(mock);
    const sent = await postForm(mock, {
      token,
      answer: 'AMBIGUOUS',
      settleAs: 'FAILED',
      settleAfter: '5',
      loseAnswer: '1',
      losePercent: '10',
    });
    expect(sent.status).toBe(303);
    expect(sent.headers.get('location')).toBe(`${BASE}/#payouts`);
    expect(mock.payoutBehaviour()).toEqual({ answer: 'AMBIGUOUS', settleAs: 'FAILED', settleAfterMs: 5_000, loseAnswer: 1 });
    expect((await call('POST', '/api/v1/payouts', { amount: 10 })).status).toBe(0);
    // The checkbox unchecked: the percentage counts.
    await postForm(mock, { token, answer: 'normal', settleAs: 'SUCCESS', settleAfter: '60', losePercent: '12.5' });
    expect(mock.payoutBehaviour()).toEqual({ answer: 'normal', settleAs: 'SUCCESS', settleAfterMs: 60_000, loseAnswer: 0.125 });
    await postForm(mock, { token, losePercent: '' });
    expect(mock.payoutBehaviour().loseAnswer).toBe(0);
  });

  it('refuses a post without the token or from another site, and bad values with an escaped 400', async () => {
    const { mock } = setup();
    const token = await tokenOf(mock);
    expect((await postForm(mock, { answer: 'INPROGRESS' })).status).toBe(403);
    expect((await postForm(mock, { token: 'f'.repeat(32), answer: 'INPROGRESS' })).status).toBe(403);
    expect((await postForm(mock, { token, answer: 'INPROGRESS' }, { Origin: 'https://evil.example' })).status).toBe(403);
    const bad = await postForm(mock, { token, answer: '<b>later</b>' });
    expect(bad.status).toBe(400);
    const text = await bad.text();
    expect(text).toContain('&#60;b&#62;later&#60;/b&#62;');
    expect(text).not.toContain('<b>later');
    expect((await postForm(mock, { token, settleAfter: '-3' })).status).toBe(400);
    expect((await postForm(mock, { token, settleAfter: 'soon' })).status).toBe(400);
    expect((await postForm(mock, { token, losePercent: '150' })).status).toBe(400);
    expect(mock.payoutBehaviour().answer).toBe('normal');
  });

  it('a JSON control call with the token (another process, over HTTP) switches it and answers the behaviour', async () => {
    const mock = createMockService();
    const server = await mock.listen({ port: 0 });
    cleanup.push(() => mock.close());
    const html = await (await fetch(`${server.url}/`, { headers: HTML })).text();
    const token = /name="token" value="([0-9a-f]+)"/.exec(html)![1]!;
    const control = (body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/console/payouts/behaviour`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const ok = await control({ token, answer: 'INPROGRESS', settleAfterMs: 2_000, loseAnswer: 0.5 });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBeNull();
    expect(await ok.json()).toEqual({ answer: 'INPROGRESS', settleAs: 'SUCCESS', settleAfterMs: 2_000, loseAnswer: 0.5 });
    expect(mock.payoutBehaviour().loseAnswer).toBe(0.5);

    expect((await control({ answer: 'normal' })).status).toBe(403);
    expect((await control({ token: 'nope', answer: 'normal' })).status).toBe(403);
    expect((await control({ token, answer: 'normal' }, { Origin: 'https://evil.example' })).status).toBe(403);
    const bad = await control({ token, loseAnswer: 3 });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: 'Bad Request', message: expect.stringMatching(/loseAnswer must be from 0/) });
    expect(mock.payoutBehaviour()).toMatchObject({ answer: 'INPROGRESS', loseAnswer: 0.5 });
  });

  it('the earlier generation (no payouts) has no Payouts section or switch', async () => {
    const mock = createMockService({ generation: 'earlier', autoRun: false });
    cleanup.push(() => mock.close());
    expect((await page(mock)).text).not.toContain('id="payouts"');
    expect((await postForm(mock, { token: await tokenOf(mock), answer: 'INPROGRESS' })).status).toBe(404);
  });
});
