import { context, propagation, trace, type Context } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { AlwaysOffSampler, BatchSpanProcessor, NoopSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

export interface Tracing {
  // Where finished spans go: the OTLP exporter when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set, else nowhere.
  processor: SpanProcessor;
  resource: Resource;
  shutdown(): Promise<void>;
}

let installed: Tracing | undefined;

// The process's tracer, installed once by the API's and the worker's entry points. It always runs, so that
// every request has a trace id (in its log lines and in the jobs it causes, whose workflows continue the
// trace), and exports spans over OTLP/HTTP only when OTEL_* names an endpoint; the exporter itself reads
// the rest of OTEL_* (headers, timeout, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES). The propagator is
// W3C trace context plus baggage: the request id travels as baggage (`request_id`).
export function installTracing(serviceName: string, env: NodeJS.ProcessEnv = process.env): Tracing {
  if (installed) return installed;
  const exporting = Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) && env.OTEL_SDK_DISABLED !== 'true';
  const processor = exporting ? new BatchSpanProcessor(new OTLPTraceExporter()) : new NoopSpanProcessor();
  const resource = new Resource({ 'service.name': env.OTEL_SERVICE_NAME ?? serviceName });
  // Without an exporter, spans are not recorded (attributes, timings): they still get ids, which propagate.
  // With one, OTEL_TRACES_SAMPLER decides (by default every trace the caller did not mark unsampled).
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [processor],
    ...(exporting ? {} : { sampler: new AlwaysOffSampler() }),
  });
  provider.register();
  installed = { processor, resource, shutdown: () => provider.shutdown() };
  return installed;
}

export const tracer = () => trace.getTracer('memory-service');

const REQUEST_ID = 'request_id';

// The active context with the request id in its baggage, for everything the request causes.
export function withRequestId(parent: Context, requestId: string): Context {
  const baggage = (propagation.getBaggage(parent) ?? propagation.createBaggage()).setEntry(REQUEST_ID, { value: requestId });
  return propagation.setBaggage(parent, baggage);
}

// What a log line says about where it was written: the active span's trace and span ids and the request
// id of the request that caused the work, in the API and in the worker's activities alike.
export function traceFields(): Record<string, string> {
  const active = context.active();
  const span = trace.getSpanContext(active);
  const requestId = propagation.getBaggage(active)?.getEntry(REQUEST_ID)?.value;
  return {
    ...(span && trace.isSpanContextValid(span) ? { trace_id: span.traceId, span_id: span.spanId } : {}),
    ...(requestId ? { request_id: requestId } : {}),
  };
}
