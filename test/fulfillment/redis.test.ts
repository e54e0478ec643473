// redisStore without a server: the client glue (which API it calls on node-redis and on
// ioredis, the key prefix, the keys and arguments of each script, how replies are read)
// against a fake Redis that runs the semantics of the store's Lua scripts on Maps. The scripts
// themselves, atomicity, expiry and the server's clock run on a real Redis 7 in `npm run
// test:stores` (test/fulfillment/stores-real.check.ts), with both clients.
import { bundleEntry } from '../support/bundle.js';
import { describe, expect, test, vi } from 'vitest';
import { redisStore, type IORedisClientLike, type NodeRedisClientLike } from '../../src/fulfillment-redis.js';
import type { FulfillmentStore, InboxStore } from '../../src/fulfillment/store.js';
import { testStore } from '../../src/testing.js';

/** A script's keys and arguments as the fake received them. */
interface Call {
  script: string;
  keys: string[];
  args: string[];
}

// A key's cluster hash tag: what is between its first `{` and the next `}`, when not empty.
const slotOf = (key: string) => /^[^{]*\{([^}]+)\}/.exec(key)?.[1] ?? key;

/**
 * A Redis on a clock we move by hand (TIME reads it too): strings with PX expiry, sorted sets
 * and hashes. `eval` picks the store's script by its text and runs its semantics; a script it
 * does not know, or keys in more than one cluster slot, fail as Redis would fail them.
 */
