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

/** A comma-separated OTEL_* list, trimmed, empty items left out (empty or unset: undefined, as the SDK reads it). */
function listOf(value: string | undefined): string[] | undefined {
  const items = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length ? items : undefined;
}

/**
 * OpenTelemetry tracing, on only when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `…_TRACES_ENDPOINT`) is
 * set: a tracer provider with the http, express and pg instrumentations, spans sent over OTLP/HTTP
 * (JSON) by a batch processor. Traces only, from the trace packages themselves (not the Node SDK,
 * which brings every exporter of every signal): the standard variables are read as the Node SDK
 * reads them, by the packages (`OTEL_TRACES_SAMPLER`/`_ARG` and the span limits by the provider,
 * `OTEL_BSP_*` by the batch processor, `OTEL_EXPORTER_OTLP_*` by the exporter,
 * `OTEL_RESOURCE_ATTRIBUTES` and `OTEL_SERVICE_NAME` by the env detector) or here
 * (`OTEL_SDK_DISABLED`, `OTEL_LOG_LEVEL`, `OTEL_PROPAGATORS`, `OTEL_NODE_RESOURCE_DETECTORS`).
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
  const [
    api,
    core,
    resources,
    { ATTR_SERVICE_NAME },
    { NodeTracerProvider },
    { BatchSpanProcessor },
    { OTLPTraceExporter },
    { registerInstrumentations },
    { HttpInstrumentation },
    { ExpressInstrumentation, ExpressLayerType },
    { PgInstrumentation },
  ] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/semantic-conventions'),
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/instrumentation'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-express'),
    import('@opentelemetry/instrumentation-pg'),
  ]);

  const logLevel = env.OTEL_LOG_LEVEL?.trim();
  if (logLevel) api.diag.setLogger(new api.DiagConsoleLogger(), { logLevel: core.diagLogLevelFromString(logLevel) });

  // The resource as the Node SDK makes it: the service's own attributes, then what the detectors
  // find (OTEL_NODE_RESOURCE_DETECTORS, default env, process and host; env reads
  // OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME), then the service name.
  const detectorsByName = {
    env: resources.envDetector,
    host: resources.hostDetector,
    os: resources.osDetector,
    process: resources.processDetector,
    serviceinstance: resources.serviceInstanceIdDetector,
  };
  const named = listOf(env.OTEL_NODE_RESOURCE_DETECTORS);
  const detectors = !named
    ? [resources.envDetector, resources.processDetector, resources.hostDetector]
    : named.includes('all')
      ? Object.values(detectorsByName)
      : named.includes('none')
        ? []
        : named.flatMap((name) => {
            const detector = detectorsByName[name as keyof typeof detectorsByName];
            if (!detector) api.diag.warn(`Invalid resource detector "${name}" specified in the environment variable OTEL_NODE_RESOURCE_DETECTORS`);
            return detector ? [detector] : [];
          });
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.instance.id': options.instanceId }))
    .merge(resources.detectResources({ detectors }))
    .merge(resources.resourceFromAttributes({ [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME?.trim() || 'meal-planner-api' }));

  // The provider reads OTEL_TRACES_SAMPLER(_ARG) and the span limits; the processor OTEL_BSP_*; the exporter OTEL_EXPORTER_OTLP_*.
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
  provider.register({ propagator: await propagatorOf(env, core, api) });
  registerInstrumentations({
    tracerProvider: provider,
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
  return { shutdown: () => provider.shutdown() };
}

const probes = new Set(['/healthz', '/readyz']);

/**
 * OTEL_PROPAGATORS as the Node SDK reads it: unset, the W3C trace context and baggage (undefined:
 * the provider's default); `none`, none (null); else the named ones (tracecontext, baggage, b3,
 * b3multi, jaeger), unknown names warned about and left out.
 */
async function propagatorOf(
  env: Env,
  core: typeof import('@opentelemetry/core'),
  api: typeof import('@opentelemetry/api'),
): Promise<import('@opentelemetry/api').TextMapPropagator | null | undefined> {
  const names = listOf(env.OTEL_PROPAGATORS);
  if (!names) return undefined;
  if (names.includes('none')) return null;
  const made: import('@opentelemetry/api').TextMapPropagator[] = [];
  for (const name of new Set(names)) {
    if (name === 'tracecontext') made.push(new core.W3CTraceContextPropagator());
    else if (name === 'baggage') made.push(new core.W3CBaggagePropagator());
    else if (name === 'b3' || name === 'b3multi') {
      const { B3Propagator, B3InjectEncoding } = await import('@opentelemetry/propagator-b3');
      made.push(new B3Propagator(name === 'b3multi' ? { injectEncoding: B3InjectEncoding.MULTI_HEADER } : {}));
    } else if (name === 'jaeger') made.push(new (await import('@opentelemetry/propagator-jaeger')).JaegerPropagator());
    else api.diag.warn(`Propagator "${name}" requested through environment variable is unavailable.`);
  }
  if (!made.length) return null;
  return made.length === 1 ? made[0] : new core.CompositePropagator({ propagators: made });
}
