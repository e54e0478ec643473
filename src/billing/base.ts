// The billing kit's shared base, below its steps (subscribe.ts, events.ts, reconcile.ts,
// access.ts), which all read it: the options checked once, the records of a customer and plan
// by their keys, and each change to a record (a compare-and-swap on its version, retried on
// the record as the winner left it, then onChange and onChargedAfterCancel). It imports no step.
import { ConfigurationError } from '../core/base-error.js';
import { BillingError } from './errors.js';
import { merge, standing, type Facts, type Standing } from './reduce.js';
import type { SubscriptionRecord, SubscriptionState, SubscriptionStore } from './store.js';
import type { BillingChangeContext, BillingClient, BillingOptions } from './types.js';

/** Every state, as `subscriptions()` takes them. */
export const STATES: readonly SubscriptionState[] = ['pending', 'active', 'past_due', 'suspended', 'cancelled', 'ended'];
/** The states in which a second `subscribe` sends nothing: the service may still charge the record. */
export const LIVE: readonly SubscriptionState[] = ['pending', 'active', 'past_due', 'cancelled'];
/** How long after its record a create never answered may be sent again with its key: the service keeps a key 24 h, less an hour for the clocks to differ. */
export const KEY_WINDOW = 23 * 3_600_000;
// What a customer id and a plan code may hold: they are part of the key, which is sent as a header.
const PART = /^[\x21-\x39\x3b-\x7e]+$/;
// Tries of one change before it gives up (each lost try means another process changed the record).
const TRIES = 50;

/** What a change is told beside its record (the context the callbacks get, but `previous`). */
export type ChangeSource = Omit<BillingChangeContext, 'previous'>;

/**
 * What every step of the kit reads and changes, built once by createBilling from its options:
 * the settings (checked, with their defaults), the store's records, and the callbacks.
 */
export class BillingBase {
  /** The merchant's client: it subscribes and lists invoices. */
  readonly client: BillingClient;
  /** The store's subscription records. */
  readonly records: SubscriptionStore;
  /** `false` on memoryStore(): it forgets with its process. */
  readonly durable: boolean;
  /** The kit's clock (ms since the epoch). */
  readonly now: () => number;
  /** How long (ms) access is kept past `paidThrough` while a renewal is late. */
  readonly grace: number;
  readonly #onChange: BillingOptions['onChange'];
  readonly #onCharged: BillingOptions['onChargedAfterCancel'];

  constructor(options: BillingOptions) {
    // Date.now read at each call: fake timers (vitest, sinon) move it.
    const {
      client,
      store,
      onChange,
      onChargedAfterCancel,
      now = () => Date.now(),
      grace = 3 * 86_400_000,
    } = options ?? ({} as BillingOptions);
    const records = store?.subscriptions;
    if (typeof records?.add !== 'function')
      throw new ConfigurationError(
        'createBilling: store must be memoryStore(), postgresStore(…) or redisStore(…) (one with subscriptions)',
      );
    if (typeof client?.billing?.subscriptions?.create !== 'function')
      throw new ConfigurationError('createBilling: client must be a PaymentsClient');
    if (!(typeof grace === 'number' && grace >= 0 && grace < Infinity))
      throw new ConfigurationError('createBilling: grace must be a number of milliseconds ≥ 0');
    if (typeof now !== 'function') throw new ConfigurationError('createBilling: now must be a function returning ms since the epoch');
    this.client = client;
    this.records = records;
    this.durable = store.durable !== false;
    this.now = now;
    this.grace = grace;
    this.#onChange = onChange;
    this.#onCharged = onChargedAfterCancel;
  }

  /** The record's standing now. */
  standing(record: SubscriptionRecord): Standing {
    return standing(record, this.now(), this.grace);
  }

  /** The record with its `state` and `paidThrough` worked out now (a copy: the store keeps its own). */
  current(record: SubscriptionRecord): SubscriptionRecord {
    const { state, paidThrough } = this.standing(record);
    return { ...record, state, paidThrough };
  }

