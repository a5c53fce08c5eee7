/**
 * What an agent implements: execute() for each incoming message; cancel() and resume() optionally.
 * The engine calls execute() and cancel() inside the AsyncLocalStorage context of the HTTP request
 * concerned; resume() in a context of its own (no request brought it).
 */
import type { A2ACaller, A2ARequestContext } from '../context/carrier.js';
import type { Message, Task } from '../protocol/schemas.js';
import type { SendMessageConfiguration } from '../protocol/requests.js';
import type { TaskEvents } from './task-events.js';

/** Everything execute() knows about the message it handles. */
export interface ExecutionContext {
  /** The incoming message, with taskId and contextId filled in. */
  readonly userMessage: Message;
  /** The text parts of the message joined with newlines (convenience). */
  readonly userText: string;
  /** The task as it was before this message, when the message continues one. */
  readonly task: Task | undefined;
  readonly taskId: string;
  readonly contextId: string;
  readonly caller: A2ACaller;
  /** '' when the deployment is not multi-tenant. */
  readonly tenant: string;
  /** Fires when the task is canceled; stop work and return. */
  readonly signal: AbortSignal;
  readonly configuration: SendMessageConfiguration | undefined;
  /** Request-level metadata of SendMessage. */
  readonly metadata: Readonly<Record<string, unknown>> | undefined;
  /** Extensions activated for this request (declared by the card and requested by the client). */
  readonly extensions: readonly string[];
  /** The carrier of the request that brought this message (same as getA2ARequestContext()). */
  readonly requestContext: A2ARequestContext;
}

/** What cancel() knows: the task being canceled and who asked. */
export interface CancelContext {
  readonly task: Task;
  readonly taskId: string;
  readonly contextId: string;
  readonly caller: A2ACaller;
  readonly tenant: string;
  /** Whether a turn runs for the task: here, or in the replica holding its lease (false for a parked task). */
  readonly running: boolean;
  readonly metadata: Readonly<Record<string, unknown>> | undefined;
  readonly requestContext: A2ARequestContext;
}

/** Why a task is resumed: the process restarted (one process on its store), or the replica running it was lost (its lease expired). */
export type ResumeReason = 'restart' | 'replica-lost';

/** What resume() knows: the task left mid-turn, as stored, and why it is resumed. */
export interface ResumeContext {
  /** Always true: this is a resume of a turn that died with its process, not a new message. */
  readonly resumed: true;
  readonly reason: ResumeReason;
  /** The task as stored: everything committed before the process died (history, artifacts, status). */
  readonly task: Task;
  readonly taskId: string;
  readonly contextId: string;
  /** The task's owner (no credential was presented: nothing brought this call but the task). */
  readonly caller: A2ACaller;
  /** '' when the deployment is not multi-tenant. */
  readonly tenant: string;
  /** Fires when the task is canceled, or the resumed turn times out or the server shuts down. */
  readonly signal: AbortSignal;
  /** The context resume() runs in (getA2ARequestContext() returns it): the owner and tenant, no request id. */
  readonly requestContext: A2ARequestContext;
}

export interface AgentExecutor {
  /**
   * Handles one message. The turn lasts until a Message reply, an interrupted state
   * (input-required, auth-required) or a terminal state is published, or until this promise
   * settles: returning without one of those fails the task; throwing fails it too.
   */
  execute(context: ExecutionContext, events: TaskEvents): Promise<void> | void;
  /**
   * Optional hook for CancelTask, run before the AbortSignal fires. It may publish a final
   * status (e.g. `events.canceled()`); if it does not, the engine writes CANCELED itself.
   */
  cancel?(context: CancelContext, events: TaskEvents): Promise<void> | void;
  /**
   * Optional hook for a task left mid-turn by a process that died (a restart on one store, a
   * replica whose lease expired). Called once per such task, by the process that claims it, as a
   * turn of its own: what it publishes is stored, streamed and pushed like execute()'s, CancelTask
   * stops it, and it ends like a turn (a reply state: interrupted or terminal, or a hand-off).
   * Throwing or returning before such a state fails the task, as it is without the hook.
   */
  resume?(context: ResumeContext, events: TaskEvents): Promise<void> | void;
}
