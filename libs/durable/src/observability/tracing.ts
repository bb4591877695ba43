import type { Context, Span, Tracer } from '@opentelemetry/api';
import { capMessage, capStack, safeString } from '../schema/safe-string';

type OtelApi = typeof import('@opentelemetry/api');

/** @opentelemetry/api when the application has it (an optional peer); tracing is a no-op without it. */
const otel: OtelApi | undefined = (() => {
  try {
    return require('@opentelemetry/api') as OtelApi;
  } catch {
    return undefined;
  }
})();

const TRACER = 'nestjs-durable';

/**
 * A run's stored context, or a new trace when it cannot be read (edited by hand, or not JSON): the run
 * must execute either way, where a throw here would fail every execution of it.
 */
function stored(api: OtelApi, text: string): Context {
  try {
    return api.propagation.extract(api.ROOT_CONTEXT, JSON.parse(text));
  } catch {
    return api.ROOT_CONTEXT;
  }
}

export interface SpanHandle {
  /** Runs `fn` with this span active, so spans made inside (the app's own instrumentation too) nest under it. */
  within<T>(fn: () => T): T;
  set(attributes: Record<string, string | number | boolean>): void;
  fail(error: unknown): void;
  end(): void;
  readonly context: Context | undefined;
}

const NOOP: SpanHandle = { within: (fn) => fn(), set: () => undefined, fail: () => undefined, end: () => undefined, context: undefined };

/**
 * Spans through @opentelemetry/api only: the application's own SDK setup decides where they go. A run
 * carries its starter's trace context (as the propagator writes it, stored with the run), so its executions,
 * steps and waits join the trace of the request that started it, in whatever process they run.
 */
export class Tracing {
  /**
   * The SDK's tracer, or none while no tracer provider is registered: the API's spans would then record
   * nothing, and a 3-step workflow's four cost it about 4 % of its time in a fresh process (1.92 and 1.97 ms
   * against 1.87 and 1.87, bench/tools/lone-workflow.ts, 2026-12-04). Asked each time, so a provider
   * registered after boot is used from then on.
   */
  private get tracer(): Tracer | undefined {
    if (!otel) return undefined;
    const provider = otel.trace.getTracerProvider();
    return provider instanceof otel.ProxyTracerProvider ? provider.getDelegateTracer(TRACER) : provider.getTracer(TRACER);
  }

  /**
   * The active trace context, serialized to store with a new run (null when there is none): whatever
   * the registered propagator writes (W3C traceparent, B3, Jaeger's header), and extracts again.
   */
  captureContext(): string | null {
    if (!otel) return null;
    const carrier: Record<string, string> = {};
    otel.propagation.inject(otel.context.active(), carrier);
    return Object.keys(carrier).length ? JSON.stringify(carrier) : null;
  }

  /** A span under `parent` (a stored context, or another span's context), else under the active context. */
  start(name: string, attributes: Record<string, string | number | boolean>, parent?: string | Context | null): SpanHandle {
    const tracer = this.tracer;
    if (!otel || !tracer) return NOOP;
    const api = otel;
    const base = typeof parent === 'string' ? stored(api, parent) : (parent ?? api.context.active());
    const span: Span = tracer.startSpan(name, { attributes }, base);
    const context = api.trace.setSpan(base, span);
    return {
      context,
      within: (fn) => api.context.with(context, fn),
      set: (more) => span.setAttributes(more),
      fail: (error) => {
        // String() throws for some thrown values (a null prototype): that must not replace the error. Message and
        // stack are capped as a stored error's are: an exporter sends what the span records.
        const text = error instanceof Error ? String(error.message) : typeof error === 'string' ? error : safeString(error);
        const message = capMessage(text);
        const stack = error instanceof Error && typeof error.stack === 'string' ? capStack(error.stack) : undefined;
        const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
        span.recordException(
          error instanceof Error
            ? { name: error.name, message, stack, ...((typeof code === 'string' || typeof code === 'number') && { code }) }
            : message,
        );
        span.setStatus({ code: api.SpanStatusCode.ERROR, message });
      },
      end: () => span.end(),
    };
  }

  /** Runs `fn` inside a new span (as `start` makes it), records what it throws, and ends the span either way. */
  trace<T>(
    name: string,
    attributes: Record<string, string | number | boolean>,
    parent: string | Context | null | undefined,
    fn: (span: SpanHandle) => Promise<T>,
  ): Promise<T> {
    const span = this.start(name, attributes, parent);
    return span === NOOP ? fn(span) : this.traced(span, fn);
  }

  private async traced<T>(span: SpanHandle, fn: (span: SpanHandle) => Promise<T>): Promise<T> {
    try {
      return await span.within(() => fn(span));
    } catch (error) {
      span.fail(error);
      throw error;
    } finally {
      span.end();
    }
  }
}
