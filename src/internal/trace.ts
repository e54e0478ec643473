// Tracing on node:diagnostics_channel, found at run time through process.getBuiltinModule
// (Node ≥ 20.16, Deno, Bun): nothing is imported, so a browser or a worker without it
// loads nothing and skips tracing. APM tools subscribe to the channels by name instead of
// wrapping fetch. With no subscriber a call checks five booleans and builds nothing.

import { builtin } from './hmac.js';

interface Channel {
  readonly hasSubscribers: boolean;
  publish(message: unknown): void;
  runStores?<T>(context: object, fn: () => T): T;
}

/** The five channels of a TracingChannel, as node:diagnostics_channel builds them. */
export interface Tracing {
  start: Channel;
  end: Channel;
  asyncStart: Channel;
  asyncEnd: Channel;
  error: Channel;
}

interface DiagnosticsChannel {
  tracingChannel(name: string): Tracing;
  channel(name: string): Channel;
}

// Undefined (where the runtime has no diagnostics_channel) is kept too: has() tells it from not built yet.
const made = new Map<string, Tracing | Channel | undefined>();

// The channel `name` of `kind`, built once; undefined where the runtime has none.
function built(name: string, kind: 'tracingChannel' | 'channel'): Tracing | Channel | undefined {
  if (!made.has(name)) made.set(name, (builtin('node:diagnostics_channel') as DiagnosticsChannel | undefined)?.[kind](name));
  return made.get(name);
}

/** The TracingChannel `name`, or undefined where the runtime has none. Built once. */
export const tracingChannel = (name: string) => built(name, 'tracingChannel') as Tracing | undefined;

/** The plain channel `name` (retries), or undefined where the runtime has none. */
export const channel = (name: string) => built(name, 'channel') as Channel | undefined;

/** Whether anyone listens on `tracing`: checked before a context is built. */
export function listened(tracing: Tracing | undefined): tracing is Tracing {
  return (
    !!tracing &&
    (tracing.start.hasSubscribers || tracing.asyncEnd.hasSubscribers || tracing.error.hasSubscribers || tracing.end.hasSubscribers)
  );
}

/**
 * Runs `fn` as TracingChannel.tracePromise does (start, end, then error, asyncStart and
 * asyncEnd when it settles), with one difference: the context never takes the error object
 * (its body could hold what the caller sent); `failed` writes what may be published.
 */
export function traced<C extends object, T>(
  tracing: Tracing,
  context: C,
  fn: () => Promise<T>,
  failed: (context: C, error: unknown) => void,
): Promise<T> {
  const run = () => {
    try {
      return fn().then(
        (result) => {
          tracing.asyncStart.publish(context);
          tracing.asyncEnd.publish(context);
          return result;
        },
        (error: unknown) => {
          failed(context, error);
          tracing.error.publish(context);
          tracing.asyncStart.publish(context);
          tracing.asyncEnd.publish(context);
          throw error;
        },
      );
    } finally {
      tracing.end.publish(context);
    }
  };
  // runStores lets a subscriber bind its async context (the active span) for the call.
  const { start } = tracing;
  if (start.runStores) return start.runStores(context, run);
  start.publish(context);
  return run();
}

/**
 * What a call publishes on the TracingChannel `business-payments:request` (one object per
 * call, the same at every event; fields are filled in as the call goes) and on the
 * channel `business-payments:request:retry` before each retry. It never holds a secret, a
 * signature, a header, a phone number or a body.
 */
export interface RequestTrace {
  /** `resource.method`, e.g. `payments.create`. */
  operation: string;
  /** HTTP method. */
  method: 'GET' | 'POST';
  /** The route template, e.g. `/api/v1/payments/{trx_id}` (no ids, no query). */
  route: string;
  /** `sandbox` or `production` (`X-Environment`). */
  environment: 'sandbox' | 'production';
  /** The Idempotency-Key every attempt carries (creates and payouts). */
  idempotencyKey: string | undefined;
  /** Attempts sent so far; at a retry event, the number of the attempt about to be sent. */
  attempt: number;
  /** The final response's HTTP status (at a retry event: the failed attempt's, if it had one). */
  status?: number | undefined;
  /** The service's request id (`x-request-id`, `request-id` or `x-correlation-id`), when sent. */
  requestId?: string | undefined;
  /** The SDK error class the call failed with (at a retry event: the failed attempt's). */
  errorClass?: string | undefined;
}
