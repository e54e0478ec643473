// redisStore: the fulfillment store on the merchant's own Redis, through the client they
// already have (node-redis 4+ or ioredis; no dependency of ours). One key per payment or
// event: `<prefix><key>` holds a claim's random token while a handler runs (with the lease
// as its expiry, so a crashed holder's claim runs out by itself), then `done:<outcome>` for
// good. Every decision is one Lua script, so it is atomic across every process and client.
// The inbox lives under `<prefix>{inbox}:` (see redisStore), timed on the Redis server's clock;
// the payout intents under `<prefix>{payouts}:` (src/payouts/redis.ts), the subscription
// records under `<prefix>{billing}:` (src/billing/redis.ts), the request budget under
// `<prefix>{budget}:` (redis-budget.ts).
import { redisSubscriptions } from '../billing/redis.js';
import { redisIntents } from '../payouts/redis.js';
import { redisBudget } from './redis-budget.js';
import type { ClaimResult, FulfillmentStore, InboxRecord, InboxState, InboxStore, StoreClaim } from './store.js';

/** A node-redis (4+) client or cluster: `createClient()`, `createCluster()`. */
export interface NodeRedisClientLike {
  /** Sends a raw command (`SET … NX PX`). */
  sendCommand(...args: never[]): unknown;
  /** Runs a Lua script (every step of the store is one). */
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  /** Reads a key. */
  get(key: string): Promise<unknown>;
}

