/**
 * The protocol core, one method per A2A operation. Each resolves the task in the caller's scope
 * first, so another owner's or tenant's task is indistinguishable from a missing one.
 */
import type { AgentCard, Task, TaskPushNotificationConfig } from '../protocol/schemas.js';
import type {
  CancelTaskRequest,
  GetTaskRequest,
  ListTasksRequest,
  ListTasksResponse,
  SendMessageRequest,
  SendMessageResponse,
  SubscribeToTaskRequest,
  CreateTaskPushNotificationConfigRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
} from '../protocol/requests.js';
import type { Execution } from './execution/execution.js';
import { answerFinished } from './execution/cancel.js';
import type { CallContext } from '../context/request-state.js';
import type { StreamObserver } from './message-intake.js';
import { Deadlines, deadlineHook, DEFAULT_STORE_TIMEOUT_MS } from './deadlines.js';
import { interceptSeams } from './seams/intercept.js';
import { StoreOutage } from './store-outage.js';
import { EngineLifecycle, Executions, TaskReader } from './lifecycle.js';
import { BlockingAnswer, MediaTypeFilter, MessageIntake, scopeOf } from './message-intake.js';
import type { ExtendedAgentCardProvider, RequestHandlerOptions } from './request-handler-options.js';
import { listTasks } from './task-listing.js';
import { subscribeToTask } from './task-subscription.js';
import { LocalExecutionRegistry } from './seams/execution-registry.js';
import { taskKey, type TaskScope } from './seams/task-store.js';
import { InProcessTaskEventBus, type TaskEventBus } from './seams/task-event-bus.js';
import { isTerminal, withHistoryLength } from './task-state.js';
import { openTaskPublisher, type TaskPublisher } from './task-publisher.js';
import type { PushNotificationService } from './push/push-service.js';
import type { PushProtocol } from './seams/push-config-store.js';
import type { A2ACaller } from '../context/carrier.js';
import { A2AError } from '../errors.js';
import type { AgentCardInput } from '../protocol/card.js';

export type { CallContext } from '../context/request-state.js';
export type { StreamObserver } from './message-intake.js';
export type { ExtendedAgentCardProvider } from './request-handler-options.js';

export class A2ARequestHandler {
  readonly #options: RequestHandlerOptions;
  readonly #executions: Executions;
  readonly #lifecycle: EngineLifecycle;
  readonly #reader: TaskReader;
  readonly #intake: MessageIntake;
  readonly #bus: TaskEventBus;