function fakeRedis() {
  let now = 0;
  const data = new Map<string, { value: string; until?: number }>();
  const zsets = new Map<string, Map<string, number>>();
  const hashes = new Map<string, Map<string, string>>();
  const get = (key: string) => {
    const entry = data.get(key);
    if (entry?.until !== undefined && entry.until <= now) data.delete(key);
    return data.get(key)?.value ?? null;
  };
  const incr = (key: string) => {
    const n = Number(get(key) ?? 0) + 1;
    data.set(key, { value: String(n) });
    return n;
  };
  const zadd = (key: string, score: number, member: string) => {
    if (!zsets.has(key)) zsets.set(key, new Map());
    zsets.get(key)!.set(member, score);
  };
  const zrem = (key: string, member: string) => {
    zsets.get(key)?.delete(member);
    if (zsets.get(key)?.size === 0) zsets.delete(key);
  };
  // Members by score, ties by member, as Redis orders them.
  const zrange = (key: string) =>
    [...(zsets.get(key) ?? [])]
      .sort(([a, x], [b, y]) => x - y || (a < b ? -1 : a > b ? 1 : 0))
      .map(([member, score]) => ({ member, score }));
  // ZREMRANGEBYSCORE -inf now-window: the sends that left the window.
  const drop = (key: string, windowMs: number) => {
    for (const { member, score } of zrange(key)) if (score <= now - windowMs) zrem(key, member);
  };
  // HMGET: null for a field (or hash) that is not there.
  const hmget = (key: string, fields: string[]) => fields.map((field) => hashes.get(key)?.get(field) ?? null);
  const FIELDS = ['state', 'event', 'attempts', 'error', 'at'];
  const calls: Call[] = [];
  const scripts: string[] = [];

  // Each script's semantics: KEYS and ARGV as the real script reads them.
  const run: Record<string, (keys: string[], args: string[]) => unknown> = {
    // CLAIM: SET NX PX, else the value that holds the key.
    claim([key], [token, px]) {
      if (get(key!) === null) {
        data.set(key!, { value: token!, until: now + Number(px) });
        return token;
      }
      return get(key!);
    },
    // END: only while ours or free; '' deletes, else sets the value with an optional PX.
    end([key], [token, value, px]) {
      const held = get(key!);
      if (held !== null && held !== token) return 0;
      if (value === '') data.delete(key!);
      else data.set(key!, px === '' ? { value: value! } : { value: value!, until: now + Number(px) });
      return 1;
    },
    // ATTEMPT: the number after `done:` (0 if none) + 1, kept with no expiry.
    attempt([key]) {
      const n = Number(/^done:(\d+)$/.exec(get(key!) ?? '')?.[1] ?? 0) + 1;
      data.set(key!, { value: `done:${n}` });
      return n;
    },
    add([record, due, seq, list], [id, event, state]) {
      if (hashes.has(record!)) return 0;
      hashes.set(
        record!,
        new Map([
          ['state', state!],
          ['event', event!],
          ['attempts', '0'],
          ['error', ''],
          ['at', String(now)],
        ]),
      );
      zadd(list!, incr(seq!), id!);
      if (state === 'pending') zadd(due!, now, id!);
      return 1;
    },
    take([due, records, given], [lease, token, wanted]) {
      let id = wanted!;
      if (given === undefined) {
        const first = zrange(due!).find(({ score }) => score <= now);
        if (!first) return null;
        id = first.member;
      } else if (!((zsets.get(due!)?.get(id) ?? Infinity) <= now)) return null;
      const record = given ?? records + id;
      zadd(due!, now + Number(lease), id);
      hashes.get(record)?.set('token', token!);
      return [id, ...hmget(record, [...FIELDS, 'token'])];
    },
    // MOVE (finish, and replay): fenced by the token when one is given (finish), else the record
    // need only exist (replay); out of its old state's set into the new one, due or not.
    move([record, due, seq, lists, next], [id, state, attempts, delay, error, token]) {
      const hash = hashes.get(record!);
      if (!hash || (token !== undefined && hash.get('token') !== token)) return 0;
      zrem(lists! + hash.get('state'), id!);
      hash.set('state', state!).set('attempts', attempts!).set('error', error!).delete('token');
      zadd(next!, incr(seq!), id!);
      if (state === 'pending') zadd(due!, now + Number(delay), id!);
      else zrem(due!, id!);
      return 1;
    },
    // The budget (store.budget): TAKE refuses while paused (the ms left), else drops the sends out
    // of the window and, under the limit, adds one (0), else answers when room may come.
    budgetTake([sends, paused], [limit, windowMs, member]) {
      const until = Number(get(paused!) ?? 0);
      if (until > now) return until - now;
      drop(sends!, Number(windowMs));
      const inWindow = zrange(sends!);
      const n = inWindow.length;
      if (n >= Number(limit)) return inWindow[n - Number(limit)]!.score + Number(windowMs) - now;
      zadd(sends!, now, member!);
      return 0;
    },
    budgetRecord([sends], [, windowMs, member]) {
      drop(sends!, Number(windowMs));
      zadd(sends!, now, member!);
      return 1;
    },
    budgetCount([sends], [, windowMs]) {
      return zrange(sends!).filter(({ score }) => score > now - Number(windowMs)).length;
    },
    budgetPause([paused], [ms]) {
      const until = now + Number(ms);
      if (until > Number(get(paused!) ?? 0)) data.set(paused!, { value: String(until), until });
      return 1;
    },
    // LIST: ZRANGE 0..last, flat: id and the fields of each.
    list([list, records], [last]) {
      return zrange(list!)
        .slice(0, Number(last) + 1)
        .flatMap(({ member }) => [member, ...hmget(records + member, FIELDS)]);
    },
  };
  // Which script is which, by a piece of its text.
  const signs: Record<string, string> = {
    claim: "'SET',KEYS[1],ARGV[1],'NX'",
    end: "if ARGV[2]=='' then redis.call('DEL'",
    attempt: "'^done:(%d+)$'",
    add: "'EXISTS'",
    take: "'ZRANGEBYSCORE'",
    move: "'HMGET',KEYS[1],'state','token'",
    list: 'ipairs',
    budgetTake: "'ZCARD'",
    budgetRecord: 'ARGV[2]) return 1',
    budgetCount: "'ZCOUNT'",
    budgetPause: "'SET',KEYS[1],u,'PX'",
  };
  const which = (script: string) => Object.entries(signs).find(([, sign]) => script.includes(sign))?.[0];

  function evalScript(script: string, keys: string[], args: string[]): unknown {
    scripts.push(script);
    calls.push({ script, keys, args });
    const name = which(script) ?? expect.fail(`the fake does not know this script: ${script}`);
    if (new Set(keys.map(slotOf)).size > 1) throw new Error(`CROSSSLOT Keys in request don't hash to the same slot: ${keys.join(' ')}`);
    // Every argument reaches Redis as text.
    for (const arg of [...keys, ...args]) expect(typeof arg).toBe('string');
    return run[name]!(keys, args);
  }
  return {
    data,
    zsets,
    hashes,
    scripts,
    calls,
    get,
    /** The ids of a sorted set, lowest score first, with their scores. */
    zrange,
    advance: (ms: number) => void (now += ms),
    evalScript,
  };
}

