// The payout intents of redisStore (`store.payouts`), under its prefix and the `{payouts}`
// hash tag: every key in one Cluster slot, so each step is one script over them. An intent is
// a hash (`i:<key>`: its state, its version, its JSON), listed in a sorted set per state
// (`s:<state>`, score 0: in key order, byte-wise); `ids` maps payout ids to keys. Nothing
// expires (keepDoneMs is for outcomes).
import type { PayoutIntent, PayoutIntentStore } from './store.js';

/** @internal Runs a script with its keys (under the store's prefix) and arguments. */
export type RedisRun = (script: string, keys: string[], args: string[]) => Promise<unknown>;

const INTENT = '{payouts}:i:';
const STATE = '{payouts}:s:';
const IDS = '{payouts}:ids';

// KEYS: i:<key>, s:<state>. ARGV: key, state, version, JSON. The stored JSON when the key is
// taken, else nil (recorded now).
const ADD = `local v=redis.call('HGET',KEYS[1],'intent') if v then return v end
redis.call('HSET',KEYS[1],'state',ARGV[2],'version',ARGV[3],'intent',ARGV[4])
redis.call('ZADD',KEYS[2],0,ARGV[1]) return false`;
// KEYS: i:<key>, the state sets' prefix (the old state's set is derived here: same slot),
// s:<new state>. ARGV: key, state, version, JSON, the version it replaces. The version is
// compared as the text written, and the JSON stored as given: no cjson (it re-encodes numbers
// lossily, and refuses a lone surrogate's escape).
const SWAP = `local h=redis.call('HMGET',KEYS[1],'state','version')
if h[2]~=ARGV[5] then return 0 end
redis.call('HSET',KEYS[1],'state',ARGV[2],'version',ARGV[3],'intent',ARGV[4])
redis.call('ZREM',KEYS[2]..h[1],ARGV[1]) redis.call('ZADD',KEYS[3],0,ARGV[1]) return 1`;
// KEYS: s:<state>, the intents' prefix. ARGV: the lex range's start (`-`, or `(<after>`), count.
const LIST = `local out={}
for _,k in ipairs(redis.call('ZRANGEBYLEX',KEYS[1],ARGV[1],'+','LIMIT',0,ARGV[2])) do out[#out+1]=redis.call('HGET',KEYS[2]..k,'intent') end
return out`;
// KEYS: ids. ARGV: payout id, key. The key that holds the id now.
const BIND = `redis.call('HSETNX',KEYS[1],ARGV[1],ARGV[2]) return redis.call('HGET',KEYS[1],ARGV[1])`;
// One field of a hash: an intent's JSON, a payout id's key.
const FIELD = `return redis.call('HGET',KEYS[1],ARGV[1])`;

// Replies arrive as strings, or Buffers under a node-redis type mapping: toString() reads both.
const text = (reply: unknown) => (reply == null ? undefined : (reply as { toString(): string }).toString());
const parse = (reply: unknown) => {
  const json = text(reply);
  return json === undefined ? undefined : (JSON.parse(json) as PayoutIntent);
};

/**
 * @internal The payout intents of `redisStore` on `run` (its eval, keys under its prefix):
 * `{payouts}:i:<key>`, `{payouts}:s:<state>` and `{payouts}:ids`, none expiring.
 */
export function redisIntents(run: RedisRun): PayoutIntentStore {
  const write = (intent: PayoutIntent) => [intent.key, intent.state, String(intent.version), JSON.stringify(intent)];
  return {
    async add(intent) {
      const args = write(intent);
      const found = await run(ADD, [INTENT + intent.key, STATE + intent.state], args);
      return found == null ? { intent: parse(args[3])!, created: true } : { intent: parse(found)!, created: false };
    },
    get: async (key) => parse(await run(FIELD, [INTENT + key], ['intent'])),
    swap: async (next) =>
      text(await run(SWAP, [INTENT + next.key, STATE, STATE + next.state], [...write(next), String(next.version - 1)])) === '1',
    async list(state, limit, after) {
      const n = Math.min(Math.floor(limit), 2 ** 31);
      if (!(n >= 1)) return [];
      const reply = (await run(LIST, [STATE + state, INTENT], [after === undefined ? '-' : `(${after}`, String(n)])) as unknown[];
      return reply.flatMap((json) => parse(json) ?? []);
    },
    bind: async (payoutId, key) => text(await run(BIND, [IDS], [payoutId, key]))!,
    owner: async (payoutId) => text(await run(FIELD, [IDS], [payoutId])),
  };
}