  constructor(options: RequestHandlerOptions) {
    // The one place the seams are wrapped: the deadline outermost, then the router's hooks.
    const deadlines = new Deadlines(options.storeTimeoutMs ?? DEFAULT_STORE_TIMEOUT_MS, new StoreOutage(options.logger));
    const hooks = [deadlineHook(deadlines), ...(options.seamHooks ?? [])];
    options = interceptSeams(options, hooks);
    options.push?.useSeamHooks(hooks);
    this.#options = options;
    const { taskStore: store, logger, leases } = options;
    const bus = (this.#bus = options.bus ?? new InProcessTaskEventBus());
    const registry = options.registry ?? new LocalExecutionRegistry<Execution>();
    const deps = { store, bus, executor: options.executor, logger, events: options.events, leases };
    const timing = {
      turnTimeoutMs: options.turnTimeoutMs ?? 0,
      leaseWaitMs: options.leaseWaitMs ?? 30_000,
      cancelGraceMs: options.cancelGracePeriodMs,
    };
    const executions = (this.#executions = new Executions(registry, { ...deps, ...timing }));
    const card = options.agentCard;
    const inputModes = new MediaTypeFilter([...card.defaultInputModes, ...card.skills.flatMap((s) => s.inputModes ?? [])]);
    const lifecycle = (this.#lifecycle = new EngineLifecycle({ store, executions, logger, leases }));
    const reader = (this.#reader = new TaskReader(store, lifecycle, logger));
    const pushService = () => this.#pushService();
    this.#intake = new MessageIntake({ executions, lifecycle, reader, inputModes, pushService, leased: leases !== undefined });
  }

  /** Resolves once start-up settlement is over (at once when there is none). */
  get ready(): Promise<void> {
    return this.#lifecycle.recovering ?? Promise.resolve();
  }

  /** Executions currently live. */
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
   * A publisher for work execute() handed off, in this process or another sharing the store and bus.
   * A task not visible in `scope` answers TaskNotFound; a terminal one gets a closed publisher.
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
    answer.turn = await this.#intake.begin(call, params, answer);
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

  listTasks(call: CallContext, params: ListTasksRequest): Promise<ListTasksResponse> {
    return listTasks(this.#options.taskStore, this.#reader, scopeOf(call), params);
  }

  /**
   * CANCELED, or TaskNotCancelable when the task is terminal otherwise. The execution decides on a
   * fresh copy; the read here only checks the caller may see the task.
   */
  async cancelTask(call: CallContext, params: CancelTaskRequest): Promise<Task> {
    const scope = scopeOf(call);
    const { task } = await this.#reader.read(scope, params.id);
    if (isTerminal(task.status.state)) return answerFinished(task, this.#options.events, call.tenant);
    const contextId = task.contextId ?? '';
    const execution = this.#executions.getOrOpen(taskKey(scope, task.id), scope, task.id, contextId);
    const request = { taskId: task.id, contextId, caller: call.caller, tenant: call.tenant, metadata: params.metadata, requestContext: call };
    return execution.cancel(request, this.#options.cancelGracePeriodMs);
  }

  /**
   * The current task, then its committed events, until a terminal state or the subscriber leaves.
   * Follows the bus, so it sees a follow-up started by any request.
   */
  async subscribeToTask(call: CallContext, params: SubscribeToTaskRequest, observer: StreamObserver): Promise<() => void> {
    this.#requireStreaming();
    const scope = scopeOf(call);
    const deps = { bus: this.#bus, logger: this.#options.logger, lifecycle: this.#lifecycle };
    const read = () => this.#reader.read(scope, params.id);
    return subscribeToTask(deps, taskKey(scope, params.id), params.id, call.lastEventId, read, observer);
  }

  /** The extended card; interfaces it leaves out are the public card's. */
  getExtendedAgentCard(call: CallContext): Promise<AgentCardInput> {
    return extendedAgentCard(this.#options.agentCard, this.#options.extendedAgentCard, call.caller);
  }

  /**
   * Graceful shutdown: refuses new messages and subscriptions, lets running turns end within
   * `graceMs`, then fails the rest. Reads and CancelTask are served meanwhile.
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

  listTaskPushNotificationConfigs(
    call: CallContext,
    params: ListTaskPushNotificationConfigsRequest,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    return this.#pushService().list(scopeOf(call), params);
  }

  deleteTaskPushNotificationConfig(call: CallContext, params: DeleteTaskPushNotificationConfigRequest): Promise<void> {
    return this.#pushService().delete(scopeOf(call), params);
  }

  /** Push configured, or PushNotificationNotSupported. */
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

/** GetExtendedAgentCard: interfaces the extended card leaves out are the public card's. */
export async function extendedAgentCard(
  card: AgentCard,
  provider: ExtendedAgentCardProvider | undefined,
  caller: A2ACaller,
): Promise<AgentCardInput> {
  if (card.capabilities.extendedAgentCard !== true) {
    throw new A2AError('UnsupportedOperation', 'This agent does not declare an extended agent card');
  }
  if (!caller.authenticated) throw new A2AError('Unauthenticated', 'The extended agent card requires an authenticated caller');
  if (!provider) throw new A2AError('ExtendedAgentCardNotConfigured');
  const extended = typeof provider === 'function' ? await provider(caller) : provider;
  return extended.supportedInterfaces ? extended : { ...extended, supportedInterfaces: card.supportedInterfaces };
}
