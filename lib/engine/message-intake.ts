/** Where an incoming message becomes a turn, and the observer a blocking SendMessage waits with. */
import { randomUUID } from 'node:crypto';
import { A2AError, acceptsNoMoreMessages, busyElsewhere, invalidParams } from '../errors.js';
import type { CallContext } from '../context/request-state.js';
import type { Message, StreamResponse } from '../protocol/schemas.js';
import type { SendMessageRequest } from '../protocol/requests.js';
import type { Execution } from './execution/execution.js';
import type { ExecutionObserver, Turn, TurnOutcome } from './execution/turn.js';
import type { EngineLifecycle, Executions, TaskReader } from './lifecycle.js';
import type { PushNotificationService } from './push/push-service.js';
import { taskKey, type TaskScope, type VersionedTask } from './seams/task-store.js';
import { isInterrupted, isTerminal } from './task-state.js';

interface MessageIntakeDeps {
  readonly executions: Executions;
  readonly lifecycle: EngineLifecycle;
  readonly reader: TaskReader;
  readonly inputModes: MediaTypeFilter;
  /** Push configured, or PushNotificationNotSupported (inline configs included). */
  pushService(): PushNotificationService;
  readonly leased: boolean;
}

export const scopeOf = (call: CallContext): TaskScope => ({ tenant: call.tenant, owner: call.caller.id });

interface FollowUpDeps {
  readonly executions: Executions;
  /** Several replicas: the execution waits for the task's lease and decides then. */
  readonly leased: boolean;
}

/**
 * The execution that takes a message for `taskId`. The stored copy may be old; its version makes
 * the first write fail if so, and the execution then decides on a fresh one.
 */
async function routeFollowUp(
  deps: FollowUpDeps,
  scope: TaskScope,
  _taskId: string,
  contextId: string | undefined,
  read: () => Promise<VersionedTask>,
): Promise<Execution> {
  const stored = await read();
  const task = stored.task;
  if (contextId && contextId !== task.contextId) {
    throw invalidParams([{ field: 'message.contextId', description: `does not match the contextId of task ${task.id}` }]);
  }
  if (isTerminal(task.status.state)) throw acceptsNoMoreMessages(task.id);
  const key = taskKey(scope, task.id);
  const { executions } = deps;
  const live = executions.get(key);
  if (live) return live;
  const parked = isInterrupted(task.status.state) || deps.leased ? stored : await parkedNow(executions, task.id, key, read);
  return executions.getOrOpen(key, scope, task.id, task.contextId ?? '', parked);
}

/**
 * Mid-turn when read and no turn runs here: re-read. Parked since, it takes this message; still
 * mid-turn, the turn runs elsewhere, where this message cannot queue, so it is refused.
 */
async function parkedNow(
  executions: Executions,
  taskId: string,
  key: string,
  read: () => Promise<VersionedTask>,
): Promise<VersionedTask | undefined> {
  const fresh = await read();
  if (executions.get(key)) return undefined; // a turn started here meanwhile: queue behind it
  const state = fresh.task.status.state;
  if (isTerminal(state)) throw acceptsNoMoreMessages(taskId);
  if (!isInterrupted(state)) throw busyElsewhere(taskId);
  return fresh;
}

export class MessageIntake {
  readonly #deps: MessageIntakeDeps;
  readonly #followUps: FollowUpDeps;

  constructor(deps: MessageIntakeDeps) {
    this.#deps = deps;
    this.#followUps = { executions: deps.executions, leased: deps.leased };
  }

  async begin(call: CallContext, params: SendMessageRequest, observer: ExecutionObserver): Promise<Turn> {
    const inline = params.configuration?.taskPushNotificationConfig;
    if (!inline) return this.#beginTurn(call, params, observer);
    const taskId = params.message.taskId || undefined;
    return this.#deps.pushService().withInline(scopeOf(call), inline, taskId, () => this.#beginTurn(call, params, observer));
  }

