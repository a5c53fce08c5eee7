/**
 * Where an incoming message becomes a turn (checked, given its task: a new one, or an existing one's
 * execution here or a new one), and the observer a blocking SendMessage waits with.
 */
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
  /** Several replicas share the store (leases). */
  readonly leased: boolean;
}

export const scopeOf = (call: CallContext): TaskScope => ({ tenant: call.tenant, owner: call.caller.id });

interface FollowUpDeps {
  readonly executions: Executions;
  /** Several replicas: the execution waits for the task's lease and decides then. */
  readonly leased: boolean;
}

/**
 * The execution that takes a message for task `taskId`; `read` resolves the task in the caller's
 * scope. The stored copy may be old by now; its version makes the first write (the message joining
 * the history) fail if so, and the execution then decides on a fresh one.
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
 * The task was mid-turn when read, and no turn of it runs here now: read it again. Parked since
 * (the turn here ended meanwhile), it takes this message; still mid-turn, the turn runs in another
 * process, where this message cannot queue: it is refused rather than run beside that turn.
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

  /** Starts the message's turn, with an inline push config (SendMessageConfiguration) attached when one is given. */
  async begin(call: CallContext, params: SendMessageRequest, observer: ExecutionObserver): Promise<Turn> {
    const inline = params.configuration?.taskPushNotificationConfig;
    if (!inline) return this.#beginTurn(call, params, observer);
    const taskId = params.message.taskId || undefined;
    return this.#deps.pushService().withInline(scopeOf(call), inline, taskId, () => this.#beginTurn(call, params, observer));
  }

  /** Starts the turn: a new interaction reaches the submit within the call (no await before it); a follow-up awaits its read. */
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

  /** A message to an existing task: to its live execution, or a new one (see routeFollowUp). */
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

/**
 * The observer of a blocking SendMessage: it resolves `outcome` when the turn ends (or, with
 * returnImmediately, at the first task), and stops waiting when the client leaves.
 */
export class BlockingAnswer implements ExecutionObserver {
  readonly outcome: Promise<TurnOutcome>;
  /** The turn answered, once submitted (the client leaving detaches it). */
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
      // A task to wait for (a Message reply needs no watch): a client that leaves stops
      // waiting, and the turn goes on without an observer.
      this.#watching = true;
      const left = (): void => {
        this.turn?.detach();
        this.#settle({ kind: 'error', error: new A2AError('Internal', 'The client closed the request') });
      };
      // The connection's close when the binding offers it: the request's AbortSignal (made on first
      // use) costs an AbortController and an EventTarget listener per request.
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

/** Receives a stream's events; `onEnd` closes it. */
export interface StreamObserver extends ExecutionObserver {
  /** `closed`: the stream ends without a final state (a subscription ended by a shutdown). */
  onEnd(outcome: TurnOutcome | { readonly kind: 'closed' }): void;
  /** Opens the stream with nothing to send yet (a resumed subscription that missed nothing). */
  begin?(): void;
}
