/** One task's serial write chain (live execution or hand-off publisher): reduce, write compare-and-set, fan out, in publish order. */
import type { A2AError } from '../../errors.js';
import type { Logger } from '../../options.js';
import type { Message, StreamResponse, Task } from '../../protocol/schemas.js';
import type { EngineEvents } from '../engine-events.js';
import type { TaskEventBus } from '../seams/task-event-bus.js';
import { InvalidAgentEventError } from '../task-events.js';
import type { TaskScope, TaskStore, VersionedTask } from '../seams/task-store.js';
import type { TaskEvent } from '../task-reducer.js';
import type { OwedWrites } from '../owed-writes.js';
import { GENERIC_FAILURE_TEXT, engineStatus, isTerminal } from '../task-state.js';
import { TaskWriter, writeFailure, type Commit } from '../task-writer.js';

interface AnnounceDeps {
  readonly bus: TaskEventBus;
  readonly logger: Logger;
  readonly events?: EngineEvents;
}

interface AnnouncedTask {
  readonly key: string;
  readonly scope: TaskScope;
  readonly taskId: string;
}

interface StoredEvent {
  readonly event: StreamResponse;
  readonly task: Task;
  readonly version: number;
}

/** Returns the bus's promise if any (its failure logged here). */
function announceCommit(deps: AnnounceDeps, of: AnnouncedTask, stored: StoredEvent): void | Promise<void> {
  const { key, scope, taskId } = of;
  const { event, task, version } = stored;
  const published = deps.bus.publish(key, { event, task, version });
  if (published) published.catch((error: unknown) => deps.logger.error({ err: error, taskId }, 'the event bus failed to publish an event'));
  const events = deps.events;
  if (events) {
    const info = { taskId, tenant: scope.tenant };
    events.taskEvent?.({ ...info, owner: scope.owner, event, task, version });
    if (isTerminal(task.status.state)) events.taskFinished?.({ ...info, state: task.status.state });
  }
  return published;
}

export interface ChannelDeps extends AnnounceDeps {
  readonly store: TaskStore;
  /** Where an engine FAILED or CANCELED the store refused is kept until written; none: given up. */
  readonly owed?: OwedWrites;
}

export type Committed = Extract<Commit, { kind: 'committed' }>;

/**
 * `committed` runs before the bus and the engine's hooks hear the event (a direct observer hears it
 * first); its result goes to `announced`, which runs after them (the event may end the turn).
 */
export interface ChannelListener<Target = void> {
  /** A method: a literal with a getter is a dictionary-mode object. */
  openingMessage(): Message | undefined;
  created(): void;
  committed(commit: Committed): Target;
  announced(commit: Committed, published: void | Promise<void>, target: Target): void;
  /** Another request or process ended the task: the write was refused. */
  endedElsewhere(task: Task): void;
  /** The engine's own FAILED or CANCELED could not be stored. */
  engineWriteFailed(error: A2AError): void;
}

export interface ChannelWording {
  readonly refused: string;
  readonly storeFailed?: string;
  /** Who ended the task, in the refusal of a later event ("by another request", "elsewhere"). */
  readonly endedBy: string;
}

const noop = (): void => {};
const RESOLVED: Promise<void> = Promise.resolve();

export class TaskChannel<Target = void> {
  readonly #deps: ChannelDeps;
  readonly #key: string;
  readonly #scope: TaskScope;
  readonly #taskId: string;
  readonly #contextId: string;
  readonly #writer: TaskWriter;
  readonly #listener: ChannelListener<Target>;
  readonly #wording: ChannelWording;
  readonly #announced: AnnouncedTask;
  /** Folding and writing keep generation order. */
  #tail: Promise<unknown> | undefined;

  constructor(
    deps: ChannelDeps,
    key: string,
    scope: TaskScope,
    ids: { readonly taskId: string; readonly contextId: string },
    stored: VersionedTask | undefined,
    listener: ChannelListener<Target>,
    wording: ChannelWording,
  ) {
    this.#deps = deps;
    this.#key = key;
    this.#scope = scope;
    this.#taskId = ids.taskId;
    this.#contextId = ids.contextId;
    this.#writer = new TaskWriter(deps.store, scope, ids.taskId, ids.contextId, stored);
    this.#listener = listener;
    this.#wording = wording;
    this.#announced = { key, scope, taskId: ids.taskId };
  }

