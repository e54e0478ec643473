// The Redis store's request budget (`store.budget`): per key, a sorted set of its sends (scored
// by ms on the Redis server's clock, TIME) and a pause's end (a string that expires with it),
// under `<prefix>{budget}:` so that a Redis Cluster keeps them in one slot. Each step is one
// script: atomic across every process and client.
import { sharedBudget, type RequestBudget } from './shared-budget.js';

// Now on the server's clock, in ms (Redis 5+ replicates a script's effects: it may write after TIME).
const NOW = `local t=redis.call('TIME') local now=t[1]*1000+math.floor(t[2]/1000)
`;
// The sends that left the window of ARGV[2] ms are dropped first (KEYS[1]: the sends).
const DROP = `redis.call('ZREMRANGEBYSCORE',KEYS[1],'-inf',now-ARGV[2])
`;
// KEYS: sends, pause. ARGV: limit, window, a member of our own. 0 taken, else the ms until room may come.
const TAKE = `${NOW}local p=tonumber(redis.call('GET',KEYS[2]) or 0)
if p>now then return p-now end
${DROP}local n,l=redis.call('ZCARD',KEYS[1]),tonumber(ARGV[1])
if n>=l then return redis.call('ZRANGE',KEYS[1],n-l,n-l,'WITHSCORES')[2]+ARGV[2]-now end
redis.call('ZADD',KEYS[1],now,ARGV[3]) redis.call('PEXPIRE',KEYS[1],ARGV[2]) return 0`;
// KEYS: sends. ARGV: (unused), window, a member of our own.
const RECORD = `${NOW}${DROP}redis.call('ZADD',KEYS[1],now,ARGV[3]) redis.call('PEXPIRE',KEYS[1],ARGV[2]) return 1`;
// KEYS: sends. ARGV: (unused), window.
const COUNT = `${NOW}return redis.call('ZCOUNT',KEYS[1],'('..(now-ARGV[2]),'+inf')`;
// KEYS: pause. ARGV: ms. A longer pause already set is kept.
const PAUSE = `${NOW}local u=now+ARGV[1]
if u>tonumber(redis.call('GET',KEYS[1]) or 0) then redis.call('SET',KEYS[1],u,'PX',ARGV[1]) end return 1`;

const SENDS = '{budget}:s:';
const PAUSED = '{budget}:p:';

/** Runs a script with its keys (under the prefix) and arguments (the store's `run`). */
type Run = (script: string, keys: string[], args: string[]) => Promise<unknown>;

const whole = (ms: number) => String(Math.max(1, Math.ceil(ms)));
const number = (reply: unknown) => Number(reply == null ? 0 : (reply as { toString(): string }).toString());

/** The budget's steps, each one script (see above). */
export function redisBudget(run: Run): RequestBudget {
  return sharedBudget({
    count: async (key, windowMs) => number(await run(COUNT, [SENDS + key], ['', whole(windowMs)])),
    take: async (key, limit, windowMs) =>
      number(await run(TAKE, [SENDS + key, PAUSED + key], [String(limit), whole(windowMs), crypto.randomUUID()])),
    record: async (key, windowMs) => void (await run(RECORD, [SENDS + key], ['', whole(windowMs), crypto.randomUUID()])),
    pause: async (key, ms) => void (await run(PAUSE, [PAUSED + key], [whole(ms)])),
  });
}
