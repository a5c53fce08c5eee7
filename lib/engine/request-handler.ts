/**
 * The protocol core, one small method per A2A operation, independent of Express.
 * Every method resolves the task through the store with the caller's scope before it touches a
 * live execution, so another owner's or tenant's task is indistinguishable from a missing one.
 */
import type { A2ACaller, A2ARequestContext } from '../context/carrier.js';
import { A2AError, invalidParams } from '../errors.js';
import type { Logger } from '../logger.js';
import type { AgentCard, Task, TaskPushNotificationConfig } from '../protocol/schemas.js';
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
  type CreateTaskPushNotificationConfigRequest,
  type DeleteTaskPushNotificationConfigRequest,
  type GetTaskPushNotificationConfigRequest,
  type ListTaskPushNotificationConfigsRequest,
  type ListTaskPushNotificationConfigsResponse,
} from '../protocol/requests.js';
import type { Execution } from './execution/execution.js';
import { answerFinished } from './execution/cancel.js';
import { BlockingAnswer } from './blocking-answer.js';
import { Executions } from './executions.js';
import { boundBus, boundLeases, boundStore, DEFAULT_STORE_TIMEOUT_MS } from './bounded-seams.js';
import { Deadlines } from './deadlines.js';
import { StoreOutage } from './store-outage.js';
import { OwedWrites } from './owed-writes.js';
import { EngineLifecycle } from './lifecycle.js';
import { MessageIntake, scopeOf } from './message-intake.js';
import { TaskReader } from './task-reader.js';
import { subscribeToTask } from './task-subscription.js';
import { LocalExecutionRegistry, type ExecutionRegistry } from './seams/execution-registry.js';
import type { AgentExecutor } from './executor.js';
import { InvalidPageTokenError, type TaskScope, type TaskStore } from './seams/task-store.js';
import { InProcessTaskEventBus, type TaskEventBus } from './seams/task-event-bus.js';
import type { TaskLeases } from './seams/task-leases.js';
import { taskKey } from './task-key.js';
import { isTerminal } from './task-state.js';
import type { ExecutionObserver, TurnOutcome } from './execution/turn.js';
import { openTaskPublisher, type TaskPublisher } from './task-publisher.js';
import { MediaTypeFilter } from './media-types.js';
import type { EngineEvents } from './engine-events.js';
import type { PushNotificationService } from './push/push-service.js';
import type { PushProtocol } from './seams/push-config-store.js';

/** Who is calling and under which tenant: resolved once per request by the transport. */
export interface CallContext {
  readonly caller: A2ACaller;
  readonly tenant: string;
  /** Extensions activated for this request. */
  readonly extensions: readonly string[];
  readonly requestContext: A2ARequestContext;
  /** The SSE `Last-Event-ID` a resuming client sent (SubscribeToTask resumes after it). */
  readonly lastEventId?: string;
  /** Calls `listener` once if the client leaves before the answer is finished (cheaper than the signal's abort). */
  readonly onClientClose?: (listener: () => void) => void;
}

export type ExtendedAgentCardProvider = AgentCardInput | ((caller: A2ACaller) => AgentCardInput | Promise<AgentCardInput>);

export interface RequestHandlerOptions {
  readonly agentCard: AgentCard;
  readonly executor: AgentExecutor;
  readonly taskStore: TaskStore;
  readonly logger: Logger;
  readonly cancelGracePeriodMs: number;
  /** A turn not ended after this long is failed; 0 or absent: no deadline. */
  readonly turnTimeoutMs?: number;
  readonly extendedAgentCard?: ExtendedAgentCardProvider;
  /** Where committed events are published and followed; in-process by default. */
  readonly bus?: TaskEventBus;
  /** Which tasks run in this process; a local map by default. */
  readonly registry?: ExecutionRegistry<Execution>;
  /** Per-task leases (several replicas on one store); none by default. */
  readonly leases?: TaskLeases;
  /** How long a follow-up waits for a lease held by another replica. Default 30000 ms. */
  readonly leaseWaitMs?: number;
  /** Metrics and lifecycle hooks. */
  readonly events?: EngineEvents;
  /** Push notification configs and delivery; absent: the push methods answer PushNotificationNotSupported. */
  readonly push?: PushNotificationService;
  /**
   * How long any call to the task store, the bus's history, the leases (plus their wait) or the push
   * stores may take before the request answers unavailable (503 / -32603). Default 5000 ms; 0: none.
   */
  readonly storeTimeoutMs?: number;
}

/** Receives a stream's events; `onEnd` closes it. */
export interface StreamObserver extends ExecutionObserver {
  /** `closed`: the stream ends without a final state (a subscription ended by a shutdown). */
  onEnd(outcome: TurnOutcome | { readonly kind: 'closed' }): void;
  /** Opens the stream with nothing to send yet (a resumed subscription that missed nothing). */
  begin?(): void;
}

