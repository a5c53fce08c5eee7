/**
 * A span per webhook request of a push delivery (kind CLIENT), a child of the turn or cancel whose event it delivers (the dispatcher runs a delivery
 * in that event's context), else of the task's latest turn known here; its W3C `traceparent` goes with the request so the receiver joins the trace.
 */
import type { PushAttemptTrace, PushAttemptTracing } from '../engine/push/push-deliverer.js';
import { A2A_SPANS, A2A_SPAN_ATTRIBUTES as ATTR, SPAN_KIND, SPAN_STATUS_ERROR } from './span-names.js';
import { isValidSpanContext, traceparentOf } from './task-traces.js';
import type { TracingCore } from './tracing-core.js';

export function pushSpans(core: TracingCore): PushAttemptTracing {
  return {
    traceAttempt(info): PushAttemptTrace | undefined {
      const tracer = core.tracer;
      if (!tracer) return undefined;
      const api = core.api;
      let parent = api.context.active();
      if (!isValidSpanContext(api.trace.getSpanContext(parent))) {
        const known = core.traces.get(info.taskId);
        const context = known?.turn ?? known?.origin;
        if (context) parent = api.trace.setSpanContext(parent, context);
      }
      const attributes = {
        [ATTR.taskId]: info.taskId,
        [ATTR.pushConfigId]: info.configId,
        [ATTR.pushAttempt]: info.attempt,
        [ATTR.httpMethod]: 'POST',
      };
      const span = tracer.startSpan(A2A_SPANS.pushAttempt, { kind: SPAN_KIND.client, attributes }, parent);
      const spanContext = span.spanContext();
      return {
        traceparent: isValidSpanContext(spanContext) ? traceparentOf(spanContext) : undefined,
        end(outcome, status, host) {
          span.setAttribute(ATTR.pushOutcome, outcome);
          if (status !== undefined) span.setAttribute(ATTR.httpStatus, status);
          if (host !== undefined) span.setAttribute(ATTR.serverAddress, host);
          if (outcome !== 'delivered') span.setStatus({ code: SPAN_STATUS_ERROR, message: outcome });
          span.end();
        },
      };
    },
  };
}
