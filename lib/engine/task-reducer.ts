/**
 * The task reducer, pure: the one definition of what an event does. foldTaskInPlace is the same fold
 * for TaskWriter's own copy, so an artifact event costs what it carries, not what the task holds.
 */
import type { Artifact, Message, StreamResponse, Task, TaskArtifactUpdateEvent, TaskStatus, TaskStatusUpdateEvent } from '../protocol/schemas.js';
import type { TaskChange } from './seams/task-store.js';
import { canTransition, isTerminal, now } from './task-state.js';

/** What can change a task: an agent event, or a follow-up user message joining the history. */
export type TaskEvent =
  | { readonly task: Task }
  | { readonly statusUpdate: TaskStatusUpdateEvent }
  | { readonly artifactUpdate: TaskArtifactUpdateEvent }
  | { readonly userMessage: Message };

export interface ReduceContext {
  readonly taskId: string;
  readonly contextId: string;
  /** The user message that opened the task: first in the history of a task the event creates. */
  readonly openingMessage?: Message;
}

export type Reduction =
  | {
      readonly ok: true;
      readonly task: Task;
      /** What the store may write instead of the whole task. */
      readonly change: TaskChange;
      /** What streams see: the event as stored (normalized), or `{ task }` when it created the task. */
      readonly event: StreamResponse;
    }
  | { readonly ok: false; readonly reason: string };

const REPLACE: TaskChange = { kind: 'replace' };

/** Already canonical (what now() produces): nothing to convert. */
const CANONICAL_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Stores compare timestamps as text, so all are `YYYY-MM-DDTHH:mm:ss.sssZ`; now when absent. */
const utc = (timestamp: string | undefined): string =>
  !timestamp ? now() : CANONICAL_UTC.test(timestamp) ? timestamp : new Date(timestamp).toISOString();

const refuse = (reason: string): Reduction => ({ ok: false, reason });

function checkIds(ids: { taskId: string; contextId: string }, ctx: ReduceContext): string | undefined {
  if (ids.taskId !== ctx.taskId) return `event for task ${ids.taskId} published on task ${ctx.taskId}`;
  if (ids.contextId !== ctx.contextId) return `event with contextId ${ids.contextId} published on a task of context ${ctx.contextId}`;
  return undefined;
}

function created(task: Task): Reduction {
  return { ok: true, task, change: REPLACE, event: { task } };
}

function openingHistory(ctx: ReduceContext, status: TaskStatus): Message[] {
  const history: Message[] = ctx.openingMessage ? [ctx.openingMessage] : [];
  if (status.message) history.push(status.message);
  return history;
}

export function reduceTask(current: Task | undefined, event: TaskEvent, ctx: ReduceContext): Reduction {
  if (current && isTerminal(current.status.state)) {
    return refuse(`task ${ctx.taskId} is in ${current.status.state}; a terminal task does not change`);
  }
  if ('userMessage' in event) return reduceUserMessage(current, event.userMessage, ctx);
  if ('statusUpdate' in event) return reduceStatus(current, event.statusUpdate, ctx);
  if ('artifactUpdate' in event) return reduceArtifact(current, event.artifactUpdate, ctx);
  return reduceTaskEvent(current, event.task, ctx);
}

/** The write that records a follow-up also claims the turn, so a second follow-up conflicts. */
function reduceUserMessage(current: Task | undefined, message: Message, ctx: ReduceContext): Reduction {
  if (!current) return refuse(`task ${ctx.taskId} does not exist yet`);
  const status: TaskStatus = { state: 'TASK_STATE_WORKING', timestamp: now() };
  const task: Task = { ...current, status, history: [...(current.history ?? []), message] };
  // Subscribers see the return to WORKING; status.message is the agent's, not the user's.
  return { ok: true, task, change: REPLACE, event: { statusUpdate: { taskId: ctx.taskId, contextId: ctx.contextId, status } } };
}

function reduceTaskEvent(current: Task | undefined, task: Task, ctx: ReduceContext): Reduction {
  if (current) return refuse('a Task event may only create the task; publish status or artifact updates');
  const idError = checkIds({ taskId: task.id, contextId: task.contextId ?? '' }, ctx);
  if (idError) return refuse(idError);
  const opening = ctx.openingMessage;
  const history = task.history ?? [];
  return created({
    ...task,
    status: { ...task.status, timestamp: utc(task.status.timestamp) },
    history: opening && !history.some((m) => m.messageId === opening.messageId) ? [opening, ...history] : history,
  });
}

