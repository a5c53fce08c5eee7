/** A task's cancel: a CancelTask's (hook within the grace period, signal, CANCELED unless another end won) and one routed from elsewhere. */
import { A2AError, taskNotCancelable, taskNotFound } from '../../errors.js';
import type { Logger } from '../../options.js';
import type { StreamResponse, Task } from '../../protocol/schemas.js';
import type { EngineEvents } from '../engine-events.js';
import type { AgentExecutor, CancelContext } from '../executor.js';
import { TaskEvents } from '../task-events.js';
import { CANCELED_TEXT, isInterrupted, isTerminal } from '../task-state.js';
import { taskKey } from '../seams/task-store.js';
import type { TaskLeases } from '../seams/task-leases.js';
import { InvalidAgentEventError } from '../task-events.js';
import type { TaskChannel } from './task-channel.js';
import { LiveSink, type TurnHost } from './turn-runner.js';
import { CancelPublisher, copyOf, type Turn } from './turn.js';

export type CancelRequest = Omit<CancelContext, 'task' | 'running'>;

export interface CancelDeps {
  readonly executor: AgentExecutor;
  readonly logger: Logger;
  /** With several replicas: whether a turn runs in another process. */
  readonly leases?: TaskLeases;
  readonly events?: EngineEvents;
}

const GRACE_OVER = Symbol('grace over');
const noop = (): void => {};

/** Rejects with TaskNotCancelable when another end won. */
export function runCancel(target: TurnHost, deps: CancelDeps, request: CancelRequest, graceMs: number): Promise<Task> {
  const tracing = deps.events?.tracing;
  if (!tracing) return cancelOnce(target, deps, request, graceMs, noop);
  return tracing.traceCancel({ taskId: target.taskId, contextId: request.contextId, scope: target.scope }, (note) =>
    cancelOnce(target, deps, request, graceMs, note),
  );
}

async function cancelOnce(
  target: TurnHost,
  deps: CancelDeps,
  request: CancelRequest,
  graceMs: number,
  note: (step: 'hook' | 'grace') => void,
): Promise<Task> {
  const channel = target.channel;
  let timer: NodeJS.Timeout | undefined;
  const graceOver = new Promise<typeof GRACE_OVER>((resolve) => {
    timer = setTimeout(resolve, graceMs, GRACE_OVER);
    timer.unref(); // a pending cancel must not keep the process alive
  });
  const publisher = new CancelPublisher();
  try {
    // Writes already under way land first: the decision is made on the task as it now stands.
    await channel.enqueue(noop);
    const turn = target.runningTurn();
    // Nothing runs here, or the work was handed off: decide on a fresh copy, not one read before this request's awaits.
    if (!turn || turn.handedOff) await channel.reload();
    const task = channel.task;
    if (!task) throw taskNotFound(target.taskId);
    if (isTerminal(task.status.state)) return cancelAnswer(task);
    const { executor, logger } = deps;
    if (executor.cancel) {
      try {
        const running = turn !== undefined || (await runsElsewhere(target, deps, task));
        const hook = Promise.resolve(executor.cancel({ ...request, task: copyOf(task), running }, new TaskEvents(new LiveSink(target, publisher))));
        if ((await Promise.race([hook, graceOver])) !== GRACE_OVER) note('hook');
        else {
          hook.catch(noop);
          note('grace');
          logger.warn({ taskId: target.taskId, graceMs }, 'executor.cancel() did not finish within the grace period');
        }
      } catch (error) {
        const ended = channel.task?.status.state;
        // A benign race: the task ended first, so the hook's event was refused.
        if (error instanceof InvalidAgentEventError && ended && isTerminal(ended))
          logger.info({ taskId: target.taskId, state: ended }, endedFirst(ended));
        else logger.error({ err: error, taskId: target.taskId }, 'executor.cancel() threw; the task is canceled anyway');
      }
    }
    if (turn) {
      target.guard.abort(turn);
      if (!turn.closed && (await Promise.race([turn.whenSettled(), graceOver])) === GRACE_OVER) note('grace');
      await channel.enqueue(() => commitCanceled(channel));
    } else {
      // Asked only once CANCELED is committed, so the remote turn's later writes are refused.
      await channel.enqueue(() => commitCanceled(channel)).finally(() => target.guard.routeCancel());
    }
    return cancelAnswer(channel.task!);
  } finally {
    publisher.closed = true;
    clearTimeout(timer);
  }
}

