/**
 * Where a task's trace is known: the span of the request that started it (its origin) and of its latest turn, kept per task in this process
 * (bounded), and the origin as a W3C `traceparent` string for the stores that keep it beside the task (so another replica links to it).
 */
import type { SpanContextLike } from './trace-api.js';

/** What this process knows of one task's trace. */
interface TaskTrace {
  origin?: SpanContextLike;
  /** The latest turn's span: what a subscriber follows, what a webhook attempt is a child of. */
  turn?: SpanContextLike;
}

// Tasks this process traced recently; the oldest are forgotten first (their stores still know the origin).
const MAX_TASKS = 10_000;

export class TaskTraces {
  readonly #tasks = new Map<string, TaskTrace>();

  get(key: string): TaskTrace | undefined {
    return this.#tasks.get(key);
  }

  /** The entry of `key`, made (and the oldest dropped past the bound) when missing. */
  entry(key: string): TaskTrace {
    let trace = this.#tasks.get(key);
    if (!trace) {
      if (this.#tasks.size >= MAX_TASKS) this.#tasks.delete(this.#tasks.keys().next().value!);
      this.#tasks.set(key, (trace = {}));
    }
    return trace;
  }
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** `00-<trace id>-<span id>-<flags>`: a span context as W3C Trace Context writes it. */
export function traceparentOf(context: SpanContextLike): string {
  return `00-${context.traceId}-${context.spanId}-${(context.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** A stored `traceparent` as a (remote) span context; undefined for anything else. */
export function spanContextOf(traceparent: string | undefined): SpanContextLike | undefined {
  const match = traceparent === undefined ? null : TRACEPARENT.exec(traceparent);
  if (!match || /^0+$/.test(match[1]) || /^0+$/.test(match[2])) return undefined;
  return { traceId: match[1], spanId: match[2], traceFlags: Number.parseInt(match[3], 16), isRemote: true };
}

/** A span context worth linking to or parenting on (the API's invalid one is all zeros). */
export function isValidSpanContext(context: SpanContextLike | undefined): context is SpanContextLike {
  return context !== undefined && !/^0+$/.test(context.traceId) && !/^0+$/.test(context.spanId);
}
