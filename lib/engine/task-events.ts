/** The publisher handed to execute() and cancel(): helpers that build well-formed events, plus `publish()`. */
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

/** What `events.handOff()` returns: plain JSON a worker passes to `router.openTaskPublisher(scope, taskId)`. */
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
   * Hands the rest of this turn to other code (a job queue): execute() may return without a final
   * state; the turn stays open until a publisher opened with the HandOff parks or ends the task, a
   * CancelTask, or `turnTimeoutMs`. Creates the task in WORKING if nothing was published yet.
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
    // Two literals rather than a spread: no clone per event.
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
    // Two literals rather than a spread: no clone per event.
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
