/** Fixtures of the TaskStore contract: tasks at fixed timestamps, assertions, a writer folding artifacts in place as the engine does. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { foldTaskInPlace } from '../engine/task-reducer.js';
import type { Artifact, Message, Task, TaskArtifactUpdateEvent, TaskState } from '../protocol/schemas.js';
import type { ListTasksQuery, TaskPage, TaskScope, TaskStore } from '../engine/seams/task-store.js';

/** A test body: gets the fresh store the test runs on. */
export type Body<S> = (store: S) => Promise<void>;

/** A group of rules, registered through `test`. */
export type Define<S> = (test: (rule: string, body: Body<S>) => void) => void;

const T0 = Date.parse('2026-01-05T10:00:00.000Z');
/** A status timestamp `seconds` after a fixed origin, in the UTC form the engine writes. */
export const at = (seconds: number): string => new Date(T0 + seconds * 1000).toISOString();

export const newScope = (owner = 'alice'): TaskScope => ({ tenant: `tenant-${randomUUID()}`, owner });
export const newId = (): string => `task-${randomUUID()}`;

export const message = (taskId: string, text: string): Message => makeMessage(taskId, text);

const makeMessage = (taskId: string, text: string): Message => ({
  messageId: randomUUID(),
  role: 'ROLE_USER',
  parts: [{ text }],
  taskId,
});

export interface TaskFields {
  state?: TaskState;
  timestamp?: string;
  contextId?: string;
  text?: string;
}

export function makeTask(id: string, fields: TaskFields = {}): Task {
  return {
    id,
    contextId: fields.contextId ?? `ctx-${id}`,
    status: { state: fields.state ?? 'TASK_STATE_WORKING', timestamp: fields.timestamp ?? at(0) },
    history: [message(id, fields.text ?? 'hello')],
  };
}

/** The same task with one more history message and a new status. */
export function nextTask(task: Task, text: string, fields: TaskFields = {}): Task {
  return {
    ...task,
    status: { state: fields.state ?? task.status.state, timestamp: fields.timestamp ?? task.status.timestamp },
    history: [...(task.history ?? []), message(task.id, text)],
  };
}

/** The four terminal states. */
export const TERMINAL: TaskState[] = ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'];

export const EVERY: ListTasksQuery = { pageSize: 100 };

export async function mustGet(store: TaskStore, scope: TaskScope, id: string) {
  const found = await store.get(scope, id);
  assert.ok(found, `get(${id}) should find the task`);
  return found;
}

export async function rejectsWith(promise: Promise<unknown>, errorClass: new (...args: never[]) => Error, why: string) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof errorClass, `${why}: expected a ${errorClass.name}, got ${String(error)}`);
    return true;
  });
}

/** Every page of a listing, following nextPageToken; fails instead of looping forever. */
export async function listAllPages(store: TaskStore, scope: TaskScope, query: ListTasksQuery) {
  const pages: TaskPage[] = [];
  let pageToken = query.pageToken;
  do {
    assert.ok(pages.length < 1000, 'paging does not end');
    const page = await store.list(scope, { ...query, pageToken });
    pages.push(page);
    pageToken = page.nextPageToken;
  } while (pageToken !== '');
  return pages;
}

export const ids = (tasks: Task[]): string[] => tasks.map((t) => t.id);

// A JSON round trip, not structuredClone: under jest the latter returns objects of another realm,
// which deepStrictEqual tells apart by prototype.
export const copy = (task: Task): Task => JSON.parse(JSON.stringify(task)) as Task;

/**
 * A writer as the engine's: one copy of the task, artifact events folded into it in place (so the
 * object passed to update() is the same one every time, holding every earlier chunk), each written
 * with its artifact change at the version the last write made.
 */
export class InPlaceWriter {
  readonly scope = newScope();
  task: Task;
  version = 1;

  constructor(
    readonly store: TaskStore,
    artifacts?: Artifact[],
  ) {
    this.task = { ...makeTask(newId()), ...(artifacts ? { artifacts } : {}) };
  }

  create(): Promise<number> {
    return this.store.create(this.scope, this.task);
  }

  /** Folds the artifact event into the copy and writes it; resolves with the new version. */
  async write(artifact: Artifact, append: boolean): Promise<number> {
    const update: TaskArtifactUpdateEvent = { taskId: this.task.id, contextId: this.task.contextId ?? '', artifact, append, lastChunk: false };
    const folded = foldTaskInPlace(this.task, { artifactUpdate: update }, { taskId: this.task.id, contextId: this.task.contextId ?? '' });
    assert.ok(folded.ok && folded.task === this.task, 'the fixture folds in place');
    this.version = await this.store.update(this.scope, this.task, this.version, { kind: 'artifact', update, event: { artifactUpdate: update } });
    return this.version;
  }

  /** Folds a status update into the copy and writes it with its status change. */
  async status(state: TaskState, seconds: number, text?: string): Promise<number> {
    const message: Message | undefined = text === undefined ? undefined : { ...makeMessage(this.task.id, text), role: 'ROLE_AGENT' };
    const update = {
      taskId: this.task.id,
      contextId: this.task.contextId ?? '',
      status: { state, timestamp: at(seconds), ...(message ? { message } : {}) },
    };
    const folded = foldTaskInPlace(this.task, { statusUpdate: update }, { taskId: this.task.id, contextId: this.task.contextId ?? '' });
    assert.ok(folded.ok && folded.change.kind === 'status', 'the fixture folds a status change');
    this.task = folded.task;
    this.version = await this.store.update(this.scope, this.task, this.version, { ...folded.change, event: folded.event });
    return this.version;
  }

  /** The task as the store must hold it now (a copy of the writer's). */
  expected(): Task {
    return copy(this.task);
  }
}

export const appendText = (artifactId: string, value: string, fields: Partial<Artifact> = {}): Artifact => ({
  artifactId,
  parts: [{ text: value }],
  ...fields,
});
