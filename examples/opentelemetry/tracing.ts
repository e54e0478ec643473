// OpenTelemetry spans from the SDK's diagnostics_channel traces: one span per API call
// (with an event per retry) and one per fulfillment settlement. No monkey-patching, no
// wrapped fetch: the SDK publishes, this subscribes. Copy it into your app and call
// `traceBusinessPayments(trace.getTracer('my-shop'))` once at start-up (Node, Deno, Bun).
import diagnostics from 'node:diagnostics_channel';
import { SpanKind, SpanStatusCode, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import type { RequestTrace } from 'business-payments';
import type { FulfillmentTrace } from 'business-payments/fulfillment';

/** Subscribes `tracer` to the SDK's channels; returns a function that unsubscribes. */
export function traceBusinessPayments(tracer: Tracer): () => void {
  // The same context object comes with every event of one call: it keys the span.
  const spans = new WeakMap<object, Span>();

  const request = diagnostics.tracingChannel<object, RequestTrace>('business-payments:request');
  const requestHandlers = {
    start(call: RequestTrace) {
      const attributes: Attributes = {
        'http.request.method': call.method,
        'http.route': call.route,
        'business_payments.operation': call.operation,
        'business_payments.environment': call.environment,
      };
      if (call.idempotencyKey) attributes['business_payments.idempotency_key'] = call.idempotencyKey;
      spans.set(call, tracer.startSpan(`business-payments ${call.operation}`, { kind: SpanKind.CLIENT, attributes }));
    },
    error(call: RequestTrace) {
      spans.get(call)?.setStatus({ code: SpanStatusCode.ERROR, ...(call.errorClass && { message: call.errorClass }) });
    },
    asyncEnd(call: RequestTrace) {
      const span = spans.get(call);
      if (!span) return;
      span.setAttribute('business_payments.attempts', call.attempt);
      if (call.status !== undefined) span.setAttribute('http.response.status_code', call.status);
      if (call.requestId) span.setAttribute('business_payments.request_id', call.requestId);
      if (call.errorClass) span.setAttribute('error.type', call.errorClass);
      span.end();
    },
    end() {},
    asyncStart() {},
  };
  request.subscribe(requestHandlers);

  // Before each retry: the attempt about to be sent, and how the last one failed.
  const retry = (message: unknown) => {
    const call = message as RequestTrace;
    const attributes: Attributes = { 'business_payments.attempt': call.attempt };
    if (call.status !== undefined) attributes['http.response.status_code'] = call.status;
    if (call.errorClass) attributes['error.type'] = call.errorClass;
    spans.get(call)?.addEvent('retry', attributes);
  };
  diagnostics.subscribe('business-payments:request:retry', retry);

  const fulfillment = diagnostics.tracingChannel<object, FulfillmentTrace>('business-payments:fulfillment');
  const fulfillmentHandlers = {
    start(work: FulfillmentTrace) {
      const attributes: Attributes = { 'business_payments.environment': work.environment };
      spans.set(work, tracer.startSpan(`business-payments fulfillment.${work.operation}`, { kind: SpanKind.INTERNAL, attributes }));
    },
    error(work: FulfillmentTrace) {
      spans.get(work)?.setStatus({ code: SpanStatusCode.ERROR, ...(work.errorClass && { message: work.errorClass }) });
    },
    asyncEnd(work: FulfillmentTrace) {
      const span = spans.get(work);
      if (!span) return;
      if (work.trxId) span.setAttribute('business_payments.trx_id', work.trxId);
      if (work.eventType) span.setAttribute('business_payments.event_type', work.eventType);
      if (work.eventId) span.setAttribute('business_payments.event_id', work.eventId);
      if (work.result) span.setAttribute('business_payments.result', work.result);
      if (work.status !== undefined) span.setAttribute('http.response.status_code', work.status);
      if (work.errorClass) {
        span.setAttribute('error.type', work.errorClass);
        span.setStatus({ code: SpanStatusCode.ERROR, message: work.errorClass });
      }
      span.end();
    },
    end() {},
    asyncStart() {},
  };
  fulfillment.subscribe(fulfillmentHandlers);

  return () => {
    request.unsubscribe(requestHandlers);
    diagnostics.unsubscribe('business-payments:request:retry', retry);
    fulfillment.unsubscribe(fulfillmentHandlers);
  };
}