function nodeRedis(redis = fakeRedis()) {
  const client = {
    sendCommand: vi.fn(() => Promise.reject(new Error('the store uses eval, not sendCommand'))),
    eval: vi.fn(async (script: string, options: { keys: string[]; arguments: string[] }) =>
      redis.evalScript(script, options.keys, options.arguments),
    ),
    get: vi.fn(async (key: string) => redis.get(key)),
  };
  return { redis, client: client satisfies NodeRedisClientLike };
}

function ioredis(redis = fakeRedis()) {
  const client = {
    // ioredis has sendCommand(Command) too: `call` is what tells it apart.
    sendCommand: vi.fn(),
    call: vi.fn(),
    eval: vi.fn(async (script: string, numKeys: number, ...rest: string[]) =>
      redis.evalScript(script, rest.slice(0, numKeys), rest.slice(numKeys)),
    ),
    get: vi.fn(async (key: string) => redis.get(key)),
  };
  return { redis, client: client satisfies IORedisClientLike };
}

const claimed = async (store: FulfillmentStore, key: string, leaseMs = 1000) => {
  const result = await store.claim(key, leaseMs);
  if (!('claimed' in result)) throw new Error(`expected a claim, got ${JSON.stringify(result)}`);
  return result.claimed;
};

describe.each([
  ['node-redis', nodeRedis],
  ['ioredis', ioredis],
] as const)('redisStore on %s', (_name, make) => {
  test('claim, busy, complete, done; the outcome persists for a new store on the same Redis', async () => {
    const { redis, client } = make();
    const store = redisStore(client);
    const claim = await claimed(store, 'trx:T1');
    expect(claim.db).toBeUndefined();
    expect(await store.claim('trx:T1', 1000)).toEqual({ busy: true });
    expect(await store.outcome('trx:T1')).toBeUndefined();
    await claim.complete('paid');
    expect(await store.claim('trx:T1', 1000)).toEqual({ done: 'paid' });
    expect(await store.outcome('trx:T1')).toBe('paid');
    expect(redis.data.get('business-payments:fulfillment:trx:T1')).toEqual({ value: 'done:paid' });
    const again = redisStore(make(redis).client);
    expect(await again.claim('trx:T1', 1000)).toEqual({ done: 'paid' });
    expect(await again.outcome('trx:T1')).toBe('paid');
  });

  test('release frees the key at once; only the holder can release or complete', async () => {
    const { redis, client } = make();
    const store = redisStore(client);
    const first = await claimed(store, 'k', 1000);
    await first.release();
    expect(redis.data.size).toBe(0);
    const second = await claimed(store, 'k', 1000);
    await first.release(); // stale: a no-op
    await first.complete('failed'); // stale: a no-op
    expect(await store.claim('k', 1000)).toEqual({ busy: true });
    await second.complete('paid');
    expect(await store.outcome('k')).toBe('paid');
  });

  test('a lease runs out; a stale holder cannot overwrite the new holder, and the new one completes', async () => {
    const { redis, client } = make();
    const store = redisStore(client);
    const stale = await claimed(store, 'k', 500);
    redis.advance(499);
    expect(await store.claim('k', 500)).toEqual({ busy: true });
    redis.advance(1);
    const fresh = await claimed(store, 'k', 500);
    await stale.complete('paid');
    expect(await store.outcome('k')).toBeUndefined();
    await fresh.complete('failed');
    expect(await store.outcome('k')).toBe('failed');
  });

  test('a holder whose lease ran out with no one taking over still records its outcome', async () => {
    const { redis, client } = make();
    const store = redisStore(client);
    const slow = await claimed(store, 'k', 100);
    redis.advance(1000);
    await slow.complete('paid');
    expect(await store.claim('k', 100)).toEqual({ done: 'paid' });
  });

  test('prefix, lease rounding, keepDoneMs and tokens on the wire', async () => {
    const { redis, client } = make();
    const store = redisStore(client, { prefix: 'shop:', keepDoneMs: 86_400_000 });
    const a = await claimed(store, 'x', 0.4);
    const b = await claimed(redisStore(client, { prefix: 'other:' }), 'x', 1);
    expect([...redis.data.keys()]).toEqual(['shop:x', 'other:x']);
    const tokens = [...redis.data.values()].map((entry) => entry.value);
    expect(tokens[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(tokens[0]).not.toBe(tokens[1]);
    expect(redis.data.get('shop:x')?.until).toBe(1); // PX is at least 1 ms, a whole number
    await a.complete('paid');
    expect(redis.data.get('shop:x')).toEqual({ value: 'done:paid', until: 86_400_000 });
    redis.advance(86_400_000);
    expect(await store.outcome('x')).toBeUndefined();
    await b.release();
  });

  test('outcomes may contain anything, the marker prefix included; unrelated values are busy, not done', async () => {
    const { redis, client } = make();
    const store = redisStore(client);
    await (await claimed(store, 'k')).complete('done:paid:with:colons');
    expect(await store.claim('k', 10)).toEqual({ done: 'done:paid:with:colons' });
    redis.data.set('business-payments:fulfillment:foreign', { value: 'something else' });
    expect(await store.claim('foreign', 10)).toEqual({ busy: true });
    expect(await store.outcome('foreign')).toBeUndefined();
  });

  test('Buffer replies (a node-redis type mapping) read as text', async () => {
    const { client } = make();
    const asBuffer = (reply: unknown) => (typeof reply === 'string' ? Buffer.from(reply) : reply);
    const wrapped = {
      ...client,
      eval: async (...args: Parameters<typeof client.eval>) =>
        asBuffer(await (client.eval as (...a: unknown[]) => Promise<unknown>)(...args)),
      get: async (key: string) => asBuffer(await client.get(key)),
    } as typeof client;
    const store = redisStore(wrapped);
    await (await claimed(store, 'k')).complete('paid');
    expect(await store.claim('k', 10)).toEqual({ done: 'paid' });
    expect(await store.outcome('k')).toBe('paid');
  });

  test('a Redis error rejects the claim (the delivery gets a 5xx and is retried)', async () => {
    const { client } = make();
    client.eval.mockRejectedValueOnce(new Error('READONLY You cannot write against a read only replica.'));
    await expect(redisStore(client).claim('k', 10)).rejects.toThrow(/READONLY/);
  });

  test('renew sets our token for another lease, also once it ran out with no one taking over; false when taken over or ended', async () => {
    const { redis, client } = make();
    const store = redisStore(client);
    const key = 'business-payments:fulfillment:k';
    const claim = await claimed(store, 'k', 500);
    const token = redis.get(key);
    redis.advance(400);
    expect(await claim.renew!()).toBe(true);
    expect(redis.calls.at(-1)).toMatchObject({ keys: [key], args: [token, token, '500'] });
    expect(redis.data.get(key)).toEqual({ value: token, until: 900 });
    redis.advance(499);
    expect(await store.claim('k', 500)).toEqual({ busy: true });
    // Late (the process was busy): the lease ran out, no one took over, so it is taken back.
    redis.advance(600);
    expect(await claim.renew!()).toBe(true);
    expect(await store.claim('k', 500)).toEqual({ busy: true });
    await claim.complete('paid');
    // Ended: nothing is sent, a released or completed key is never taken back.
    const sent = client.eval.mock.calls.length;
    expect(await claim.renew!()).toBe(false);
    const released = await claimed(store, 'r', 500);
    await released.release();
    expect(await released.renew!()).toBe(false);
    expect(client.eval.mock.calls.length).toBe(sent + 2); // the claim of 'r' and its release
    expect(redis.get('business-payments:fulfillment:r')).toBeNull();
    expect(await store.outcome('k')).toBe('paid');

    const stale = await claimed(store, 's', 100);
    redis.advance(100);
    const fresh = await claimed(store, 's', 100);
    expect(await stale.renew!()).toBe(false);
    await fresh.complete('fresh');
    expect(await store.outcome('s')).toBe('fresh');
  });

  test('attempt counts 1, 2, 3 in `attempts:<order>` as an outcome, kept with no expiry (keepDoneMs is for outcomes)', async () => {
    const { redis, client } = make();
    const store = redisStore(client, { prefix: 'shop:', keepDoneMs: 1000 });
    expect([await store.attempt!('o-1'), await store.attempt!('o-1'), await store.attempt!('o-1')]).toEqual([1, 2, 3]);
    expect(redis.calls.at(-1)).toMatchObject({ keys: ['shop:attempts:o-1'], args: [] });
    expect(redis.data.get('shop:attempts:o-1')).toEqual({ value: 'done:3' });
    expect(await store.outcome('attempts:o-1')).toBe('3');
    expect(await store.attempt!('o-2')).toBe(1);
  });

  test('inbox: add, take, finish, list and replay: their keys (one slot), arguments and replies', async () => {
    const { redis, client } = make();
    const inbox = redisStore(client, { prefix: 'shop:' }).inbox ?? expect.fail('no inbox');
    const k = (name: string) => `shop:{inbox}:${name}`;
    const T0 = 1_700_000_000_000;
    redis.advance(T0);
    expect(await inbox.add('evt_1', '{"id":"evt_1"}')).toBe(true);
    expect(redis.calls.at(-1)).toMatchObject({
      keys: [k('r:evt_1'), k('due'), k('seq'), k('s:pending')],
      args: ['evt_1', '{"id":"evt_1"}', 'pending'],
    });
    expect(await inbox.add('evt_1', 'another body', 'review')).toBe(false);
    expect(Object.fromEntries(redis.hashes.get(k('r:evt_1'))!)).toEqual({
      state: 'pending',
      event: '{"id":"evt_1"}',
      attempts: '0',
      error: '',
      at: String(T0),
    });
    redis.advance(1);
    expect(await inbox.add('evt_2', '{"id":"evt_2"}')).toBe(true);
    expect(await inbox.add('review:T1', '{"reason":"duplicate"}', 'review')).toBe(true);
    expect(redis.calls.at(-1)).toMatchObject({ keys: [k('r:review:T1'), k('due'), k('seq'), k('s:review')] });
    expect(redis.zrange(k('due'))).toEqual([
      { member: 'evt_1', score: T0 },
      { member: 'evt_2', score: T0 + 1 },
    ]);

    // Without an id: the earliest due one, leased on the server's clock (whole ms, at least 1).
    const lease = (await inbox.take(30_000.5)) ?? expect.fail('nothing taken');
    expect(redis.calls.at(-1)).toMatchObject({ keys: [k('due'), k('r:')], args: ['30001', lease.token, ''] });
    expect(lease).toEqual({
      id: 'evt_1',
      state: 'pending',
      event: '{"id":"evt_1"}',
      attempts: 0,
      error: undefined,
      at: T0,
      token: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(redis.zsets.get(k('due'))!.get('evt_1')).toBe(T0 + 1 + 30_001);
    // With an id: its record's key too; only while due.
    expect(await inbox.take(0, 'evt_1')).toBeUndefined();
    expect(redis.calls.at(-1)).toMatchObject({ keys: [k('due'), k('r:'), k('r:evt_1')], args: ['1', expect.any(String), 'evt_1'] });
    expect(await inbox.take(1000, 'review:T1')).toBeUndefined();
    expect(await inbox.take(1000, 'never')).toBeUndefined();

    // Finish: fenced by the token; delays in whole ms; the lease's token is spent.
    expect(await inbox.finish({ ...lease, token: 'not-yours' }, { state: 'done', attempts: 0 })).toBe(false);
    expect(await inbox.finish(lease, { state: 'pending', attempts: 1, delayMs: 9_999.2, error: 'ERP down' })).toBe(true);
    expect(redis.calls.at(-1)).toMatchObject({
      keys: [k('r:evt_1'), k('due'), k('seq'), k('s:'), k('s:pending')],
      args: ['evt_1', 'pending', '1', '10000', 'ERP down', lease.token],
    });
    expect(await inbox.finish(lease, { state: 'done', attempts: 1 })).toBe(false);
    expect((await inbox.take(1000))?.id).toBe('evt_2');
    expect(await inbox.take(1000)).toBeUndefined();
    redis.advance(10_000);
    const again = (await inbox.take(1000, 'evt_1')) ?? expect.fail('not due again');
    expect(again).toMatchObject({ attempts: 1, error: 'ERP down' });
    expect(await inbox.finish(again, { state: 'dead', attempts: 2, error: 'gave up' })).toBe(true);
    expect(redis.calls.at(-1)).toMatchObject({ keys: [k('r:evt_1'), k('due'), k('seq'), k('s:'), k('s:dead')] });
    expect(redis.zsets.get(k('due'))!.has('evt_1')).toBe(false);

    // List: the state's set up to the last index, then the records.
    expect(await inbox.list('dead', 10)).toEqual([
      { id: 'evt_1', state: 'dead', event: '{"id":"evt_1"}', attempts: 2, error: 'gave up', at: T0 },
    ]);
    expect(redis.calls.at(-1)).toMatchObject({ keys: [k('s:dead'), k('r:')], args: ['9'] });
    expect((await inbox.list('pending', 10)).map((record) => record.id)).toEqual(['evt_2']);
    expect(await inbox.list('review', 1.5)).toEqual([
      { id: 'review:T1', state: 'review', event: '{"reason":"duplicate"}', attempts: 0, error: undefined, at: T0 + 1 },
    ]);
    expect(redis.calls.at(-1)).toMatchObject({ args: ['0'] });
    const sent = redis.calls.length;
    expect(await inbox.list('review', 0)).toEqual([]);
    expect(redis.calls).toHaveLength(sent);

    // Replay: pending, due now, attempts 0, no error; out of its old state's set.
    expect(await inbox.replay('evt_1')).toBe(true);
    expect(redis.calls.at(-1)).toMatchObject({
      keys: [k('r:evt_1'), k('due'), k('seq'), k('s:'), k('s:pending')],
      args: ['evt_1', 'pending', '0', '0', ''],
    });
    expect(await inbox.replay('never')).toBe(false);
    expect(await inbox.list('dead', 10)).toEqual([]);
    // Oldest first by last change: evt_2 (added) before evt_1 (replayed).
    expect((await inbox.list('pending', 10)).map((record) => record.id)).toEqual(['evt_2', 'evt_1']);
    expect(await inbox.take(1000, 'evt_1')).toMatchObject({ id: 'evt_1', state: 'pending', attempts: 0, error: undefined });
  });

  test('replies mapped by the client (Buffers for strings, strings for numbers, in arrays too) read the same', async () => {
    const { redis, client } = make();
    const mapped = (reply: unknown): unknown =>
      typeof reply === 'string'
        ? Buffer.from(reply)
        : typeof reply === 'number'
          ? String(reply)
          : Array.isArray(reply)
            ? reply.map(mapped)
            : reply;
    const wrapped = {
      ...client,
      eval: async (...args: Parameters<typeof client.eval>) =>
        mapped(await (client.eval as (...a: unknown[]) => Promise<unknown>)(...args)),
      get: async (key: string) => mapped(await client.get(key)),
    } as typeof client;
    const store = redisStore(wrapped);
    const claim = await claimed(store, 'k');
    expect(await claim.renew!()).toBe(true);
    redis.advance(1000);
    await claimed(store, 'k');
    expect(await claim.renew!()).toBe(false);
    expect([await store.attempt!('o'), await store.attempt!('o')]).toEqual([1, 2]);
    const inbox: InboxStore = store.inbox!;
    redis.advance(5);
    expect(await inbox.add('e', '{}')).toBe(true);
    expect(await inbox.add('e', '{}')).toBe(false);
    const lease = (await inbox.take(100)) ?? expect.fail('nothing taken');
    expect(lease).toEqual({ id: 'e', state: 'pending', event: '{}', attempts: 0, error: undefined, at: 1005, token: expect.any(String) });
    expect(await inbox.finish(lease, { state: 'dead', attempts: 3, error: 'no' })).toBe(true);
    expect(await inbox.list('dead', 5)).toEqual([{ id: 'e', state: 'dead', event: '{}', attempts: 3, error: 'no', at: 1005 }]);
    expect(await inbox.replay('e')).toBe(true);
    expect(await inbox.replay('x')).toBe(false);
    expect(await inbox.take(100)).toMatchObject({ id: 'e', attempts: 0 });
  });
});

test('each client is called through its own eval signature', async () => {
  const node = nodeRedis();
  await redisStore(node.client).claim('k', 250);
  expect(node.client.eval).toHaveBeenCalledWith(expect.stringContaining("'NX'"), {
    keys: ['business-payments:fulfillment:k'],
    arguments: [expect.any(String), '250'],
  });
  expect(node.client.sendCommand).not.toHaveBeenCalled();
  const io = ioredis();
  await redisStore(io.client).claim('k', 250);
  expect(io.client.eval).toHaveBeenCalledWith(
    expect.stringContaining("'NX'"),
    1,
    'business-payments:fulfillment:k',
    expect.any(String),
    '250',
  );
  expect(io.client.sendCommand).not.toHaveBeenCalled();
  expect(io.client.call).not.toHaveBeenCalled();
  // The inbox's scripts take several keys: node-redis's keys array, ioredis's numKeys.
  await redisStore(node.client).inbox!.take(250, 'e');
  expect(node.client.eval).toHaveBeenLastCalledWith(expect.stringContaining("'ZRANGEBYSCORE'"), {
    keys: [
      'business-payments:fulfillment:{inbox}:due',
      'business-payments:fulfillment:{inbox}:r:',
      'business-payments:fulfillment:{inbox}:r:e',
    ],
    arguments: ['250', expect.any(String), 'e'],
  });
  await redisStore(io.client).inbox!.take(250);
  expect(io.client.eval).toHaveBeenLastCalledWith(
    expect.stringContaining("'ZRANGEBYSCORE'"),
    2,
    'business-payments:fulfillment:{inbox}:due',
    'business-payments:fulfillment:{inbox}:r:',
    '250',
    expect.any(String),
    '',
  );
});

test('refuses what is not a node-redis or ioredis client, and a keepDoneMs below 1 ms', () => {
  expect(() => redisStore({ get: async () => null } as never)).toThrow(/node-redis \(4\+\) or an ioredis client/);
  expect(() => redisStore(nodeRedis().client, { keepDoneMs: 0 })).toThrow(RangeError);
  expect(() => redisStore(nodeRedis().client, { keepDoneMs: Number.NaN })).toThrow(RangeError);
});

test('the real clients type-check against the parameter', async () => {
  // Type-level only: both libraries' client classes are accepted as they come.
  const typed = async () => {
    const { createClient, createCluster } = await import('redis');
    const { Redis, Cluster } = await import('ioredis');
    redisStore(createClient());
    redisStore(createCluster({ rootNodes: [] }));
    redisStore(new Redis({ lazyConnect: true }));
    redisStore(new Cluster([], { lazyConnect: true }));
  };
  expect(typeof typed).toBe('function');
});

describe.each([
  ['node-redis', nodeRedis],
  ['ioredis', ioredis],
] as const)('redisStore.budget on %s', (_name, make) => {
  test("passes testStore (the fake's clock moved on), its keys in the {budget} slot under the prefix", async () => {
    const { redis } = make();
    redis.advance(1_700_000_000_000);
    const another = () => redisStore(make(redis).client, { prefix: 'p:' }).budget!;
    const report = await testStore(another(), { kit: 'budget', another, elapse: redis.advance });
    expect(report.failed).toEqual([]);
    expect(report.passed).toHaveLength(5);
    const keys = redis.calls.flatMap((call) => call.keys);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(key).toMatch(/^p:\{budget\}:[sp]:store-check:budget/);
  });

  test('take answers a number read from the reply (a string or a Buffer under a type mapping)', async () => {
    const { client } = make();
    const store = redisStore(client).budget!;
    client.eval.mockResolvedValueOnce(Buffer.from('1234') as never);
    expect(await store.take('k', 1, 60_000)).toBe(1234);
    client.eval.mockResolvedValueOnce('0' as never);
    expect(await store.take('k', 1, 60_000)).toBe(0);
  });
});

test('the entry is small and standalone: no client library, no node built-in, no ky', async () => {
  const { inputs, gzipBytes } = await bundleEntry('src/fulfillment-redis.ts');
  expect(inputs).toEqual([
    'src/billing/redis.ts',
    'src/core/base-error.ts',
    'src/fulfillment-redis.ts',
    'src/fulfillment/redis-budget.ts',
    'src/fulfillment/redis.ts',
    'src/fulfillment/shared-budget.ts',
    'src/internal/pace.ts',
    'src/payouts/redis.ts',
  ]);
  // About 1.85 kB with the inbox's, renewal's and attempt's scripts (0.87 kB before them);
  // 2.33 kB with the payout intents' scripts; 2.6 kB with the subscription records' (2,605 B);
  // 2,816 until the request budget (its scripts and the shared pacer: 3,661 B measured, +10 %).
  expect(gzipBytes).toBeLessThan(4028);
});
