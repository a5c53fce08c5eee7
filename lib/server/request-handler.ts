/**
 * The protocol core, one small method per A2A operation, independent of Express.
 * Every method resolves the task through the store with the caller's scope before it touches a
 * live execution, so another owner's or tenant's task is indistinguishable from a missing one.
 */
import { randomUUID } from 'node:crypto';
import type { A2ACaller, A2ARequestContext } from '../context/carrier.js';
import { A2AError, invalidParams, taskNotFound } from '../errors.js';
import type { Logger } from '../logger.js';
import type { AgentCard, Message, Task } from '../protocol/schemas.js';
import type { AgentCardInput } from '../protocol/card.js';
import {
  LIST_TASKS_DEFAULT_PAGE_SIZE,
  type CancelTaskRequest,
  type GetTaskRequest,
  type ListTasksRequest,
  type ListTasksResponse,
  type SendMessageRequest,
  type SendMessageResponse,
  type SubscribeToTaskRequest,
} from '../protocol/requests.js';
import { Execution, type ExecutionDeps, type ExecutionObserver, type TurnOutcome } from './execution.js';
import { ExecutionRegistry } from './execution-registry.js';
import type { AgentExecutor } from './executor.js';
import { InvalidPageTokenError, type TaskScope, type TaskStore } from './stores/task-store.js';
import { isTerminal } from './task-state.js';
import { MediaTypeFilter } from './media-types.js';

/** Who is calling and under which tenant: resolved once per request by the transport. */
export interface CallContext {
  readonly caller: A2ACaller;
  readonly tenant: string;
  /** Extensions activated for this request. */
  readonly extensions: readonly string[];
  readonly requestContext: A2ARequestContext;
}

export type ExtendedAgentCardProvider = AgentCardInput | ((caller: A2ACaller) => AgentCardInput | Promise<AgentCardInput>);

export interface RequestHandlerOptions {
  readonly agentCard: AgentCard;
  readonly executor: AgentExecutor;
  readonly taskStore: TaskStore;
  readonly logger: Logger;
  readonly cancelGracePeriodMs: number;
  readonly extendedAgentCard?: ExtendedAgentCardProvider;
}

/** Receives a stream's events; `onEnd` closes it. */
export type StreamObserver = ExecutionObserver;

const scopeOf = (call: CallContext): TaskScope => ({ tenant: call.tenant, owner: call.caller.id });
const sameScope = (a: TaskScope, b: TaskScope): boolean => a.tenant === b.tenant && a.owner === b.owner;

/** At most `historyLength` newest messages; none (field omitted) for 0. */
export function withHistoryLength(task: Task, historyLength: number | undefined): Task {
  if (historyLength === undefined || !task.history) return task;
  if (historyLength === 0) {
    const { history: _dropped, ...rest } = task;
    return rest;
  }
  return task.history.length <= historyLength ? task : { ...task, history: task.history.slice(-historyLength) };
}

function textOf(message: Message): string {
  let text = '';
  for (const part of message.parts) {
    if ('text' in part && part.text !== undefined) text = text ? `${text}\n${part.text}` : part.text;
  }
  return text;
}

export class A2ARequestHandler {
  readonly #options: RequestHandlerOptions;
  readonly #registry = new ExecutionRegistry();
  readonly #deps: ExecutionDeps;
  readonly #inputModes: MediaTypeFilter;