  /** A new interaction reaches the submit within the call (no await before it). */
  async #beginTurn(call: CallContext, params: SendMessageRequest, observer: ExecutionObserver): Promise<Turn> {
    this.#deps.lifecycle.refuseWhenClosing();
    const message = params.message;
    if (message.role !== 'ROLE_USER') {
      throw invalidParams([{ field: 'message.role', description: 'a message sent to the agent must have role ROLE_USER' }]);
    }
    this.#checkMediaTypes(message);
    if (message.taskId) return this.#beginFollowUp(call, params, observer, message.taskId);
    const scope = scopeOf(call);
    const taskId = randomUUID();
    const execution = this.#deps.executions.open(taskKey(scope, taskId), scope, taskId, message.contextId || randomUUID());
    return this.#submit(execution, call, params, observer);
  }

  async #beginFollowUp(call: CallContext, params: SendMessageRequest, observer: ExecutionObserver, taskId: string): Promise<Turn> {
    const scope = scopeOf(call);
    const reader = this.#deps.reader;
    const execution = await routeFollowUp(this.#followUps, scope, taskId, params.message.contextId, () => reader.read(scope, taskId));
    return this.#submit(execution, call, params, observer);
  }

  #submit(execution: Execution, call: CallContext, params: SendMessageRequest, observer: ExecutionObserver): Turn {
    const message = params.message;
    const userMessage: Message = { ...message, taskId: execution.taskId, contextId: execution.contextId };
    return execution.submit({ message: userMessage, call, params, observer });
  }

  #checkMediaTypes(message: Message): void {
    for (const [index, part] of message.parts.entries()) {
      if (part.mediaType && !this.#deps.inputModes.accepts(part.mediaType)) {
        throw new A2AError('ContentTypeNotSupported', `Media type ${part.mediaType} of message.parts[${index}] is not accepted by this agent`);
      }
    }
  }
}

/** The observer of a blocking SendMessage: resolves `outcome` when the turn ends (or at the first task with returnImmediately). */
export class BlockingAnswer implements ExecutionObserver {
  readonly outcome: Promise<TurnOutcome>;
  turn: Turn | undefined;
  #settle!: (outcome: TurnOutcome) => void;
  readonly #returnImmediately: boolean;
  readonly #call: CallContext;
  #watching = false;

  constructor(call: CallContext, returnImmediately: boolean) {
    this.#call = call;
    this.#returnImmediately = returnImmediately;
    this.outcome = new Promise<TurnOutcome>((resolve) => (this.#settle = resolve));
  }

  onEvent(event: StreamResponse): void {
    if (!('task' in event)) return;
    if (this.#returnImmediately) this.#settle({ kind: 'task', task: event.task });
    else if (!this.#watching) {
      // A client that leaves stops waiting; the turn goes on without an observer.
      this.#watching = true;
      const left = (): void => {
        this.turn?.detach();
        this.#settle({ kind: 'error', error: new A2AError('Internal', 'The client closed the request') });
      };
      // The connection's close when offered: the request's AbortSignal costs a controller and a listener.
      const call = this.#call;
      if (call.onClientClose) call.onClientClose(left);
      else call.signal?.addEventListener('abort', left, { once: true });
    }
  }

  onEnd(outcome: TurnOutcome): void {
    this.#settle(outcome);
  }
}

/** Matches a part's media type against the modes an agent card declares (with type/* and * /* wildcards). */
export class MediaTypeFilter {
  readonly #exact = new Set<string>();
  readonly #prefixes = new Set<string>();
  #any = false;

  constructor(modes: readonly string[]) {
    for (const mode of modes) {
      const normalized = mode.split(';')[0].trim().toLowerCase();
      if (normalized === '*/*' || normalized === '*') this.#any = true;
      else if (normalized.endsWith('/*')) this.#prefixes.add(normalized.slice(0, -1));
      else this.#exact.add(normalized);
    }
    // A card that declares no input modes restricts nothing.
    if (modes.length === 0) this.#any = true;
  }

  accepts(mediaType: string): boolean {
    if (this.#any) return true;
    const normalized = mediaType.split(';')[0].trim().toLowerCase();
    if (this.#exact.has(normalized)) return true;
    const slash = normalized.indexOf('/');
    return slash > 0 && this.#prefixes.has(normalized.slice(0, slash + 1));
  }
}

export interface StreamObserver extends ExecutionObserver {
  /** `closed`: the stream ends without a final state (a subscription ended by a shutdown). */
  onEnd(outcome: TurnOutcome | { readonly kind: 'closed' }): void;
  /** Opens the stream with nothing to send yet (a resumed subscription that missed nothing). */
  begin?(): void;
}