function reduceStatus(current: Task | undefined, update: TaskStatusUpdateEvent, ctx: ReduceContext): Reduction {
  const idError = checkIds(update, ctx);
  if (idError) return refuse(idError);
  const status = update.status;
  const timestamp = utc(status.timestamp);
  const stamped: TaskStatus = timestamp === status.timestamp ? status : { ...status, timestamp };
  if (!current) {
    return created({ id: ctx.taskId, contextId: ctx.contextId, status: stamped, history: openingHistory(ctx, stamped) });
  }
  if (!canTransition(current.status.state, stamped.state)) {
    return refuse(`illegal transition ${current.status.state} -> ${stamped.state}`);
  }
  const task: Task = {
    ...current,
    status: stamped,
    history: stamped.message ? [...(current.history ?? []), stamped.message] : current.history,
  };
  return { ok: true, task, change: REPLACE, event: { statusUpdate: stamped === status ? update : { ...update, status: stamped } } };
}

function reduceArtifact(current: Task | undefined, update: TaskArtifactUpdateEvent, ctx: ReduceContext): Reduction {
  const idError = checkIds(update, ctx);
  if (idError) return refuse(idError);
  if (update.artifact.parts.length === 0) return refuse('an artifact needs at least one part');
  if (!current) {
    const working: TaskStatus = { state: 'TASK_STATE_WORKING', timestamp: now() };
    const task: Task = { id: ctx.taskId, contextId: ctx.contextId, status: working, history: openingHistory(ctx, working) };
    return created({ ...task, artifacts: [update.artifact] });
  }
  const artifacts = [...(current.artifacts ?? [])];
  const index = artifacts.findIndex((a) => a.artifactId === update.artifact.artifactId);
  if (index < 0) artifacts.push(update.artifact);
  else if (update.append) {
    const existing = artifacts[index];
    artifacts[index] = { ...existing, ...update.artifact, parts: [...existing.parts, ...update.artifact.parts] };
  } else artifacts[index] = update.artifact;
  return { ok: true, task: { ...current, artifacts }, change: { kind: 'artifact', update }, event: { artifactUpdate: update } };
}

const owned = (artifact: Artifact): Artifact => ({ ...artifact, parts: [...artifact.parts] });

/** The folder's own copy of a `{ task }` event's task: appending to it never changes what was published. */
function detached(reduction: Reduction): Reduction {
  if (!reduction.ok || !('task' in reduction.event)) return reduction;
  const source = reduction.task;
  const task: Task = { ...source };
  if (source.artifacts) task.artifacts = source.artifacts.map(owned);
  if (source.history) task.history = [...source.history];
  return { ...reduction, task };
}

/**
 * reduceTask for the single owner of `current`: an artifact event changes `current` in place, in
 * time proportional to the event. The owner must re-read the task after a failed write.
 */
export function foldTaskInPlace(current: Task | undefined, event: TaskEvent, ctx: ReduceContext): Reduction {
  if (current && 'statusUpdate' in event && !isTerminal(current.status.state)) return foldStatusInPlace(current, event.statusUpdate, ctx);
  if (!current || !('artifactUpdate' in event) || isTerminal(current.status.state)) return detached(reduceTask(current, event, ctx));
  const update = event.artifactUpdate;
  const idError = checkIds(update, ctx);
  if (idError) return refuse(idError);
  if (update.artifact.parts.length === 0) return refuse('an artifact needs at least one part');
  const artifacts = current.artifacts ?? (current.artifacts = []);
  const index = artifacts.findIndex((a) => a.artifactId === update.artifact.artifactId);
  if (index < 0) artifacts.push(owned(update.artifact));
  else if (update.append) appendInPlace(artifacts[index], update.artifact);
  else artifacts[index] = owned(update.artifact);
  return { ok: true, task: current, change: { kind: 'artifact', update }, event: { artifactUpdate: update } };
}

/** A new task object per status (listeners read it later), sharing artifacts and history. */
function foldStatusInPlace(current: Task, update: TaskStatusUpdateEvent, ctx: ReduceContext): Reduction {
  const idError = checkIds(update, ctx);
  if (idError) return refuse(idError);
  const status = update.status;
  const timestamp = utc(status.timestamp);
  const stamped: TaskStatus = timestamp === status.timestamp ? status : { ...status, timestamp };
  if (!canTransition(current.status.state, stamped.state)) {
    return refuse(`illegal transition ${current.status.state} -> ${stamped.state}`);
  }
  const task: Task = { ...current, status: stamped };
  if (stamped.message) {
    if (task.history) task.history.push(stamped.message);
    else task.history = [stamped.message];
  }
  const stored = stamped === status ? update : { ...update, status: stamped };
  return { ok: true, task, change: { kind: 'status', update: stored }, event: { statusUpdate: stored } };
}

function appendInPlace(existing: Artifact, chunk: Artifact): void {
  const parts = existing.parts;
  for (const part of chunk.parts) parts.push(part);
  for (const key in chunk) {
    if (key !== 'parts' && Object.prototype.hasOwnProperty.call(chunk, key)) {
      (existing as unknown as Record<string, unknown>)[key] = (chunk as unknown as Record<string, unknown>)[key];
    }
  }
}