  constructor(options: RequestHandlerOptions) {
    this.#options = options;
    this.#deps = {
      store: options.taskStore,
      executor: options.executor,
      logger: options.logger,
      onIdle: (execution) => this.#registry.remove(execution),
    };
    const card = options.agentCard;
    this.#inputModes = new MediaTypeFilter([...card.defaultInputModes, ...card.skills.flatMap((s) => s.inputModes ?? [])]);
  }

  /** Executions currently live (0 when every task is parked or finished). */
  get liveExecutions(): number {
    return this.#registry.size;
  }

  /** Observers (blocking sends, streams, subscribers) attached to live executions. */
  get liveObservers(): number {
    return this.#registry.observerCount;
  }

  get agentCard(): AgentCard {
    return this.#options.agentCard;
  }

  async sendMessage(call: CallContext, params: SendMessageRequest): Promise<SendMessageResponse> {
    const returnImmediately = params.configuration?.returnImmediately === true;
    let settle!: (outcome: TurnOutcome) => void;
    const outcome = new Promise<TurnOutcome>((resolve) => (settle = resolve));
    const observer: ExecutionObserver = {
      onEvent: (event) => {
        if (returnImmediately && 'task' in event) settle({ kind: 'task', task: event.task });
      },
      onEnd: settle,
    };
    const begun = this.#beginTurn(call, params, observer);
    if (begun instanceof Promise) await begun;
    const result = await outcome;
    if (result.kind === 'error') throw result.error;
    if (result.kind === 'message') return { message: result.message };
    return { task: withHistoryLength(result.task, params.configuration?.historyLength) };
  }

  /** Validates, then starts the turn; events flow to `observer`. Returns a detach function. */
  async sendStreamingMessage(call: CallContext, params: SendMessageRequest, observer: StreamObserver): Promise<() => void> {
    this.#requireStreaming();
    const execution = await this.#beginTurn(call, params, observer);
    return () => execution.unsubscribe(observer);
  }

  async getTask(call: CallContext, params: GetTaskRequest): Promise<Task> {
    const task = await this.#resolve(call, params.id);
    return withHistoryLength(task, params.historyLength);
  }

  async listTasks(call: CallContext, params: ListTasksRequest): Promise<ListTasksResponse> {
    const pageSize = params.pageSize ?? LIST_TASKS_DEFAULT_PAGE_SIZE;
    let page;
    try {
      page = await this.#options.taskStore.list(scopeOf(call), {
        pageSize,
        contextId: params.contextId || undefined,
        status: params.status,
        pageToken: params.pageToken || undefined,
        statusTimestampAfter: params.statusTimestampAfter ? new Date(params.statusTimestampAfter).toISOString() : undefined,
      });
    } catch (error) {
      if (error instanceof InvalidPageTokenError) {
        throw invalidParams([{ field: 'pageToken', description: 'is not a token this server issued' }]);
      }
      throw error;
    }
    const tasks = page.tasks.map((task) => {
      const shaped = withHistoryLength(task, params.historyLength);
      if (params.includeArtifacts === true || shaped.artifacts === undefined) return shaped;
      const { artifacts: _omitted, ...rest } = shaped;
      return rest;
    });
    return { tasks, nextPageToken: page.nextPageToken, pageSize, totalSize: page.totalSize };
  }

  async cancelTask(call: CallContext, params: CancelTaskRequest): Promise<Task> {
    const task = await this.#resolve(call, params.id);
    if (task.status.state === 'TASK_STATE_CANCELED') return task;
    if (isTerminal(task.status.state)) {
      throw new A2AError('TaskNotCancelable', `Task ${task.id} is in ${task.status.state} and cannot be canceled`, {
        metadata: { taskId: task.id },
      });
    }
    const execution = this.#executionFor(call, task);
    const canceled = await execution.cancel(
      {
        taskId: task.id,
        contextId: task.contextId ?? '',
        caller: call.caller,
        tenant: call.tenant,
        metadata: params.metadata,
        requestContext: call.requestContext,
      },
      this.#options.cancelGracePeriodMs,
    );
    return canceled ?? task;
  }

  /** Current task first, then live events; a parked task gets its snapshot and the stream ends. */
  async subscribeToTask(call: CallContext, params: SubscribeToTaskRequest, observer: StreamObserver): Promise<() => void> {
    this.#requireStreaming();
    const task = await this.#resolve(call, params.id);
    if (isTerminal(task.status.state)) {
      throw new A2AError('UnsupportedOperation', `Task ${task.id} is in a terminal state; there is nothing to subscribe to`);
    }
    const execution = this.#live(call, task.id);
    if (execution) return execution.subscribe(observer);
    observer.onEvent({ task });
    observer.onEnd({ kind: 'task', task });
    return () => {};
  }

  /** The extended card; interfaces it leaves out are the public card's. */
  async getExtendedAgentCard(call: CallContext): Promise<AgentCardInput> {
    if (this.#options.agentCard.capabilities.extendedAgentCard !== true) {
      throw new A2AError('UnsupportedOperation', 'This agent does not declare an extended agent card');
    }
    if (!call.caller.authenticated) throw new A2AError('Unauthenticated', 'The extended agent card requires an authenticated caller');
    const provider = this.#options.extendedAgentCard;
    if (!provider) throw new A2AError('ExtendedAgentCardNotConfigured');
    const card = typeof provider === 'function' ? await provider(call.caller) : provider;
    return card.supportedInterfaces ? card : { ...card, supportedInterfaces: this.#options.agentCard.supportedInterfaces };
  }

  /** Push notifications are not implemented yet: every config operation says so. */
  pushNotificationsNotSupported(): never {
    throw new A2AError('PushNotificationNotSupported');
  }

  #requireStreaming(): void {
    if (this.#options.agentCard.capabilities.streaming !== true) {
      throw new A2AError('UnsupportedOperation', 'This agent does not declare streaming support');
    }
  }

  /** The task if the caller may see it; TaskNotFound otherwise (same answer as a missing id). */
  async #resolve(call: CallContext, taskId: string): Promise<Task> {
    const task = await this.#options.taskStore.get(scopeOf(call), taskId);
    if (!task) throw taskNotFound(taskId);
    return task;
  }

  /** The live execution of a task already resolved through the store, if any (scope re-checked). */
  #live(call: CallContext, taskId: string): Execution | undefined {
    const execution = this.#registry.get(taskId);
    return execution && sameScope(execution.scope, scopeOf(call)) ? execution : undefined;
  }

  /** The live execution of `task`, or a new one rebuilt from the stored task. */
  #executionFor(call: CallContext, task: Task): Execution {
    const live = this.#live(call, task.id);
    if (live) return live;
    const execution = new Execution(this.#deps, scopeOf(call), task.id, task.contextId ?? '', task);
    this.#registry.add(execution);
    return execution;
  }

  /** Starts the turn; synchronous for a new interaction (the hot path), async only for a follow-up. */
  #beginTurn(call: CallContext, params: SendMessageRequest, observer: ExecutionObserver): Execution | Promise<Execution> {
    const message = params.message;
    if (message.role !== 'ROLE_USER') {
      throw invalidParams([{ field: 'message.role', description: 'a message sent to the agent must have role ROLE_USER' }]);
    }
    this.#checkMediaTypes(message);
    if (message.taskId) return this.#beginFollowUp(call, params, observer, message.taskId);
    const execution = new Execution(this.#deps, scopeOf(call), randomUUID(), message.contextId || randomUUID());
    this.#registry.add(execution);
    return this.#submit(execution, call, params, observer);
  }

  async #beginFollowUp(call: CallContext, params: SendMessageRequest, observer: ExecutionObserver, taskId: string): Promise<Execution> {
    const task = await this.#resolve(call, taskId);
    const contextId = params.message.contextId;
    if (contextId && contextId !== task.contextId) {
      throw invalidParams([{ field: 'message.contextId', description: `does not match the contextId of task ${task.id}` }]);
    }
    if (isTerminal(task.status.state)) {
      throw new A2AError('UnsupportedOperation', `Task ${task.id} is in a terminal state and accepts no more messages`);
    }
    return this.#submit(this.#executionFor(call, task), call, params, observer);
  }

  #submit(execution: Execution, call: CallContext, params: SendMessageRequest, observer: ExecutionObserver): Execution {
    const message = params.message;
    const userMessage: Message = { ...message, taskId: execution.taskId, contextId: execution.contextId };
    execution.submit({
      message: userMessage,
      observer,
      context: {
        userText: textOf(message),
        taskId: execution.taskId,
        contextId: execution.contextId,
        caller: call.caller,
        tenant: call.tenant,
        configuration: params.configuration,
        metadata: params.metadata,
        extensions: call.extensions,
        requestContext: call.requestContext,
      },
    });
    return execution;
  }

  #checkMediaTypes(message: Message): void {
    for (const [index, part] of message.parts.entries()) {
      if (part.mediaType && !this.#inputModes.accepts(part.mediaType)) {
        throw new A2AError('ContentTypeNotSupported', `Media type ${part.mediaType} of message.parts[${index}] is not accepted by this agent`);
      }
    }
  }
}
