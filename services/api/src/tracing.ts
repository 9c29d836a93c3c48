import { register } from 'node:module';

type Env = Record<string, string | undefined>;

export interface Tracing {
  /** Sends the spans still buffered and stops the SDK (called last on shutdown). */
  shutdown(): Promise<void>;
}

/** Whether the standard OpenTelemetry variables ask for traces. */
export function tracingWanted(env: Env = process.env): boolean {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return Boolean(endpoint) && env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== 'true' && env.OTEL_TRACES_EXPORTER?.trim() !== 'none';
}

/**
 * OpenTelemetry tracing, on only when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `…_TRACES_ENDPOINT`) is
 * set: the Node SDK with the http, express and pg instrumentations, spans sent over OTLP/HTTP
 * (JSON) by a batch processor. The SDK reads every other standard variable itself
 * (`OTEL_SERVICE_NAME`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*` …).
 *
 * Unset, nothing of OpenTelemetry is even loaded (the imports below are dynamic), so tracing costs
 * nothing. It must run before express, pg and the service's modules are imported: main.ts
 * imports those only after this has run. The module hook (import-in-the-middle) is what lets the
 * instrumentations patch packages imported as ES modules; require-in-the-middle covers the
 * CommonJS ones (pg, loaded by knex).
 */
export async function startTracing(options: { instanceId: string }, env: Env = process.env): Promise<Tracing | undefined> {
  if (!tracingWanted(env)) return undefined;
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  const [{ NodeSDK, resources }, { OTLPTraceExporter }, { HttpInstrumentation }, { ExpressInstrumentation, ExpressLayerType }, { PgInstrumentation }] =
    await Promise.all([
      import('@opentelemetry/sdk-node'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/instrumentation-http'),
      import('@opentelemetry/instrumentation-express'),
      import('@opentelemetry/instrumentation-pg'),
    ]);
  const probes = new Set(['/healthz', '/readyz']);
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME?.trim() || 'meal-planner-api',
    resource: resources.resourceFromAttributes({ 'service.instance.id': options.instanceId }),
    traceExporter: new OTLPTraceExporter(),
    instrumentations: [
      // Probes every few seconds from every balancer would drown the traces that matter.
      new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => probes.has((req.url ?? '').split('?')[0]!) }),
      // One span for the route's handler; a span per middleware and router layer (every request
      // passes a dozen) is noise.
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER] }),
      // Connection-pool spans add nothing a query span does not say.
      new PgInstrumentation({ requireParentSpan: true }),
    ],
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}