  /** The records of a customer and plan, n = 1, 2… up to the first key absent (where the next one goes). */
  async chain(customer: string, plan: string, call: string): Promise<SubscriptionRecord[]> {
    for (const [name, value] of [
      ['customer', customer],
      ['plan_code', plan],
    ])
      if (typeof value !== 'string' || !PART.test(value))
        throw new BillingError(
          'invalid_params',
          `billing.${call}: ${name} must be printable ASCII without spaces or ':' (it is part of the key)`,
        );
    const chain: SubscriptionRecord[] = [];
    for (let record; (record = await this.records.get(keyOf(customer, plan, chain.length + 1)));) chain.push(record);
    return chain;
  }

  /** Every record in the store, by key (a page of 100 at a time). */
  async all(): Promise<SubscriptionRecord[]> {
    const out: SubscriptionRecord[] = [];
    for (let after: string | undefined; ;) {
      const batch = await this.records.list(100, after);
      out.push(...batch);
      if (batch.length < 100) return out;
      after = batch.at(-1)!.key;
    }
  }

  /**
   * One change: the record with `patch`, its version one more and its state worked out now, if
   * no other change came first (else undefined); then the callbacks. Fields set to undefined are
   * dropped, so the store keeps them absent.
   */
  async change(
    from: SubscriptionRecord,
    patch: Partial<SubscriptionRecord>,
    source: ChangeSource,
  ): Promise<SubscriptionRecord | undefined> {
    const next = JSON.parse(JSON.stringify({ ...from, ...patch, version: from.version + 1, updatedAt: this.now() })) as SubscriptionRecord;
    ({ state: next.state, paidThrough: next.paidThrough } = this.standing(next));
    if (!(await this.records.swap(next))) return;
    const ctx = { ...source, previous: from.state };
    if (next.state !== from.state) await this.emit(next, ctx);
    const charged = next.paid.filter(
      ({ invoice }) => next.chargedAfterCancel.includes(invoice) && !from.chargedAfterCancel.includes(invoice),
    );
    for (const invoice of charged) await this.#call('onChargedAfterCancel', next, () => this.#onCharged?.(next, invoice, ctx));
    return next;
  }

  /**
   * Changes the record with `key` by what `step` makes of it as it stands (retried on the record
   * as another change left it); `step` returns undefined for nothing to change. Resolves the
   * record and whether this call changed it.
   */
  async update(
    key: string,
    step: (record: SubscriptionRecord) => Partial<SubscriptionRecord> | undefined,
    source: ChangeSource,
  ): Promise<{ record: SubscriptionRecord; changed: boolean }> {
    for (let tries = 0; tries < TRIES; tries++) {
      const record = await this.records.get(key);
      if (!record) throw new BillingError('unknown_subscription', `billing: no record has the key '${key}'`);
      const patch = step(record);
      if (!patch) return { record, changed: false };
      const next = await this.change(record, patch, source);
      if (next) return { record: next, changed: true };
    }
    throw new BillingError('contention', `billing: the record '${key}' kept changing under this change (${TRIES} tries): try again`);
  }

  /** Merges `facts` into the record with `key` (nothing to write when they are not new). */
  apply(key: string, facts: Facts, source: ChangeSource): Promise<{ record: SubscriptionRecord; changed: boolean }> {
    return this.update(key, (record) => merge(record, facts), source);
  }

  /** Calls `onChange` with a record the store has; a throw is logged and changes nothing. */
  emit(record: SubscriptionRecord, ctx: BillingChangeContext): Promise<void> {
    return this.#call('onChange', record, () => this.#onChange?.(record, ctx));
  }

  // A callback of the merchant's: awaited, a throw logged.
  async #call(name: string, record: SubscriptionRecord, run: () => unknown): Promise<void> {
    try {
      await run();
    } catch (error) {
      console.error(`[business-payments] billing: ${name} threw for '${record.key}' (${record.state}):`, error);
    }
  }
}

/** The key of the n-th subscription of a customer to a plan: also its create's Idempotency-Key. */
export const keyOf = (customer: string, plan: string, n: number) => `sub:${customer}:${plan}:${n}`;