  get task(): Task | undefined {
    return this.#writer.task;
  }

  get version(): number | undefined {
    return this.#writer.version;
  }

  get tail(): Promise<unknown> | undefined {
    return this.#tail;
  }

  /** After every step queued before it (failed ones too), in the caller's async context. */
  enqueue<T>(step: () => T | Promise<T>): Promise<T> {
    const result = (this.#tail ?? RESOLVED).then(step, step);
    this.#tail = result;
    return result;
  }

  /** Call it inside a step; a refused event fails the task, an ended task refuses it. */
  async publish(event: TaskEvent): Promise<void> {
    let result: Commit;
    try {
      result = await this.commit(event);
    } catch (error) {
      // The publisher hears it; its turn's end decides what follows.
      throw this.asClientError(error);
    }
    return this.#afterWrite(result);
  }

  #afterWrite(result: Commit): void | Promise<void> {
    if (result.kind === 'refused') return this.refuse(new InvalidAgentEventError(result.reason));
    if (result.kind === 'ended') {
      this.#listener.endedElsewhere(result.task);
      const state = result.task.status.state;
      throw new InvalidAgentEventError(`task ${this.#taskId} was ended (${state}) ${this.#wording.endedBy}; the event was refused`);
    }
    this.#fanOut(result);
  }

  /** An invalid event fails the task cleanly; the error goes back to the publisher either way. */
  async refuse(error: unknown): Promise<never> {
    if (error instanceof InvalidAgentEventError) {
      this.#deps.logger.error({ err: error, taskId: this.#taskId }, this.#wording.refused);
      await this.commitEngineStatus('TASK_STATE_FAILED', GENERIC_FAILURE_TEXT).catch(noop);
    }
    throw error;
  }

  async commitEngineStatus(state: 'TASK_STATE_FAILED' | 'TASK_STATE_CANCELED', text: string): Promise<void> {
    const status = engineStatus(state, { id: this.#taskId, contextId: this.#contextId }, text);
    let result: Commit;
    try {
      result = await this.commit({ statusUpdate: { taskId: this.#taskId, contextId: this.#contextId, status } });
    } catch (error) {
      const clientError = this.asClientError(error);
      // Still owed: written once the store answers again (see OwedWrites).
      if (clientError.kind === 'Unavailable' && this.#deps.owed)
        this.#deps.owed.owe({ key: this.#key, scope: this.#scope, taskId: this.#taskId, contextId: this.#contextId, state, text });
      else this.#deps.logger.error({ err: error, taskId: this.#taskId }, `could not store ${state}`);
      this.#listener.engineWriteFailed(clientError);
      throw clientError;
    }
    if (result.kind === 'committed') this.#fanOut(result);
    else if (result.kind === 'ended') this.#listener.endedElsewhere(result.task);
  }

  commit(event: TaskEvent, recheck?: (fresh: Task) => A2AError | undefined): Promise<Commit> {
    const created = this.#writer.task === undefined;
    const result = this.#writer.commit(event, created ? this.#listener.openingMessage() : undefined, recheck);
    return created ? result.then((written) => this.#afterCreate(written)) : result;
  }

  #afterCreate(result: Commit): Commit {
    if (result.kind === 'committed') this.#listener.created();
    return result;
  }

  /** Store failures become what the client hears. */
  async reload(): Promise<void> {
    try {
      await this.#writer.reload();
    } catch (error) {
      throw this.asClientError(error);
    }
  }

  asClientError(error: unknown): A2AError {
    return writeFailure(error, this.#taskId, this.#deps.logger, this.#wording.storeFailed);
  }

  /** Its writer told its own observer already. */
  announce(commit: Committed): void {
    announceCommit(this.#deps, this.#announced, commit);
  }

  #fanOut(commit: Committed): void {
    const target = this.#listener.committed(commit);
    const published = announceCommit(this.#deps, this.#announced, commit);
    this.#listener.announced(commit, published, target);
  }
}
