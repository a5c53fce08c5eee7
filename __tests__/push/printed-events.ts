/** Reading the events the push suites' child servers print, and what their receiver got. */
import type { StreamResponse } from 'a2a-express-kit';

/** A line the push suites' servers print (child-main.ts): a committed event, or a turn holding. */
export type PushLine = { kind: 'event'; replica?: string; taskId: string; event: StreamResponse } | { kind: 'holding'; taskId: string };

/** The events committed for `taskId`, in commit order. */
export const eventsOf = (lines: readonly PushLine[], taskId: string): StreamResponse[] =>
  lines.flatMap((line) => (line.kind === 'event' && line.taskId === taskId ? [line.event] : []));

/** The task state an event (or a delivered body) carries. */
export const stateOf = (event: any): string | undefined => (event.statusUpdate?.status ?? event.task?.status)?.state;

/** At-least-once: a delivery repeated right after itself (a lost answer) counts once. */
export const withoutRepeats = (bodies: unknown[]): unknown[] =>
  bodies.filter((body, i) => i === 0 || JSON.stringify(body) !== JSON.stringify(bodies[i - 1]));