/** With leases, a turn may run on the replica holding the lease; without isHeld(), a task mid-turn is taken as running. */
async function runsElsewhere(target: TurnHost, { leases, logger }: CancelDeps, task: Task): Promise<boolean> {
  if (!leases) return false;
  if (leases.isHeld) {
    try {
      return await leases.isHeld(taskKey(target.scope, target.taskId));
    } catch (error) {
      logger.debug({ err: error, taskId: target.taskId }, 'could not read the task lease for cancel(); running judged by the state');
    }
  }
  return !isInterrupted(task.status.state);
}

function endedFirst(state: string): string {
  const name = state.replace('TASK_STATE_', '');
  return name === 'COMPLETED'
    ? 'the task completed before the cancel; it stays COMPLETED'
    : `the task ended ${name} before the cancel; it stays ${name}`;
}

async function commitCanceled(channel: TaskChannel<unknown>): Promise<void> {
  const task = channel.task;
  if (!task || !isTerminal(task.status.state)) await channel.commitEngineStatus('TASK_STATE_CANCELED', CANCELED_TEXT);
}

export function cancelAnswer(task: Task): Task {
  const state = task.status.state;
  if (state === 'TASK_STATE_CANCELED') return task;
  if (isTerminal(state)) throw taskNotCancelable(task);
  // Not terminal after the write: the store failed and the engine could not settle it.
  throw new A2AError('Unavailable', `Task ${task.id} could not be canceled now; try again`);
}

export function reportCancelAnswer(
  events: EngineEvents | undefined,
  info: { readonly taskId: string; readonly tenant: string },
  run: Promise<Task>,
): void {
  const hook = events?.cancelAnswered;
  if (!hook) return;
  const report = (outcome: 'canceled' | 'not-cancelable' | 'error') => hook({ taskId: info.taskId, tenant: info.tenant, outcome });
  run.then(
    () => report('canceled'),
    (error: unknown) => report(error instanceof A2AError && error.kind === 'TaskNotCancelable' ? 'not-cancelable' : 'error'),
  );
}

/** A terminal state never changes, so a task read terminal is answered at once. */
export function answerFinished(task: Task, events: EngineEvents | undefined, tenant: string): Task {
  const canceled = task.status.state === 'TASK_STATE_CANCELED';
  events?.cancelAnswered?.({ taskId: task.id, tenant, outcome: canceled ? 'canceled' : 'not-cancelable' });
  return cancelAnswer(task);
}

/** A cancel asked elsewhere: the turn here is aborted and ends as the bus or store brings the end, or CANCELED after the grace period. */
export function cancelRoutedHere(host: TurnHost): void {
  const turn = host.runningTurn();
  if (!turn || turn.canceled || turn.closed) return;
  turn.cancel();
  if (turn.handedOff) return;
  const channel = host.channel;
  host.guard.watchForEnd(
    // In the channel's order: an event already on its way lands (or is refused) first.
    ({ task, event, version }) => void channel.enqueue(() => endWith(host, turn, task, event, version)),
    // Nothing committed within the grace period: CANCELED is written here (or the end found stored ends the turn).
    () => void channel.enqueue(() => (turn.closed ? undefined : channel.commitEngineStatus('TASK_STATE_CANCELED', CANCELED_TEXT))).catch(noop),
  );
  // The end may have been committed before the bus was followed: read the task once.
  void channel
    .enqueue(async () => {
      if (turn.closed) return;
      await channel.reload();
      const task = channel.task;
      if (task && isTerminal(task.status.state)) {
        endWith(host, turn, task, { statusUpdate: { taskId: host.taskId, contextId: host.contextId, status: task.status } }, channel.version);
      }
    })
    .catch(noop);
}

function endWith(host: TurnHost, turn: Turn, task: Task, event: StreamResponse, version?: number): void {
  if (turn.closed) return;
  turn.notify(event, version);
  host.endTurn(turn, { kind: 'task', task });
}
