/**
 * A cancel routed here from another process (bus.requestCancel), on the replica running the turn:
 * the turn is aborted and ends with the end committed elsewhere, or CANCELED written here once the
 * grace period is over. The CancelTask itself is served where it arrived (see cancel.ts).
 */
import type { StreamResponse, Task } from '../../protocol/schemas.js';
import { CANCELED_TEXT, isTerminal } from '../task-state.js';
import type { TurnHost } from './turn-runner.js';
import type { Turn } from './turn.js';

const noop = (): void => {};

/**
 * Another process asked for a cancel (a CancelTask served there writes CANCELED there): the turn
 * here is aborted and ends with the end committed, as soon as the bus brings it (or it is found
 * stored already), or with the engine's CANCELED once the grace period is over, like a local
 * cancel. Its later events are refused (its publisher is closed). A handed-off turn follows the
 * bus already; a turn this process aborted itself is decided by whoever aborted it.
 */
export function cancelRoutedHere(host: TurnHost): void {
  const turn = host.runningTurn();
  if (!turn || turn.canceled || turn.closed) return;
  turn.cancel();
  if (turn.handedOff) return;
  const channel = host.channel;
  host.guard.watchForEnd(
    // In the channel's order: an event of the turn's own already on its way lands (or is refused) first.
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

/** The turn's observer hears the end committed elsewhere, and the turn ends with it. */
function endWith(host: TurnHost, turn: Turn, task: Task, event: StreamResponse, version?: number): void {
  if (turn.closed) return;
  turn.notify(event, version);
  host.endTurn(turn, { kind: 'task', task });
}
