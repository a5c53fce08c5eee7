/**
 * The engine's spans (EngineTracing): one per turn, a child of the request that runs it and linked to the request that started its task when that is
 * another one (a follow-up, a resumed turn); one per cancel, with its steps as events.
 */
import type { EngineTracing, TracedTask } from '../engine/engine-events.js';
import type { TaskScope } from '../engine/seams/task-store.js';
import { A2AError } from '../errors.js';
import type { Turn, TurnOutcome } from '../engine/execution/turn.js';
import { A2A_SPANS, A2A_SPAN_ATTRIBUTES as ATTR, A2A_SPAN_EVENTS, SPAN_KIND, SPAN_STATUS_ERROR, shortState } from './span-names.js';
import { OPERATION_KEY, type OperationSpan } from './operation-span.js';
import { endKitSpan, type KitSpan, type TracingCore } from './tracing-core.js';
import type { SpanContextLike, SpanLike } from './trace-api.js';

/** The turn span a context holds: the traced store reads the origin a new task is created with. */
export const TURN_KEY = Symbol.for('a2a-express-kit.turn');

/** A turn's span; `origin`: for a task's first turn, the span of the request that started it. */
export class TurnSpan implements KitSpan {
  readonly span: SpanLike;
  storeUpdates = 0;
  readonly origin: SpanContextLike | undefined;
  readonly #operation: OperationSpan | undefined;
  #ended = false;

  constructor(span: SpanLike, origin: SpanContextLike | undefined, operation: OperationSpan | undefined) {
    this.span = span;
    this.origin = origin;
    this.#operation = operation;
  }

  get ended(): boolean {
    return this.#ended;
  }

  end(outcome: TurnOutcome): void {
    if (this.#ended) return;
    this.#ended = true;
    const span = this.span;
    if (outcome.kind === 'error') {
      span.setAttribute(ATTR.turnOutcome, 'error');
      span.setAttribute(ATTR.errorType, outcome.error.kind);
      span.setStatus({ code: SPAN_STATUS_ERROR, message: outcome.error.kind });
    } else {
      const state = outcome.kind === 'message' ? 'message' : shortState(outcome.task.status.state);
      span.setAttribute(ATTR.turnOutcome, state);
      // A stream's operation has no unary answer to read its state from: the turn it ran gives it.
      this.#operation?.answered(state);
    }
    endKitSpan(this);
  }
}

const CANCEL_STEPS: Readonly<Record<string, string>> = {
  hook: A2A_SPAN_EVENTS.cancelHookReturned,
  grace: A2A_SPAN_EVENTS.cancelGraceOver,
};

/**
 * The first turn of a task names its origin, which the traced store keeps when the task is created.
 */
export function engineSpans(core: TracingCore): EngineTracing {
  return {
    startTurn(task: TracedTask, turn: Turn, resumed: string | undefined, start: (turn: Turn) => void): void {
      const tracer = core.tracer;
      if (!tracer) return start(turn);
      const parent = core.api.context.active();
      const operation = parent.getValue(OPERATION_KEY) as OperationSpan | undefined;
      const followUp = resumed === undefined && operation?.followUp === true;
      const attributes: Record<string, string | boolean> = {
        [ATTR.taskId]: task.taskId,
        [ATTR.contextId]: task.contextId,
        [ATTR.followUp]: followUp,
      };
      if (resumed !== undefined) attributes[ATTR.resumed] = resumed;
      const span = tracer.startSpan(A2A_SPANS.turn, { kind: SPAN_KIND.internal, attributes }, parent);
      operation?.setTask(task.taskId, task.contextId);
      const later = followUp || resumed !== undefined;
      const trace = new TurnSpan(span, later ? undefined : (operation?.span ?? span).spanContext(), operation);
      core.traces.entry(task.taskId).turn = span.spanContext();
      if (later) core.findOrigin(task.scope, task.taskId, (origin) => (trace.ended ? undefined : core.linkTo(span, origin, 'task.origin')));
      turn.trace = trace;
      core.api.context.with(core.enter(parent, trace).setValue(TURN_KEY, trace), () => start(turn));
    },

    traceCancel<T>(task: TracedTask, run: (note: (step: 'hook' | 'grace') => void) => Promise<T>): Promise<T> {
      const tracer = core.tracer;
      if (!tracer) return run(() => undefined);
      const parent = core.api.context.active();
      const span = tracer.startSpan(
        A2A_SPANS.cancel,
        { kind: SPAN_KIND.internal, attributes: { [ATTR.taskId]: task.taskId, [ATTR.contextId]: task.contextId } },
        parent,
      );
      let ended = false;
      core.findOrigin(task.scope, task.taskId, (origin) => (ended ? undefined : core.linkTo(span, origin, 'task.origin')));
      const kit: KitSpan = { span, storeUpdates: 0 };
      const done = core.api.context.with(core.enter(parent, kit), () => run((step) => span.addEvent(CANCEL_STEPS[step])));
      const finish = (outcome: string): void => {
        ended = true;
        span.setAttribute(ATTR.cancelOutcome, outcome);
        endKitSpan(kit);
      };
      done.then(
        () => finish('canceled'),
        (error: unknown) => {
          const kind = error instanceof A2AError ? error.kind : 'internal';
          if (kind !== 'TaskNotCancelable') span.setStatus({ code: SPAN_STATUS_ERROR, message: kind });
          finish(kind === 'TaskNotCancelable' ? 'not_cancelable' : 'error');
        },
      );
      return done;
    },
  };
}

/**
 * router.openTaskPublisher() for handed-off work (a queue worker, maybe in another process): a span in the worker's context, linked to the request
 * that started the task, with the read as its event.
 */
export function publisherSpan<T>(core: TracingCore, scope: TaskScope, taskId: string, open: () => Promise<T>): Promise<T> {
  const tracer = core.tracer;
  if (!tracer) return open();
  const parent = core.api.context.active();
  const span = tracer.startSpan(A2A_SPANS.publisherOpen, { kind: SPAN_KIND.internal, attributes: { [ATTR.taskId]: taskId } }, parent);
  let ended = false;
  core.findOrigin(scope, taskId, (origin) => (ended ? undefined : core.linkTo(span, origin, 'task.origin')));
  const kit: KitSpan = { span, storeUpdates: 0 };
  const opened = core.api.context.with(core.enter(parent, kit), open);
  const end = (): void => {
    ended = true;
    endKitSpan(kit);
  };
  opened.then(end, (error: unknown) => {
    const kind = error instanceof A2AError ? error.kind : 'internal';
    span.setAttribute(ATTR.errorType, kind);
    span.setStatus({ code: SPAN_STATUS_ERROR, message: kind });
    end();
  });
  return opened;
}
