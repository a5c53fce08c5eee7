/**
 * The OpenTelemetry SDK for the tracing suites: an in-memory span exporter behind a tracer the
 * router is given (`traces: { api, tracer }`), the async-local-storage context manager, and the
 * check that no span of a suite carries a forbidden string (message text, token, credential).
 */
import * as api from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

export interface TestTracing {
  readonly api: typeof api;
  readonly provider: BasicTracerProvider;
  /** Every span ended so far, in end order. */
  spans(): ReadableSpan[];
  named(name: string): ReadableSpan[];
  reset(): void;
}

let contextManager: AsyncLocalStorageContextManager | undefined;

/** A provider with an in-memory exporter; the global context manager is set once per file. */
export function testTracing(): TestTracing {
  if (!contextManager) {
    contextManager = new AsyncLocalStorageContextManager().enable();
    api.context.setGlobalContextManager(contextManager);
  }
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return {
    api,
    provider,
    spans: () => exporter.getFinishedSpans(),
    named: (name) => exporter.getFinishedSpans().filter((span) => span.name === name),
    reset: () => exporter.reset(),
  };
}

/** Every string a span holds: its name, attributes, status message, events and links (with theirs). */
export function spanStrings(span: ReadableSpan): string[] {
  const values = (attributes: api.Attributes | undefined): string[] =>
    Object.entries(attributes ?? {}).flatMap(([key, value]) => [key, ...(Array.isArray(value) ? value.map(String) : [String(value)])]);
  return [
    span.name,
    ...values(span.attributes),
    span.status.message ?? '',
    ...span.events.flatMap((event) => [event.name, ...values(event.attributes)]),
    ...span.links.flatMap((link) => values(link.attributes)),
  ];
}

/** The forbidden strings found in any span (expect it to be []). */
export function leaks(spans: readonly ReadableSpan[], forbidden: readonly string[]): string[] {
  return spans.flatMap((span) =>
    spanStrings(span)
      .filter((value) => forbidden.some((secret) => value.includes(secret)))
      .map((value) => `${span.name}: ${value}`),
  );
}

/** The span's parent span id (SDK 2.x: parentSpanContext). */
export const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

/** A W3C traceparent for a fresh remote caller, and its trace id. */
export function callerTrace(): { traceparent: string; traceId: string } {
  const hex = (bytes: number) => [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
  const traceId = hex(16);
  return { traceparent: `00-${traceId}-${hex(8)}-01`, traceId };
}
