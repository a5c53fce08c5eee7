/** finalWrite (issue 29): who writes the end of a turn its agent left unfinished, and which, for every (agent end, cancel state). */
import { finalWrite, type AgentEnd, type CancelState, type FinalWrite } from '../../../lib/engine/execution/turn';

const TURN_FAILS: FinalWrite = { by: 'turn', state: 'TASK_STATE_FAILED' };
const TURN_CANCELS: FinalWrite = { by: 'turn', state: 'TASK_STATE_CANCELED' };
const CANCEL_CANCELS: FinalWrite = { by: 'cancel', state: 'TASK_STATE_CANCELED' };

const table: ReadonlyArray<[AgentEnd, CancelState, FinalWrite]> = [
  ['returned', 'none', TURN_FAILS],
  ['returned', 'running', TURN_FAILS], // the hook still runs and nothing aborted the turn: the cancel then answers TaskNotCancelable
  ['returned', 'aborted-here', CANCEL_CANCELS],
  ['returned', 'asked', TURN_CANCELS],
  ['threw', 'none', TURN_FAILS],
  ['threw', 'running', TURN_FAILS],
  ['threw', 'aborted-here', CANCEL_CANCELS],
  ['threw', 'asked', TURN_CANCELS],
  ['timed-out', 'none', TURN_FAILS],
  ['timed-out', 'running', CANCEL_CANCELS], // a deadline passing while a CancelTask runs leaves the end to it
  ['timed-out', 'aborted-here', CANCEL_CANCELS],
  ['timed-out', 'asked', TURN_FAILS], // the deadline is the turn's own end
];

describe('finalWrite', () => {
  it.each(table)('%s with the cancel %s', (end, cancel, expected) => {
    expect(finalWrite(end, cancel)).toEqual(expected);
  });

  it('covers every combination', () => {
    const ends: AgentEnd[] = ['returned', 'threw', 'timed-out'];
    const cancels: CancelState[] = ['none', 'running', 'aborted-here', 'asked'];
    expect(table.map(([end, cancel]) => `${end}/${cancel}`).sort()).toEqual(ends.flatMap((e) => cancels.map((c) => `${e}/${c}`)).sort());
  });
});
