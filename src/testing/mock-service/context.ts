// What every part of the simulated service shares: options, records, clock and queues.
import type { Scheduler } from './scheduler.js';
import type { MockMerchant, MockState } from './types.js';

export type Environment = 'sandbox' | 'production';

/** Which server the sandbox plays: the spec's (`current`) or the one deployed today (`earlier`). */
export type Generation = 'current' | 'earlier';

/** How a payment settles: success, or failed with a reason (codes of the current generation). */
type Settle = (
  trx: string,
  result: 'success' | 'failed',
  detail?: { reason?: string | null; message?: string | null; gateway?: string | null },
) => boolean;

/** The service's internals, handed to each concern. */
export interface Ctx {
  state: MockState;
  generation: Generation;
  /** Earlier generation: the framework's error pages carry exception, file, line and trace (Laravel's APP_DEBUG). */
  debug: boolean;
  /** Earlier generation: the merchant's fee on a payment, a fraction. */
  merchantFeeRate: number;
  /** Settles a pending payment as this generation does (false when it is not pending). */
  settle: Settle;
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
