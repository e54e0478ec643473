// What every part of the simulated service shares: options, records, clock and queues.
import type { Scheduler } from './scheduler.js';
import type { MockMerchant, MockState } from './types.js';

export type Environment = 'sandbox' | 'production';

/** The service's internals, handed to each concern. */
export interface Ctx {
  state: MockState;
  now: () => number;
  timeScale: number;
  autoRun: boolean;
  toleranceSeconds: number;
  rateLimitPerMinute: number;
  requireSignatures: boolean;
  brand: string;
  fetch: (input: string, init: RequestInit) => Promise<Response>;
  scheduler: Scheduler;
  /** Key of the signed checkout links (per service instance). */
  checkoutKey: string;
  /** Queues a webhook event for delivery. */
  emit: (input: EmitInput) => void;
  /** Scales a simulated delay. */
  scaled: (ms: number) => number;
  /** Store bounds (see MockServiceOptions.limits). */
  limits: { requestLog: number; records: number; events: number; idempotencyKeys: number };
  /**
   * ref_trx already taken, per merchant and environment (`referenceKey()`) → the payment's
   * trx_id: DUPLICATE_REFERENCE. Bounded like the payments it points at.
   */
  references: Map<string, string>;
}

/** An event to send. */
export interface EmitInput {
  merchant: MockMerchant;
  environment: Environment;
  type: string;
  data: Record<string, unknown>;
  url: string | null;
}

/** The authenticated caller of an /api/v1 route. */
export interface Caller {
  merchant: MockMerchant;
  environment: Environment;
  clientIp: string;
  /** Public base of this service as the caller reached it (origin plus any base path). */
  base: string;
}

/** A routed API request: caller, parsed body, query, path parameters. */
export interface ApiRequest {
  caller: Caller;
  body: Record<string, unknown>;
  query: URLSearchParams;
  params: Record<string, string>;
  headers: Headers;
}
