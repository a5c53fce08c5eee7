/** Small builders for the engine's unit tests: a store, a bus, an Execution's deps, a turn host, messages, tasks. */
import { ownerCall } from '../../../lib/context/request-state';
import { InMemoryTaskStore } from '../../../lib/backends/memory/in-memory-task-store';
import { InProcessTaskEventBus } from '../../../lib/engine/seams/task-event-bus';
import type { TaskLease, TaskLeases, LeasedTask } from '../../../lib/engine/seams/task-leases';
import type { TaskScope, VersionedTask } from '../../../lib/engine/seams/task-store';
import type { AgentExecutor } from '../../../lib/engine/executor';
import type { ExecutionDeps, Execution } from '../../../lib/engine/execution/execution';
import { Turn, type ExecutionObserver, type TurnOutcome, type TurnRequest } from '../../../lib/engine/execution/turn';
import { TaskChannel, type ChannelListener } from '../../../lib/engine/execution/task-channel';
import { ReplicaGuard } from '../../../lib/engine/execution/replica-guard';
import type { TurnHost } from '../../../lib/engine/execution/turn-runner';
import { endsTurn } from '../../../lib/engine/task-state';
import { silentLogger } from '../../../lib/options';
import type { Message, StreamResponse, Task, TaskState } from '../../../lib/protocol/schemas';
import { deferred } from '../../helpers/async';

export const scope: TaskScope = { tenant: 't', owner: 'alice' };
export const TS = '2026-01-01T00:00:00.000Z';

export const userMessage = (text: string, taskId = 'task-1', contextId = 'ctx-1'): Message => ({
  messageId: `m-${text}`,
  role: 'ROLE_USER',
  parts: [{ text }],
  taskId,
  contextId,
});

export const task = (state: TaskState, id = 'task-1'): Task => ({
  id,
  contextId: 'ctx-1',
  status: { state, timestamp: TS },
  history: [userMessage('hello', id)],
});

export const status = (state: TaskState, text?: string, taskId = 'task-1') => ({
  statusUpdate: {
    taskId,
    contextId: 'ctx-1',
    status: {
      state,
      timestamp: TS,
      ...(text ? { message: { messageId: `s-${text}`, role: 'ROLE_AGENT' as const, parts: [{ text }], taskId, contextId: 'ctx-1' } } : {}),
    },
  },
});

/** A store seeded with `tasks` in `scope`. */
export async function storeWith(...tasks: Task[]): Promise<InMemoryTaskStore> {
  const store = new InMemoryTaskStore();
  for (const t of tasks) await store.create(scope, t);
  return store;
}

/** Leases held in memory; `heldElsewhere` keys are held by "another replica" (acquire answers undefined). */
export class FakeLeases implements TaskLeases {
  readonly sweepIntervalMs = 60_000;
  readonly held = new Set<string>();
  readonly heldElsewhere = new Set<string>();
  readonly acquired: Array<{ key: string; waitMs: number }> = [];
  readonly released: string[] = [];
  expired: LeasedTask[] = [];

  async acquire(key: string, _task: LeasedTask, waitMs: number): Promise<TaskLease | undefined> {
    this.acquired.push({ key, waitMs });
    if (this.heldElsewhere.has(key) || this.held.has(key)) return undefined;
    this.held.add(key);
    return {
      lost: false,
      release: async () => {
        this.held.delete(key);
        this.released.push(key);
      },
    };
  }

  async claimExpired(): Promise<LeasedTask[]> {
    const expired = this.expired;
    this.expired = [];
    return expired;
  }
}

/** An Execution's deps over `store`; `idle` resolves each time the execution goes idle. */
export function executionDeps(store: InMemoryTaskStore, executor: AgentExecutor, extra: Partial<ExecutionDeps> = {}) {
  const idle: Execution[] = [];
  const deps: ExecutionDeps = {
    store,
    bus: new InProcessTaskEventBus(),
    executor,
    logger: silentLogger,
    turnTimeoutMs: 0,
    leaseWaitMs: 0,
    onIdle: (execution) => idle.push(execution),
    ...extra,
  };
  return { deps, idle };
}

/** An observer that records events and resolves `ended` with the outcome. */
export function recorder(): ExecutionObserver & { events: StreamResponse[]; ended: Promise<TurnOutcome> } {
  const end = deferred<TurnOutcome>();
  const events: StreamResponse[] = [];
  return { events, ended: end.promise, onEvent: (event) => events.push(event), onEnd: (outcome) => end.resolve(outcome) };
}

/** What a message brings to its turn (the call: the scope's owner). */
export function turnRequest(message: Message, observer?: ExecutionObserver): TurnRequest {
  return { message, observer, call: ownerCall(scope.owner, scope.tenant) };
}

/**
 * A turn host without an Execution (for the turn runner and the routed cancel): a real TaskChannel
 * and ReplicaGuard over `store`; a turn ends (recorded in `ends`) when its task parks or finishes.
 */
export function turnHost(store: InMemoryTaskStore, executor: AgentExecutor, extra: Partial<ExecutionDeps> & { stored?: VersionedTask } = {}) {
  const { stored, ...rest } = extra;
  const deps = { store, bus: new InProcessTaskEventBus(), executor, logger: silentLogger, turnTimeoutMs: 0, leaseWaitMs: 0, ...rest };
  let current: Turn | undefined;
  /** A CancelTask runs "here" (what an Execution's cancelling phase tells its runner). */
  const cancel = { running: false };
  const ends: TurnOutcome[] = [];
  const listener: ChannelListener<Turn | undefined> = {
    openingMessage: () => current?.request.message,
    created: () => undefined,
    committed: (commit) => {
      current?.notify(commit.event, commit.version);
      return current;
    },
    announced: (commit, _published, turn) => {
      if (turn && endsTurn(commit.task.status.state)) host.endTurn(turn, { kind: 'task', task: commit.task });
    },
    endedElsewhere: () => undefined,
    engineWriteFailed: (error) => current && host.endTurn(current, { kind: 'error', error }),
  };
  const channel = new TaskChannel(deps, 'k', scope, { taskId: 'task-1', contextId: 'ctx-1' }, stored, listener, {
    refused: 'refused',
    endedBy: 'elsewhere',
  });
  const guard = new ReplicaGuard(deps, 'k', scope, 'task-1', () => undefined);
  const host: TurnHost = {
    taskId: 'task-1',
    contextId: 'ctx-1',
    scope,
    logger: deps.logger,
    deps,
    guard,
    channel,
    cancelState: (turn) => (cancel.running ? (turn.canceled ? 'aborted-here' : 'running') : turn.canceled ? 'asked' : 'none'),
    runningTurn: () => current,
    endTurn: (turn, outcome) => {
      if (current === turn) current = undefined;
      ends.push(outcome);
      turn.end(outcome);
    },
    follow: () => undefined,
  };
  /** A turn for `request`, made the running one (as TurnQueue does before it starts a turn). */
  const start = (request: TurnRequest): Turn => (current = new Turn(request));
  return { host, start, ends, deps, cancel };
}
