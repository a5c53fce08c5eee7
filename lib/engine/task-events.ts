/**
 * The publisher handed to execute() and cancel(): typed helpers that build well-formed events,
 * so executors never hand-build status objects, plus `publish()` for raw StreamResponse events.
 */
import { randomUUID } from 'node:crypto';
import type { Artifact, Message, Part, StreamResponse, TaskState, TaskStatus } from '../protocol/schemas.js';
import { StreamResponseSchema } from '../protocol/schemas.js';
import { now } from './task-state.js';
import type { TaskScope } from './seams/task-store.js';

/** Text, or parts, for a message. */
export type MessageContent = string | Part[];

export interface ArtifactInput {
  /** Defaults to a fresh id; reuse one with `append: true` to stream chunks into it. */
  readonly artifactId?: string;
  readonly name?: string;
  readonly description?: string;
  readonly text?: string;
  readonly parts?: Part[];
  readonly metadata?: Record<string, unknown>;
  readonly append?: boolean;
  readonly lastChunk?: boolean;
}

/**
 * What execute() gets from `events.handOff()`: all a worker needs to open the task's publisher
 * (`router.openTaskPublisher(handOff.scope, handOff.taskId)`). Plain JSON, so it can travel in a
 * job queue to another process.
 */
export interface HandOff {
  readonly taskId: string;
  readonly contextId: string;
  /** The task's tenant and owner: a publisher opened in another scope finds no task. */
  readonly scope: TaskScope;
}

/** Where published events go: the live execution, which checks, stores and fans them out. */
export interface EventSink {
  readonly taskId: string;
  readonly contextId: string;
  accept(event: StreamResponse): Promise<void>;
  /** Present only for execute()'s own events: ends its part of the turn without ending the turn. */
  handOff?(): Promise<HandOff>;
}

const toParts = (content: MessageContent): Part[] => (typeof content === 'string' ? [{ text: content }] : content);

export class TaskEvents {
  readonly #sink: EventSink;

  constructor(sink: EventSink) {
    this.#sink = sink;
  }

  get taskId(): string {
    return this.#sink.taskId;
  }

  get contextId(): string {
    return this.#sink.contextId;
  }

  /** Publishes a raw event (`{task}`, `{message}`, `{statusUpdate}` or `{artifactUpdate}`), validated first. */
  publish(event: StreamResponse): Promise<void> {
    const parsed = StreamResponseSchema.safeParse(event);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const refused = Promise.reject(new InvalidAgentEventError(`malformed event at ${issue?.path.join('.') || '(root)'}: ${issue?.message}`));
      refused.catch(() => {}); // handled for callers that do not await; awaiting ones still see it
      return refused;
    }
    return this.#sink.accept(parsed.data as StreamResponse);
  }

  /**
   * Hands the rest of this turn to other code (a job queue, another service): execute() may then
   * return without a final state, and the turn stays open until a publisher opened with the returned
   * HandOff (`router.openTaskPublisher`) parks or finishes the task, a CancelTask ends it, or
   * `turnTimeoutMs` passes. A blocking SendMessage keeps waiting; `returnImmediately` callers have
   * the task at once. Creates the task in TASK_STATE_WORKING if nothing was published yet.
   * Only execute()'s own events can hand off.
   */
  handOff(): Promise<HandOff> {
    if (!this.#sink.handOff) {
      const refused = Promise.reject(new InvalidAgentEventError('only execute() can hand its turn off'));
      refused.catch(() => {});
      return refused;
    }
    return this.#sink.handOff();
  }

  /** Answers with a Message and no task (only before any task event). */
  reply(content: MessageContent, metadata?: Record<string, unknown>): Promise<void> {
    const messageId = randomUUID();
    const parts = toParts(content);
    const contextId = this.contextId;
    // Two literals rather than a spread of a conditional one (as status()).
    const message: Message = metadata
      ? { messageId, role: 'ROLE_AGENT', parts, contextId, metadata }
      : { messageId, role: 'ROLE_AGENT', parts, contextId };
    return this.#sink.accept({ message });
  }

  /** Creates the task (or resumes it) in TASK_STATE_WORKING. */
  start(content?: MessageContent): Promise<void> {
    return this.status('TASK_STATE_WORKING', content);
  }

  /** A WORKING update carrying a progress message. */
  progress(content: MessageContent): Promise<void> {
    return this.status('TASK_STATE_WORKING', content);
  }

  /** Adds an artifact, or a chunk of one (`append`, `lastChunk`). */
  artifact(input: ArtifactInput): Promise<void> {
    const parts = input.parts ?? (input.text !== undefined ? [{ text: input.text }] : []);
    const artifact: Artifact = {
      artifactId: input.artifactId ?? randomUUID(),
      parts,
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
    };
    return this.#sink.accept({
      artifactUpdate: {
        taskId: this.taskId,
        contextId: this.contextId,
        artifact,
        ...(input.append ? { append: true } : {}),
        ...(input.lastChunk ? { lastChunk: true } : {}),
      },
    });
  }

  /** Parks the task until the client sends another message. */
  requireInput(content: MessageContent): Promise<void> {
    return this.status('TASK_STATE_INPUT_REQUIRED', content);
  }

  /** Parks the task until the caller is authorized (explain what is needed). */
  requireAuth(content: MessageContent): Promise<void> {
    return this.status('TASK_STATE_AUTH_REQUIRED', content);
  }

  complete(content?: MessageContent): Promise<void> {
    return this.status('TASK_STATE_COMPLETED', content);
  }

  fail(content?: MessageContent): Promise<void> {
    return this.status('TASK_STATE_FAILED', content);
  }

  reject(content?: MessageContent): Promise<void> {
    return this.status('TASK_STATE_REJECTED', content);
  }

  canceled(content?: MessageContent): Promise<void> {
    return this.status('TASK_STATE_CANCELED', content);
  }

  /** Any state change, with an optional agent message. */
  status(state: TaskState, content?: MessageContent): Promise<void> {
    const taskId = this.taskId;
    const contextId = this.contextId;
    // Two literals rather than a spread of a conditional one: no clone and no empty object per event.
    const status: TaskStatus =
      content === undefined
        ? { state, timestamp: now() }
        : { state, timestamp: now(), message: { messageId: randomUUID(), role: 'ROLE_AGENT', parts: toParts(content), contextId, taskId } };
    return this.#sink.accept({ statusUpdate: { taskId, contextId, status } });
  }
}

/** Raised to an executor whose event the engine refused (wrong task, after the end, illegal transition). */
export class InvalidAgentEventError extends Error {
  constructor(message: string) {
    super(`Invalid agent event: ${message}`);
    this.name = 'InvalidAgentEventError';
  }
}
