/**
 * The protocol core, one small method per A2A operation, independent of Express.
 * Every method resolves the task through the store with the caller's scope before it touches a
 * live execution, so another owner's or tenant's task is indistinguishable from a missing one.
 */
import { randomUUID } from 'node:crypto';
import type { A2ACaller, A2ARequestContext } from '../context/carrier.js';
import { A2AError, invalidParams, taskNotFound } from '../errors.js';
import type { Logger } from '../logger.js';
import type { AgentCard, Message, Task, TaskPushNotificationConfig } from '../protocol/schemas.js';
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
import { Execution, shuttingDown, type ExecutionDeps } from './execution.js';
import { LocalExecutionRegistry, type ExecutionRegistry } from './seams/execution-registry.js';
import type { AgentExecutor } from './executor.js';
import {
  InvalidPageTokenError,
  type TaskScope,
  type TaskStore,
  type VersionedTask,
} from './seams/task-store.js';
import { InProcessTaskEventBus, type CommittedEvent, type TaskEventBus } from './seams/task-event-bus.js';
import type { LeasedTask, TaskLeases } from './seams/task-leases.js';
import { taskKey } from './task-key.js';
import { isInterrupted, isTerminal } from './task-state.js';
import type { ExecutionObserver, Turn, TurnOutcome } from './turn.js';
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
}

/** Receives a stream's events; `onEnd` closes it. */
export interface StreamObserver extends ExecutionObserver {
  /** `closed`: the stream ends without a final state (a subscription ended by a shutdown). */
  onEnd(outcome: TurnOutcome | { readonly kind: 'closed' }): void;
  /** Opens the stream with nothing to send yet (a resumed subscription that missed nothing). */
  begin?(): void;
}

const scopeOf = (call: CallContext): TaskScope => ({ tenant: call.tenant, owner: call.caller.id });

const RESTARTED_TEXT = 'The server restarted before the agent finished this task.';
const REPLICA_LOST_TEXT = 'The server running this task stopped before the agent finished it.';

