/**
 * The one AsyncLocalStorage carrier of the kit: the record of the request that carried the current message, entered once it is resolved and
 * re-entered from snapshots wherever the engine defers work.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** The authenticated (or anonymous) principal that sent a request. */
export interface A2ACaller {
  /** Stable identifier of the principal; tasks are owned by it. */
  readonly id: string;
  readonly displayName?: string;
  /** Claims of the credential (JWT payload, passport profile, ...). */
  readonly claims?: Readonly<Record<string, unknown>>;
  /** False for anonymous callers. */
  readonly authenticated: boolean;
}

/** W3C trace context parsed from `traceparent` (and `tracestate`). */
export interface A2ATraceContext {
  readonly traceId: string;
  readonly spanId: string;
  readonly flags: number;
  readonly traceState?: string;
}

export interface A2ARequestContext {
  readonly caller: A2ACaller;
  /** Resolved tenant; '' when the deployment is not multi-tenant. */
  readonly tenant: string;
  readonly requestId?: string;
  readonly trace?: A2ATraceContext;
  /** Aborts when the carrying HTTP request is closed by the client. */
  readonly signal?: AbortSignal;
}

const storage = new AsyncLocalStorage<A2ARequestContext>();

/** Runs `fn` with `context` as the current A2A request context. */
export function runWithA2AContext<T>(context: A2ARequestContext, fn: () => T): T {
  return storage.run(context, fn);
}

/** The current A2A request context, or undefined outside of a request. */
export function tryGetA2ARequestContext(): A2ARequestContext | undefined {
  return storage.getStore();
}

/** The current A2A request context; throws when called outside of one. */
export function getA2ARequestContext(): A2ARequestContext {
  const context = storage.getStore();
  if (!context) {
    throw new Error('getA2ARequestContext() was called outside of an A2A request (no context is active)');
  }
  return context;
}