/** At most `historyLength` newest messages; none (field omitted) for 0. */
export function withHistoryLength(task: Task, historyLength: number | undefined): Task {
  if (historyLength === undefined || !task.history) return task;
  if (historyLength === 0) {
    const { history: _dropped, ...rest } = task;
    return rest;
  }
  return task.history.length <= historyLength ? task : { ...task, history: task.history.slice(-historyLength) };
}

export class A2ARequestHandler {
  readonly #options: RequestHandlerOptions;
  readonly #executions: Executions;
  readonly #lifecycle: EngineLifecycle;
  readonly #reader: TaskReader;
  readonly #intake: MessageIntake;
  readonly #bus: TaskEventBus;

  constructor(options: RequestHandlerOptions) {
    // Every seam call the engine makes goes through one Deadlines (one promise per call), which
    // also tells the outage account how each call ended.
    const deadlines = new Deadlines(options.storeTimeoutMs ?? DEFAULT_STORE_TIMEOUT_MS, new StoreOutage(options.logger));
    options = {
      ...options,
      taskStore: boundStore(options.taskStore, deadlines),
      bus: options.bus && boundBus(options.bus, deadlines),
      leases: options.leases && boundLeases(options.leases, deadlines),
    };
    options.push?.useDeadlines(deadlines);
    this.#options = options;
    const { taskStore: store, logger, leases } = options;
    const bus = (this.#bus = options.bus ?? new InProcessTaskEventBus());
    const registry = options.registry ?? new LocalExecutionRegistry<Execution>();
    const owed = new OwedWrites({ logger, leases, settle: (write) => this.#lifecycle.settleOwed(write) });
    const deps = { store, bus, executor: options.executor, logger, events: options.events, leases, owed };
    const timing = { turnTimeoutMs: options.turnTimeoutMs ?? 0, leaseWaitMs: options.leaseWaitMs ?? 30_000, cancelGraceMs: options.cancelGracePeriodMs };
    const executions = (this.#executions = new Executions(registry, { ...deps, ...timing }, () => this.#lifecycle.executionIdle()));
    const card = options.agentCard;
    const inputModes = new MediaTypeFilter([...card.defaultInputModes, ...card.skills.flatMap((s) => s.inputModes ?? [])]);
    const lifecycle = (this.#lifecycle = new EngineLifecycle({ store, executions, logger, leases, owed }));
    const reader = (this.#reader = new TaskReader(store, lifecycle, logger));
    const pushService = () => this.#pushService();
    this.#intake = new MessageIntake({ executions, lifecycle, reader, inputModes, pushService, leased: leases !== undefined });
  }

  /** Resolves once start-up settlement is over (at once when there is none). */
  get ready(): Promise<void> {
    return this.#lifecycle.recovering ?? Promise.resolve();
  }

  /** Executions currently live (0 when every task is parked or finished). */
  get liveExecutions(): number {
    return this.#executions.size;
  }

  /** Observers: blocking sends and streams of live turns, and task subscribers. */
  get liveObservers(): number {
    let count = this.#bus.subscriberCount;
    for (const execution of this.#executions.values()) count += execution.observerCount;
    return count;
  }

  /**
   * A publisher for the work execute() handed off (`events.handOff()`), for a queue worker in this
   * process or in another one sharing the store and bus. `scope` is the task's tenant and owner
   * (the HandOff carries it): a task not visible in it answers TaskNotFound and nothing is held.
   * A task already terminal gets a closed publisher whose signal has fired.
   */
  async openTaskPublisher(scope: TaskScope, taskId: string): Promise<TaskPublisher> {
    if (typeof scope?.tenant !== 'string' || typeof scope.owner !== 'string' || typeof taskId !== 'string') {
      throw new TypeError('openTaskPublisher(scope, taskId): scope must be { tenant, owner } (strings), as events.handOff() returns it');
    }
    const stored = await this.#reader.read(scope, taskId);
    return openTaskPublisher(this.#executions.deps, taskKey(scope, taskId), { tenant: scope.tenant, owner: scope.owner }, stored);
  }

  get agentCard(): AgentCard {
    return this.#options.agentCard;
  }

  async sendMessage(call: CallContext, params: SendMessageRequest): Promise<SendMessageResponse> {
    const answer = new BlockingAnswer(call, params.configuration?.returnImmediately === true);
    const begun = this.#intake.begin(call, params, answer);
    answer.turn = begun instanceof Promise ? await begun : begun;
    const result = await answer.outcome;
    if (result.kind === 'error') throw result.error;
    if (result.kind === 'message') return { message: result.message };
    return { task: withHistoryLength(result.task, params.configuration?.historyLength) };
  }

  /** Validates, then starts the turn; events flow to `observer`. Returns a detach function. */
  async sendStreamingMessage(call: CallContext, params: SendMessageRequest, observer: StreamObserver): Promise<() => void> {
    this.#requireStreaming();
    const turn = await this.#intake.begin(call, params, observer);
    return () => turn.detach();
  }

  async getTask(call: CallContext, params: GetTaskRequest): Promise<Task> {
    const { task } = await this.#reader.read(scopeOf(call), params.id);
    return withHistoryLength(task, params.historyLength);
  }

  async listTasks(call: CallContext, params: ListTasksRequest): Promise<ListTasksResponse> {
    const pageSize = params.pageSize ?? LIST_TASKS_DEFAULT_PAGE_SIZE;
    const recovering = this.#lifecycle.recovering;
    if (recovering) await recovering;
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
      throw this.#reader.storeFailure(error);
    }
    const tasks = page.tasks.map((task) => {
      const shaped = withHistoryLength(task, params.historyLength);
      if (params.includeArtifacts === true || shaped.artifacts === undefined) return shaped;
      const { artifacts: _omitted, ...rest } = shaped;
      return rest;
    });
    return { tasks, nextPageToken: page.nextPageToken, pageSize, totalSize: page.totalSize };
  }

  /**
   * CANCELED, or TaskNotCancelable when the task is (or meanwhile became) terminal otherwise.
   * The decision is made by the task's execution on a fresh copy: the one read here only checks
   * that the caller may see the task (a terminal state never changes, so it is final already).
   */
  async cancelTask(call: CallContext, params: CancelTaskRequest): Promise<Task> {
    const scope = scopeOf(call);
    const { task } = await this.#reader.read(scope, params.id);
    if (isTerminal(task.status.state)) return answerFinished(task, this.#options.events, call.tenant);
    const contextId = task.contextId ?? '';
    const execution = this.#executions.getOrOpen(taskKey(scope, task.id), scope, task.id, contextId);
    const { caller, tenant, requestContext } = call;
    const request = { taskId: task.id, contextId, caller, tenant, metadata: params.metadata, requestContext };
    return execution.cancel(request, this.#options.cancelGracePeriodMs);
  }

  /**
   * The current task first, then its committed events, until it reaches a terminal state or the
   * subscriber leaves; interrupted states do not end it. Follows the bus, so it holds nothing but a
   * subscription, and sees a follow-up started by any request (see task-subscription.ts).
   */
  async subscribeToTask(call: CallContext, params: SubscribeToTaskRequest, observer: StreamObserver): Promise<() => void> {
    this.#requireStreaming();
    const scope = scopeOf(call);
    const deps = { bus: this.#bus, logger: this.#options.logger, lifecycle: this.#lifecycle };
    const read = () => this.#reader.read(scope, params.id);
    return subscribeToTask(deps, taskKey(scope, params.id), params.id, call.lastEventId, read, observer);
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

  /**
   * Graceful shutdown: refuses new messages and subscriptions from now on, lets running turns end
   * within `graceMs`, then aborts the rest (their tasks FAILED with the reason), and ends every
   * open subscription. Resolves when nothing runs. Reads and CancelTask are still served meanwhile.
   */
  close(graceMs: number): Promise<void> {
    return this.#lifecycle.close(graceMs);
  }

  /** A webhook for the task (§3.1.7); `protocol`: the version it was registered with (its deliveries' shape). */
  createTaskPushNotificationConfig(
    call: CallContext,
    params: CreateTaskPushNotificationConfigRequest,
    protocol: PushProtocol = '1.0',
  ): Promise<TaskPushNotificationConfig> {
    return this.#pushService().create(scopeOf(call), params, protocol);
  }

  getTaskPushNotificationConfig(call: CallContext, params: GetTaskPushNotificationConfigRequest): Promise<TaskPushNotificationConfig> {
    return this.#pushService().get(scopeOf(call), params);
  }

  listTaskPushNotificationConfigs(call: CallContext, params: ListTaskPushNotificationConfigsRequest): Promise<ListTaskPushNotificationConfigsResponse> {
    return this.#pushService().list(scopeOf(call), params);
  }

  deleteTaskPushNotificationConfig(call: CallContext, params: DeleteTaskPushNotificationConfigRequest): Promise<void> {
    return this.#pushService().delete(scopeOf(call), params);
  }

  /** Push configured, or PushNotificationNotSupported (every push operation, inline configs included). */
  #pushService(): PushNotificationService {
    if (!this.#options.push) throw new A2AError('PushNotificationNotSupported');
    return this.#options.push;
  }

  #requireStreaming(): void {
    if (this.#options.agentCard.capabilities.streaming !== true) {
      throw new A2AError('UnsupportedOperation', 'This agent does not declare streaming support');
    }
  }
}
