// redisStore: the fulfillment store on the merchant's own Redis, through the client they
// already have (node-redis 4+ or ioredis; no dependency of ours). One key per payment or
// event: `<prefix><key>` holds a claim's random token while a handler runs (with the lease
// as its expiry, so a crashed holder's claim runs out by itself), then `done:<outcome>` for
// good. Every decision is one Lua script, so it is atomic across every process and client.
import type { ClaimResult, FulfillmentStore } from './store.js';

/** A node-redis (4+) client or cluster: `createClient()`, `createCluster()`. */
export interface NodeRedisClientLike {
  /** Sends a raw command (`SET … NX PX`). */
  sendCommand(...args: never[]): unknown;
  /** Runs a Lua script (compare-and-set on complete and release). */
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  /** Reads a key. */
  get(key: string): Promise<unknown>;
}

/** An ioredis client or cluster: `new Redis()`, `new Cluster()`. */
export interface IORedisClientLike {
  /** Sends a raw command (`SET … NX PX`). */
  call(...args: never[]): unknown;
  /** Runs a Lua script (compare-and-set on complete and release). */
  eval(script: string, numKeys: number, ...args: string[]): Promise<unknown>;
  /** Reads a key. */
  get(key: string): Promise<unknown>;
}

/** Options of {@link redisStore}. */
export interface RedisStoreOptions {
  /** Prepended to every key the store writes. Default `business-payments:fulfillment:`. */
  prefix?: string;
  /**
   * How long (ms) a recorded outcome is kept. Default: for ever (no expiry). When it runs
   * out, the key is forgotten: a late duplicate delivery or a `reconcile` after that would
   * run its handler again, so keep it well beyond the webhook retry window (about 45
   * minutes) and the `since` of your reconcile job.
   */
  keepDoneMs?: number;
}

const DONE = 'done:';
// The sorted set of keys reported but not settled yet (score: when), under the prefix. `#`
// keeps it apart from every claim key (`payment:…`, `event:…`).
const OPEN = '#open';
const REMEMBER = `redis.call('ZADD',KEYS[1],'NX',ARGV[1],ARGV[2]) return 1`;
const OLDEST = `return redis.call('ZRANGE',KEYS[1],ARGV[1],ARGV[2])`;
const FORGET = `return redis.call('ZREM',KEYS[1],ARGV[1])`;

// Claim: take the free key for the lease (SET NX PX) and answer with our token, or answer
// with what holds it (another claim's token, or the recorded outcome).
const CLAIM = `if redis.call('SET',KEYS[1],ARGV[1],'NX','PX',ARGV[2]) then return ARGV[1] end
return redis.call('GET',KEYS[1])`;

// End a claim: only while the key is still ours, or free again (our lease ran out and no one
// took over: the handler did finish). ARGV[2] '' releases, else it is the outcome marker,
// kept for ARGV[3] ms ('' = no expiry).
const END = `local v=redis.call('GET',KEYS[1])
if v and v~=ARGV[1] then return 0 end
if ARGV[2]=='' then redis.call('DEL',KEYS[1])
elseif ARGV[3]=='' then redis.call('SET',KEYS[1],ARGV[2])
else redis.call('SET',KEYS[1],ARGV[2],'PX',ARGV[3]) end
return 1`;

/**
 * The fulfillment store on Redis, for a node-redis (4+) or an ioredis client (connected,
 * yours: the store never connects or quits it), on Redis 2.6.12 or later (EVAL, SET NX PX).
 *
 * What it promises: a handler never runs concurrently for one key (across every process
 * sharing the Redis) while it finishes within its lease, and never again once its outcome is
 * recorded. What it cannot: Redis is not in a transaction with your database, so a process
 * that crashes inside `onPaid` (after shipping, before the outcome is recorded) leaves its
 * claim to run out after the lease, and the next delivery runs `onPaid` again; and a handler
 * still running when its lease runs out no longer keeps others out (choose a lease well above
 * your slowest handler). Make `onPaid` idempotent on `trx_id`, or use `postgresStore` and
 * write through `ctx.db` for exactly once across crashes.
 *
 * Durability is your Redis's: with persistence off (or a failover that loses recent writes),
 * a recorded outcome can be lost and its handler run again.
 *
 * @example
 * ```ts
 * import { createClient } from 'redis'; // or: import Redis from 'ioredis'; new Redis(url)
 * const redis = await createClient({ url: process.env.REDIS_URL }).connect();
 * const store = redisStore(redis);
 * ```
 */
export function redisStore(client: NodeRedisClientLike | IORedisClientLike, options: RedisStoreOptions = {}): FulfillmentStore<undefined> {
  const { prefix = 'business-payments:fulfillment:', keepDoneMs } = options;
  if (keepDoneMs !== undefined && !(keepDoneMs >= 1)) throw new RangeError('redisStore: keepDoneMs must be at least 1 (ms)');
  const ioredis = typeof (client as Partial<IORedisClientLike>).call === 'function';
  if (!ioredis && typeof (client as Partial<NodeRedisClientLike>).sendCommand !== 'function') {
    throw new TypeError('redisStore: expected a node-redis (4+) or an ioredis client');
  }
  // ioredis: eval(script, numKeys, ...keys, ...args); node-redis: eval(script, { keys, arguments }).
  const run = (script: string, key: string, args: string[]) =>
    ioredis
      ? (client as IORedisClientLike).eval(script, 1, prefix + key, ...args)
      : (client as NodeRedisClientLike).eval(script, { keys: [prefix + key], arguments: args });
  // Replies arrive as strings, or Buffers under a node-redis type mapping: toString() reads both.
  const text = (reply: unknown) => (reply == null ? '' : (reply as { toString(): string }).toString());
  let tick = 0;
  const outcome = async (key: string) => {
    const value = text(await client.get(prefix + key));
    return value.startsWith(DONE) ? value.slice(DONE.length) : undefined;
  };
  return {
    async claim(key, leaseMs): Promise<ClaimResult<undefined>> {
      const token = crypto.randomUUID();
      const held = text(await run(CLAIM, key, [token, String(Math.max(1, Math.ceil(leaseMs)))]));
      if (held === token) {
        const end = async (marker: string) => void (await run(END, key, [token, marker, keepDoneMs ? String(Math.ceil(keepDoneMs)) : '']));
        return { claimed: { complete: (outcome) => end(DONE + outcome), release: () => end('') } };
      }
      return held.startsWith(DONE) ? { done: held.slice(DONE.length) } : { busy: true };
    },
    outcome,
    async remember(key) {
      // Scored by the time in µs-like steps: ties within a millisecond keep this process's order.
      await run(REMEMBER, OPEN, [String(Date.now() * 1000 + (tick = (tick + 1) % 1000)), key]);
    },
    // Settled keys are dropped as they are met; a page at a time, so the set is never read whole.
    async unsettled(limit) {
      const out: string[] = [];
      for (let from = 0; out.length < limit;) {
        const page = ((await run(OLDEST, OPEN, [String(from), String(from + limit - 1)])) as unknown[]).map(text);
        for (const key of page) {
          if ((await outcome(key)) === undefined) {
            from++;
            if (out.push(key) >= limit) break;
          } else await run(FORGET, OPEN, [key]);
        }
        if (page.length < limit) break;
      }
      return out;
    },
  };
}
