// The subscription records of redisStore (`store.subscriptions`), under its prefix and the
// `{billing}` hash tag: every key in one Cluster slot, so each step is one script over them. A
// record is a hash (`r:<key>`: its version, its JSON), listed in one sorted set (`keys`, score
// 0: in key order, byte-wise); `ids` maps service subscription ids to keys. The payout intents'
// pattern (src/payouts/redis.ts), with one list: a record's state moves with time, so the kit
// works it out on read rather than listing by it. Nothing expires (keepDoneMs is for outcomes).
import type { RedisRun } from '../payouts/redis.js';
import type { SubscriptionRecord, SubscriptionStore } from './store.js';

const RECORD = '{billing}:r:';
const ALL = '{billing}:keys';
const IDS = '{billing}:ids';

// KEYS: r:<key>, keys. ARGV: key, version, JSON. The stored JSON when the key is taken, else
// nil (recorded now).
const ADD = `local v=redis.call('HGET',KEYS[1],'record') if v then return v end
redis.call('HSET',KEYS[1],'version',ARGV[2],'record',ARGV[3])
redis.call('ZADD',KEYS[2],0,ARGV[1]) return false`;
// KEYS: r:<key>. ARGV: version, JSON, the version it replaces (a missing record has none: 0).
// The version is compared as the text written, and the JSON stored as given: no cjson (it
// re-encodes numbers lossily, and refuses a lone surrogate's escape).
const SWAP = `if redis.call('HGET',KEYS[1],'version')~=ARGV[3] then return 0 end
redis.call('HSET',KEYS[1],'version',ARGV[1],'record',ARGV[2]) return 1`;
// KEYS: keys, the records' prefix. ARGV: the lex range's start (`-`, or `(<after>`), count.
const LIST = `local out={}
for _,k in ipairs(redis.call('ZRANGEBYLEX',KEYS[1],ARGV[1],'+','LIMIT',0,ARGV[2])) do out[#out+1]=redis.call('HGET',KEYS[2]..k,'record') end
return out`;
// KEYS: ids. ARGV: subscription id, key. The key that holds the id now.
const BIND = `redis.call('HSETNX',KEYS[1],ARGV[1],ARGV[2]) return redis.call('HGET',KEYS[1],ARGV[1])`;
// One field of a hash: a record's JSON, a subscription id's key.
const FIELD = `return redis.call('HGET',KEYS[1],ARGV[1])`;

// Replies arrive as strings, or Buffers under a node-redis type mapping: toString() reads both.
const text = (reply: unknown) => (reply == null ? undefined : (reply as { toString(): string }).toString());
const parse = (reply: unknown) => {
  const json = text(reply);
  return json === undefined ? undefined : (JSON.parse(json) as SubscriptionRecord);
};

/**
 * @internal The subscription records of `redisStore` on `run` (its eval, keys under its
 * prefix): `{billing}:r:<key>`, `{billing}:keys` and `{billing}:ids`, none expiring.
 */
export function redisSubscriptions(run: RedisRun): SubscriptionStore {
  return {
    async add(record) {
      const json = JSON.stringify(record);
      const found = await run(ADD, [RECORD + record.key, ALL], [record.key, String(record.version), json]);
      return found == null ? { record: parse(json)!, created: true } : { record: parse(found)!, created: false };
    },
    get: async (key) => parse(await run(FIELD, [RECORD + key], ['record'])),
    swap: async (next) =>
      text(await run(SWAP, [RECORD + next.key], [String(next.version), JSON.stringify(next), String(next.version - 1)])) === '1',
    async list(limit, after) {
      const n = Math.min(Math.floor(limit), 2 ** 31);
      if (!(n >= 1)) return [];
      const reply = (await run(LIST, [ALL, RECORD], [after === undefined ? '-' : `(${after}`, String(n)])) as unknown[];
      return reply.flatMap((json) => parse(json) ?? []);
    },
    bind: async (subscriptionId, key) => text(await run(BIND, [IDS], [subscriptionId, key]))!,
    owner: async (subscriptionId) => text(await run(FIELD, [IDS], [subscriptionId])),
  };
}
