/**
 * What an agent implements: execute() for each incoming message, cancel() optionally.
 * The engine calls both inside the AsyncLocalStorage context of the HTTP request concerned.
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
  /** Whether execute() is still running for this task (false for a parked task). */
  readonly running: boolean;
  readonly metadata: Readonly<Record<string, unknown>> | undefined;
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
}