/** An ioredis client or cluster: `new Redis()`, `new Cluster()`. */
export interface IORedisClientLike {
  /** Sends a raw command (`SET … NX PX`). */
  call(...args: never[]): unknown;
  /** Runs a Lua script (every step of the store is one). */
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

// End or renew a claim: only while the key is still ours (1), or free again (2: our lease ran
// out and no one holds it now: the handler did finish, or is still running; but another may have
// claimed and released it meanwhile). ARGV[2] '' releases, else it is the value to set (the
// outcome marker, or our token to renew), kept for ARGV[3] ms ('' = no expiry). 0: another's.
const END = `local v=redis.call('GET',KEYS[1])
if v and v~=ARGV[1] then return 0 end
if ARGV[2]=='' then redis.call('DEL',KEYS[1])
elseif ARGV[3]=='' then redis.call('SET',KEYS[1],ARGV[2])
else redis.call('SET',KEYS[1],ARGV[2],'PX',ARGV[3]) end
return v and 1 or 2`;

// The order's attempt count, kept as an outcome (`done:<n>`) so that outcome() reads it; no expiry.
const ATTEMPT = `local n=(tonumber(string.match(redis.call('GET',KEYS[1]) or '','^done:(%d+)$')) or 0)+1
redis.call('SET',KEYS[1],'done:'..n) return n`;

// The inbox: a hash per record (`r:<id>`: state, event, attempts, error, at, token), a sorted
// set per state (`s:<state>`, scored by a sequence bumped on each change: lists are oldest
// first by last change) and `due` (the pending ids, scored by when they are due). Due times
// are ms on the server's clock (TIME; Redis 5+ replicates a script's effects, so it may write
// after TIME): an app server's clock step changes nothing.
const NOW = `local t=redis.call('TIME') local now=t[1]*1000+math.floor(t[2]/1000)
`;
const FIELDS = `'state','event','attempts','error','at'`;
// KEYS: record, due, seq, s:<state>. ARGV: id, event, state.
const ADD = `${NOW}if redis.call('EXISTS',KEYS[1])==1 then return 0 end
redis.call('HSET',KEYS[1],'state',ARGV[3],'event',ARGV[2],'attempts',0,'error','','at',now)
redis.call('ZADD',KEYS[4],redis.call('INCR',KEYS[3]),ARGV[1])
if ARGV[3]=='pending' then redis.call('ZADD',KEYS[2],now,ARGV[1]) end
return 1`;
// KEYS: due, the records' key prefix, and the record when an id is given. ARGV: lease, token, id.
// Without an id, the earliest due one: its key is derived here (the same slot, by the tag).
const TAKE = `${NOW}local id,k=ARGV[3],KEYS[3]
if k then local s=redis.call('ZSCORE',KEYS[1],id) if not s or tonumber(s)>now then return false end
else id=redis.call('ZRANGEBYSCORE',KEYS[1],'-inf',now,'LIMIT',0,1)[1] if not id then return false end k=KEYS[2]..id end
redis.call('ZADD',KEYS[1],now+ARGV[1],id)
redis.call('HSET',k,'token',ARGV[2])
return {id,unpack(redis.call('HMGET',k,${FIELDS},'token'))}`;
// finish, and replay: KEYS: record, due, seq, the state sets' prefix (the record's old set is
// read here), s:<new state>. ARGV: id, state, attempts, delay, error, then the lease's token
// (finish: fenced by it; replay passes none, and needs only that the record exists).
const MOVE = `${NOW}local h=redis.call('HMGET',KEYS[1],'state','token')
if not h[1] or ARGV[6] and h[2]~=ARGV[6] then return 0 end
redis.call('HSET',KEYS[1],'state',ARGV[2],'attempts',ARGV[3],'error',ARGV[5])
redis.call('HDEL',KEYS[1],'token')
redis.call('ZREM',KEYS[4]..h[1],ARGV[1])
redis.call('ZADD',KEYS[5],redis.call('INCR',KEYS[3]),ARGV[1])
if ARGV[2]=='pending' then redis.call('ZADD',KEYS[2],now+ARGV[4],ARGV[1]) else redis.call('ZREM',KEYS[2],ARGV[1]) end
return 1`;
// KEYS: s:<state>, the records' key prefix. ARGV: the last index. Flat: id and FIELDS per record.
const LIST = `local out={}
for _,id in ipairs(redis.call('ZRANGE',KEYS[1],0,ARGV[1])) do
out[#out+1]=id
for _,v in ipairs(redis.call('HMGET',KEYS[2]..id,${FIELDS})) do out[#out+1]=v end
end
return out`;
// KEYS: record. ARGV: id. The id and FIELDS, or false when there is no such record.
const GET = `local h=redis.call('HMGET',KEYS[1],${FIELDS}) if not h[1] then return false end return {ARGV[1],unpack(h)}`;
const INBOX = '{inbox}:';
const RECORD = `${INBOX}r:`;
const STATE = `${INBOX}s:`;
const DUE = `${INBOX}due`;
const SEQ = `${INBOX}seq`;

/** Runs a script with its keys (under the prefix) and arguments, through the client's own eval. */
type Run = (script: string, keys: string[], args: string[]) => Promise<unknown>;

// Replies arrive as strings, or Buffers under a node-redis type mapping: toString() reads both
// (and numbers, mapped or not).
const text = (reply: unknown) => (reply == null ? '' : (reply as { toString(): string }).toString());
const yes = async (reply: Promise<unknown>) => text(await reply) === '1';
const ms = (value: number, least = 1) => String(Math.max(least, Math.ceil(value)));
// One record from a flat reply: id, then FIELDS' values.
const record = (reply: unknown[], i: number): InboxRecord => ({
  id: text(reply[i]),
  state: text(reply[i + 1]) as InboxState,
  event: text(reply[i + 2]),
  attempts: Number(text(reply[i + 3])),
  error: text(reply[i + 4]) || undefined,
  at: Number(text(reply[i + 5])),
});

/**
 * The fulfillment store on Redis, for a node-redis (4+) or an ioredis client (connected,
 * yours: the store never connects or quits it), on Redis 2.6.12 or later (EVAL, SET NX PX);
 * its inbox needs Redis 5 or later (its scripts read the server's clock).
 *
 * What it promises: a handler never runs concurrently for one key (across every process
 * sharing the Redis), and never again once its outcome is recorded. A handler may run longer
 * than its lease: the kit renews the claim every third of the lease while it runs. What it
 * cannot: Redis is not in a transaction with your database, so a process that crashes inside
 * `onPaid` (after shipping, before the outcome is recorded) leaves its claim to run out after
 * the lease, and the next delivery runs `onPaid` again; and a process paused for longer than
 * its lease (SIGSTOP, a paused VM or container) loses its claim while `onPaid` runs: another
 * process may claim the payment and run `onPaid` too. The paused holder then says so: its
 * `complete` resolves `false`, and the kit answers with an error (`lease lost on …`, logged at
 * warn; a webhook in the request gets a 500), never `ran`. To close it, make `onPaid`
 * idempotent on `ctx.effectKey` (the same for both runs), or use `postgresStore` and write
 * through `ctx.db` for exactly once across crashes and pauses.
 *
 * The inbox's keys are `<prefix>{inbox}:…` (records, per-state lists, the due set, a
 * sequence): the `{inbox}` hash tag keeps them in one slot of a Redis Cluster, so each step
 * stays one atomic script.
 *
 * The payout intents (`store.payouts`, for `createPayouts`) are under `<prefix>{payouts}:` (one
 * slot too): a hash per intent (`i:<key>`: state, version, the intent's JSON as written), a
 * sorted set per state (`s:<state>`, listed in key order) and `ids` (payout id → key). Every
 * change is one script, a swap compares the version; none of these keys expires, whatever
 * `keepDoneMs`. The subscription records (`store.subscriptions`, for `createBilling`) alike,
 * under `<prefix>{billing}:`: a hash per record (`r:<key>`: version, JSON), one sorted set of
 * their keys (`keys`) and `ids` (subscription id → key). The request budget (`store.budget`, for
 * the client option `requestBudget`) under `<prefix>{budget}:`: per key a sorted set of its
 * sends (`s:<key>`, scored by ms on the server's clock, TIME) and its pause (`p:<key>`); both
 * expire by themselves.
 *
 * Durability is your Redis's: with persistence off (or a failover that loses recent writes),
 * a recorded outcome or an inbox record can be lost and its handler run again (or never).
 *
 * @example
 * <!-- not run: it needs a Redis server; type-checked only -->
 * ```ts
 * import { createClient } from 'redis'; // or: import Redis from 'ioredis'; new Redis(url)
 * const redis = await createClient({ url: process.env.REDIS_URL ?? 'redis://localhost:6379' }).connect();
 * const store = redisStore(redis);
 * ```
 */
// `run` evals a script on the prefixed keys: ioredis as eval(script, numKeys, ...keys, ...args),
// node-redis as eval(script, { keys, arguments }).
export function redisStore(client: NodeRedisClientLike | IORedisClientLike, options: RedisStoreOptions = {}): FulfillmentStore<undefined> {
  const { prefix = 'business-payments:fulfillment:', keepDoneMs } = options;
  if (keepDoneMs !== undefined && !(keepDoneMs >= 1)) throw new RangeError('redisStore: keepDoneMs must be at least 1 (ms)');
  const ioredis = typeof (client as Partial<IORedisClientLike>).call === 'function';
  if (!ioredis && typeof (client as Partial<NodeRedisClientLike>).sendCommand !== 'function') {
    throw new TypeError('redisStore: expected a node-redis (4+) or an ioredis client');
  }
  const run: Run = (script, names, args) => {
    const keys = names.map((name) => prefix + name);
    return ioredis
      ? (client as IORedisClientLike).eval(script, keys.length, ...keys, ...args)
      : (client as NodeRedisClientLike).eval(script, { keys, arguments: args });
  };
  let tick = 0;
  const outcome = async (key: string) => {
    const value = text(await client.get(prefix + key));
    return value.startsWith(DONE) ? value.slice(DONE.length) : undefined;
  };
  return {
    async claim(key, leaseMs): Promise<ClaimResult<undefined>> {
      const token = crypto.randomUUID();
      const lease = ms(leaseMs);
      const held = text(await run(CLAIM, [key], [token, lease]));
      if (held !== token) return held.startsWith(DONE) ? { done: held.slice(DONE.length) } : { busy: true };
      return { claimed: holding(run, key, token, lease, keepDoneMs ? ms(keepDoneMs) : '') };
    },
    outcome,
    async remember(key) {
      // Scored by the time in µs-like steps: ties within a millisecond keep this process's order.
      await run(REMEMBER, [OPEN], [String(Date.now() * 1000 + (tick = (tick + 1) % 1000)), key]);
    },
    // Settled keys are dropped as they are met; a page at a time, so the set is never read whole.
    async unsettled(limit) {
      const out: string[] = [];
      for (let from = 0; out.length < limit;) {
        const page = ((await run(OLDEST, [OPEN], [String(from), String(from + limit - 1)])) as unknown[]).map(text);
        for (const key of page) {
          if ((await outcome(key)) === undefined) {
            from++;
            if (out.push(key) >= limit) break;
          } else await run(FORGET, [OPEN], [key]);
        }
        if (page.length < limit) break;
      }
      return out;
    },
    attempt: async (order) => Number(text(await run(ATTEMPT, [`attempts:${order}`], []))),
    inbox: redisInbox(run),
    payouts: redisIntents(run),
    subscriptions: redisSubscriptions(run),
    budget: redisBudget(run),
  };
}

// A won claim, fenced by its token: END's answers (0 another's, 1 ours, 2 free again) say whether
// it still is. renew sets our token again for a lease from now, never once ended (a released key
// is free too); complete resolves `false` once the key was ever found free again (our lease ran
// out: another may have claimed it meanwhile) or another's, so the kit never says `ran` for it.
function holding(run: Run, key: string, token: string, lease: string, keep: string): StoreClaim<undefined> {
  let ended = false;
  let lapsed = false;
  const set = async (value: string, px: string) => {
    const reply = text(await run(END, [key], [token, value, px]));
    lapsed ||= reply === '2';
    return reply !== '0';
  };
  const end = async (value: string) => {
    ended = true;
    return (await set(value, keep)) && !lapsed;
  };
  return {
    complete: (outcome) => end(DONE + outcome),
    release: async () => void (await end('')),
    renew: async () => !ended && set(token, lease),
  };
}

// The inbox's steps, each one script over its keys (see the scripts above).
function redisInbox(run: Run): InboxStore {
  return {
    add: (id, event, state = 'pending') => yes(run(ADD, [RECORD + id, DUE, SEQ, STATE + state], [id, event, state])),
    async get(id) {
      const reply = (await run(GET, [RECORD + id], [id])) as unknown[] | null;
      return reply ? record(reply, 0) : undefined;
    },
    async take(leaseMs, id) {
      const keys = id === undefined ? [DUE, RECORD] : [DUE, RECORD, RECORD + id];
      const reply = (await run(TAKE, keys, [ms(leaseMs), crypto.randomUUID(), id ?? ''])) as unknown[] | null;
      return reply ? { ...record(reply, 0), token: text(reply[6]) } : undefined;
    },
    finish: ({ id, token }, { state, attempts, delayMs = 0, error = '' }) =>
      yes(run(MOVE, [RECORD + id, DUE, SEQ, STATE, STATE + state], [id, state, String(attempts), ms(delayMs, 0), error, token])),
    async list(state, limit) {
      if (!(limit >= 1)) return [];
      const reply = (await run(LIST, [STATE + state, RECORD], [String(Math.min(Math.floor(limit), 2 ** 31) - 1)])) as unknown[];
      const out: InboxRecord[] = [];
      for (let i = 0; i < reply.length; i += 6) out.push(record(reply, i));
      return out;
    },
    replay: (id) => yes(run(MOVE, [RECORD + id, DUE, SEQ, STATE, `${STATE}pending`], [id, 'pending', '0', '0', ''])),
  };
}
