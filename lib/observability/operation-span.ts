/**
 * The span of one A2A operation (kind SERVER, named `a2a.v1.A2AService/<Method>` after the RPC semantic conventions): opened by the request skeleton
 * (lib/http/serve.ts) once the method is known, active while the engine serves it, ended with its answer (a stream: when it closes).
 */
import type { Request, Response } from 'express';
import { A2AError } from '../errors.js';
import type { A2AMethod, Operation } from '../http/operations.js';
import { OPERATIONS } from '../http/operations.js';
import { A2A_RPC_SERVICE, A2A_SPAN_ATTRIBUTES as ATTR, SPAN_KIND, SPAN_STATUS_ERROR, shortState } from './span-names.js';
import type { ContextLike, SpanLike } from './trace-api.js';
import { endKitSpan, type KitSpan, type TracingCore } from './tracing-core.js';
import { isValidSpanContext, spanContextOf } from './task-traces.js';

/** What the request skeleton does with an operation's span. */
export interface OperationTrace {
  /** The params as read: the task and context ids they name. */
  params(params: unknown): void;
  /** Runs `fn` with the span active (the turn, the store calls and the agent's own spans nest in it). */
  run<T>(fn: () => T): T;
  /** A unary answer: its ids and state are recorded and the span ends. */
  succeeded(result: unknown): void;
  /** The request failed (answered with an error): the span ends with the error's kind. */
  failed(error: unknown): void;
  /** A stream: opened with the span active; the span ends when the response closes. */
  stream<T>(res: Response, open: () => Promise<T>): Promise<T>;
}

/** Spans for the operations of one router; `start` answers undefined while OpenTelemetry is loading. */
export interface OperationTracing {
  start(req: Request, operation: Operation, binding: 'jsonrpc' | 'http+json', version: string): OperationTrace | undefined;
}

/** The v1.0 method of each operation row (the span's name and `rpc.method`). */
const METHOD_OF = new Map<Operation, A2AMethod>(Object.entries(OPERATIONS).map(([method, operation]) => [operation, method as A2AMethod]));

type Loose = Record<string, unknown> | undefined;
const stringOf = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

export class OperationSpan implements OperationTrace, KitSpan {
  /** SendMessage naming an existing task: its turn links to the request that started the task. */
  followUp = false;
  storeUpdates = 0;
  readonly span: SpanLike;
  readonly #core: TracingCore;
  readonly #method: A2AMethod;
  readonly #context: ContextLike;
  #taskId: string | undefined;
  #contextId: string | undefined;
  #ended = false;

  constructor(core: TracingCore, span: SpanLike, method: A2AMethod, parent: ContextLike) {
    this.#core = core;
    this.span = span;
    this.#method = method;
    this.#context = core.enter(parent, this).setValue(OPERATION_KEY, this);
  }

  params(params: unknown): void {
    const p = params as Loose;
    const message = p?.message as Loose;
    const taskId = stringOf(message?.taskId) ?? stringOf(p?.taskId) ?? (this.#method === 'ListTasks' ? undefined : stringOf(p?.id));
    this.followUp = stringOf(message?.taskId) !== undefined;
    this.setTask(taskId, stringOf(message?.contextId) ?? stringOf(p?.contextId));
    // A subscriber follows the task's latest turn (when this process ran it).
    if (this.#method === 'SubscribeToTask' && taskId) this.#core.linkTo(this.span, this.#core.traces.get(taskId)?.turn, 'turn.followed');
  }

  /** Records the ids once known (a new task's come from its turn). */
  setTask(taskId: string | undefined, contextId: string | undefined): void {
    if (taskId && !this.#taskId) this.span.setAttribute(ATTR.taskId, (this.#taskId = taskId));
    if (contextId && !this.#contextId) this.span.setAttribute(ATTR.contextId, (this.#contextId = contextId));
  }

  run<T>(fn: () => T): T {
    return this.#core.api.context.with(this.#context, fn);
  }

  succeeded(result: unknown): void {
    const r = result as Loose;
    const task = (r?.task as Loose) ?? (r?.status !== undefined ? r : undefined);
    const message = r?.message as Loose;
    if (task) {
      this.setTask(stringOf(task.id), stringOf(task.contextId));
      const state = stringOf((task.status as Loose)?.state);
      if (state) this.span.setAttribute(ATTR.taskState, shortState(state));
    } else if (message) {
      this.setTask(stringOf(message.taskId), stringOf(message.contextId));
      this.span.setAttribute(ATTR.taskState, 'message');
    }
    this.end();
  }

  /** The state a turn of this request ended in (`a2a.task.state`, unless the span has ended). */
  answered(state: string): void {
    if (!this.#ended) this.span.setAttribute(ATTR.taskState, state);
  }

  failed(error: unknown): void {
    if (this.#ended) return;
    const kind = error instanceof A2AError ? error.kind : 'internal';
    this.span.setAttribute(ATTR.errorType, kind);
    // The kind, never the message: an error's text may quote what the client sent.
    this.span.setStatus({ code: SPAN_STATUS_ERROR, message: kind });
    this.end();
  }

  stream<T>(res: Response, open: () => Promise<T>): Promise<T> {
    res.once('close', () => this.end());
    return this.run(open);
  }

  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    endKitSpan(this);
  }
}

/** The operation span a context holds (the turn started in it reads whether it is a follow-up). */
export const OPERATION_KEY = Symbol.for('a2a-express-kit.operation');

/** Starts operation spans; the parent is the active span, else the request's own `traceparent`. */
export function operationTracing(core: TracingCore): OperationTracing {
  return {
    start(req, operation, binding, version) {
      const tracer = core.tracer;
      const method = METHOD_OF.get(operation);
      if (!tracer || !method) return undefined;
      const api = core.api;
      let parent = api.context.active();
      // No span around the request (no HTTP instrumentation, no a2aTracing extraction): the caller's trace, if it sent one.
      if (!isValidSpanContext(api.trace.getSpanContext(parent))) {
        const remote = spanContextOf(typeof req.headers.traceparent === 'string' ? req.headers.traceparent.trim() : undefined);
        if (remote) parent = api.trace.setSpanContext(parent, remote);
      }
      const attributes = {
        [ATTR.rpcSystem]: 'a2a',
        [ATTR.rpcService]: A2A_RPC_SERVICE,
        [ATTR.rpcMethod]: method,
        [ATTR.binding]: binding,
        [ATTR.protocolVersion]: version,
      };
      const span = tracer.startSpan(`${A2A_RPC_SERVICE}/${method}`, { kind: SPAN_KIND.server, attributes }, parent);
      return new OperationSpan(core, span, method, parent);
    },
  };
}
