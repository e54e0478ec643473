// redisStore without a server: the client glue (which API it calls on node-redis and on
// ioredis, the key prefix, the lease and keepDoneMs arguments, how replies are read) against
// a fake Redis that runs the store's two Lua scripts' semantics on a Map. The scripts
// themselves, atomicity and expiry run on a real Redis 7 in `npm run test:stores`
// (test/fulfillment/stores-real.check.ts), with both clients.
import { bundleEntry } from '../support/bundle.js';
import { describe, expect, test, vi } from 'vitest';
import { redisStore, type IORedisClientLike, type NodeRedisClientLike } from '../../src/fulfillment-redis.js';
import type { FulfillmentStore } from '../../src/fulfillment/store.js';

/** A Redis of strings with PX expiry on a clock we move by hand; `eval` understands the store's scripts. */
function fakeRedis() {
  let now = 0;
  const data = new Map<string, { value: string; until?: number }>();
  const get = (key: string) => {
    const entry = data.get(key);
    if (entry?.until !== undefined && entry.until <= now) data.delete(key);
    return data.get(key)?.value ?? null;
  };
  const scripts: string[] = [];
  function evalScript(script: string, keys: string[], args: string[]): unknown {
    scripts.push(script);
    const [key] = keys as [string];
    if (script.includes("'NX'")) {
      // CLAIM: SET NX PX, else the value that holds the key.
      if (get(key) === null) {
        data.set(key, { value: args[0]!, until: now + Number(args[1]) });
        return args[0];
      }
      return get(key);
    }
    // END: only while ours or free; '' releases, else the marker with an optional PX.
    const held = get(key);
    if (held !== null && held !== args[0]) return 0;
    if (args[1] === '') data.delete(key);
    else data.set(key, args[2] === '' ? { value: args[1]! } : { value: args[1]!, until: now + Number(args[2]) });
    return 1;
  }
  return {
    data,
    scripts,
    get,
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

test('the entry is small and standalone: no client library, no node built-in, no ky', async () => {
  const { inputs, gzipBytes } = await bundleEntry('src/fulfillment-redis.ts');
  expect(inputs).toEqual(['src/fulfillment-redis.ts', 'src/fulfillment/redis.ts']);
  expect(gzipBytes).toBeLessThan(1100);
});