/** The `Last-Event-ID` of a resumed stream: a version the client has seen, or undefined. */
function resumePoint(lastEventId: string | undefined): number | undefined {
  if (lastEventId === undefined || !/^\d{1,15}$/.test(lastEventId)) return undefined;
  return Number(lastEventId);
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

function textOf(message: Message): string {
  let text = '';
  for (const part of message.parts) {
    if ('text' in part && part.text !== undefined) text = text ? `${text}\n${part.text}` : part.text;
  }
  return text;
}

export class A2ARequestHandler {
  readonly #options: RequestHandlerOptions;
  readonly #registry: ExecutionRegistry<Execution>;
  readonly #bus: TaskEventBus;
  readonly #deps: ExecutionDeps;
  readonly #inputModes: MediaTypeFilter;
  /** Open SubscribeToTask streams, so that a shutdown can end them. */
  readonly #subscriptions = new Set<() => void>();
  #closing = false;
  #drained: (() => void) | undefined;
  /** Start-up settlement of tasks a previous process left mid-turn; requests wait for it. */
  #recovering: Promise<void> | undefined;
  /** The periodic claim of expired leases (several replicas). */
  #sweeper: NodeJS.Timeout | undefined;

  constructor(options: RequestHandlerOptions) {
    this.#options = options;
    this.#registry = options.registry ?? new LocalExecutionRegistry<Execution>();
    this.#bus = options.bus ?? new InProcessTaskEventBus();
    this.#deps = {
      store: options.taskStore,
      bus: this.#bus,
      executor: options.executor,
      logger: options.logger,
      events: options.events,
      turnTimeoutMs: options.turnTimeoutMs ?? 0,
      leases: options.leases,
      leaseWaitMs: options.leaseWaitMs ?? 30_000,
      onIdle: (execution) => {
        this.#registry.remove(execution.key, execution);
        if (this.#closing && this.#registry.size === 0) this.#drained?.();
      },
    };
    const card = options.agentCard;
    this.#inputModes = new MediaTypeFilter([...card.defaultInputModes, ...card.skills.flatMap((s) => s.inputModes ?? [])]);
    const leases = options.leases;
    if (leases) {
      // A replica that dies leaves its tasks' leases to expire; whichever replica claims one settles it.
      this.#sweeper = setInterval(() => void this.#sweepExpiredLeases(leases), Math.max(100, leases.sweepIntervalMs));
      this.#sweeper.unref();
    } else if (options.taskStore.findUnfinished) {
      // One process owns this store: what is mid-turn in it now died with the previous process.
      const recovering = this.#settleUnfinished(options.taskStore.findUnfinished.bind(options.taskStore));
      this.#recovering = recovering;
      void recovering.then(() => {
        if (this.#recovering === recovering) this.#recovering = undefined;
      });
    }
  }

  /** Resolves once start-up settlement is over (at once when there is none). */
  get ready(): Promise<void> {
    return this.#recovering ?? Promise.resolve();
  }

  async #settleUnfinished(find: () => Promise<ReadonlyArray<LeasedTask>>): Promise<void> {
    try {
      const unfinished = await find();
      for (const task of unfinished) await this.#settleOrphan(task, RESTARTED_TEXT);
      if (unfinished.length > 0) this.#options.logger.warn({ tasks: unfinished.length }, 'tasks left mid-turn by the previous process were failed');
    } catch (error) {
      this.#options.logger.error({ err: error }, 'could not settle the tasks the previous process left mid-turn');
    }
  }

  async #sweepExpiredLeases(leases: TaskLeases): Promise<void> {
    let expired: LeasedTask[];
    try {
      expired = await leases.claimExpired();
    } catch (error) {
      this.#options.logger.error({ err: error }, 'could not look for expired task leases');
      return;
    }
    for (const task of expired) await this.#settleOrphan(task, REPLICA_LOST_TEXT);
  }

  /** A task whose turn died with its process: FAILED with `text` unless parked or finished (see Execution). */
  async #settleOrphan({ scope, taskId }: LeasedTask, text: string): Promise<void> {
    const key = taskKey(scope, taskId);
    try {
      const stored = await this.#options.taskStore.get(scope, taskId);
      if (!stored || this.#registry.get(key)) return; // gone, or running here: not an orphan
      const execution = this.#track(new Execution(this.#deps, key, scope, taskId, stored.task.contextId ?? '', stored));
      await execution.settleOrphan(text);
    } catch (error) {
      this.#options.logger.error({ err: error, taskId }, 'could not settle a task left mid-turn');
    }
  }

  /** Executions currently live (0 when every task is parked or finished). */
  get liveExecutions(): number {
    return this.#registry.size;
  }

  /** Observers: blocking sends and streams of live turns, and task subscribers. */
  get liveObservers(): number {
    let count = this.#bus.subscriberCount;
    for (const execution of this.#registry.values()) count += execution.observerCount;
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
    if (this.#recovering) await this.#recovering;
    let stored: VersionedTask | undefined;
    try {
      stored = await this.#options.taskStore.get(scope, taskId);
    } catch (error) {
      throw this.#storeFailure(error);
    }
    if (!stored) throw taskNotFound(taskId);
    return openTaskPublisher(this.#deps, taskKey(scope, taskId), { tenant: scope.tenant, owner: scope.owner }, stored);
  }

  get agentCard(): AgentCard {
    return this.#options.agentCard;
  }

  async sendMessage(call: CallContext, params: SendMessageRequest): Promise<SendMessageResponse> {
    const returnImmediately = params.configuration?.returnImmediately === true;
    let settle!: (outcome: TurnOutcome) => void;
    const outcome = new Promise<TurnOutcome>((resolve) => (settle = resolve));
    let turn: Turn | undefined;
    let watching = false;
    const observer: ExecutionObserver = {
      onEvent: (event) => {
        if (!('task' in event)) return;
        if (returnImmediately) settle({ kind: 'task', task: event.task });
        else if (!watching) {
          // A task to wait for (a Message reply needs no watch): a client that leaves stops
          // waiting, and the turn goes on without an observer.
          watching = true;
          call.requestContext.signal?.addEventListener(
            'abort',
            () => {
              turn?.detach();
              settle({ kind: 'error', error: new A2AError('Internal', 'The client closed the request') });
            },
            { once: true },
          );
        }
      },
      onEnd: settle,
    };
    const begun = this.#begin(call, params, observer);
    turn = begun instanceof Promise ? await begun : begun;
    const result = await outcome;
    if (result.kind === 'error') throw result.error;
    if (result.kind === 'message') return { message: result.message };
    return { task: withHistoryLength(result.task, params.configuration?.historyLength) };
  }

  /** Validates, then starts the turn; events flow to `observer`. Returns a detach function. */
  async sendStreamingMessage(call: CallContext, params: SendMessageRequest, observer: StreamObserver): Promise<() => void> {
    this.#requireStreaming();
    const turn = await this.#begin(call, params, observer);
    return () => turn.detach();
  }

  async getTask(call: CallContext, params: GetTaskRequest): Promise<Task> {
    const { task } = await this.#resolve(call, params.id);
    return withHistoryLength(task, params.historyLength);
  }

  async listTasks(call: CallContext, params: ListTasksRequest): Promise<ListTasksResponse> {
    const pageSize = params.pageSize ?? LIST_TASKS_DEFAULT_PAGE_SIZE;
    if (this.#recovering) await this.#recovering;
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
      throw this.#storeFailure(error);
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
    const { task } = await this.#resolve(call, params.id);
    const answered = this.#options.events?.cancelAnswered;
    if (task.status.state === 'TASK_STATE_CANCELED') {
      answered?.({ taskId: task.id, tenant: call.tenant, outcome: 'canceled' });
      return task;
    }
    if (isTerminal(task.status.state)) {
      answered?.({ taskId: task.id, tenant: call.tenant, outcome: 'not-cancelable' });
      throw new A2AError('TaskNotCancelable', `Task ${task.id} is in ${task.status.state} and cannot be canceled`, {
        metadata: { taskId: task.id },
      });
    }
    const key = taskKey(scope, task.id);
    const execution = this.#registry.get(key) ?? this.#track(new Execution(this.#deps, key, scope, task.id, task.contextId ?? ''));
    return execution.cancel(
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
  }

  /**
   * The current task first, then its committed events, until it reaches a terminal state or the
   * subscriber leaves; interrupted states do not end it. Follows the bus, so it holds nothing but a
   * subscription, and sees a follow-up started by any request. Events committed while the snapshot
   * is read are held back and delivered after it, without the ones the snapshot already includes.
   */
  async subscribeToTask(call: CallContext, params: SubscribeToTaskRequest, observer: StreamObserver): Promise<() => void> {
    this.#requireStreaming();
    let seen: number | undefined; // the version the subscriber has seen; undefined until the snapshot
    let held: CommittedEvent[] = [];
    let done = false;
    const deliver = (committed: CommittedEvent): void => {
      if (done || committed.version <= seen!) return;
      seen = committed.version;
      observer.onEvent(committed.event, committed.version);
      if (isTerminal(committed.task.status.state)) {
        stop();
        observer.onEnd({ kind: 'task', task: committed.task });
      }
    };
    const key = taskKey(scopeOf(call), params.id);
    const unsubscribe = this.#bus.subscribe(key, (committed) => {
      if (seen === undefined) held.push(committed);
      else deliver(committed);
    });
    const stop = (): void => {
      done = true;
      unsubscribe();
      this.#subscriptions.delete(endForShutdown);
    };
    // On shutdown the stream ends cleanly after the last event it was sent.
    const endForShutdown = (): void => {
      if (done) return;
      stop();
      observer.onEnd({ kind: 'closed' });
    };
    let stored: VersionedTask;
    try {
      stored = await this.#resolve(call, params.id);
    } catch (error) {
      stop();
      throw error;
    }
    // A resumed stream: the events after the client's last one, from the bus's history; else the
    // task as it stands (it includes everything missed). Nothing at all when nothing was missed.
    const resumeAfter = resumePoint(call.lastEventId);
    let missed: CommittedEvent[] | undefined;
    if (resumeAfter !== undefined && resumeAfter < stored.version && this.#bus.history) {
      try {
        missed = await this.#bus.history(key, resumeAfter);
      } catch (error) {
        this.#options.logger.warn({ err: error, taskId: params.id }, 'the event bus could not replay a stream; sending the task instead');
      }
    }
    if (isTerminal(stored.task.status.state) && missed === undefined) {
      stop();
      throw new A2AError('UnsupportedOperation', `Task ${stored.task.id} is in a terminal state; there is nothing to subscribe to`);
    }
    if (this.#closing) {
      stop();
      throw shuttingDown();
    }
    this.#subscriptions.add(endForShutdown);
    if (missed !== undefined) {
      seen = resumeAfter;
      for (const committed of missed) deliver(committed);
      if (!done && isTerminal(stored.task.status.state)) {
        stop();
        observer.onEnd({ kind: 'task', task: stored.task });
        return stop;
      }
    } else {
      seen = stored.version;
      if (resumeAfter !== stored.version) observer.onEvent({ task: stored.task }, stored.version);
      else observer.begin?.();
    }
    for (const committed of held) deliver(committed);
    held = [];
    return stop;
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
  async close(graceMs: number): Promise<void> {
    this.#closing = true;
    clearInterval(this.#sweeper);
    if (this.#registry.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.#drained = resolve;
        timer = setTimeout(resolve, graceMs);
        timer.unref();
      });
      clearTimeout(timer);
      await Promise.all([...this.#registry.values()].map((execution) => execution.shutdown()));
    }
    for (const end of [...this.#subscriptions]) end();
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

  /** #beginTurn, with an inline push config (SendMessageConfiguration) attached to the turn when one is given. */
  #begin(call: CallContext, params: SendMessageRequest, observer: ExecutionObserver): Turn | Promise<Turn> {
    const inline = params.configuration?.taskPushNotificationConfig;
    if (!inline) return this.#beginTurn(call, params, observer);
    const taskId = params.message.taskId || undefined;
    return this.#pushService().withInline(scopeOf(call), inline, taskId, () => this.#beginTurn(call, params, observer));
  }

  #requireStreaming(): void {
    if (this.#options.agentCard.capabilities.streaming !== true) {
      throw new A2AError('UnsupportedOperation', 'This agent does not declare streaming support');
    }
  }

  /** The task if the caller may see it; TaskNotFound otherwise (same answer as a missing id). */
  async #resolve(call: CallContext, taskId: string): Promise<VersionedTask> {
    if (this.#recovering) await this.#recovering;
    let stored: VersionedTask | undefined;
    try {
      stored = await this.#options.taskStore.get(scopeOf(call), taskId);
    } catch (error) {
      throw this.#storeFailure(error);
    }
    if (!stored) throw taskNotFound(taskId);
    return stored;
  }

  /** A store that failed: logged, and answered as unavailable (never its own text). */
  #storeFailure(error: unknown): A2AError {
    if (error instanceof A2AError) return error;
    this.#options.logger.error({ err: error }, 'the task store failed');
    return new A2AError('Unavailable');
  }

  #track(execution: Execution): Execution {
    this.#registry.add(execution.key, execution);
    return execution;
  }

  /** Starts the turn; synchronous for a new interaction (the hot path), async only for a follow-up. */
  #beginTurn(call: CallContext, params: SendMessageRequest, observer: ExecutionObserver): Turn | Promise<Turn> {
    if (this.#closing) throw shuttingDown();
    const message = params.message;
    if (message.role !== 'ROLE_USER') {
      throw invalidParams([{ field: 'message.role', description: 'a message sent to the agent must have role ROLE_USER' }]);
    }
    this.#checkMediaTypes(message);
    if (message.taskId) return this.#beginFollowUp(call, params, observer, message.taskId);
    const scope = scopeOf(call);
    const taskId = randomUUID();
    const execution = this.#track(new Execution(this.#deps, taskKey(scope, taskId), scope, taskId, message.contextId || randomUUID()));
    return this.#submit(execution, call, params, observer);
  }

  /**
   * A message to an existing task: queued behind the live execution if there is one, else run by a
   * new one from the stored copy. That copy may be old by now; its version makes the first write
   * (the message joining the history) fail if so, and the execution then decides on a fresh one.
   */
  async #beginFollowUp(call: CallContext, params: SendMessageRequest, observer: ExecutionObserver, taskId: string): Promise<Turn> {
    const stored = await this.#resolve(call, taskId);
    const task = stored.task;
    const contextId = params.message.contextId;
    if (contextId && contextId !== task.contextId) {
      throw invalidParams([{ field: 'message.contextId', description: `does not match the contextId of task ${task.id}` }]);
    }
    if (isTerminal(task.status.state)) {
      throw new A2AError('UnsupportedOperation', `Task ${task.id} is in a terminal state and accepts no more messages`);
    }
    const scope = scopeOf(call);
    const key = taskKey(scope, task.id);
    const live = this.#registry.get(key);
    if (live) return this.#submit(live, call, params, observer);
    // With leases the execution waits for the task's lease (a turn on another replica) and decides then.
    const parked = isInterrupted(task.status.state) || this.#options.leases ? stored : await this.#parkedNow(call, task.id, key);
    const execution = this.#registry.get(key) ?? this.#track(new Execution(this.#deps, key, scope, task.id, task.contextId ?? '', parked));
    return this.#submit(execution, call, params, observer);
  }

  /**
   * The task was mid-turn when read, and no turn of it runs here now: read it again. Parked since
   * (the turn here ended meanwhile), it takes this message; still mid-turn, the turn runs in another
   * process, where this message cannot queue: it is refused rather than run beside that turn.
   */
  async #parkedNow(call: CallContext, taskId: string, key: string): Promise<VersionedTask | undefined> {
    const fresh = await this.#resolve(call, taskId);
    if (this.#registry.get(key)) return undefined; // a turn started here meanwhile: queue behind it
    const state = fresh.task.status.state;
    if (isTerminal(state)) throw new A2AError('UnsupportedOperation', `Task ${taskId} is in a terminal state and accepts no more messages`);
    if (!isInterrupted(state)) {
      throw new A2AError('UnsupportedOperation', `Task ${taskId} is processing another message; send this one when it asks for input`);
    }
    return fresh;
  }

  #submit(execution: Execution, call: CallContext, params: SendMessageRequest, observer: ExecutionObserver): Turn {
    const message = params.message;
    const userMessage: Message = { ...message, taskId: execution.taskId, contextId: execution.contextId };
    return execution.submit({
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
  }

  #checkMediaTypes(message: Message): void {
    for (const [index, part] of message.parts.entries()) {
      if (part.mediaType && !this.#inputModes.accepts(part.mediaType)) {
        throw new A2AError('ContentTypeNotSupported', `Media type ${part.mediaType} of message.parts[${index}] is not accepted by this agent`);
      }
    }
  }
}
