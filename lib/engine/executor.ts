/**
 * What an agent implements: execute() per message, optionally cancel() and resume(). execute() and
 * cancel() run in the request's AsyncLocalStorage context, resume() in one of its own.
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

/** Why a task is resumed: a restart (one process on its store) or a lost replica (lease expired). */
export type ResumeReason = 'restart' | 'replica-lost';

/** What resume() knows: the task left mid-turn, as stored, and why it is resumed. */
export interface ResumeContext {
  readonly resumed: true;
  readonly reason: ResumeReason;
  /** The task as stored: everything committed before the process died (history, artifacts, status). */
  readonly task: Task;
  readonly taskId: string;
  readonly contextId: string;
  readonly caller: A2ACaller;
  /** '' when the deployment is not multi-tenant. */
  readonly tenant: string;
  /** Fires on cancel, on the resumed turn's timeout or on shutdown. */
  readonly signal: AbortSignal;
  /** What getA2ARequestContext() returns: the owner and tenant, no request id. */
  readonly requestContext: A2ARequestContext;
}

export interface AgentExecutor {
  /**
   * Handles one message. The turn ends on a Message reply, an interrupted or a terminal state;
   * settling before one, or throwing, fails the task.
   */
  execute(context: ExecutionContext, events: TaskEvents): Promise<void> | void;
  /** Optional CancelTask hook, run before the signal fires; with no final status the engine writes CANCELED. */
  cancel?(context: CancelContext, events: TaskEvents): Promise<void> | void;
  /**
   * Optional hook for a task left mid-turn by a dead process, called once by the process that claims
   * it. It runs as a turn: published, streamed, cancelable, and failed like execute() if it ends early.
   */
  resume?(context: ResumeContext, events: TaskEvents): Promise<void> | void;
}
